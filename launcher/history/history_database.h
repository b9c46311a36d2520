// One connection to a run history (docs/architecture.md §10), an SQLite file or a PostgreSQL
// database (history_engine.h): opening with clear errors, schema migrations (SQLite: PRAGMA
// user_version; PostgreSQL: the trellis_schema table, under an advisory lock), and the queries behind the history view, compare, exports
// and reports. Threading: an instance is created, used and destroyed on one thread (a
// QSqlDatabase connection never crosses threads); other threads open their own instance.
#pragma once

#include "launcher/history/history_engine.h"
#include "launcher/history/run_filter.h"
#include "launcher/run_types.h"

#include <QSet>
#include <QSqlDatabase>
#include <QString>

#include <functional>
#include <optional>
#include <utility>

namespace trellis::launcher {

// Token counts as stored in expert_load.tokens: little-endian 64-bit integers.
QByteArray packCounts(const std::vector<qint64> &counts);
std::vector<qint64> unpackCounts(const QByteArray &bytes);

// 2: timeline spans; 3: the launcher of each run; 4: telemetry sequence per rank; 5: packed step reports
inline constexpr int kHistorySchemaVersion = 18;

// "its file system is full" or "its file system is read-only" for the folder holding `path` (a
// file history); "" when it is neither. Said beside SQLite's own, vaguer words.
QString fileSystemTrouble(const QString &path);

class HistoryDatabase {
public:
    // Installs how open() tells abandoned runs (process-wide; set once, before any open). Without
    // it, open() leaves every run's status as it is.
    static void setRunLiveness(RunLiveness liveness);

    HistoryDatabase();
    ~HistoryDatabase();
    HistoryDatabase(const HistoryDatabase &) = delete;
    HistoryDatabase &operator=(const HistoryDatabase &) = delete;

    // Opens (creating folders and the file when `create`; a postgresql:// connection string
    // connects to that server instead, where `create` creates the schema in an empty database),
    // migrates and, with a RunLiveness installed, closes abandoned runs.
    // Returns an empty string on success, otherwise a message naming the history and the problem.
    QString open(const QString &path, bool create = true);
    HistoryEngine engine() const { return m_engine; }
    // Marks runs still launching or running whose launcher process on this host is gone as failed,
    // with the reason; returns how many. open() does it.
    int closeAbandonedRuns(const RunLiveness &liveness);
    // How the error of a run closed by closeAbandonedRuns begins: a guess made without the run's
    // own supervisor, which that supervisor's spool may correct (history_spool.h).
    static constexpr char kAbandonedPrefix[] = "its launcher ";
    bool isOpen() const;
    // PostgreSQL: the server went away (its connection is broken); always false for SQLite.
    bool connectionLost() const;
    QString path() const { return m_path; }
    QSqlDatabase &connection() { return m_db; }

    // Queries; empty results on error, with lastError() set.
    QList<RunSummary> listRuns(int limit = 1000); // every run, archived too, newest first
    // The newest `limit` runs the filter lets through (run_filter.h), newest first.
    QList<RunSummary> listRuns(const RunFilter &filter, int limit);
    // The row and run ids of every run the filter keeps, oldest first, without their figures;
    // nullopt when the history cannot be read (lastError() says why).
    std::optional<QList<std::pair<qint64, QString>>> runIds(const RunFilter &filter);

