// Result type and diagnostics shared by the Qt-free libraries.
// Every error carries the field path it is about (e.g. "parallel.tp") and a reason, so the CLI,
// the GUI and the trainer can all name exactly what is wrong without exceptions crossing layers.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace trellis::plan {

enum class Severity { Error, Warning };

struct Diagnostic {
    Severity severity = Severity::Error;
    std::string path;    // field path, e.g. "parallel.tp"; empty for whole-document problems
    std::string message; // reason, e.g. "3 does not divide model.heads (8)"

    std::string toString() const
    {
        std::string prefix = severity == Severity::Warning ? "warning: " : "";
        return prefix + (path.empty() ? message : path + ": " + message);
    }
    bool operator==(const Diagnostic &) const = default;
};

using Diagnostics = std::vector<Diagnostic>;

inline bool hasErrors(const Diagnostics &diagnostics)
{
    for (const auto &d : diagnostics)
        if (d.severity == Severity::Error)
            return true;
    return false;
}

// A value or the diagnostics explaining why there is none.
template <typename T>
class Result {
public:
    Result(T value) : m_value(std::move(value)) {}
    Result(Diagnostics errors) : m_errors(std::move(errors)) {}
    static Result failure(std::string path, std::string message)
    {
        return Result(Diagnostics{{Severity::Error, std::move(path), std::move(message)}});
    }

    bool ok() const { return m_value.has_value(); }
    explicit operator bool() const { return ok(); }
    const T &value() const & { return *m_value; }
    T &value() & { return *m_value; }
    T &&value() && { return std::move(*m_value); }
    const T *operator->() const { return &*m_value; }
    const Diagnostics &errors() const { return m_errors; }
    std::string errorText() const
    {
        std::string text;
        for (const auto &e : m_errors) {
            if (!text.empty())
                text += '\n';
            text += e.toString();
        }
        return text;
    }

private:
    std::optional<T> m_value;
    Diagnostics m_errors;
};

} // namespace trellis::plan
