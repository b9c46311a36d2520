// The CUDA device: memory from the device's stream-ordered caching pool (zeroed on the device's
// stream; no cudaMalloc or device-wide synchronisation per buffer), kernels queued on one
// non-blocking stream of its own, copies to and from the host that wait for the stream. In a build without CUDA,
// Device::cuda() says so.
#include "backend/trainer/device/device.h"

#if defined(TRELLIS_HAVE_CUDA)
#include "kernels/cuda/cuda_ops.h"
#endif

#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

namespace trellis::trainer {

#if defined(TRELLIS_HAVE_CUDA)
namespace {

class CudaDevice final : public Device {
public:
    explicit CudaDevice(int index) : m_index(index), m_description(kernels::cuda::deviceDescription(index))
    {
        m_stream.device = kernels::Device::Cuda;
        m_stream.index = index;
        m_stream.handle = kernels::cuda::createStream(index);
    }
    kernels::Device kind() const override { return kernels::Device::Cuda; }
    std::string name() const override { return "cuda:" + std::to_string(m_index) + " (" + m_description + ")"; }
    void *allocate(std::size_t bytes) override
    {
        void *p = kernels::cuda::poolAllocate(m_stream, bytes); // the stream-ordered caching pool
        account(static_cast<std::ptrdiff_t>(bytes));
        return p;
    }
    void release(void *memory, std::size_t bytes) noexcept override
    {
        kernels::cuda::poolRelease(m_stream, memory); // never throws: an error waits for the next call that may
        account(-static_cast<std::ptrdiff_t>(bytes));
    }
    void toHost(void *host, const void *device, std::size_t bytes) override
    {
        kernels::cuda::toHost(m_stream, host, device, bytes);
    }
    void fromHost(void *device, const void *host, std::size_t bytes) override
    {
        kernels::cuda::fromHost(m_stream, device, host, bytes);
    }
    void *allocatePinned(std::size_t bytes) override { return kernels::cuda::hostAllocate(bytes); }
    void releasePinned(void *memory, std::size_t) noexcept override { kernels::cuda::hostRelease(memory); }
    bool hostAccessible() const override { return false; }
    std::uint64_t reservedBytes() const override { return kernels::cuda::poolUse(m_index).reserved; }
    void synchronize() override { kernels::cuda::synchronize(m_stream); }

private:
    int m_index;
    std::string m_description;
};

} // namespace

bool Device::cudaAvailable() { return kernels::cuda::deviceCount() > 0; }
int Device::cudaCount() { return kernels::cuda::deviceCount(); }
void Device::setErrorContext(const std::string &context) { kernels::cuda::setErrorContext(context); }

Device &Device::cuda(int index)
{
    static std::mutex mutex;
    static std::map<int, std::unique_ptr<CudaDevice>> devices;
    std::lock_guard lock(mutex);
    const int count = kernels::cuda::deviceCount();
    if (index < 0 || index >= count)
        throw std::runtime_error("cuda:" + std::to_string(index) + ": this machine has " + std::to_string(count) +
                                 " CUDA device" + (count == 1 ? "" : "s"));
    auto &slot = devices[index];
    if (!slot)
        slot = std::make_unique<CudaDevice>(index);
    return *slot;
}

#else

bool Device::cudaAvailable() { return false; }
int Device::cudaCount() { return -1; }
void Device::setErrorContext(const std::string &) {}

Device &Device::cuda(int index)
{
    throw std::runtime_error("cuda:" + std::to_string(index) +
                             ": this is the CPU build of the trainer (trellis-trainer-cuda has the CUDA kernels)");
}

#endif

} // namespace trellis::trainer
