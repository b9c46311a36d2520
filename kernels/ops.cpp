// Op dispatch support; see ops.h.
#include "kernels/ops.h"

#include <stdexcept>
#include <string>

namespace trellis::kernels {

bool available(Device device) { return device == Device::Cpu; }

void unavailable(const Stream &stream, const char *op)
{
    throw std::runtime_error(std::string("kernel ") + op + " on cuda:" + std::to_string(stream.index) +
                             ": this build has no CUDA kernels (TRELLIS_ENABLE_CUDA)");
}

} // namespace trellis::kernels
