// The rows a history writer transaction writes: each WriteOp applied as SQL, and the two rows
// that come at the telemetry rate through SQLite's own prepared statements (FastRows). Internal to
// launcher/history/: used by the writer thread (history_writer.cpp) only, on its own connection.
#pragma once

#include "launcher/history/collective_blocks.h"
#include "launcher/history/history_writer.h"
#include "launcher/history/postgres_copy.h"
#include "launcher/history/step_blocks.h"

#include <QHash>
#include <QSqlDatabase>
#include <QSqlDriver>
#include <QString>
#include <QVariant>

#include <sqlite3.h>

#include <deque>
#include <map>
#include <type_traits>
#include <vector>

namespace trellis::launcher {

// The two rows that come at the telemetry rate (a step and a collective per rank per step) go
// through SQLite's own prepared statements, prepared once per connection: QSqlQuery's per-row
// prepare and binding conversions cost several times the insert itself at 1024 ranks. On
// PostgreSQL they go in one COPY per table and transaction (postgres_copy.h).
class FastRows {
public:
    explicit FastRows(QSqlDatabase &db)
    {
        m_pg = postgresConnection(db);
        const QVariant v = db.driver()->handle();
        if (v.isValid() && qstrcmp(v.typeName(), "sqlite3*") == 0)
            m_db = *static_cast<sqlite3 *const *>(v.constData());
        if (!m_db)
            return;
        sqlite3_prepare_v2(m_db,
                           "INSERT INTO step_blocks(run, rank, last_rank, first_step, last_step, n, rows, last_loss, encoding)"
                           " VALUES(?,?,?,?,?,?,?,?,5)",
                           -1, &m_step, nullptr);
        sqlite3_prepare_v2(m_db,
                           "INSERT INTO collective_blocks(run, rank, last_rank, first_step, last_step, n, rows)"
                           " VALUES(?,?,?,?,?,?,?)",
                           -1, &m_collective, nullptr);
    }
    ~FastRows()
    {
        sqlite3_finalize(m_step);
        sqlite3_finalize(m_collective);
    }
    FastRows(const FastRows &) = delete;
    FastRows &operator=(const FastRows &) = delete;
    bool ready() const { return m_pg || (m_step && m_collective); }

    // Step and collective reports are packed (step_blocks.h, collective_blocks.h): step() and
    // collective() add a report to the block of its rank's group (kRanksPerBlock consecutive
    // ranks), writeBlocks() stores the blocks before the transaction commits, begin() forgets
    // blocks of a transaction that was rolled back.
    // A rank's block keeps its buffer from one transaction to the next (emptied, not freed): at a
    // high rate a block holds hundreds of kilobytes, and allocating them afresh every transaction
    // cost page faults.
    void begin()
    {
        for (auto &[key, b] : m_blocks)
            b.rows.clear();
        for (auto &[key, b] : m_collectiveBlocks)
            b.rows.clear();
    }
    void step(qint64 run, const StepRow &s)
    {
        Block &b = m_blocks[{run, s.rank / kRanksPerBlock}];
        const bool first = b.rows.count() == 0;
        // last_loss: the loss at the block's last step, of its lowest rank there (a later copy of
        // the same report replacing an earlier one).
        if (first || s.step > b.last || (s.step == b.last && s.rank <= b.lastLossRank)) {
            b.lastLoss = s.loss;
            b.lastLossRank = s.rank;
        }
        b.cover(first, s.step, s.rank);
        b.rows.add(s);
    }
    bool writeBlocks(QString &error) { return writeAll(m_blocks, m_step, error) && writeAll(m_collectiveBlocks, m_collective, error); }

    void collective(qint64 run, const CollectiveRow &c)
    {
        CollectiveBlock &b = m_collectiveBlocks[{run, c.rank / kRanksPerBlock}];
        b.cover(b.rows.count() == 0, c.step, c.rank);
        b.rows.add(c);
    }

private:
    // What a block covers: its steps and ranks; `idle` counts transactions in a row without a
    // report of its ranks.
    struct Span {
        qint64 first = 0, last = 0;
        int firstRank = 0, lastRank = 0;
        int idle = 0;
        void cover(bool empty, qint64 step, int rank)
        {
            first = empty ? step : std::min(first, step);
            last = empty ? step : std::max(last, step);
            firstRank = empty ? rank : std::min(firstRank, rank);
            lastRank = empty ? rank : std::max(lastRank, rank);
        }
    };
    struct Block : Span {
        int lastLossRank = 0;
        double lastLoss = 0;
        StepBlockEncoder rows;
    };
    struct CollectiveBlock : Span {
        CollectiveBlockEncoder rows;
    };

