// Exports of one run from the history: CSV (one row per rank per step) and JSON (run, ranks,
// steps, events). Pure functions of RunData, so they are tested without a database.
#pragma once

#include "launcher/run_types.h"

#include <QByteArray>
#include <QStringList>
#include <QVariant>
#include <QString>

namespace trellis::launcher {

QByteArray exportCsv(const RunData &run);
QByteArray exportJson(const RunData &run);

// Every table of a run, for export (CSV with a header line, or a JSON array of objects):
// steps (one row per rank per step), memory (by category per rank per step), collectives,
// events, spans (the traced timeline) and ranks.
inline const char *const kExportTables[] = {"steps", "memory", "collectives", "events", "spans", "ranks"};
struct ExportTable {
    QStringList columns;
    QList<QVariantList> rows; // numbers as qint64 or double, text as QString
};
// "" table name: false. The run's rows, plus its collectives and spans where the table needs them.
bool exportTable(const QString &name, const RunData &run, const QList<CollectiveRow> &collectives, const QList<SpanRow> &spans,
                 ExportTable &out);
QByteArray tableCsv(const ExportTable &table);  // RFC 4180: text with , " or a line break quoted
QByteArray tableJson(const ExportTable &table);
// Chrome / Perfetto trace (JSON object format): one track per rank, one complete ("X") event per
// span, times in microseconds from the earliest span; ranks are labelled with their coordinates.
QByteArray exportTrace(const RunData &run, const QList<SpanRow> &spans);

// Writes through a temporary file and a rename, so a failed export leaves any old file intact.
QString writeFileAtomically(const QString &path, const QByteArray &contents);

} // namespace trellis::launcher
