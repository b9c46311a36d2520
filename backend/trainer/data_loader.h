// Training data: a byte-level token stream (each byte of a text file is a token, vocab 256) or a
// synthetic stream for benchmarks. Batches are windows of seqLen+1 tokens at offsets drawn from a
// deterministic RNG keyed by (seed, step), so every DP rank agrees on the global batch and takes
// its own disjoint slice of it: rank r of D gets samples [r·B/D, (r+1)·B/D).
#pragma once

#include "plan/result.h"

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

class DataLoader {
public:
    // Reads the whole text file; errors name the file.
    static plan::Result<DataLoader> fromTextFile(const std::string &path, int seqLen, std::uint64_t seed);
    static DataLoader synthetic(std::size_t length, int vocab, int seqLen, std::uint64_t seed);

    // The samples of global batch `step` (0-based) that belong to `dpRank` of `dpSize`, micro-batch
    // `micro` of `microBatches`, `microBatchSize` samples each.
    Batch batch(std::uint64_t step, int dpRank, int dpSize, int micro, int microBatches, int microBatchSize) const;

    // Offset of global sample `index` of step `step`; exposed for tests.
    std::size_t sampleOffset(std::uint64_t step, std::size_t index) const;
    std::size_t tokenCount() const { return m_tokens.size(); }

private:
    DataLoader(std::vector<std::uint8_t> tokens, int seqLen, std::uint64_t seed);

    std::vector<std::uint8_t> m_tokens;
    int m_seqLen;
    std::uint64_t m_seed;
};

} // namespace trellis::trainer
