// See context.h.
#include "backend/trainer/parallel/context_parallel.h"

#include <stdexcept>
#include <string>

namespace trellis::trainer {

ContextParallel::ContextParallel(const GptConfig &config) : m_config(config) {}

std::vector<MicroBatch> ContextParallel::localBatches(const std::vector<MicroBatch> &whole)
{
    const int cp = m_config.cp;
    m_tokens.resize(whole.size());
    m_targets.resize(whole.size());
    std::vector<MicroBatch> local;
    for (std::size_t i = 0; i < whole.size(); ++i) {
        const MicroBatch &w = whole[i];
        if (w.seqLen % (m_config.cpZigzag ? 2 * cp : cp) != 0)
            throw std::invalid_argument("context parallelism: a sequence of " + std::to_string(w.seqLen) +
                                        " tokens does not split into the layout's chunks");
        const int mine = w.seqLen / cp;
        const std::vector<std::int32_t> positions = contextPositions(cp, m_config.cpRank, mine, m_config.cpZigzag);
        auto &tokens = m_tokens[i], &targets = m_targets[i];
        tokens.resize(static_cast<std::size_t>(w.batch) * mine);
        targets.resize(tokens.size());
        for (int b = 0; b < w.batch; ++b)
            for (int t = 0; t < mine; ++t) {
                const std::size_t from = static_cast<std::size_t>(b) * w.seqLen + static_cast<std::size_t>(positions[static_cast<std::size_t>(t)]);
                tokens[static_cast<std::size_t>(b) * mine + t] = w.tokens[from];
                targets[static_cast<std::size_t>(b) * mine + t] = w.targets[from];
            }
        local.push_back({tokens.data(), targets.data(), w.batch, mine});
    }
    return local;
}

} // namespace trellis::trainer
