// A stand-in for a GPU's memory on a machine without one: its allocations are pages the process
// may not touch (mmap PROT_NONE), opened for exactly the length of each copy its own toHost and
// fromHost make. Code that reads or writes device memory any other way — a communicator that
// forgot to stage, an MPI call handed a device pointer — dies of SIGSEGV at that access, and the
// test with it. Header-only, for the communicator conformance suite.
#pragma once

#include "backend/trainer/device/device.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <iterator>
#include <map>
#include <new>
#include <stdexcept>

namespace trellis::test {

class TrapDevice final : public trainer::Device {
public:
    TrapDevice() { m_stream.device = kernels::Device::Cpu; } // no kernels run on it: copies only
    ~TrapDevice() override
    {
        for (const auto &[base, bytes] : m_regions)
            munmap(base, bytes);
    }
    kernels::Device kind() const override { return kernels::Device::Cpu; }
    std::string name() const override { return "trap (device memory the host may not touch)"; }
    bool hostAccessible() const override { return false; }
    void *allocate(std::size_t bytes) override
    {
        const std::size_t length = pages(bytes);
        void *p = mmap(nullptr, length, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            throw std::bad_alloc();
        m_regions[static_cast<char *>(p)] = length;
        account(static_cast<std::ptrdiff_t>(bytes));
        return p;
    }
    void release(void *memory, std::size_t bytes) noexcept override
    {
        const auto it = m_regions.find(static_cast<char *>(memory));
        if (it == m_regions.end())
            return;
        munmap(it->first, it->second);
        m_regions.erase(it);
        account(-static_cast<std::ptrdiff_t>(bytes));
    }
    void toHost(void *host, const void *device, std::size_t bytes) override
    {
        open(device, bytes, PROT_READ);
        std::memcpy(host, device, bytes);
        close(device, bytes);
        ++m_copies;
    }
    void fromHost(void *device, const void *host, std::size_t bytes) override
    {
        open(device, bytes, PROT_READ | PROT_WRITE);
        std::memcpy(device, host, bytes);
        close(device, bytes);
        ++m_copies;
    }
    long copies() const { return m_copies; }

private:
    static std::size_t pageSize() { return static_cast<std::size_t>(sysconf(_SC_PAGESIZE)); }
    static std::size_t pages(std::size_t bytes) { return (std::max<std::size_t>(bytes, 1) + pageSize() - 1) / pageSize() * pageSize(); }
    // The pages under [p, p + bytes), checked to lie inside one allocation.
    std::pair<char *, std::size_t> span(const void *p, std::size_t bytes) const
    {
        char *c = static_cast<char *>(const_cast<void *>(p));
        auto it = m_regions.upper_bound(c);
        if (it == m_regions.begin() || c + bytes > std::prev(it)->first + std::prev(it)->second)
            throw std::out_of_range("trap device: a copy outside its allocations");
        char *first = c - (reinterpret_cast<std::uintptr_t>(c) % pageSize());
        return {first, pages(static_cast<std::size_t>(c + bytes - first))};
    }
    void open(const void *p, std::size_t bytes, int access)
    {
        if (!bytes)
            return;
        const auto [first, length] = span(p, bytes);
        mprotect(first, length, access);
    }
    void close(const void *p, std::size_t bytes)
    {
        if (!bytes)
            return;
        const auto [first, length] = span(p, bytes);
        mprotect(first, length, PROT_NONE);
    }

    std::map<char *, std::size_t> m_regions; // allocation -> its length in pages
    long m_copies = 0;
};

} // namespace trellis::test
