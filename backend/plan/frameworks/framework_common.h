// What the DeepSpeed and Megatron-LM readers share (deepspeed.cpp, megatron.cpp):
// number formatting, overflow-checked products and the report of one foreign document's errors
// and warnings. Internal to backend/plan.
#pragma once

#include "backend/plan/plan.h"
#include "backend/plan/result.h"

#include <charconv>
#include <limits>
#include <optional>
#include <string>

namespace trellis::plan::interop_detail {

inline constexpr double kBytesPerMb = 1024.0 * 1024.0; // bucket_mb counts MiB, as the trainer does
inline constexpr double kFp32Bytes = 4.0;
inline constexpr long long kMaxInt = std::numeric_limits<int>::max();

// Shortest text that reads back as the same double ("0.0003", "1e-08", "256").
inline std::string num(double v)
{
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

// a × b, or nothing when it overflows.
inline std::optional<long long> times(long long a, long long b)
{
    long long r = 0;
    if (__builtin_mul_overflow(a, b, &r))
        return std::nullopt;
    return r;
}

// Diagnostics about one foreign document. The document ("deepspeed", "megatron") is the path; the
// key or flag opens the message.
class Report {
public:
    explicit Report(std::string source) : m_source(std::move(source)) {}

    void error(const std::string &where, const std::string &what)
    {
        m_errors.push_back({Severity::Error, m_source, where.empty() ? what : where + ": " + what});
    }
    void warn(const std::string &text) { m_warnings.push_back({Severity::Warning, m_source, text}); }
    bool failed() const { return !m_errors.empty(); }

    // Hands the warnings out and returns the plan, or the errors.
    Result<Plan> finish(Plan plan, Diagnostics *warningsOut) const
    {
        if (warningsOut)
            warningsOut->insert(warningsOut->end(), m_warnings.begin(), m_warnings.end());
        if (!m_errors.empty())
            return m_errors;
        return plan;
    }

private:
    std::string m_source;
    Diagnostics m_errors;
    Diagnostics m_warnings;
};

} // namespace trellis::plan::interop_detail
