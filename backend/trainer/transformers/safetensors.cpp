// See safetensors.h.
#include "backend/trainer/transformers/safetensors.h"

#include "kernels/dtype.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <utility>

namespace trellis::trainer {
namespace {

constexpr std::uint64_t kMaxHeaderBytes = 100u << 20; // the reference implementation's limit

float halfToFloat(std::uint16_t h)
{
    const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
    std::uint32_t exponent = (h >> 10) & 0x1fu, mantissa = h & 0x3ffu, bits = 0;
    if (exponent == 0 && mantissa == 0) {
        bits = sign;
    } else if (exponent == 0) { // subnormal: normalise
        exponent = 127 - 15 + 1;
        while (!(mantissa & 0x400u)) {
            mantissa <<= 1;
            --exponent;
        }
        bits = sign | (exponent << 23) | ((mantissa & 0x3ffu) << 13);
    } else if (exponent == 31) {
        bits = sign | 0x7f800000u | (mantissa << 13);
    } else {
        bits = sign | ((exponent + 127 - 15) << 23) | (mantissa << 13);
    }
    float f;
    std::memcpy(&f, &bits, sizeof f);
    return f;
}

// The 8-byte little-endian header length, then the JSON header (an object). "" or why not.
std::string readHeader(std::ifstream &in, const std::string &path, std::uint64_t fileSize, std::uint64_t &headerBytes,
                       nlohmann::json &header)
{
    unsigned char lengthBytes[8] = {};
    if (fileSize < 8 || !in.read(reinterpret_cast<char *>(lengthBytes), 8))
        return path + ": too short for a safetensors file (" + std::to_string(fileSize) + " bytes)";
    headerBytes = 0;
    for (int i = 7; i >= 0; --i)
        headerBytes = headerBytes << 8 | lengthBytes[i];
    if (headerBytes > kMaxHeaderBytes || headerBytes > fileSize - 8)
        return path + ": header length " + std::to_string(headerBytes) + " does not fit the file (" + std::to_string(fileSize) +
               " bytes)";
    std::string text(headerBytes, '\0');
    in.read(text.data(), static_cast<std::streamsize>(headerBytes));
    try {
        header = nlohmann::json::parse(text);
    } catch (const std::exception &) {
        return path + ": the header is not valid JSON";
    }
    if (!header.is_object())
        return path + ": the header is not a JSON object";
    return {};
}

// `count` values of `width` bytes (F32, F64, F16 or BF16) as floats.
void decodeValues(const std::string &raw, std::uint64_t width, const std::string &dtype, std::uint64_t count,
                  std::vector<float> &values)
{
    values.resize(count);
    for (std::uint64_t i = 0; i < count; ++i) {
        const char *p = raw.data() + i * width;
        if (width == 4) {
            std::memcpy(&values[i], p, 4);
        } else if (width == 8) {
            double d;
            std::memcpy(&d, p, 8);
            values[i] = static_cast<float>(d);
        } else {
            std::uint16_t h;
            std::memcpy(&h, p, 2);
            if (dtype == "BF16") {
                const std::uint32_t bits = static_cast<std::uint32_t>(h) << 16;
                std::memcpy(&values[i], &bits, 4);
            } else {
                values[i] = halfToFloat(h);
            }
        }
    }
}

// Where a tensor's bytes lie in the data (after the header).
struct Span {
    std::uint64_t begin, end;
    std::string name;
};

// One tensor's header entry checked and its data read (`dataStart`: the data's offset in the file,
// `dataBytes` its size). "" or why not.
std::string readTensor(std::ifstream &in, const std::string &where, const nlohmann::json &entry, std::uint64_t dataStart,
                       std::uint64_t dataBytes, SafeTensor &t, Span &span)
{
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") || !entry.contains("data_offsets") ||
        !entry["dtype"].is_string() || !entry["shape"].is_array() || !entry["data_offsets"].is_array() ||
        entry["data_offsets"].size() != 2)
        return where + ": needs dtype, shape and two data_offsets";
    const std::string dtype = entry["dtype"].get<std::string>();
    const std::uint64_t width = dtype == "F32" ? 4 : dtype == "F64" ? 8 : dtype == "F16" || dtype == "BF16" ? 2 : 0;
    if (width == 0)
        return where + ": dtype " + dtype + " is not a floating-point type this reader takes (F32, F64, F16, BF16)";
    std::uint64_t count = 1;
    for (const auto &d : entry["shape"]) {
        if (!d.is_number_unsigned())
            return where + ": shape holds a negative or non-integer size";
        const auto n = d.get<std::uint64_t>();
        if (n != 0 && count > std::numeric_limits<std::uint64_t>::max() / 8 / n)
            return where + ": shape too large";
        count *= n;
        t.shape.push_back(static_cast<std::int64_t>(n));
    }
    const auto &offsets = entry["data_offsets"];
    if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned())
        return where + ": data_offsets must be non-negative integers";
    const auto begin = offsets[0].get<std::uint64_t>(), end = offsets[1].get<std::uint64_t>();
    if (begin > end || end > dataBytes)
        return where + ": data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) + "] lie outside the " +
               std::to_string(dataBytes) + " bytes of data";
    if (end - begin != count * width)
        return where + ": " + std::to_string(end - begin) + " bytes of data for shape of " + std::to_string(count) + " " + dtype +
               " values (" + std::to_string(count * width) + " bytes)";
    std::string raw(end - begin, '\0');
    in.seekg(static_cast<std::streamoff>(dataStart + begin));
    if (!in.read(raw.data(), static_cast<std::streamsize>(raw.size())))
        return where + ": cannot read its data";
    decodeValues(raw, width, dtype, count, t.values);
    t.dtype = dtype;
    span = {begin, end, {}};
    return {};
}

