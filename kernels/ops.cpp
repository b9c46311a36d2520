// Op dispatch support; see ops.h.
#include "kernels/ops.h"

#include <stdexcept>
#include <string>

namespace trellis::kernels {

bool available(Device device)
{
#if defined(TRELLIS_HAVE_CUDA)
    return device == Device::Cpu || cuda::deviceCount() > 0;
#else
    return device == Device::Cpu;
#endif
}

void unavailable(const Stream &stream, const char *op)
{
#if defined(TRELLIS_HAVE_CUDA)
    throw std::runtime_error(std::string("kernel ") + op + " on cuda:" + std::to_string(stream.index) +
                             ": the CUDA kernels are float and bf16 only");
#else
    throw std::runtime_error(std::string("kernel ") + op + " on cuda:" + std::to_string(stream.index) +
                             ": this program is linked with the CPU kernels only (trellis_kernels; trellis_kernels_cuda has the CUDA ones)");
#endif
}

void unavailable(const Stream &stream, const char *op, DType type)
{
#if defined(TRELLIS_HAVE_CUDA)
    throw std::runtime_error(std::string("kernel ") + op + " (" + toString(type) + ") on cuda:" +
                             std::to_string(stream.index) + ": no CUDA kernel for it in this build");
#else
    (void)type;
    unavailable(stream, op);
#endif
}

} // namespace trellis::kernels
