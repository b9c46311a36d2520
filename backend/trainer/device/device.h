// Where a rank's tensors live and its kernels run (docs/architecture.md §12): the CPU, or a CUDA GPU
// in the trellis-trainer-cuda build.
// A Device allocates and frees its memory, copies between it and the host, and owns the stream
// its kernels (kernels/ops.h) are queued on. Parameters, gradients, optimizer state, activations
// and communication buffers are DeviceBuffers (buffer.h) of the rank's device.
// Threading: a device is used from the training thread.
#pragma once

#include "kernels/ops.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace trellis::trainer {

class Device {
public:
    virtual ~Device() = default;
    // The process's CPU device (always present).
    static Device &cpu();
    // The process's CUDA device `index` (made on first use, its own non-blocking stream). Throws
    // std::runtime_error saying why when this build has no CUDA kernels or the machine no such GPU.
    static Device &cuda(int index = 0);
    // Whether Device::cuda(0) can be had (a CUDA build and at least one GPU); never throws.
    static bool cudaAvailable();
    // GPUs this process sees; −1 in a build without CUDA. Never throws.
    static int cudaCount();
    // What CUDA errors name first ("host h rank r"); no-op without CUDA.
    static void setErrorContext(const std::string &context);
    // Waits until the work queued on the stream is done (no-op on the CPU).
    virtual void synchronize() {}

    virtual kernels::Device kind() const = 0;
    virtual std::string name() const = 0; // "cpu", "cuda:0 (NVIDIA H100 ...)"
    const kernels::Stream &stream() const { return m_stream; }
    // Zeroed memory of `bytes`; throws std::bad_alloc when the device has none left.
    virtual void *allocate(std::size_t bytes) = 0;
    // Called from destructors (DeviceBuffer's): never throws. A device error here is kept and
    // raised by the device's next call that may throw.
    virtual void release(void *memory, std::size_t bytes) noexcept = 0;
    // Host memory this device copies to and from fastest (page-locked on a GPU; 64-byte aligned
    // host memory elsewhere): what staged communication buffers are made of.
    virtual void *allocatePinned(std::size_t bytes);
    virtual void releasePinned(void *memory, std::size_t bytes) noexcept;
    virtual void toHost(void *host, const void *device, std::size_t bytes) = 0;
    virtual void fromHost(void *device, const void *host, std::size_t bytes) = 0;
    // Whether device memory can be read and written directly by the host (the CPU's can).
    virtual bool hostAccessible() const = 0;
    // Bytes allocated now and at most since the start (the step telemetry's device_allocated and
    // device_peak, beside the categories the strategies count).
    std::size_t allocatedBytes() const { return m_allocated; }
    std::size_t peakBytes() const { return m_peak; }
    // What the device's allocator holds from the device, freed-and-cached memory included (a
    // GPU's pool); 0 where memory goes straight back (the CPU).
    virtual std::uint64_t reservedBytes() const { return 0; }

protected:
    void account(std::ptrdiff_t bytes);
    kernels::Stream m_stream;

private:
    std::size_t m_allocated = 0, m_peak = 0;
};

} // namespace trellis::trainer
