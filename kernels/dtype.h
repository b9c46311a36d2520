// The element types of tensors (docs/architecture.md §12, "precision and memory space are types"): fp32 and
// fp64 as the C++ types, bf16 and fp16 as 16-bit storage types whose arithmetic is done in fp32
// (load → float, compute, round to nearest even on store), as tensor cores and AVX512-BF16 do.
// acc_t<T> is the type a kernel accumulates T in and keeps statistics, weight gradients and the
// loss in: float for the 16-bit types and float, double for double (the gradient checks).
// Header-only and CUDA-safe (host and device conversions).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__CUDACC__)
#define TRELLIS_HD __host__ __device__
#else
#define TRELLIS_HD
#endif

namespace trellis::kernels {

// Element types as data (communicators, checkpoints, telemetry). Values are stable (files, wire).
enum class DType : std::uint8_t { F32 = 0, F64 = 1, I32 = 2, I64 = 3, BF16 = 4, F16 = 5 };

constexpr std::size_t sizeOf(DType t)
{
    switch (t) {
    case DType::F32:
    case DType::I32: return 4;
    case DType::F64:
    case DType::I64: return 8;
    case DType::BF16:
    case DType::F16: return 2;
    }
    return 0;
}
constexpr const char *toString(DType t)
{
    switch (t) {
    case DType::F32: return "f32";
    case DType::F64: return "f64";
    case DType::I32: return "i32";
    case DType::I64: return "i64";
    case DType::BF16: return "bf16";
    case DType::F16: return "f16";
    }
    return "?";
}

namespace detail {
TRELLIS_HD inline std::uint32_t floatBits(float f)
{
    std::uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}
TRELLIS_HD inline float bitsFloat(std::uint32_t u)
{
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}
} // namespace detail

// bfloat16: fp32's sign and 8-bit exponent, 7 mantissa bits. From float by round to nearest even;
// NaN stays a (quiet) NaN, ±inf stays ±inf, overflow past the largest finite value rounds to inf.
struct bf16 {
    std::uint16_t bits = 0;

    bf16() = default;
    TRELLIS_HD explicit bf16(float f) : bits(fromFloat(f)) {}
    TRELLIS_HD explicit operator float() const { return detail::bitsFloat(static_cast<std::uint32_t>(bits) << 16); }
    TRELLIS_HD static bf16 fromBits(std::uint16_t b)
    {
        bf16 x;
        x.bits = b;
        return x;
    }
    TRELLIS_HD static std::uint16_t fromFloat(float f)
    {
        const std::uint32_t u = detail::floatBits(f);
        if ((u & 0x7fffffffu) > 0x7f800000u)
            return static_cast<std::uint16_t>((u >> 16) | 0x40u); // NaN: keep sign and payload top, quiet
        return static_cast<std::uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
    }
    friend TRELLIS_HD bool operator==(bf16 a, bf16 b) { return float(a) == float(b); }
    friend TRELLIS_HD bool operator!=(bf16 a, bf16 b) { return !(a == b); }
};

// IEEE 754 binary16: 5-bit exponent (bias 15), 10 mantissa bits, subnormals; largest finite
// 65504. From float by round to nearest even (subnormals included); beyond 65504 (after rounding)
// it is ±inf — the overflow dynamic loss scaling watches for.
struct f16 {
    std::uint16_t bits = 0;

