// See compute_copy.h.
#include "backend/trainer/precision/compute_copy.h"

#include "kernels/ops.h"

#include <stdexcept>

namespace trellis::trainer {
namespace {

// Calls f with a typed null pointer of the buffer's element type.
template <typename F>
void withType(DType type, F &&f)
{
    switch (type) {
    case DType::F32: f(static_cast<float *>(nullptr)); return;
    case DType::BF16: f(static_cast<kernels::bf16 *>(nullptr)); return;
    case DType::F16: f(static_cast<kernels::f16 *>(nullptr)); return;
    default: throw std::logic_error(std::string("compute copy of element type ") + kernels::toString(type));
    }
}

} // namespace

bool isMixed(DType compute) { return compute == DType::BF16 || compute == DType::F16; }

void ComputeBuffer::assign(std::size_t count)
{
    m_bytes.assign(count * kernels::sizeOf(m_type));
    m_count = count;
}

void ComputeBuffer::ensure(std::size_t count)
{
    m_bytes.ensure(count * kernels::sizeOf(m_type));
    m_count = count;
}

void ComputeBuffer::fromMasters(std::size_t offset, const float *masters, std::size_t n)
{
    if (offset + n > m_count)
        throw std::logic_error("ComputeBuffer::fromMasters past the end");
    withType(m_type, [&](auto *typed) {
        using T = std::remove_pointer_t<decltype(typed)>;
        kernels::convert(m_bytes.device().stream(), static_cast<T *>(at(offset)), masters, static_cast<std::int64_t>(n));
    });
}

void ComputeBuffer::toMasters(std::size_t offset, float *masters, std::size_t n) const
{
    if (offset + n > m_count)
        throw std::logic_error("ComputeBuffer::toMasters past the end");
    withType(m_type, [&](auto *typed) {
        using T = std::remove_pointer_t<decltype(typed)>;
        kernels::convert(m_bytes.device().stream(), masters, static_cast<const T *>(at(offset)), static_cast<std::int64_t>(n));
    });
}

void ComputeBuffer::copyFrom(std::size_t offset, const ComputeBuffer &other, std::size_t from, std::size_t n)
{
    if (other.m_type != m_type || offset + n > m_count || from + n > other.m_count)
        throw std::logic_error("ComputeBuffer::copyFrom: another type or past the end");
    const std::size_t e = kernels::sizeOf(m_type);
    kernels::copy(m_bytes.device().stream(), static_cast<std::uint8_t *>(at(offset)),
                  static_cast<const std::uint8_t *>(other.at(from)), static_cast<std::int64_t>(n * e));
}

} // namespace trellis::trainer
