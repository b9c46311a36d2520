// The run's rows read back from the SQLite history: steps, collective reports, mixture-of-experts
// routing and timeline spans, whole or a window of steps at a time. See history_database.h; the
// schema, migrations and the runs' records are history_database.cpp.
#include "launcher/history/history_database.h"

#include "launcher/history/collective_blocks.h"
#include "launcher/history/step_blocks.h"

#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

#include <algorithm>
#include <limits>
#include <tuple>

namespace trellis::launcher {

bool HistoryDatabase::forEachStepChunk(qint64 id, qint64 fromStep, const std::function<void(const QList<StepRow> &)> &consume,
                                       qint64 rowsPerChunk)
{
    QString why;
    const bool ok = launcher::forEachStepChunk(m_db, id, fromStep, rowsPerChunk, consume, &why);
    if (!ok)
        m_lastError = why;
    return ok;
}

QList<StepRow> HistoryDatabase::stepsBetween(qint64 id, int rank, qint64 fromStep, qint64 toStep)
{
    QList<StepRow> rows;
    if (QString why; !readStepRows(m_db, id, rows, &why, rank, fromStep, toStep))
        m_lastError = why;
    return rows;
}

namespace {

// Reads the steps first..last `width` at a time (read(from, to), each window handed to consume
// unless empty); true when no read set `lastError`, which then gets back `before`.
template <typename Read, typename Consume>
bool readWindows(qint64 first, qint64 last, qint64 width, const QString &before, QString &lastError, const Read &read,
                 const Consume &consume)
{
    for (qint64 from = first; from <= last; from += width) {
        const auto rows = read(from, std::min(last, from + width - 1));
        if (!rows.isEmpty())
            consume(rows);
    }
    const bool ok = lastError.isEmpty();
    if (ok)
        lastError = before;
    return ok;
}

} // namespace

QList<ExpertLoadRow> HistoryDatabase::expertLoadOf(qint64 id) { return expertLoadBetween(id, 0, std::numeric_limits<qint64>::max()); }

bool HistoryDatabase::expertLoadSteps(qint64 id, qint64 &first, qint64 &last)
{
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("SELECT min(step), max(step) FROM expert_load WHERE run = ?"));
    q.addBindValue(id);
    if (!q.exec()) {
        m_lastError = q.lastError().text();
        return false;
    }
    if (!q.next() || q.value(0).isNull())
        return false;
    first = q.value(0).toLongLong();
    last = q.value(1).toLongLong();
    return true;
}

bool HistoryDatabase::forEachExpertChunk(qint64 id, const std::function<void(const QList<ExpertLoadRow> &)> &consume,
                                         qint64 rowsPerChunk)
{
    qint64 first = 0, last = -1;
    const QString before = m_lastError;
    m_lastError.clear();
    if (!expertLoadSteps(id, first, last)) {
        const bool ok = m_lastError.isEmpty();
        if (ok)
            m_lastError = before;
        return ok; // no reports: nothing to read
    }
    qint64 ranks = 1; // the window: about rowsPerChunk rows when every rank reports every step
    QSqlQuery size(m_db);
    size.prepare(QStringLiteral("SELECT world_size FROM runs WHERE id = ?"));
    size.addBindValue(id);
    if (size.exec() && size.next())
        ranks = std::max<qint64>(1, size.value(0).toLongLong());
    const qint64 width = std::max<qint64>(1, rowsPerChunk / ranks);
    return readWindows(first, last, width, before, m_lastError, [&](qint64 from, qint64 to) { return expertLoadBetween(id, from, to); },
                       consume);
}

QList<ExpertLoadRow> HistoryDatabase::expertLoadBetween(qint64 id, qint64 fromStep, qint64 toStep)
{
    QList<ExpertLoadRow> rows;
    QSqlQuery q(m_db);
    q.setForwardOnly(true);
    q.prepare(QStringLiteral("SELECT rank, step, layers, experts, tokens, dropped, aux_loss FROM expert_load WHERE run = ?"
                             " AND step BETWEEN ? AND ? ORDER BY step, rank"));
    q.addBindValue(id);
    q.addBindValue(fromStep);
    q.addBindValue(toStep);
    if (!q.exec()) {
        m_lastError = q.lastError().text();
        return rows;
    }
    while (q.next()) {
        ExpertLoadRow r;
        r.rank = q.value(0).toInt();
        r.step = q.value(1).toLongLong();
        r.layers = q.value(2).toInt();
        r.experts = q.value(3).toInt();
        r.tokens = unpackCounts(q.value(4).toByteArray());
        r.dropped = q.value(5).toLongLong();
        r.auxLoss = q.value(6).toDouble();
        if (r.layers <= 0 || r.experts <= 0 || r.tokens.size() != static_cast<std::size_t>(r.layers) * r.experts)
            continue; // a damaged row: skipped, the rest still read
        rows.append(std::move(r));
    }
    return rows;
}

QList<CollectiveRow> HistoryDatabase::collectivesOf(qint64 id) { return collectivesBetween(id, 0, std::numeric_limits<qint64>::max()); }

