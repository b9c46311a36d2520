// How the Estimate panel and the plan comparison write figures: durations, rates, bytes.
#pragma once

#include <QString>

#include <cmath>

namespace trellis::ui::estimate {

inline QString gigabytes(double bytes) { return QString::number(bytes / 1e9, 'f', bytes < 1e9 ? 3 : 1); }

inline QString duration(double ms)
{
    return ms >= 1000 ? QStringLiteral("%1 s").arg(ms / 1000, 0, 'f', 2) : QStringLiteral("%1 ms").arg(ms, 0, 'f', 2);
}

inline QString rate(double perSecond)
{
    return perSecond >= 1e6   ? QStringLiteral("%1 M").arg(perSecond / 1e6, 0, 'f', 2)
           : perSecond >= 1e3 ? QStringLiteral("%1 k").arg(perSecond / 1e3, 0, 'f', 1)
                              : QString::number(perSecond, 'f', 0);
}

// "+12.0%" / "−3.1%" / "" when equal or undefined.
inline QString percentChange(double before, double after)
{
    if (before <= 0 || std::abs(after / before - 1) < 0.0005)
        return {};
    return QStringLiteral("%1%2%").arg(after >= before ? QStringLiteral("+") : QStringLiteral("−")).arg(std::abs(100 * (after / before - 1)), 0, 'f', 1);
}

} // namespace trellis::ui::estimate
