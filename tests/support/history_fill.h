// A history a test writes: one completed run of `ranks` ranks and `steps` steps, each rank's Hello
// (host, precision, kernels, threads) and Goodbye, every step's report — as a supervisor records it.
#pragma once

#include "launcher/history/history_writer.h"

#include <QDateTime>
#include <QString>

namespace trellis::test {

inline void fillRun(launcher::HistoryWriter &w, const QString &runId, int ranks, int steps)
{
    w.enqueue(launcher::NewRunOp{runId, QStringLiteral("demo"), QStringLiteral("{\"model\":{\"layers\":2}}"), QStringLiteral("local"),
                       ranks, steps, QDateTime::currentDateTimeUtc()});
    for (int r = 0; r < ranks; ++r) {
        launcher::RankRow row;
        row.rank = r;
        row.host = QStringLiteral("h");
        row.pid = 100 + r;
        row.dp = r;
        row.precision = QStringLiteral("bf16");
        row.kernels = r == 0 ? QStringLiteral("bf16 GEMMs: fp32 (converted operands)") : QStringLiteral("bf16 GEMMs: onednn (native bf16)");
        row.threads = 2;
        w.enqueue(launcher::RankOp{runId, row});
    }
    for (int r = 0; r < ranks; ++r) { // Goodbye: exit code only; must not erase Hello's fields
        launcher::RankRow bye;
        bye.rank = r;
        bye.exitCode = 0;
        bye.dropped = r;
        w.enqueue(launcher::RankOp{runId, bye});
    }
    for (int s = 1; s <= steps; ++s)
        for (int r = 0; r < ranks; ++r) {
            launcher::StepRow row;
            row.rank = r;
            row.step = s;
            row.loss = 5.0 - 0.1 * s;
            row.stepMs = 10 + r;
            row.tokensPerS = 1000 + r;
            w.enqueue(launcher::StepOp{runId, {row}});
        }
    w.enqueue(launcher::RunStatusOp{runId, QStringLiteral("completed"), {}, QDateTime::currentDateTimeUtc(), 0});
}

} // namespace trellis::test
