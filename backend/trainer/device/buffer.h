// A typed, owning allocation on a Device (device.h): what std::vector is on the host, without
// element-wise host access unless the device is host-accessible. Sizes change only through
// assign/release, which reallocate (zeroed) — no partial growth, so pointers handed to kernels
// stay valid until the next assign.
// Threading: as its device.
#pragma once

#include "backend/trainer/device/device.h"

#include <cstddef>
#include <span>
#include <stdexcept>
#include <utility>
#include <vector>

namespace trellis::trainer {

template <typename T>
class DeviceBuffer {
public:
    explicit DeviceBuffer(Device &device = Device::cpu()) : m_device(&device) {}
    DeviceBuffer(Device &device, std::size_t count) : m_device(&device) { assign(count); }
    ~DeviceBuffer() { release(); }
    DeviceBuffer(const DeviceBuffer &) = delete;
    DeviceBuffer &operator=(const DeviceBuffer &) = delete;
    DeviceBuffer(DeviceBuffer &&other) noexcept
        : m_device(other.m_device), m_data(std::exchange(other.m_data, nullptr)), m_size(std::exchange(other.m_size, 0))
    {
    }
    DeviceBuffer &operator=(DeviceBuffer &&other) noexcept
    {
        if (this != &other) {
            release();
            m_device = other.m_device;
            m_data = std::exchange(other.m_data, nullptr);
            m_size = std::exchange(other.m_size, 0);
        }
        return *this;
    }

    // `count` elements, zeroed (a fresh allocation unless the size is unchanged).
    void assign(std::size_t count)
    {
        if (count == m_size && m_data) {
            zero();
            return;
        }
        release();
        if (count > 0)
            m_data = static_cast<T *>(m_device->allocate(count * sizeof(T)));
        m_size = count;
    }
    // `count` copies of `value`.
    void assign(std::size_t count, T value)
    {
        assign(count);
        if (value != T(0))
            kernels::fill(m_device->stream(), m_data, static_cast<std::int64_t>(m_size), value);
    }
    // `count` elements, reallocated (zeroed) only when the size changes: contents are then
    // about to be overwritten.
    void ensure(std::size_t count)
    {
        if (count != m_size || (!m_data && count > 0)) {
            release();
            if (count > 0)
                m_data = static_cast<T *>(m_device->allocate(count * sizeof(T)));
            m_size = count;
        }
    }
    // A copy of host data, or of `count` elements of this device's memory.
    void assignFromHost(const T *host, std::size_t count)
    {
        ensure(count);
        m_device->fromHost(m_data, host, count * sizeof(T));
    }
    void assignFromDevice(const T *data, std::size_t count)
    {
        ensure(count);
        kernels::copy(m_device->stream(), m_data, data, static_cast<std::int64_t>(count));
    }
    std::vector<T> toHost() const
    {
        std::vector<T> out(m_size);
        m_device->toHost(out.data(), m_data, m_size * sizeof(T));
        return out;
    }
    void zero()
    {
        if (m_size > 0)
            kernels::fill(m_device->stream(), m_data, static_cast<std::int64_t>(m_size), T(0));
    }
    void release()
    {
        if (m_data)
            m_device->release(m_data, m_size * sizeof(T));
        m_data = nullptr;
        m_size = 0;
    }

    T *data() { return m_data; }
    const T *data() const { return m_data; }
    std::size_t size() const { return m_size; }
    bool empty() const { return m_size == 0; }
    Device &device() const { return *m_device; }
    // Element access from the host: only on a host-accessible device.
    std::span<T> host()
    {
        if (!m_device->hostAccessible())
            throw std::logic_error("DeviceBuffer: host access to " + m_device->name() + " memory");
        return {m_data, m_size};
    }
    std::span<const T> host() const
    {
        if (!m_device->hostAccessible())
            throw std::logic_error("DeviceBuffer: host access to " + m_device->name() + " memory");
        return {m_data, m_size};
    }

private:
    Device *m_device;
    T *m_data = nullptr;
    std::size_t m_size = 0;
};

} // namespace trellis::trainer
