// The CPU device: 64-byte aligned host memory (one cache line, a full AVX-512 vector), kernels on
// the calling thread.
#include "backend/trainer/device/device.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>

namespace trellis::trainer {
namespace {

class CpuDevice final : public Device {
public:
    CpuDevice() { m_stream.device = kernels::Device::Cpu; }
    kernels::Device kind() const override { return kernels::Device::Cpu; }
    std::string name() const override { return "cpu"; }
    void *allocate(std::size_t bytes) override
    {
        const std::size_t rounded = (bytes + 63) / 64 * 64;
        void *p = std::aligned_alloc(64, rounded);
        if (!p)
            throw std::bad_alloc();
        std::memset(p, 0, rounded);
        account(static_cast<std::ptrdiff_t>(bytes));
        return p;
    }
    void release(void *memory, std::size_t bytes) noexcept override
    {
        std::free(memory);
        account(-static_cast<std::ptrdiff_t>(bytes));
    }
    void toHost(void *host, const void *device, std::size_t bytes) override
    {
        if (bytes)
            std::memcpy(host, device, bytes);
    }
    void fromHost(void *device, const void *host, std::size_t bytes) override
    {
        if (bytes)
            std::memcpy(device, host, bytes);
    }
    bool hostAccessible() const override { return true; }
};

} // namespace

void *Device::allocatePinned(std::size_t bytes)
{
    void *p = std::aligned_alloc(64, (std::max<std::size_t>(bytes, 1) + 63) / 64 * 64);
    if (!p)
        throw std::bad_alloc();
    return p;
}

void Device::releasePinned(void *memory, std::size_t) noexcept { std::free(memory); }

void Device::account(std::ptrdiff_t bytes)
{
    m_allocated = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(m_allocated) + bytes);
    if (m_allocated > m_peak)
        m_peak = m_allocated;
}

Device &Device::cpu()
{
    static CpuDevice device;
    return device;
}

} // namespace trellis::trainer
