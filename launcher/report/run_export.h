// Exports of one run from the history: CSV (one row per rank per step) and JSON (run, ranks,
// steps, events). Pure functions of RunData, so they are tested without a database.
#pragma once

#include "launcher/run_types.h"

#include <QByteArray>
#include <QJsonArray>
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
QJsonArray tableRowsJson(const ExportTable &table); // tableJson's array
QJsonArray stepsJson(const QList<StepRow> &rows);   // the "steps" array of exportJson

// A JSON document with one array written in parts, byte for byte what QJsonDocument's indented
// form writes for the whole document: begin() with the document as written with that array
// empty and the text that opens the array ("\"steps\": [" in exportJson's, "[" for tableJson's);
// then head(), items() of each part in order, and rest(). For exports of runs too long to hold.
class JsonArrayStream {
public:
    bool begin(const QByteArray &document, const QByteArray &opening); // false: no such array
    const QByteArray &head() const { return m_head; }
    QByteArray items(const QJsonArray &part); // of objects
    const QByteArray &rest() const { return m_rest; }

private:
    QByteArray m_head, m_rest;
    int m_level = 0;
    bool m_first = true;
};
// Chrome / Perfetto trace (JSON object format): one track per rank, one complete ("X") event per
// span, times in microseconds from the earliest span; ranks are labelled with their coordinates.
QByteArray exportTrace(const RunData &run, const QList<SpanRow> &spans);

// Writes through a temporary file and a rename, so a failed export leaves any old file intact.
QString writeFileAtomically(const QString &path, const QByteArray &contents);

} // namespace trellis::launcher