QList<CollectiveRow> HistoryDatabase::collectivesBetween(qint64 id, qint64 fromStep, qint64 toStep)
{
    // Read order is age order: the rows of schema 1–10, then the blocks by rowid.
    QList<CollectiveRow> rows;
    QSqlQuery q(m_db);
    q.setForwardOnly(true);
    q.prepare(QStringLiteral("SELECT rank, step, grp, op, bytes, ms, bus_gbps, count FROM collective_stats WHERE run = ?"
                             " AND step BETWEEN ? AND ?"));
    q.addBindValue(id);
    q.addBindValue(fromStep);
    q.addBindValue(toStep);
    if (!q.exec())
        return rows;
    while (q.next()) {
        CollectiveRow c;
        c.rank = q.value(0).toInt();
        c.step = q.value(1).toLongLong();
        c.group = q.value(2).toString();
        c.op = q.value(3).toString();
        c.bytes = q.value(4).toLongLong();
        c.ms = q.value(5).toDouble();
        c.busGBps = q.value(6).toDouble();
        c.count = q.value(7).toInt();
        rows.append(c);
    }
    QSqlQuery b(m_db);
    b.setForwardOnly(true);
    b.prepare(QStringLiteral("SELECT rank, n, rows FROM collective_blocks WHERE run = ? AND last_step >= ? AND first_step <= ?"
                             " ORDER BY rowid"));
    b.addBindValue(id);
    b.addBindValue(fromStep);
    b.addBindValue(toStep);
    if (b.exec()) {
        while (b.next()) {
            QString error;
            const qsizetype before = rows.size();
            if (!unpackCollectiveBlock(b.value(0).toInt(), b.value(2).toByteArray(), b.value(1).toLongLong(), rows, &error) &&
                m_lastError.isEmpty())
                m_lastError = error; // the other blocks still read
            rows.erase(std::remove_if(rows.begin() + before, rows.end(),
                                      [&](const CollectiveRow &c) { return c.step < fromStep || c.step > toStep; }),
                       rows.end());
        }
    }
    // By step, then rank; a report stored twice (resent after a supervisor crash) once, its newest
    // copy, compacted in place.
    auto key = [](const CollectiveRow &c) { return std::tie(c.step, c.rank, c.group, c.op); };
    std::stable_sort(rows.begin(), rows.end(), [&](const CollectiveRow &a, const CollectiveRow &c) { return key(a) < key(c); });
    qsizetype kept = 0;
    for (qsizetype i = 0; i < rows.size(); ++i)
        if (i + 1 == rows.size() || key(rows[i]) != key(rows[i + 1])) {
            if (kept != i)
                rows[kept] = std::move(rows[i]);
            ++kept;
        }
    rows.resize(kept);
    return rows;
}

bool HistoryDatabase::forEachCollectiveChunk(qint64 id, const std::function<void(const QList<CollectiveRow> &)> &consume,
                                             qint64 rowsPerChunk)
{
    // The last step and how many reports a step holds, over the blocks and the legacy rows.
    qint64 lastStep = -1, rowsPerStep = 1;
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("SELECT max(last_step), min(first_step), sum(n) FROM collective_blocks WHERE run = ?"));
    q.addBindValue(id);
    if (q.exec() && q.next() && !q.value(0).isNull()) {
        lastStep = q.value(0).toLongLong();
        rowsPerStep = std::max<qint64>(1, q.value(2).toLongLong() / std::max<qint64>(1, lastStep - q.value(1).toLongLong() + 1));
    }
    QSqlQuery legacy(m_db);
    legacy.prepare(QStringLiteral("SELECT max(step) FROM collective_stats WHERE run = ?"));
    legacy.addBindValue(id);
    if (legacy.exec() && legacy.next() && !legacy.value(0).isNull())
        lastStep = std::max(lastStep, legacy.value(0).toLongLong());
    const qint64 width = std::max<qint64>(1, rowsPerChunk / rowsPerStep);
    const QString before = m_lastError;
    m_lastError.clear();
    return readWindows(0, lastStep, width, before, m_lastError, [&](qint64 from, qint64 to) { return collectivesBetween(id, from, to); },
                       consume);
}

namespace {

QList<SpanRow> spanRows(QSqlQuery &q)
{
    QList<SpanRow> rows;
    if (!q.exec())
        return rows;
    while (q.next()) {
        SpanRow r;
        r.rank = q.value(0).toInt();
        r.step = q.value(1).toLongLong();
        r.name = q.value(2).toString();
        r.startNs = q.value(3).toLongLong();
        r.endNs = q.value(4).toLongLong();
        r.microBatch = q.value(5).toInt();
        r.stage = q.value(6).toInt();
        rows.append(r);
    }
    return rows;
}

} // namespace

QList<SpanRow> HistoryDatabase::spansOf(qint64 id)
{
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("SELECT rank, step, name, start_ns, end_ns, micro_batch, stage FROM spans"
                             " WHERE run = ? ORDER BY rank, start_ns"));
    q.addBindValue(id);
    return spanRows(q);
}

QList<SpanRow> HistoryDatabase::spansOfLastTracedStep(qint64 id)
{
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("SELECT rank, step, name, start_ns, end_ns, micro_batch, stage FROM spans"
                             " WHERE run = ? AND step = (SELECT max(step) FROM spans WHERE run = ?) ORDER BY rank, start_ns"));
    q.addBindValue(id);
    q.addBindValue(id);
    return spanRows(q);
}

} // namespace trellis::launcher
