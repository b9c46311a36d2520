// Device memory for the GPU tests: Dev<E> holds n elements of E on GPU 0 (from a host vector, or
// zeroed) and reads them back; g_stream is the test's stream (made in main).
#pragma once

#include "kernels/cuda/cuda_ops.h"
#include "kernels/ops.h"

#include <algorithm>
#include <vector>

namespace trellis::test {

inline kernels::Stream g_stream;

template <typename E>
class Dev {
public:
    explicit Dev(const std::vector<E> &host) : m_n(host.size())
    {
        m_p = static_cast<E *>(kernels::cuda::deviceAllocate(0, bytes()));
        kernels::cuda::fromHost(g_stream, m_p, host.data(), bytes());
    }
    explicit Dev(std::size_t n) : m_n(n) { m_p = static_cast<E *>(kernels::cuda::deviceAllocate(0, bytes())); }
    ~Dev() { kernels::cuda::deviceRelease(m_p); }
    Dev(const Dev &) = delete;
    Dev &operator=(const Dev &) = delete;
    E *get() { return m_p; }
    operator E *() { return m_p; }
    std::vector<E> host() const
    {
        std::vector<E> v(m_n);
        kernels::cuda::toHost(g_stream, v.data(), m_p, bytes());
        return v;
    }

private:
    std::size_t bytes() const { return std::max<std::size_t>(1, m_n) * sizeof(E); }
    E *m_p = nullptr;
    std::size_t m_n;
};

} // namespace trellis::test