// The data is the tensors, back to back: no overlaps, no gaps. "" or where not.
std::string checkBackToBack(std::vector<Span> spans, std::uint64_t dataBytes, const std::string &path)
{
    std::sort(spans.begin(), spans.end(), [](const Span &a, const Span &b) { return a.begin < b.begin; });
    std::uint64_t at = 0;
    for (const Span &s : spans) {
        if (s.begin != at)
            return path + ": tensor " + s.name + " starts at byte " + std::to_string(s.begin) + " of the data, expected " +
                   std::to_string(at) + (s.begin < at ? " (it overlaps the tensor before)" : " (a gap before it)");
        at = s.end;
    }
    if (at != dataBytes)
        return path + ": " + std::to_string(dataBytes - at) + " bytes of data after the last tensor";
    return {};
}

} // namespace

std::string readSafetensors(const std::string &path, SafetensorsFile &out)
{
    out = {};
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return path + ": cannot be opened";
    in.seekg(0, std::ios::end);
    const auto fileSize = static_cast<std::uint64_t>(in.tellg());
    in.seekg(0);
    std::uint64_t headerBytes = 0;
    nlohmann::json header;
    if (const std::string e = readHeader(in, path, fileSize, headerBytes, header); !e.empty())
        return e;
    const std::uint64_t dataBytes = fileSize - 8 - headerBytes;
    std::vector<Span> spans;
    for (const auto &[name, entry] : header.items()) {
        if (name == "__metadata__") {
            if (!entry.is_object())
                return path + ": __metadata__ is not an object";
            for (const auto &[key, value] : entry.items())
                if (value.is_string())
                    out.metadata[key] = value.get<std::string>();
            continue;
        }
        SafeTensor t;
        Span span;
        if (const std::string e = readTensor(in, path + ": tensor " + name, entry, 8 + headerBytes, dataBytes, t, span); !e.empty())
            return e;
        span.name = name;
        spans.push_back(std::move(span));
        out.tensors[name] = std::move(t);
    }
    return checkBackToBack(std::move(spans), dataBytes, path);
}

std::string writeSafetensors(const std::string &path, const SafetensorsFile &file)
{
    nlohmann::json header = nlohmann::json::object();
    std::uint64_t at = 0;
    for (const auto &[name, t] : file.tensors) {
        std::uint64_t count = 1;
        for (std::int64_t d : t.shape)
            count *= static_cast<std::uint64_t>(d);
        if (count != t.values.size())
            return path + ": tensor " + name + " has " + std::to_string(t.values.size()) + " values for its shape";
        const std::uint64_t width = t.dtype == "F32" ? 4 : t.dtype == "BF16" || t.dtype == "F16" ? 2 : 0;
        if (width == 0)
            return path + ": tensor " + name + ": dtype " + t.dtype + " cannot be written (F32, BF16 or F16)";
        header[name] = {{"dtype", t.dtype}, {"shape", t.shape}, {"data_offsets", {at, at + count * width}}};
        at += count * width;
    }
    if (!file.metadata.empty())
        header["__metadata__"] = file.metadata;
    std::string text = header.dump();
    text.append((8 - text.size() % 8) % 8, ' '); // the data starts 8-byte aligned
    const std::string temporary = path + ".partial";
    {
        std::ofstream o(temporary, std::ios::binary | std::ios::trunc);
        if (!o)
            return path + ": cannot be written";
        unsigned char length[8];
        for (int i = 0; i < 8; ++i)
            length[i] = static_cast<unsigned char>(static_cast<std::uint64_t>(text.size()) >> (8 * i));
        o.write(reinterpret_cast<const char *>(length), 8);
        o.write(text.data(), static_cast<std::streamsize>(text.size()));
        for (const auto &[name, t] : file.tensors) { // little-endian: this machine's order
            if (t.dtype == "F32") {
                o.write(reinterpret_cast<const char *>(t.values.data()), static_cast<std::streamsize>(t.values.size() * 4));
                continue;
            }
            std::vector<std::uint16_t> half(t.values.size());
            for (std::size_t i = 0; i < half.size(); ++i)
                half[i] = t.dtype == "BF16" ? kernels::bf16::fromFloat(t.values[i]) : kernels::f16::fromFloat(t.values[i]);
            o.write(reinterpret_cast<const char *>(half.data()), static_cast<std::streamsize>(half.size() * 2));
        }
        if (!o.flush())
            return path + ": writing failed (disk full?)";
    }
    std::error_code ec;
    std::filesystem::rename(temporary, path, ec);
    if (ec)
        return path + ": " + ec.message();
    return {};
}

} // namespace trellis::trainer
