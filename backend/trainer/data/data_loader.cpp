// Data sources and the epoch sampler; see data_loader.h.
#include "backend/trainer/data/data_loader.h"

#include "backend/trainer/common/rng.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>

namespace trellis::trainer {

DataLoader::DataLoader(std::vector<std::uint16_t> tokens, int seqLen, std::uint64_t seed)
    : m_tokens(std::move(tokens)), m_seqLen(seqLen), m_seed(seed),
      m_windows((m_tokens.size() - 1) / static_cast<std::size_t>(seqLen))
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
    if (bytes.size() < 2 * static_cast<std::size_t>(seqLen) + 1)
        return plan::Result<DataLoader>::failure(
            "training.data.path", path + ": " + std::to_string(bytes.size()) + " bytes is too short for two windows of model.seq_len " +
                                      std::to_string(seqLen));
    return DataLoader(std::vector<std::uint16_t>(bytes.begin(), bytes.end()), seqLen, seed);
}

plan::Result<DataLoader> DataLoader::fromTokenFile(const std::string &path, int seqLen, int vocab, std::uint64_t seed)
{
    auto fail = [&](const std::string &why) { return plan::Result<DataLoader>::failure("training.data.path", path + ": " + why); };
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        return fail("no such file");
    std::ifstream in(path, std::ios::binary);
    std::int32_t header[256] = {};
    if (!in.read(reinterpret_cast<char *>(header), sizeof header))
        return fail("shorter than the 1024-byte token-shard header");
    if (header[0] != kTokenShardMagic)
        return fail("not a token shard (magic " + std::to_string(header[0]) + ", expected " + std::to_string(kTokenShardMagic) + ")");
    if (header[1] != 1)
        return fail("token shard version " + std::to_string(header[1]) + " is not supported (expected 1)");
    if (header[2] < 0)
        return fail("negative token count in the header");
    const auto count = static_cast<std::size_t>(header[2]);
    const auto size = std::filesystem::file_size(path, ec);
    if (size != sizeof header + count * sizeof(std::uint16_t))
        return fail("header promises " + std::to_string(count) + " tokens but the file holds " +
                    std::to_string((size - sizeof header) / 2) + " (truncated or padded)");
    std::vector<std::uint16_t> tokens(count);
    in.read(reinterpret_cast<char *>(tokens.data()), static_cast<std::streamsize>(count * sizeof(std::uint16_t)));
    for (std::size_t i = 0; i < count; ++i)
        if (tokens[i] >= vocab)
            return fail("token " + std::to_string(tokens[i]) + " at position " + std::to_string(i) +
                        " is outside model.vocab (" + std::to_string(vocab) + ")");
    if (count < 2 * static_cast<std::size_t>(seqLen) + 1)
        return fail(std::to_string(count) + " tokens is too short for two windows of model.seq_len " + std::to_string(seqLen));
    return DataLoader(std::move(tokens), seqLen, seed);
}

bool DataLoader::writeTokenFile(const std::string &path, const std::vector<std::uint16_t> &tokens)
{
    std::int32_t header[256] = {};
    header[0] = kTokenShardMagic;
    header[1] = 1;
    header[2] = static_cast<std::int32_t>(tokens.size());
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char *>(header), sizeof header);
    out.write(reinterpret_cast<const char *>(tokens.data()), static_cast<std::streamsize>(tokens.size() * 2));
    return static_cast<bool>(out);
}

DataLoader DataLoader::synthetic(std::size_t length, int vocab, int seqLen, std::uint64_t seed)
{
    Rng rng(seed ^ 0x5eed5eedULL);
    std::vector<std::uint16_t> tokens(length);
    const auto limit = static_cast<std::uint64_t>(std::min(vocab, 65536));
    for (auto &t : tokens)
        t = static_cast<std::uint16_t>(rng.below(limit));
    return DataLoader(std::move(tokens), seqLen, seed);
}

const std::vector<std::size_t> &DataLoader::order(std::uint64_t epoch) const
{
    if (epoch != m_cachedEpoch) {
        m_order.resize(m_windows);
        std::iota(m_order.begin(), m_order.end(), std::size_t(0));
        Rng rng(m_seed * 0x9E3779B97F4A7C15ULL + (epoch + 1) * 0xBF58476D1CE4E5B9ULL);
        for (std::size_t i = m_windows; i > 1; --i) // Fisher–Yates
            std::swap(m_order[i - 1], m_order[static_cast<std::size_t>(rng.below(i))]);
        m_cachedEpoch = epoch;
    }
    return m_order;
}

std::size_t DataLoader::windowOf(std::uint64_t g) const
{
    return order(g / m_windows)[static_cast<std::size_t>(g % m_windows)];
}

Batch DataLoader::batch(std::uint64_t step, int dpRank, int dpSize, int micro, int microBatches, int microBatchSize) const
{
    Batch b;
    b.batch = microBatchSize;
    b.seqLen = m_seqLen;
    b.tokens.resize(static_cast<std::size_t>(microBatchSize) * m_seqLen);
    b.targets.resize(b.tokens.size());
    const std::uint64_t perRank = static_cast<std::uint64_t>(microBatchSize) * microBatches;
    const std::uint64_t global = perRank * static_cast<std::uint64_t>(dpSize);
    for (int i = 0; i < microBatchSize; ++i) {
        const std::uint64_t g = step * global + static_cast<std::uint64_t>(dpRank) * perRank +
                                static_cast<std::uint64_t>(micro) * microBatchSize + static_cast<std::uint64_t>(i);
        const std::size_t offset = windowOf(g) * static_cast<std::size_t>(m_seqLen);
        for (int t = 0; t < m_seqLen; ++t) {
            b.tokens[static_cast<std::size_t>(i) * m_seqLen + t] = m_tokens[offset + t];
            b.targets[static_cast<std::size_t>(i) * m_seqLen + t] = m_tokens[offset + t + 1];
        }
    }
    return b;
}

} // namespace trellis::trainer
