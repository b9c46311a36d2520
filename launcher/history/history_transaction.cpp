// See history_transaction.h.
#include "launcher/history/history_transaction.h"
#include "launcher/history/history_database.h"
#include "launcher/history/history_rows.h"

#include <QSqlDriver>
#include <QSqlError>
#include <QSqlQuery>

#include <set>

namespace trellis::launcher {

WriteFailure classifyWriteFailure(const QString &nativeCode, const QString &text, bool lost, bool postgres)
{
    if (lost)
        return WriteFailure::Unreachable;
    if (postgres) {
        // SQLSTATE classes: 08 connection, 40 a serialization failure or deadlock (try again),
        // 22 data exception and 23 integrity constraint (this row's own data); the rest (53 out of
        // resources, 58 system error, XX internal, P0 raised by a trigger, …) is the server's.
        const QString cls = nativeCode.left(2);
        if (cls == QLatin1String("08"))
            return WriteFailure::Unreachable;
        if (cls == QLatin1String("40") || cls == QLatin1String("55"))
            return WriteFailure::Locked;
        if (cls == QLatin1String("22") || cls == QLatin1String("23"))
            return WriteFailure::Row;
    } else {
        bool numeric = false;
        const int primary = nativeCode.toInt(&numeric) & 0xff; // an extended code's low byte is its primary code
        if (numeric && (primary == 5 || primary == 6)) // SQLITE_BUSY, SQLITE_LOCKED
            return WriteFailure::Locked;
        // SQLITE_CONSTRAINT (a trigger's RAISE too), MISMATCH, TOOBIG, RANGE: this row's own data.
        if (numeric && (primary == 19 || primary == 20 || primary == 18 || primary == 25))
            return WriteFailure::Row;
    }
    if (text.contains(QLatin1String("database is locked")))
        return WriteFailure::Locked;
    if (nativeCode.isEmpty() && text.startsWith(QLatin1String("unknown run ")))
        return WriteFailure::Row;
    return WriteFailure::Store; // SQLITE_FULL, IOERR, READONLY, NOMEM, CANTOPEN, a failed COPY or commit, …
}

std::map<int, quint64> reportsByRank(const WriteOp &op)
{
    std::map<int, quint64> out;
    if (const auto *s = std::get_if<StepOp>(&op))
        for (const StepRow &row : s->rows)
            ++out[row.rank];
    else if (const auto *c = std::get_if<CollectiveOp>(&op))
        ++out[c->row.rank];
    else if (const auto *sp = std::get_if<SpansOp>(&op))
        for (const SpanRow &row : sp->rows)
            ++out[row.rank];
    else if (const auto *e = std::get_if<ExpertLoadOp>(&op))
        ++out[e->row.rank];
    else if (const auto *r = std::get_if<RankOp>(&op))
        ++out[r->row.rank];
    return out;
}

namespace {

QString runOf(const WriteOp &op)
{
    return std::visit([](const auto &o) { return o.runId; }, op);
}

// PostgreSQL: tells whoever LISTENs on the channel (HistoryReader: another user's workbench) which
// runs this transaction wrote to, once a run; delivered when it commits, never if it rolls back.
// A failed notify aborts the transaction there: it is a failure of the transaction like any other.
bool notifyReaders(QSqlDatabase &c, const std::vector<const WriteOp *> &order, QString &error, QString &code)
{
    std::set<QString> runs;
    for (const WriteOp *op : order)
        runs.insert(runOf(*op));
    QSqlQuery notify(c);
    notify.prepare(QStringLiteral("SELECT pg_notify('%1', ?)").arg(QLatin1String(kHistoryChannel)));
    for (const QString &runId : runs) {
        notify.bindValue(0, runId);
        if (!notify.exec()) {
            error = notify.lastError().text();
            code = notify.lastError().nativeErrorCode();
            return false;
        }
    }
    return true;
}

// Holds batch[index] out of the transaction with every later operation of its run.
void holdWithItsRun(const std::deque<WriteOp> &batch, std::size_t index, std::vector<bool> &held)
{
    const QString run = runOf(batch[index]);
    for (std::size_t i = index; i < batch.size(); ++i)
        if (!held[i] && runOf(batch[i]) == run)
            held[i] = true;
}

// The batch index of an operation in write order: itself, or for a merged cursor the first cursor
// of its run still written.
std::size_t indexOf(const std::deque<WriteOp> &batch, const std::vector<bool> &held, const WriteOp *op)
{
    for (std::size_t i = 0; i < batch.size(); ++i)
        if (&batch[i] == op)
            return i;
    const QString run = runOf(*op);
    for (std::size_t i = 0; i < batch.size(); ++i)
        if (!held[i] && std::holds_alternative<CursorOp>(batch[i]) && runOf(batch[i]) == run)
            return i;
    return 0;
}

} // namespace

TransactionOutcome writeTransaction(HistoryDatabase &db, QHash<QString, qint64> &runIds, FastRows &fast, const std::deque<WriteOp> &batch,
                                    const GivenUp &givenUp)
{
    QSqlDatabase &c = db.connection();
    const bool postgres = c.driverName() == QLatin1String("QPSQL");
    std::vector<bool> held(batch.size(), false);
    std::map<std::size_t, QString> refused;
    const auto failed = [&](TransactionOutcome out, const QString &error, const QString &code) {
        c.rollback();
        runIds.clear(); // ids inserted in the rolled-back transaction are gone
        out.committed = false;
        out.failure = classifyWriteFailure(code, error, db.connectionLost(), postgres);
        if (out.failure == WriteFailure::Row) // a Row failure outside any one operation: the transaction's
            out.failure = WriteFailure::Store;
        out.error = error;
        return out;
    };
    for (;;) {
        TransactionOutcome out;
        std::vector<const WriteOp *> included;
        for (std::size_t i = 0; i < batch.size(); ++i)
            if (!held[i])
                included.push_back(&batch[i]);
        std::deque<WriteOp> coalesced;
        const std::vector<const WriteOp *> order = inWriteOrder(included, coalesced);
        // What the writer gave up of a run counts as lost at its ranks (docs/history.md).
        for (WriteOp &m : coalesced)
            if (auto *cursor = std::get_if<CursorOp>(&m); cursor && !cursor->reset)
                if (const auto it = givenUp.find(cursor->runId); it != givenUp.end())
                    for (const auto &[rank, n] : it->second)
                        if (cursor->nextSeq.count(rank))
                            cursor->lost[rank] += n;
        if (!c.transaction())
            return failed(out, c.lastError().text(), c.lastError().nativeErrorCode());
        if (fast.ready())
            fast.begin();
        const WriteOp *refusedOp = nullptr;
        QString refusedError;
        for (const WriteOp *op : order) {
            QString e, code;
            if (applyWriteOp(c, runIds, *op, e, code, &fast)) {
                out.rows += std::holds_alternative<StepOp>(*op) ? static_cast<qint64>(std::get<StepOp>(*op).rows.size()) : 1;
                continue;
            }
            if (classifyWriteFailure(code, e, db.connectionLost(), postgres) != WriteFailure::Row)
                return failed(out, e, code);
            refusedOp = op;
            refusedError = e;
            break;
        }
        if (refusedOp) {
            // This operation's own data was refused: roll back, hold it and its run's later
            // operations out, and write the rest again (both engines, so that no part of it stays).
            c.rollback();
            runIds.clear();
            const std::size_t index = indexOf(batch, held, refusedOp);
            refused[index] = refusedError;
            holdWithItsRun(batch, index, held);
            continue;
        }
        if (QString e; fast.ready() && !fast.writeBlocks(e))
            return failed(out, e, e.contains(QLatin1String("locked")) ? QStringLiteral("5") : QString());
        if (QString e, code; postgres && !notifyReaders(c, order, e, code))
            return failed(out, e, code);
        if (!c.commit())
            return failed(out, c.lastError().text(), c.lastError().nativeErrorCode());
        if (db.connectionLost()) // the commit's answer may be lost with the connection: not confirmed
            return failed(out, QStringLiteral("the connection to the server was lost"), {});
        out.committed = true;
        for (std::size_t i = 0; i < batch.size(); ++i)
            if (held[i])
                out.held.push_back(i);
        out.refused = refused;
        return out;
    }
}

} // namespace trellis::launcher
