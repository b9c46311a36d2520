// The kernel thread pool (parallel.h). Workers spin briefly after each job (the next kernel
// usually follows within microseconds) and then sleep on a futex (std::atomic::wait), so they do
// not hold a core while the trainer does other work. Chunks are handed out through an atomic
// counter, so a late or preempted worker just takes fewer; each chunk writes its own outputs.
#include "kernels/cpu/parallel.h"

#include "kernels/cpu/cpu_ops.h"

#include <cblas.h>

#include <atomic>
#include <mutex>
#include <thread>
#include <vector>

#include <sched.h>

namespace trellis::kernels::cpu {
namespace {

std::atomic<int> g_threadOverride{0};
thread_local bool t_insideChunk = false;

inline void cpuRelax()
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

class Pool {
public:
    // Runs the job on the caller and threads − 1 workers. Returns false (and runs nothing) if
    // another thread is using the pool.
    bool run(int threads, int chunks, void (*fn)(void *, int), void *ctx)
    {
        std::unique_lock lock(m_mutex, std::try_to_lock);
        if (!lock.owns_lock())
            return false;
        while (static_cast<int>(m_workers.size()) < threads - 1) {
            const int index = static_cast<int>(m_workers.size());
            m_workers.emplace_back([this, index] { workerLoop(index); });
        }
        // Odd generation: the job is being written; wait for workers still inside the last one.
        m_generation.fetch_add(1);
        while (m_inside.load() != 0)
            cpuRelax();
        m_fn = fn;
        m_ctx = ctx;
        m_chunks = chunks;
        m_participants = threads - 1;
        m_next.store(0);
        m_remaining.store(chunks);
        m_generation.fetch_add(1); // even again: published
        m_generation.notify_all();
        work();
        for (int spins = 0; m_remaining.load(std::memory_order_acquire) != 0; ++spins) {
            if (spins < 4000)
                cpuRelax();
            else
                sched_yield();
        }
        return true;
    }

private:
    void work()
    {
        t_insideChunk = true;
        for (int c; (c = m_next.fetch_add(1, std::memory_order_relaxed)) < m_chunks;) {
            m_fn(m_ctx, c);
            m_remaining.fetch_sub(1, std::memory_order_release);
        }
        t_insideChunk = false;
    }

    void workerLoop(int index)
    {
        unsigned seen = m_generation.load();
        for (;;) {
            unsigned g = m_generation.load();
            for (int spins = 0; g == seen || (g & 1u); ++spins) {
                if (spins < 2000) {
                    cpuRelax();
                } else {
                    m_generation.wait(g);
                    spins = 0;
                }
                g = m_generation.load();
            }
            seen = g;
            m_inside.fetch_add(1);
            if (m_generation.load() == g && index < m_participants)
                work();
            m_inside.fetch_sub(1);
        }
    }

    std::mutex m_mutex;
    std::vector<std::thread> m_workers;
    std::atomic<unsigned> m_generation{0};
    std::atomic<int> m_inside{0};
    void (*m_fn)(void *, int) = nullptr;
    void *m_ctx = nullptr;
    int m_chunks = 0;
    int m_participants = 0;
    std::atomic<int> m_next{0};
    std::atomic<int> m_remaining{0};
};

// Never destroyed: its workers sleep in the kernel when the process exits.
Pool &pool()
{
    static Pool *p = new Pool;
    return *p;
}

} // namespace

void setKernelThreads(int threads)
{
    g_threadOverride.store(threads > 0 ? threads : 0);
}

int kernelThreads()
{
    if (t_insideChunk)
        return 1;
    int n = g_threadOverride.load(std::memory_order_relaxed);
    if (n <= 0)
        n = openblas_get_num_threads();
    return n < 1 ? 1 : (n > 64 ? 64 : n);
}

namespace detail {

void parallelRun(int threads, int chunks, void (*fn)(void *, int), void *ctx)
{
    if (t_insideChunk)
        threads = 1;
    if (threads > 64)
        threads = 64;
    if (threads > 1 && pool().run(threads < chunks ? threads : chunks, chunks, fn, ctx))
        return;
    for (int c = 0; c < chunks; ++c)
        fn(ctx, c);
}

} // namespace detail
} // namespace trellis::kernels::cpu
