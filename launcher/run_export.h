// Exports of one run from the history: CSV (one row per rank per step) and JSON (run, ranks,
// steps, events). Pure functions of RunData, so they are tested without a database.
#pragma once

#include "launcher/run_types.h"

#include <QByteArray>
#include <QString>

namespace trellis::launcher {

QByteArray exportCsv(const RunData &run);
QByteArray exportJson(const RunData &run);
// Chrome / Perfetto trace (JSON object format): one track per rank, one complete ("X") event per
// span, times in microseconds from the earliest span; ranks are labelled with their coordinates.
QByteArray exportTrace(const RunData &run, const QList<SpanRow> &spans);

// Writes through a temporary file and a rename, so a failed export leaves any old file intact.
QString writeFileAtomically(const QString &path, const QByteArray &contents);

} // namespace trellis::launcher
