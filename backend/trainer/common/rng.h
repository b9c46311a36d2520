// Deterministic, platform-independent random numbers (xoshiro256** seeded by splitmix64). The
// standard library's distributions differ between implementations, so normals come from our own
// Box–Muller: the same seed gives the same model on every machine and every rank. The state is
// four words, so it can be saved in checkpoints.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>
#include <numbers>

namespace trellis::trainer {

class Rng {
public:
    explicit Rng(std::uint64_t seed = 0)
    {
        std::uint64_t x = seed;
        for (auto &word : m_state)
            word = splitmix(x);
    }

    std::uint64_t next()
    {
        const std::uint64_t result = rotl(m_state[1] * 5, 7) * 9;
        const std::uint64_t t = m_state[1] << 17;
        m_state[2] ^= m_state[0];
        m_state[3] ^= m_state[1];
        m_state[1] ^= m_state[2];
        m_state[0] ^= m_state[3];
        m_state[2] ^= t;
        m_state[3] = rotl(m_state[3], 45);
        return result;
    }

    // Uniform in [0, 1) with 53 random bits.
    double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

    // Standard normal (Box–Muller; one value per call, the pair's second value is discarded so
    // the state advance per call is fixed).
    double normal()
    {
        double u1 = uniform();
        while (u1 <= 0.0)
            u1 = uniform();
        const double u2 = uniform();
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
    }

    // Uniform integer in [0, n); n must be > 0. Rejection sampling keeps it unbiased.
    std::uint64_t below(std::uint64_t n)
    {
        const std::uint64_t limit = ~std::uint64_t(0) - (~std::uint64_t(0) % n);
        std::uint64_t x;
        do
            x = next();
        while (x >= limit);
        return x % n;
    }

    std::array<std::uint64_t, 4> state() const { return m_state; }
    void setState(const std::array<std::uint64_t, 4> &state) { m_state = state; }

private:
    static std::uint64_t rotl(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
    static std::uint64_t splitmix(std::uint64_t &x)
    {
        std::uint64_t z = (x += 0x9E3779B97F4A7C15ULL);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
        return z ^ (z >> 31);
    }

    std::array<std::uint64_t, 4> m_state{};
};

} // namespace trellis::trainer
