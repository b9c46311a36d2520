// AdamW (decoupled weight decay, bias-corrected moments) over the ranges of the model a rank
// owns, its moments in device buffers and its update a kernels/ops.h op; the learning-rate
// schedule (linear warm-up, cosine decay to min_lr); the global gradient norm's local part and
// clipping. Weight decay applies to matrices only, not to biases, norm gains or position
// embeddings.
#pragma once

#include "backend/trainer/device/buffer.h"

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

// Keeps moments only for the parameter ranges it owns (all of them without ZeRO, this rank's
// chunks with ZeRO), concatenated in the order of `owned`.
class AdamW {
public:
    AdamW(std::vector<ParamRange> owned, AdamWConfig config, Device &device = Device::cpu());

    // decayMask[i] is true for parameters that get weight decay; indexed like the model.
    void setDecayMask(const std::vector<bool> &mask);
    // Updates owned range i, whose parameters start at parameters[i] and reduced gradients at
    // gradients[i] (device memory).
    void step(std::span<float *const> parameters, std::span<const float *const> gradients, double lr);
    // The same for a model-indexed flat buffer holding every owned range.
    void step(float *parameters, const float *gradients, double lr);
    const std::vector<ParamRange> &owned() const { return m_owned; }

    std::uint64_t stepCount() const { return m_step; }
    // The moments on the host, in owned order (checkpoints).
    std::vector<float> firstMoments() const { return m_m.toHost(); }
    std::vector<float> secondMoments() const { return m_v.toHost(); }
    // `count` elements of both moments from `offset` (the compact owned order) into host memory:
    // a checkpoint's staging buffers, without a whole copy of the moments on the way.
    void copyMoments(std::size_t offset, std::size_t count, float *m, float *v) const
    {
        m_device.toHost(m, m_m.data() + offset, count * sizeof(float));
        m_device.toHost(v, m_v.data() + offset, count * sizeof(float));
    }
    // Restores moments for the owned ranges (same layout) and the step count, for resume.
    bool restore(const std::vector<float> &m, const std::vector<float> &v, std::uint64_t step);
    std::size_t stateBytes() const { return (m_m.size() + m_v.size()) * sizeof(float); }

private:
    AdamWConfig m_config;
    std::vector<ParamRange> m_owned;
    Device &m_device;
    DeviceBuffer<float> m_m, m_v;
    DeviceBuffer<std::uint8_t> m_decay; // per owned element; empty: decay everywhere
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

// Σ g² over the spans (this rank's part of the global L2 norm), on `device`.
double squaredNorm(std::span<const std::span<float>> gradients, Device &device = Device::cpu());
// Scales the spans so that a global L2 norm `norm` becomes at most maxNorm (0: no clipping).
void clipToNorm(std::span<const std::span<float>> gradients, double norm, double maxNorm, Device &device = Device::cpu());

} // namespace trellis::trainer
