// Training data. Sources: a text file (each byte is a token, vocabulary 256), a token-shard file
// in llm.c's .bin layout (a 256×int32 header: magic 20240520, version 1, token count; then
// uint16 tokens), or synthetic tokens for benchmarks.
// Sampling: the stream is cut into non-overlapping windows of seqLen+1 tokens; each epoch visits
// them in an order shuffled from (seed, epoch). Global sample g of the run is window
// order[g mod W] of epoch g div W, and the global batch of step s is samples [s·G, (s+1)·G).
// DP rank r takes its own contiguous slice of every global batch, so ranks never share a sample,
// an epoch covers every window exactly once, and the position is a pure function of the step:
// resuming at step s continues exactly where the run was.
#pragma once

#include "backend/plan/result.h"

#include <cstdint>
#include <string>
#include <vector>

namespace trellis::trainer {

struct Batch {
    std::vector<std::int32_t> tokens;  // [batch, seqLen]
    std::vector<std::int32_t> targets; // [batch, seqLen], tokens shifted by one
    int batch = 0;
    int seqLen = 0;
};

inline constexpr std::int32_t kTokenShardMagic = 20240520;

class DataLoader {
public:
    // Errors name the field and the file.
    static plan::Result<DataLoader> fromTextFile(const std::string &path, int seqLen, std::uint64_t seed);
    static plan::Result<DataLoader> fromTokenFile(const std::string &path, int seqLen, int vocab, std::uint64_t seed);
    static DataLoader synthetic(std::size_t length, int vocab, int seqLen, std::uint64_t seed);
    // Writes tokens in the llm.c .bin layout (for tools and tests).
    static bool writeTokenFile(const std::string &path, const std::vector<std::uint16_t> &tokens);

    // The samples of step `step` (0-based) that belong to `dpRank` of `dpSize`, micro-batch
    // `micro` of `microBatches`, `microBatchSize` samples each.
    Batch batch(std::uint64_t step, int dpRank, int dpSize, int micro, int microBatches, int microBatchSize) const;

    // Window index (0..windowCount()-1) of global sample g; exposed for tests.
    std::size_t windowOf(std::uint64_t globalSample) const;
    std::size_t windowCount() const { return m_windows; }
    std::size_t tokenCount() const { return m_tokens.size(); }

private:
    DataLoader(std::vector<std::uint16_t> tokens, int seqLen, std::uint64_t seed);
    const std::vector<std::size_t> &order(std::uint64_t epoch) const;

    std::vector<std::uint16_t> m_tokens;
    int m_seqLen;
    std::uint64_t m_seed;
    std::size_t m_windows;
    mutable std::uint64_t m_cachedEpoch = ~std::uint64_t(0);
    mutable std::vector<std::size_t> m_order;
};

} // namespace trellis::trainer
