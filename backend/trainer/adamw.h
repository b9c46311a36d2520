// AdamW over the flat parameter buffer (decoupled weight decay, bias-corrected moments), plus the
// learning-rate schedule (linear warm-up, cosine decay to min_lr). Weight decay applies to
// matrices only, not to biases, LayerNorm parameters or position embeddings' 1-D tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace trellis::trainer {

struct AdamWConfig {
    double beta1 = 0.9;
    double beta2 = 0.95;
    double eps = 1e-8;
    double weightDecay = 0.1;
};

struct ParamRange {
    std::size_t begin = 0;
    std::size_t end = 0;
};

// Keeps moments only for the parameter ranges it owns: all of them without ZeRO, this rank's
// chunks of every bucket with ZeRO-1 (optimizer state sharded over the DP group).
class AdamW {
public:
    AdamW(std::vector<ParamRange> owned, AdamWConfig config);

    // decayMask[i] is true for parameters that get weight decay; indexed like the full buffer.
    void setDecayMask(std::vector<bool> mask) { m_decay = std::move(mask); }
    // Updates the owned ranges of the full parameter buffer from the same ranges of gradients.
    void step(float *parameters, const float *gradients, double lr);
    // The same where owned range i lives at parameters[i] and gradients[i] (ZeRO-2/3 shards): one
    // pointer per owned range, to its first element.
    void step(std::span<float *const> parameters, std::span<const float *const> gradients, double lr);
    const std::vector<ParamRange> &owned() const { return m_owned; }

    std::uint64_t stepCount() const { return m_step; }
    const std::vector<float> &firstMoments() const { return m_m; }
    const std::vector<float> &secondMoments() const { return m_v; }
    // Restores moments for the owned ranges (same layout) and the step count, for resume.
    bool restore(std::vector<float> m, std::vector<float> v, std::uint64_t step);
    std::size_t stateBytes() const { return (m_m.size() + m_v.size()) * sizeof(float); }

private:
    AdamWConfig m_config;
    std::vector<ParamRange> m_owned;
    std::vector<float> m_m;
    std::vector<float> m_v;
    std::vector<bool> m_decay;
    std::uint64_t m_step = 0;
};

struct LrSchedule {
    double lr = 1e-3;
    double minLr = 1e-4;
    int warmupSteps = 0;
    int totalSteps = 1;
    // Learning rate for 0-based step `step`.
    double at(int step) const;
};

// Sum of squared gradients over `ranges`: this rank's part of the global L2 norm (the whole norm
// without ZeRO; summed over the DP group with it).
double squaredNorm(const float *gradients, const std::vector<ParamRange> &ranges);
// The same over spans (one per owned range, ZeRO-2/3 shards).
double squaredNorm(std::span<const std::span<float>> gradients);
void clipToNorm(std::span<const std::span<float>> gradients, double norm, double maxNorm);
// Scales the gradients in `ranges` so that a global L2 norm `norm` becomes at most maxNorm
// (maxNorm 0: no clipping).
void clipToNorm(float *gradients, const std::vector<ParamRange> &ranges, double norm, double maxNorm);

} // namespace trellis::trainer
