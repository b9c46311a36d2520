// The parameters and gradients a rank holds, as one flat local buffer each: the model units this
// rank's chunks use (all of them without a pipeline, a stage's otherwise) laid end to end in
// model order, cut into segments each padded to a multiple of the dp degree so reduce-scatter
// buckets split evenly. With a pipeline the tied embedding (unit 0) is a segment of its own, so
// the first and the last stage cut it into the same buckets and their reduced copies line up.
// Either buffer may be left out (ZeRO-2 keeps no whole gradients; mixed-precision ZeRO-1 keeps its
// fp32 masters apart), the layout alone still serving.
// Threading: training thread only.
#pragma once

#include "backend/trainer/optimizer/adamw.h"
#include "backend/trainer/device/buffer.h"
#include "backend/trainer/model/gpt_model.h"

#include <cstddef>
#include <vector>

namespace trellis::trainer {

class ModelState {
public:
    struct Segment {
        std::size_t begin = 0; // local offset
        std::size_t end = 0;   // local end, padded
    };
    struct HeldUnit {
        int unit = 0;
        ParamUnit range;       // in the model index
        std::size_t local = 0; // its local offset
    };

    // units: the model's; held: the units this rank holds, ascending; multiple: the dp degree.
    struct Buffers {
        bool params;
        bool grads;
    };
    ModelState(const std::vector<ParamUnit> &units, const std::vector<int> &held, std::size_t multiple,
               bool separateFirstUnit, Device &device = Device::cpu(), Buffers buffers = {true, true});

    std::size_t size() const { return m_size; } // padded
    Device &device() const { return m_device; }
    float *params() { return m_params.data(); }
    float *grads() { return m_grads.data(); }
    const float *params() const { return m_params.data(); }
    const float *grads() const { return m_grads.data(); }
    void zeroGradients();
    void releaseParameters() { m_params.release(); }
    void releaseGradients() { m_grads.release(); }

    const std::vector<HeldUnit> &held() const { return m_held; }
    const std::vector<Segment> &segments() const { return m_segments; }
    bool holds(int unit) const;
    const HeldUnit &unit(int unit) const; // throws if not held
    // Local offset of model offset `offset` (which must lie in a held unit).
    std::size_t localOf(std::size_t offset) const;
    // The real (unpadded) parts of local [begin, end) as model-index ranges with their local offsets.
    std::vector<std::pair<ParamRange, std::size_t>> modelRanges(std::size_t begin, std::size_t end) const;
    // Copies the held units' parameters from a vector in the model index (device memory).
    void load(const float *model);

private:
    std::vector<HeldUnit> m_held;
    std::vector<Segment> m_segments;
    Device &m_device;
    DeviceBuffer<float> m_params{m_device}, m_grads{m_device};
    std::size_t m_size = 0;
};

} // namespace trellis::trainer
