// Packed step reports; see step_blocks.h.
#include "launcher/step_blocks.h"

#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>
#include <QtEndian>

#include <algorithm>
#include <bit>
#include <cstring>

namespace trellis::launcher {
namespace {

void putInt(char *&at, qint64 v)
{
    qToLittleEndian(v, at);
    at += 8;
}
void putDouble(char *&at, double v) { putInt(at, std::bit_cast<qint64>(v)); }
qint64 getInt(const char *&at)
{
    const qint64 v = qFromLittleEndian<qint64>(at);
    at += 8;
    return v;
}
double getDouble(const char *&at) { return std::bit_cast<double>(getInt(at)); }

const char *const kLegacySelect =
    "SELECT rank, step, step_ms, compute_ms, comm_ms, comm_exposed_ms, bubble_ms, idle_ms, tokens, tokens_per_s, loss,"
    " grad_norm, lr, mem_parameters, mem_gradients, mem_optimizer, mem_activations, mem_comm, peak_rss FROM step_metrics";

} // namespace

void packStepRecord(const StepRow &s, QByteArray &blob)
{
    const qsizetype at = blob.size();
    blob.resize(at + kStepRecordBytes);
    char *p = blob.data() + at;
    putInt(p, s.step);
    for (double v : {s.stepMs, s.computeMs, s.commMs, s.commExposedMs, s.bubbleMs, s.idleMs})
        putDouble(p, v);
    putInt(p, s.tokens);
    for (double v : {s.tokensPerS, s.loss, s.gradNorm, s.lr})
        putDouble(p, v);
    for (qint64 v : {s.memParameters, s.memGradients, s.memOptimizer, s.memActivations, s.memComm, s.peakRss})
        putInt(p, v);
}

bool unpackStepBlock(int rank, const QByteArray &blob, qint64 count, QList<StepRow> &out, QString *error)
{
    if (blob.size() % kStepRecordBytes != 0 || blob.size() / kStepRecordBytes != count) {
        if (error)
            *error = QStringLiteral("a step block of rank %1 is corrupt (%2 bytes for %3 records of %4 bytes)")
                         .arg(rank)
                         .arg(blob.size())
                         .arg(count)
                         .arg(kStepRecordBytes);
        return false;
    }
    const char *p = blob.constData();
    for (qint64 i = 0; i < count; ++i) {
        StepRow s;
        s.rank = rank;
        s.step = getInt(p);
        for (double *v : {&s.stepMs, &s.computeMs, &s.commMs, &s.commExposedMs, &s.bubbleMs, &s.idleMs})
            *v = getDouble(p);
        s.tokens = getInt(p);
        for (double *v : {&s.tokensPerS, &s.loss, &s.gradNorm, &s.lr})
            *v = getDouble(p);
        for (qint64 *v : {&s.memParameters, &s.memGradients, &s.memOptimizer, &s.memActivations, &s.memComm, &s.peakRss})
            *v = getInt(p);
        out.append(s);
    }
    return true;
}

bool readStepRows(QSqlDatabase &db, qint64 run, QList<StepRow> &out, QString *error, std::optional<int> rank,
                  qint64 fromStep, qint64 toStep)
{
    bool ok = true;
    auto fail = [&](const QString &why) {
        if (error && ok)
            *error = why;
        ok = false;
    };
    // Read order is age order: legacy rows, then blocks by rowid; a later copy of a (rank, step)
    // replaces an earlier one below.
    QList<StepRow> rows;
    QSqlQuery q(db);
    q.setForwardOnly(true);
    q.prepare(QString::fromLatin1(kLegacySelect) + QStringLiteral(" WHERE run = ?") +
              (rank ? QStringLiteral(" AND rank = ? AND step BETWEEN ? AND ?") : QString()));
    q.addBindValue(run);
    if (rank) {
        q.addBindValue(*rank);
        q.addBindValue(fromStep);
        q.addBindValue(toStep);
    }
    if (!q.exec()) {
        fail(q.lastError().text());
    } else {
        while (q.next()) {
            StepRow s;
            s.rank = q.value(0).toInt();
            s.step = q.value(1).toLongLong();
            double *doubles[] = {&s.stepMs, &s.computeMs, &s.commMs, &s.commExposedMs, &s.bubbleMs, &s.idleMs};
            for (int i = 0; i < 6; ++i)
                *doubles[i] = q.value(2 + i).toDouble();
            s.tokens = q.value(8).toLongLong();
            double *more[] = {&s.tokensPerS, &s.loss, &s.gradNorm, &s.lr};
            for (int i = 0; i < 4; ++i)
                *more[i] = q.value(9 + i).toDouble();
            qint64 *memory[] = {&s.memParameters, &s.memGradients, &s.memOptimizer, &s.memActivations, &s.memComm, &s.peakRss};
            for (int i = 0; i < 6; ++i)
                *memory[i] = q.value(13 + i).toLongLong();
            rows.append(s);
        }
    }
    QSqlQuery b(db);
    b.setForwardOnly(true);
    b.prepare(QStringLiteral("SELECT rank, n, rows FROM step_blocks WHERE run = ?") +
              (rank ? QStringLiteral(" AND rank = ? AND last_step >= ? AND first_step <= ?") : QString()) +
              QStringLiteral(" ORDER BY rowid"));
    b.addBindValue(run);
    if (rank) {
        b.addBindValue(*rank);
        b.addBindValue(fromStep);
        b.addBindValue(toStep);
    }
    if (!b.exec()) {
        fail(b.lastError().text());
    } else {
        while (b.next()) {
            QString why;
            if (!unpackStepBlock(b.value(0).toInt(), b.value(2).toByteArray(), b.value(1).toLongLong(), rows, &why))
                fail(why);
        }
    }
    if (rank)
        rows.removeIf([&](const StepRow &s) { return s.step < fromStep || s.step > toStep; });
    // Newest copy of each (step, rank): a stable sort keeps age order among equals; take the last.
    std::stable_sort(rows.begin(), rows.end(),
                     [](const StepRow &x, const StepRow &y) { return x.step != y.step ? x.step < y.step : x.rank < y.rank; });
    out.reserve(out.size() + rows.size());
    for (qsizetype i = 0; i < rows.size(); ++i)
        if (i + 1 == rows.size() || rows[i + 1].step != rows[i].step || rows[i + 1].rank != rows[i].rank)
            out.append(rows[i]);
    return ok;
}

} // namespace trellis::launcher
