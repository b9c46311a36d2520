// See checkpoint_costs.h.
#include "launcher/metrics/checkpoint_costs.h"

#include <algorithm>
#include <cmath>

namespace trellis::launcher::telemetry {

void CheckpointCosts::add(const StepRow &row)
{
    if (row.rank != 0)
        return;
    if (row.checkpointWriteMs > 0) {
        ++saves;
        writeMs += row.checkpointWriteMs;
    }
    // A boundary's checkpoint time is 0 where it saved nothing (a few µs of bookkeeping at most).
    if (row.checkpointMs > 0.01) {
        ++savingBoundaries;
        blockedMs += row.checkpointMs;
        mostBlockedMs = std::max(mostBlockedMs, row.checkpointMs);
    }
    if (row.stepMs <= 0)
        return;
    if (row.checkpointBehind) {
        ++besideSteps;
        besideStepMs += row.stepMs;
    } else {
        ++aloneSteps;
        aloneStepMs += row.stepMs;
    }
}

double CheckpointCosts::slowdown() const
{
    if (!besideSteps || !aloneSteps || aloneStepMs <= 0)
        return 0;
    return (besideStepMs / static_cast<double>(besideSteps)) / aloneMeanMs() - 1.0;
}

double CheckpointCosts::blockedFractionOfStep() const
{
    const double step = aloneSteps ? aloneMeanMs() : (besideSteps ? besideStepMs / static_cast<double>(besideSteps) : 0);
    return step > 0 ? blockedPerSaveMs() / step : 0;
}

QString CheckpointCosts::summary() const
{
    if (!any())
        return {};
    QString s = QStringLiteral("%1 %2; training waited %3 ms a save (%4% of a step, at most %5 ms)")
                    .arg(saves)
                    .arg(saves == 1 ? QStringLiteral("save") : QStringLiteral("saves"))
                    .arg(blockedPerSaveMs(), 0, 'f', 1)
                    .arg(blockedFractionOfStep() * 100, 0, 'f', 1)
                    .arg(mostBlockedMs, 0, 'f', 1);
    if (saves)
        s += QStringLiteral("; each written in %1 ms").arg(writePerSaveMs(), 0, 'f', 1);
    if (besideSteps && aloneSteps)
        s += QStringLiteral("; steps beside a write %1% %2 (%3 of %4 steps)")
                 .arg(std::abs(slowdown()) * 100, 0, 'f', 1)
                 .arg(slowdown() >= 0 ? QStringLiteral("slower") : QStringLiteral("faster"))
                 .arg(besideSteps)
                 .arg(besideSteps + aloneSteps);
    return s;
}

} // namespace trellis::launcher::telemetry
