// Exports of one run from the history: CSV (one row per rank per step) and JSON (run, ranks,
// steps, events). Pure functions of RunData, so they are tested without a database.
#pragma once

#include "launcher/run_types.h"

#include <QByteArray>
#include <QString>

namespace trellis::launcher {

QByteArray exportCsv(const RunData &run);
QByteArray exportJson(const RunData &run);

// Writes through a temporary file and a rename, so a failed export leaves any old file intact.
QString writeFileAtomically(const QString &path, const QByteArray &contents);

} // namespace trellis::launcher
