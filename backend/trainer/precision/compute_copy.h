// Mixed precision's two copies of the parameters (docs/architecture.md §12): the fp32 master weights that the
// optimizer updates, checkpoints hold and ZeRO shards, and the compute copy in the run's element
// type (bf16 or fp16) that the model reads. ComputeBuffer is the compute copy's storage: a device
// buffer whose element type is chosen at run time (the plan's precision), with the conversions
// from fp32 masters. With fp32 precision there is no compute copy: the model reads the masters.
// Threading: as the device.
#pragma once

#include "kernels/dtype.h"
#include "backend/trainer/device/buffer.h"

#include <cstddef>
#include <cstdint>

namespace trellis::trainer {

using kernels::DType;

// `count` elements of `type` (bf16, fp16 or fp32) in device memory.
class ComputeBuffer {
public:
    ComputeBuffer(DType type, Device &device) : m_type(type), m_bytes(device) {}
    DType type() const { return m_type; }
    std::size_t size() const { return m_count; }
    bool empty() const { return m_count == 0; }
    std::uint64_t bytes() const { return m_bytes.size(); }
    // `count` elements, zeroed.
    void assign(std::size_t count);
    // `count` elements, reallocated (zeroed) only when the size changes.
    void ensure(std::size_t count);
    void release()
    {
        m_bytes.release();
        m_count = 0;
    }
    void *data() { return m_bytes.data(); }
    // Element `index`'s address.
    void *at(std::size_t index) { return m_bytes.data() + index * kernels::sizeOf(m_type); }
    const void *at(std::size_t index) const { return m_bytes.data() + index * kernels::sizeOf(m_type); }
    // Elements [offset, offset + n) = masters[0, n), rounded to nearest even.
    void fromMasters(std::size_t offset, const float *masters, std::size_t n);
    // masters[0, n) = elements [offset, offset + n) widened.
    void toMasters(std::size_t offset, float *masters, std::size_t n) const;
    // Elements [offset, offset + n) = other's [from, from + n) (the same type).
    void copyFrom(std::size_t offset, const ComputeBuffer &other, std::size_t from, std::size_t n);

private:
    DType m_type;
    DeviceBuffer<std::uint8_t> m_bytes;
    std::size_t m_count = 0;
};

// The element type a plan's precision computes in (F32, BF16 or F16).
bool isMixed(DType compute);

} // namespace trellis::trainer
