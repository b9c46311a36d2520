// See sequential.h.
#include "trainer/parallel/sequential.h"

namespace trellis::trainer {

Sequential::Sequential(const GptConfig &config, GradientSharding &storage, GptModel<float>::Recompute recompute, const ModelGroups &groups, Device &device)
    : m_storage(storage), m_model(std::make_unique<GptModel<float>>(config, false, device))
{
    m_model->setUnitHooks(&storage);
    groups.attach(*m_model);
    m_model->setRecompute(recompute);
}

StepOutput Sequential::run(const std::vector<MicroBatch> &batches, const Phase &phase)
{
    StepOutput out;
    out.hasLoss = true;
    const int m = static_cast<int>(batches.size());
    for (int micro = 0; micro < m; ++micro) {
        const MicroBatch &b = batches[static_cast<std::size_t>(micro)];
        phase("forward");
        const float loss = m_model->forward(b.tokens, b.targets, b.batch, b.seqLen);
        phase("backward");
        // Only the last micro-batch completes the gradients: reduce once, after accumulation.
        if (micro == m - 1)
            m_model->setGradientsReadyHook([this](std::size_t offset) { m_storage.onGradientsReady(offset); });
        m_model->backward(1.0f / static_cast<float>(m));
        m_model->setGradientsReadyHook(nullptr);
        out.loss += loss / m;
    }
    return out;
}

} // namespace trellis::trainer
