// One history writer transaction and what its failure means. The rule it keeps (docs/architecture.md
// §9): an operation counts as stored — and its acknowledgement cursor may be sent — only when it was
// applied without error in a transaction whose commit the database confirmed. Every failure is one
// of four kinds, and none of them ends in an acknowledgement:
//   Locked      another connection holds the lock (SQLite BUSY/LOCKED): the batch is kept, retried;
//   Unreachable the server went away: the batch is kept (spooled on this machine), retried;
//   Store       the database refused the transaction as a whole (a full or read-only disk, an I/O
//               error, a failed COPY or commit, a server error of its own): kept, retried;
//   Row         one operation's own data was refused (a constraint, a mismatch): that operation and
//               its run's later ones are held out, the rest committed; an operation that fails the
//               same way kGiveUpAfter times is given up alone and counted, never acknowledged.
// Internal to launcher/history/: the writer thread only.
#pragma once

#include "launcher/history/history_writer.h"

#include <QHash>
#include <QString>

#include <deque>
#include <map>
#include <vector>

namespace trellis::launcher {

class FastRows;
class HistoryDatabase;

enum class WriteFailure { None, Locked, Unreachable, Store, Row };

// The kind of a failure from the database's own code (SQLite's result code, PostgreSQL's SQLSTATE
// when `postgres`) and text. `lost`: the connection to the server is gone.
WriteFailure classifyWriteFailure(const QString &nativeCode, const QString &text, bool lost, bool postgres);

// An operation that fails with a Row error this many times in a row is given up alone.
inline constexpr int kGiveUpAfter = 5;

struct TransactionOutcome {
    bool committed = false;
    WriteFailure failure = WriteFailure::None; // why nothing was committed (committed false)
    QString error;
    qint64 rows = 0;
    // Committed or not: the operations of the batch (indices) left out of the transaction. Each one
    // whose own data was refused has its error in `refused`; the others are its run's later
    // operations, held behind it so that no cursor acknowledges past it.
    std::vector<std::size_t> held;
    std::map<std::size_t, QString> refused;
};

// Per run and rank, the telemetry the writer gave up (counted into the ranks' `lost` by the next
// cursor written for the run).
using GivenUp = std::map<QString, std::map<int, quint64>>;

// Begins a transaction on `db`, applies `batch` in write order and commits it. Rolled back on any failure; Row failures hold the operation and its run's later ones
// out and the transaction is written again without them.
TransactionOutcome writeTransaction(HistoryDatabase &db, QHash<QString, qint64> &runIds, FastRows &fast, const std::deque<WriteOp> &batch,
                                    const GivenUp &givenUp);

// The telemetry reports an operation carries, per rank (what giving it up loses).
std::map<int, quint64> reportsByRank(const WriteOp &op);

} // namespace trellis::launcher
