// Deterministic batching; see data_loader.h.
#include "trainer/data_loader.h"

#include "trainer/rng.h"

#include <filesystem>
#include <fstream>

namespace trellis::trainer {

DataLoader::DataLoader(std::vector<std::uint8_t> tokens, int seqLen, std::uint64_t seed)
    : m_tokens(std::move(tokens)), m_seqLen(seqLen), m_seed(seed)
{
}

plan::Result<DataLoader> DataLoader::fromTextFile(const std::string &path, int seqLen, std::uint64_t seed)
{
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        return plan::Result<DataLoader>::failure("training.data.path", path + ": no such file");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return plan::Result<DataLoader>::failure("training.data.path", path + ": cannot be read");
    std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (bytes.size() < static_cast<std::size_t>(seqLen) + 2)
        return plan::Result<DataLoader>::failure(
            "training.data.path", path + ": " + std::to_string(bytes.size()) + " bytes is too short for model.seq_len " +
                                      std::to_string(seqLen));
    return DataLoader(std::move(bytes), seqLen, seed);
}

DataLoader DataLoader::synthetic(std::size_t length, int vocab, int seqLen, std::uint64_t seed)
{
    Rng rng(seed ^ 0x5eed5eedULL);
    std::vector<std::uint8_t> tokens(length);
    const auto limit = static_cast<std::uint64_t>(std::min(vocab, 256));
    for (auto &t : tokens)
        t = static_cast<std::uint8_t>(rng.below(limit));
    return DataLoader(std::move(tokens), seqLen, seed);
}

std::size_t DataLoader::sampleOffset(std::uint64_t step, std::size_t index) const
{
    // One independent stream per (seed, step, sample): no state to carry, trivially resumable.
    Rng rng(m_seed * 0x9E3779B97F4A7C15ULL + step * 0xBF58476D1CE4E5B9ULL + index * 0x94D049BB133111EBULL + 1);
    const std::size_t windows = m_tokens.size() - static_cast<std::size_t>(m_seqLen) - 1;
    return static_cast<std::size_t>(rng.below(windows + 1));
}

Batch DataLoader::batch(std::uint64_t step, int dpRank, int dpSize, int micro, int microBatches,
                        int microBatchSize) const
{
    (void)dpSize;
    Batch b;
    b.batch = microBatchSize;
    b.seqLen = m_seqLen;
    b.tokens.resize(static_cast<std::size_t>(microBatchSize) * m_seqLen);
    b.targets.resize(b.tokens.size());
    const std::size_t perRank = static_cast<std::size_t>(microBatchSize) * microBatches;
    for (int i = 0; i < microBatchSize; ++i) {
        const std::size_t global = dpRank * perRank + static_cast<std::size_t>(micro) * microBatchSize + i;
        const std::size_t offset = sampleOffset(step, global);
        for (int t = 0; t < m_seqLen; ++t) {
            b.tokens[static_cast<std::size_t>(i) * m_seqLen + t] = m_tokens[offset + t];
            b.targets[static_cast<std::size_t>(i) * m_seqLen + t] = m_tokens[offset + t + 1];
        }
    }
    return b;
}

} // namespace trellis::trainer