    // Inserts every block with reports (run, rank, last_rank, first_step, last_step, n, rows, and
    // a step block's last_loss), emptied for the next transaction; groups of ranks that sent
    // nothing for a while give their buffers back.
    template <typename Blocks>
    bool writeAll(Blocks &blocks, sqlite3_stmt *q, QString &error)
    {
        constexpr bool steps = std::is_same_v<typename Blocks::mapped_type, Block>;
        PostgresCopy copy(steps ? "step_blocks(run, rank, last_rank, first_step, last_step, n, rows, last_loss, encoding)"
                                : "collective_blocks(run, rank, last_rank, first_step, last_step, n, rows)");
        for (auto &[key, b] : blocks) {
            if (b.rows.count() == 0) {
                ++b.idle;
                continue;
            }
            b.idle = 0;
            if (m_pg) {
                for (qint64 v : {key.first, qint64(b.firstRank), qint64(b.lastRank), b.first, b.last, qint64(b.rows.count())})
                    copy.integer(v);
                copy.bytes(b.rows.bytes());
                if constexpr (steps) {
                    copy.real(b.lastLoss);
                    copy.integer(static_cast<int>(StepEncoding::Ranked28));
                }
                copy.endRow();
                b.rows.clear();
                continue;
            }
            sqlite3_reset(q);
            sqlite3_bind_int64(q, 1, key.first);
            sqlite3_bind_int64(q, 2, b.firstRank);
            sqlite3_bind_int64(q, 3, b.lastRank);
            sqlite3_bind_int64(q, 4, b.first);
            sqlite3_bind_int64(q, 5, b.last);
            sqlite3_bind_int64(q, 6, b.rows.count());
            sqlite3_bind_blob(q, 7, b.rows.bytes().constData(), static_cast<int>(b.rows.bytes().size()), SQLITE_STATIC);
            if constexpr (steps)
                sqlite3_bind_double(q, 8, b.lastLoss);
            if (!done(q, error))
                return false;
            b.rows.clear();
        }
        if (m_pg && !copy.send(m_pg, error))
            return false;
        std::erase_if(blocks, [](const auto &entry) { return entry.second.idle > 50; });
        return true;
    }

    bool done(sqlite3_stmt *q, QString &error)
    {
        const int rc = sqlite3_step(q);
        if (rc == SQLITE_DONE)
            return true;
        error = QString::fromUtf8(sqlite3_errmsg(m_db));
        if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
            error += QStringLiteral(" (database is locked)");
        return false;
    }

    std::map<std::pair<qint64, int>, Block> m_blocks; // (run row id, rank / kRanksPerBlock)
    std::map<std::pair<qint64, int>, CollectiveBlock> m_collectiveBlocks; // (run row id, rank / kRanksPerBlock)
    sqlite3 *m_db = nullptr;
    PGconn *m_pg = nullptr;
    sqlite3_stmt *m_step = nullptr;
    sqlite3_stmt *m_collective = nullptr;
};

// Applies one operation; runIds maps user-facing run ids to row ids (filled by NewRunOp). False
// with `error` saying why and `code` the database's own code for it (SQLite's result code,
// PostgreSQL's SQLSTATE; "" when the failure is this code's own, e.g. an unknown run).
bool applyWriteOp(QSqlDatabase &db, QHash<QString, qint64> &runIds, const WriteOp &op, QString &error, QString &code, FastRows *fast);

// The operations of a batch in the order they are written (acknowledgement cursors merged per
// run, after the rest); merged cursors live in `merged`.
std::vector<const WriteOp *> inWriteOrder(const std::vector<const WriteOp *> &batch, std::deque<WriteOp> &merged);

} // namespace trellis::launcher