    // What people add to a run, and taking runs away (run_catalog.cpp). Each returns "" when done,
    // otherwise why not; bad text is refused with the limit (run_filter.h's checks).
    QString renameRun(qint64 id, const QString &name);
    QString setRunNote(qint64 id, const QString &note); // "" clears it
    QString tagRun(qint64 id, const QString &tag);
    QString untagRun(qint64 id, const QString &tag);
    QString setRunArchived(qint64 id, bool archived);
    // "" when this connection may change the run's row (a no-op update that a row-level security
    // policy would hold back: docs/history.md), otherwise why not — asked before a supervisor takes
    // a run over, so that none supervises a run whose record it cannot write.
    QString mayChangeRun(qint64 id);
    // Removes the run's rows and its files (run_files.h); a run still launching or running is
    // refused. *removed lists the files and folders that went.
    QString deleteRun(qint64 id, QStringList *removed = nullptr);
    // Computes and keeps an ended run's figures (tokens/s, MFU) from its steps when they are not
    // kept yet or were computed from fewer steps; returns the summary with them. A running run is
    // left as it is.
    RunSummary withFigures(const RunSummary &run);
    static bool needsFigures(const RunSummary &run);
    std::optional<RunSummary> findRun(const QString &reference); // row id, run id, or "last"
    static constexpr qint64 kRowsPerChunk = 1 << 18; // rows a chunked read holds at once (tens of MiB)
    std::optional<RunData> loadRun(qint64 id, bool withSteps = true); // false: all but the steps
    // All but the steps, and of those each rank's newest: what a supervisor taking over a run
    // needs (adopt, a collector started again), read a window at a time (a 16,384-rank run's
    // every row would not fit).
    std::optional<RunData> loadRunForTakeOver(qint64 id);
    // The run's steps from `fromStep` on, a window of steps at a time in step order (the newest copy
    // of each rank's step): a long run's rows are never all in memory. False: a query failed or a
    // block is damaged (lastError() says which; the rest is still read).
    bool forEachStepChunk(qint64 id, qint64 fromStep, const std::function<void(const QList<StepRow> &)> &consume,
                          qint64 rowsPerChunk = kRowsPerChunk);
    // One rank's steps from fromStep to toStep, ordered by step.
    QList<StepRow> stepsBetween(qint64 id, int rank, qint64 fromStep, qint64 toStep);
    QList<CollectiveRow> collectivesOf(qint64 id);
    // The run's stalls (loadRun reads them too), in the order they began.
    QList<StallRow> stallsOf(qint64 id);
    QList<CollectiveRow> collectivesBetween(qint64 id, qint64 fromStep, qint64 toStep);
    // The run's collective reports a window of steps at a time, as forEachStepChunk's steps.
    bool forEachCollectiveChunk(qint64 id, const std::function<void(const QList<CollectiveRow> &)> &consume,
                                qint64 rowsPerChunk = kRowsPerChunk);
    // The mixture-of-experts routing reports of a run (empty for a dense model), by step and rank.
    QList<ExpertLoadRow> expertLoadOf(qint64 id);
    QList<ExpertLoadRow> expertLoadBetween(qint64 id, qint64 fromStep, qint64 toStep);
    // The first and last step with routing reports; false when there are none.
    bool expertLoadSteps(qint64 id, qint64 &first, qint64 &last);
    // A routing report is a count per layer and expert (kilobytes at scale): windows of fewer rows.
    static constexpr qint64 kExpertRowsPerChunk = 1 << 14;
    // The run's routing reports a window of steps at a time, as forEachStepChunk's steps.
    bool forEachExpertChunk(qint64 id, const std::function<void(const QList<ExpertLoadRow> &)> &consume,
                            qint64 rowsPerChunk = kExpertRowsPerChunk);
    QList<SpanRow> spansOf(qint64 id); // ordered by rank, then start
    // The spans of the run's newest traced step (empty: none), ordered by rank, then start.
    QList<SpanRow> spansOfLastTracedStep(qint64 id);
    QString lastError() const { return m_lastError; }

    // The history used when none is given: $TRELLIS_HISTORY, else the file (history_location.h).
    static QString defaultPath();

private:
    QString openFile(const QString &path, bool create);
    QString openServer(const QString &url, bool create);
    QString migrate();
    QString migrateServer(bool create);
    QString migrationSteps(int from);
    const QString &summarySelect() const;
    RunSummary summaryFrom(const class QSqlQuery &q) const;

    QSqlDatabase m_db;
    QString m_connectionName;
    QString m_path;
    QString m_lastError;
    HistoryEngine m_engine = HistoryEngine::Sqlite;
};

} // namespace trellis::launcher