    f16() = default;
    TRELLIS_HD explicit f16(float f) : bits(fromFloat(f)) {}
    TRELLIS_HD explicit operator float() const { return toFloat(bits); }
    TRELLIS_HD static f16 fromBits(std::uint16_t b)
    {
        f16 x;
        x.bits = b;
        return x;
    }
    TRELLIS_HD static float toFloat(std::uint16_t h)
    {
        const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
        const std::uint32_t exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
        if (exp == 0x1f) // inf, or NaN made quiet (as F16C and every IEEE conversion do)
            return detail::bitsFloat(sign | 0x7f800000u | (man << 13) | (man ? 0x400000u : 0u));
        if (exp != 0)
            return detail::bitsFloat(sign | ((exp + 112u) << 23) | (man << 13));
        // Subnormal (or zero): man · 2^-24, exact in float.
        const float v = static_cast<float>(man) * 5.9604644775390625e-8f;
        return sign ? -v : v;
    }
    TRELLIS_HD static std::uint16_t fromFloat(float f)
    {
        const std::uint32_t u = detail::floatBits(f);
        const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
        const std::uint32_t a = u & 0x7fffffffu;
        if (a > 0x7f800000u)
            return static_cast<std::uint16_t>(sign | 0x7e00u | ((a >> 13) & 0x3ffu)); // quiet NaN
        if (a >= 0x477ff000u) // ≥ 65520 rounds to inf (65504 is the largest finite)
            return static_cast<std::uint16_t>(sign | 0x7c00u);
        if (a >= 0x38800000u) { // normal in fp16 (≥ 2^-14)
            const std::uint32_t r = a + 0xfffu + ((a >> 13) & 1u) - (112u << 23);
            return static_cast<std::uint16_t>(sign | (r >> 13));
        }
        if (a < 0x33000000u) // below half the smallest subnormal (2^-25): ±0
            return sign;
        // Subnormal: shift the mantissa (implicit bit made explicit) into place, round to even.
        const std::uint32_t e = a >> 23, m = (a & 0x7fffffu) | 0x800000u;
        const std::uint32_t shift = 126u - e; // 14 … 24
        const std::uint32_t q = m >> shift, rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1u);
        const std::uint32_t rounded = q + ((rem > half || (rem == half && (q & 1u))) ? 1u : 0u);
        return static_cast<std::uint16_t>(sign | rounded);
    }
    friend TRELLIS_HD bool operator==(f16 a, f16 b) { return float(a) == float(b); }
    friend TRELLIS_HD bool operator!=(f16 a, f16 b) { return !(a == b); }
};

template <typename T>
inline constexpr bool is16Bit = std::is_same_v<T, bf16> || std::is_same_v<T, f16>;

// The accumulation type of T.
template <typename T>
using acc_t = std::conditional_t<std::is_same_v<T, double>, double, float>;

template <typename T>
constexpr DType dtypeOf()
{
    if constexpr (std::is_same_v<T, float>)
        return DType::F32;
    else if constexpr (std::is_same_v<T, double>)
        return DType::F64;
    else if constexpr (std::is_same_v<T, bf16>)
        return DType::BF16;
    else if constexpr (std::is_same_v<T, f16>)
        return DType::F16;
    else if constexpr (std::is_same_v<T, std::int32_t>)
        return DType::I32;
    else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, std::uint64_t>)
        return DType::I64; // unsigned values below 2^63 (sizes, hashes) travel as int64
    else
        static_assert(sizeof(T) == 0, "no DType for this type");
}

// Converts between element types (float ↔ double ↔ bf16 ↔ f16) through float or double.
template <typename To, typename From>
TRELLIS_HD inline To convertTo(From x)
{
    if constexpr (std::is_same_v<To, From>)
        return x;
    else if constexpr (is16Bit<To>)
        return To(static_cast<float>(x));
    else if constexpr (is16Bit<From>)
        return static_cast<To>(static_cast<float>(x));
    else
        return static_cast<To>(x);
}

// Generic kernels load T as acc_t<T>, compute there, and store back: identities for float and
// double (the same instructions, the same bits), a widening and a rounding for the 16-bit types.
template <typename T>
TRELLIS_HD inline acc_t<T> toAcc(T x)
{
    return convertTo<acc_t<T>>(x);
}
template <typename T>
TRELLIS_HD inline T fromAcc(acc_t<T> x)
{
    return convertTo<T>(x);
}

} // namespace trellis::kernels
