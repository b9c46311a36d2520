// Where an op runs: the device kind, the stream its work is queued on, and the error a device call
// throws. Shared by the op interface (kernels/ops.h) and the kernels behind it (kernels/cpu,
// kernels/cuda), which include this rather than ops.h, so the interface sits above them.
#pragma once

#include <stdexcept>

namespace trellis::kernels {

enum class Device { Cpu, Cuda };

// A failed CUDA, cuBLASLt or cuDNN call (kernels/cuda), its message naming where and which call.
struct DeviceError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

struct Stream {
    Device device = Device::Cpu;
    int index = 0;            // which GPU
    void *handle = nullptr;   // cudaStream_t on CUDA
};

} // namespace trellis::kernels
