// See sequential.h.
#include "backend/trainer/parallel/sequential.h"

namespace trellis::trainer {

template <typename T>
Sequential<T>::Sequential(const GptConfig &config, GradientSharding &storage, Recompute recompute,
                          const ModelGroups &groups, Device &device)
    : m_storage(storage), m_model(std::make_unique<GptModel<T>>(config, false, device))
{
    m_model->setUnitHooks(&storage.hooks<T>());
    groups.attach(*m_model);
    m_model->setRecompute(recompute);
}

template <typename T>
StepOutput Sequential<T>::run(const std::vector<MicroBatch> &batches, const Phase &phase, double lossScale)
{
    using G = typename GptModel<T>::G;
    StepOutput out;
    out.hasLoss = true;
    const int m = static_cast<int>(batches.size());
    for (int micro = 0; micro < m; ++micro) {
        const MicroBatch &b = batches[static_cast<std::size_t>(micro)];
        phase("forward");
        const G loss = m_model->forward(b.tokens, b.targets, b.batch, b.seqLen);
        phase("backward");
        // Only the last micro-batch completes the gradients: reduce once, after accumulation.
        if (micro == m - 1)
            m_model->setGradientsReadyHook([this](std::size_t offset) { m_storage.onGradientsReady(offset); });
        m_model->backward(static_cast<G>(lossScale) / static_cast<G>(m));
        m_model->setGradientsReadyHook(nullptr);
        out.loss += loss / m;
    }
    return out;
}

template class Sequential<float>;
template class Sequential<kernels::bf16>;
template class Sequential<kernels::f16>;

} // namespace trellis::trainer
