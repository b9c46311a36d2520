// A run history, SQLite or PostgreSQL: opening, the runs' records. See history_database.h; the
// schema and migrations are history_schema.cpp, the rows read back (steps, collectives, routing,
// spans) history_queries.cpp.
#include "launcher/history/history_database.h"
#include "launcher/owner_only.h"

#include "launcher/history/collective_blocks.h"
#include "launcher/history/postgres_copy.h"
#include "launcher/history/step_blocks.h"


#include <QAtomicInteger>

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include <QCoreApplication>
#include <QDateTime>
#include <QSysInfo>
#include <QtEndian>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QSet>
#include <QRegularExpression>
#include <QSqlDriver>
#include <QSqlError>

#include <sqlite3.h>
#include <sys/statvfs.h>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QVariant>

#include <libpq-fe.h>

#include <csignal>
#include <cerrno>
#include <span>
#include <utility>

namespace trellis::launcher {
namespace {

// Set once by the program at start-up (HistoryDatabase::setRunLiveness), read by every open().
RunLiveness &installedLiveness()
{
    static RunLiveness liveness;
    return liveness;
}

QAtomicInteger<quint64> g_connectionCounter;

} // namespace

QByteArray packCounts(const std::vector<qint64> &counts)
{
    QByteArray out(static_cast<qsizetype>(counts.size() * 8), Qt::Uninitialized);
    for (std::size_t i = 0; i < counts.size(); ++i)
        qToLittleEndian<qint64>(counts[i], out.data() + i * 8);
    return out;
}

std::vector<qint64> unpackCounts(const QByteArray &bytes)
{
    std::vector<qint64> out(static_cast<std::size_t>(bytes.size() / 8));
    for (std::size_t i = 0; i < out.size(); ++i)
        out[i] = qFromLittleEndian<qint64>(bytes.constData() + i * 8);
    return out;
}

QString toString(RunState state)
{
    switch (state) {
    case RunState::Idle: return QStringLiteral("idle");
    case RunState::Launching: return QStringLiteral("launching");
    case RunState::Running: return QStringLiteral("running");
    case RunState::Completed: return QStringLiteral("completed");
    case RunState::Failed: return QStringLiteral("failed");
    case RunState::Stopped: return QStringLiteral("stopped");
    }
    return QStringLiteral("idle");
}

RunState runStateFromString(const QString &text)
{
    for (RunState s : {RunState::Idle, RunState::Launching, RunState::Running, RunState::Completed, RunState::Failed,
                       RunState::Stopped})
        if (toString(s) == text)
            return s;
    return RunState::Idle;
}

QString toString(RunKind kind)
{
    switch (kind) {
    case RunKind::Launched: return QStringLiteral("launched");
    case RunKind::Simulated: return QStringLiteral("simulated");
    case RunKind::Collected: return QStringLiteral("collected");
    case RunKind::Adopted: return QStringLiteral("adopted");
    }
    return QStringLiteral("launched");
}

bool runKindFromString(const QString &text, RunKind *kind)
{
    for (RunKind k : {RunKind::Launched, RunKind::Simulated, RunKind::Collected, RunKind::Adopted})
        if (toString(k) == text) {
            *kind = k;
            return true;
        }
    return false;
}

HistoryDatabase::HistoryDatabase()
    : m_connectionName(QStringLiteral("trellis-history-%1").arg(g_connectionCounter.fetchAndAddRelaxed(1)))
{
}

HistoryDatabase::~HistoryDatabase()
{
    if (m_db.isValid()) {
        m_db.close();
        m_db = QSqlDatabase();
        QSqlDatabase::removeDatabase(m_connectionName);
    }
}

QString HistoryDatabase::defaultPath() { return defaultHistory(); }

bool HistoryDatabase::isOpen() const { return m_db.isValid() && m_db.isOpen(); }

bool HistoryDatabase::connectionLost() const
{
    if (m_engine != HistoryEngine::Postgres || !m_db.isValid())
        return false;
    PGconn *connection = postgresConnection(m_db);
    return !connection || PQstatus(connection) != CONNECTION_OK;
}

// "its file system is full" or "… read-only" for the folder of `path`; "" when neither.
QString fileSystemTrouble(const QString &path)
{
    struct statvfs fs {};
    if (::statvfs(QFile::encodeName(QFileInfo(path).absolutePath()).constData(), &fs) != 0)
        return {};
    if (fs.f_flag & ST_RDONLY)
        return QStringLiteral("its file system is read-only (Read-only file system)");
    if (fs.f_bavail == 0)
        return QStringLiteral("its file system is full (No space left on device)");
    return {};
}

QString HistoryDatabase::open(const QString &path, bool create)
{
    m_path = path;
    if (path.isEmpty())
        return QStringLiteral("history database: no path given");
    m_engine = historyEngineOf(path);
    const QString error = m_engine == HistoryEngine::Postgres ? openServer(path, create) : openFile(path, create);
    if (!error.isEmpty())
        return error;
    if (const RunLiveness &liveness = installedLiveness(); liveness.processAlive)
        closeAbandonedRuns(liveness);
    return {};
}

QString HistoryDatabase::openServer(const QString &url, bool create)
{
    ServerConnection c;
    if (const QString why = parseServerConnection(url, &c); !why.isEmpty())
        return QStringLiteral("history database %1: %2").arg(withoutPassword(url), why);
    if (!QSqlDatabase::isDriverAvailable(QStringLiteral("QPSQL")))
        return QStringLiteral("history database %1: this Trellis has no PostgreSQL driver (Qt's QPSQL plugin, Debian package "
                              "libqt6sql6-psql)")
            .arg(url);
    m_db = QSqlDatabase::addDatabase(QStringLiteral("QPSQL"), m_connectionName);
    m_db.setHostName(c.host);
    if (bool numeric = false; !c.port.isEmpty()) {
        const int port = c.port.toInt(&numeric);
        if (!numeric)
            return QStringLiteral("history database %1: port %2 is not a number").arg(url, c.port);
        m_db.setPort(port);
    }
    m_db.setDatabaseName(c.dbname);
    m_db.setUserName(c.user);
    // A server that does not answer is named within 10 s rather than TCP's minutes; the
    // connection says it is Trellis's in pg_stat_activity.
    QStringList options = c.options;
    if (!options.join(QLatin1Char(' ')).contains(QLatin1String("connect_timeout=")))
        options << QStringLiteral("connect_timeout=10");
    if (!options.join(QLatin1Char(' ')).contains(QLatin1String("application_name=")))
        options << QStringLiteral("application_name=trellis");
    m_db.setConnectOptions(options.join(QLatin1Char(';')));
    if (!m_db.open())
        return QStringLiteral("history database %1: cannot connect (%2)").arg(url, m_db.lastError().text().trimmed());
    const QString error = migrateServer(create);
    if (!error.isEmpty()) {
        m_db.close();
        return QStringLiteral("history database %1: %2").arg(url, error);
    }
    return {};
}

QString HistoryDatabase::openFile(const QString &path, bool create)
{
    // A connection string of another kind (or a misspelt one) is never taken for a file name.
    static const QRegularExpression scheme(QStringLiteral("^([A-Za-z][A-Za-z0-9+.-]*)://"));
    if (const QRegularExpressionMatch m = scheme.match(path); m.hasMatch())
        return QStringLiteral("history database %1: '%2://' is not a history this Trellis can open: give a file, or a "
                              "PostgreSQL connection string (postgresql://USER@HOST/DBNAME)")
            .arg(withoutPassword(path), m.captured(1));
    const QFileInfo info(path);
    if (info.exists() && info.isDir())
        return QStringLiteral("history database %1: is a directory").arg(path);
    if (!info.exists()) {
        if (!create)
            return QStringLiteral("history database %1: no such file").arg(path);
        // Owner-only whatever the umask: the history holds plans, hosts and output of the owner's
        // runs (SQLite gives its -wal and -shm files the database's mode).
        if (!makeOwnerOnlyPath(info.absolutePath()))
            return QStringLiteral("history database %1: cannot create folder %2").arg(path, info.absolutePath());
        QFile probe(path);
        if (!probe.open(QIODevice::WriteOnly, QFile::ReadOwner | QFile::WriteOwner))
            return QStringLiteral("history database %1: cannot be created (%2)").arg(path, probe.errorString());
        probe.close();
    } else if (!info.isReadable()) {
        return QStringLiteral("history database %1: not readable").arg(path);
    }
    m_db = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), m_connectionName);
    m_db.setDatabaseName(path);
    m_db.setConnectOptions(QStringLiteral("QSQLITE_BUSY_TIMEOUT=5000"));
    if (!m_db.open())
        return QStringLiteral("history database %1: cannot open (%2)").arg(path, m_db.lastError().text());
    QSqlQuery q(m_db);
    // A file that is not SQLite fails on its first real read, not on open().
    if (!q.exec(QStringLiteral("SELECT count(*) FROM sqlite_master"))) {
        const QString why = q.lastError().text();
        const bool notSqlite = (q.lastError().nativeErrorCode().toInt() & 0xff) == SQLITE_NOTADB;
        m_db.close();
        // A WAL database's first read makes its -wal and -shm files: a full or read-only file
        // system fails it with SQLite's vague words, so say which it is.
        if (const QString trouble = fileSystemTrouble(path); !notSqlite && !trouble.isEmpty())
            return QStringLiteral("history database %1 cannot be written: %2 (%3)").arg(path, trouble, why);
        return QStringLiteral("history database %1: not a SQLite database (%2)").arg(path, why);
    }
    q.exec(QStringLiteral("PRAGMA journal_mode=WAL"));
    // FULL: each commit is on the disk before it returns (WAL: one fsync of the log a commit). The
    // writer acknowledges telemetry after its commit and the ranks drop what is acknowledged, so a
    // commit the operating system could still lose (NORMAL: a power cut, a file system that goes
    // read-only on an error and drops its dirty pages) would be telemetry acknowledged and gone.
    // The writer commits a few times a second, so the fsyncs cost little (docs/history.md).
    q.exec(QStringLiteral("PRAGMA synchronous=FULL"));
    q.exec(QStringLiteral("PRAGMA foreign_keys=ON"));
    // Step rows arrive step by step across ranks while the primary key runs rank by rank: at 1024
    // ranks every insert lands on another index page. A 64 MiB page cache keeps those pages in
    // memory (SQLite's default, 2 MiB, made the writer 4x slower at 1024 ranks × 20 Hz).
    q.exec(QStringLiteral("PRAGMA cache_size=-65536"));
    const QString error = migrate();
    if (!error.isEmpty()) {
        m_db.close();
        return QStringLiteral("history database %1: %2").arg(path, error);
    }
    return {};
}

void HistoryDatabase::setRunLiveness(RunLiveness liveness) { installedLiveness() = std::move(liveness); }

int HistoryDatabase::closeAbandonedRuns(const RunLiveness &liveness)
{
    // Runs still launching or running whose launcher was on this host and is gone (or, from before
    // schema 3, is unknown: no older Trellis writes a newer database) end as failed. Runs launched
    // from another host sharing the file are left to it. A reused pid keeps a run open: rare, and
    // never closes a live one.
    QSqlQuery q(m_db);
    if (!q.exec(QStringLiteral("SELECT id, launcher_host, launcher_pid, run_id FROM runs WHERE status IN ('launching', 'running')")))
        return 0;
    const QSet<QString> liveJobs = liveness.runsWithLiveJobs ? liveness.runsWithLiveJobs() : QSet<QString>{};
    const QString host = QSysInfo::machineHostName();
    QList<std::pair<qint64, QString>> abandoned;
    while (q.next()) {
        const QString launcherHost = q.value(1).toString();
        const qint64 pid = q.value(2).isNull() ? 0 : q.value(2).toLongLong();
        if (liveJobs.contains(q.value(3).toString()))
            continue; // its supervisor died but its job goes on: someone may adopt it
        if (q.value(2).isNull())
            abandoned.append({q.value(0).toLongLong(), QLatin1String(kAbandonedPrefix) + QStringLiteral("is unknown and no longer writes to this history")});
        else if (launcherHost == host && !liveness.processAlive(pid))
            abandoned.append({q.value(0).toLongLong(),
                              QLatin1String(kAbandonedPrefix) + QStringLiteral("(%1, pid %2) ended while the run was going; how the ranks ended is unknown")
                                  .arg(launcherHost)
                                  .arg(pid)});
    }
    QSqlQuery update(m_db);
    update.prepare(QStringLiteral("UPDATE runs SET status = 'failed', ended_at = coalesce(ended_at, ?), error = ? WHERE id = ?"));
    int closed = 0;
    for (const auto &[id, why] : abandoned) {
        update.addBindValue(QDateTime::currentDateTimeUtc().toString(Qt::ISODateWithMs));
        update.addBindValue(why);
        update.addBindValue(id);
        closed += update.exec() ? 1 : 0;
    }
    return closed;
}

namespace {
const char *kSummarySelect =
    "SELECT r.id, r.run_id, r.name, r.target, r.status, r.world_size, r.total_steps, r.started_at, r.ended_at,"
    " r.exit_code, r.error,"
    " %GREATEST%,"
    " coalesce((SELECT last_loss FROM step_blocks b WHERE b.run = r.id ORDER BY last_step DESC, rank, b.rowid DESC LIMIT 1),"
    "          (SELECT loss FROM step_metrics s WHERE s.run = r.id ORDER BY step DESC, rank LIMIT 1)),"
    " r.launch_command,"
    " r.note, r.archived, r.tokens_per_s, r.mfu, r.figures_step, r.launcher_host,"
    " coalesce(r.plan_name, %NAME%), coalesce(r.plan_precision, %PRECISION%), coalesce(r.plan_layout, %LAYOUT%),"
    " %TAGS%,"
    " r.files_at, r.owner, r.kind"
    " FROM runs r ";

// The select above in the engine's SQL, with the plan's fields read from plan_json where a writer
// left them out (coalesce reads the JSON only for those rows).
QString summarySelectFor(HistoryEngine engine)
{
    const QString plan = QStringLiteral("r.plan_json");
    return QString::fromUtf8(kSummarySelect)
        .replace(QStringLiteral("%GREATEST%"),
                 sqlGreatest(engine, QStringLiteral("coalesce((SELECT max(step) FROM step_metrics s WHERE s.run = r.id), 0)"),
                             QStringLiteral("coalesce((SELECT max(last_step) FROM step_blocks b WHERE b.run = r.id), 0)")))
        .replace(QStringLiteral("%NAME%"), planNameSql(engine, plan))
        .replace(QStringLiteral("%PRECISION%"), planPrecisionSql(engine, plan))
        .replace(QStringLiteral("%LAYOUT%"), planLayoutSql(engine, plan))
        .replace(QStringLiteral("%TAGS%"), sqlTagLines(engine));
}
} // namespace

const QString &HistoryDatabase::summarySelect() const
{
    static const QString sqlite = summarySelectFor(HistoryEngine::Sqlite);
    static const QString postgres = summarySelectFor(HistoryEngine::Postgres);
    return m_engine == HistoryEngine::Postgres ? postgres : sqlite;
}

RunSummary HistoryDatabase::summaryFrom(const QSqlQuery &q) const
{
    RunSummary s;
    s.id = q.value(0).toLongLong();
    s.runId = q.value(1).toString();
    s.name = q.value(2).toString();
    s.target = q.value(3).toString();
    s.status = q.value(4).toString();
    s.worldSize = q.value(5).toInt();
    s.totalSteps = q.value(6).toLongLong();
    s.startedAt = QDateTime::fromString(q.value(7).toString(), Qt::ISODateWithMs);
    s.endedAt = QDateTime::fromString(q.value(8).toString(), Qt::ISODateWithMs);
    s.exitCode = q.value(9).toInt();
    s.error = q.value(10).toString();
    s.stepsDone = q.value(11).toLongLong();
    s.lastLoss = q.value(12).toDouble();
    if (const QString commands = q.value(13).toString(); !commands.isEmpty())
        s.launchCommands = commands.split(QLatin1Char('\n'));
    s.note = q.value(14).toString();
    s.archived = q.value(15).toInt() != 0;
    s.tokensPerS = q.value(16).isNull() ? -1 : q.value(16).toDouble();
    s.mfu = q.value(17).isNull() ? -1 : q.value(17).toDouble();
    s.figuresStep = q.value(18).isNull() ? -1 : q.value(18).toLongLong();
    s.launcherHost = q.value(19).toString();
    s.planName = q.value(20).toString();
    s.precision = q.value(21).toString();
    s.layout = q.value(22).toString();
    if (const QString tags = q.value(23).toString(); !tags.isEmpty())
        s.tags = tags.split(QLatin1Char('\n'));
    s.filesAt = q.value(24).toString();
    s.owner = q.value(25).toString();
    if (!runKindFromString(q.value(26).toString(), &s.kind))
        s.kind = RunKind::Launched; // (NOT NULL, 'launched' by default: a newer Trellis's word reads as launched)
    return s;
}

QList<RunSummary> HistoryDatabase::listRuns(int limit)
{
    RunFilter every;
    every.archived = RunFilter::Archived::Any; // every run, archived too
    return listRuns(every, limit);
}

QList<RunSummary> HistoryDatabase::listRuns(const RunFilter &filter, int limit)
{
    QList<RunSummary> runs;
    const RunFilterSql sql = runFilterSql(filter, m_engine);
    QSqlQuery q(m_db);
    q.prepare(summarySelect() + (sql.where.isEmpty() ? QString() : QStringLiteral("WHERE ") + sql.where) +
              QStringLiteral(" ORDER BY r.id DESC LIMIT ?"));
    for (const QVariant &v : sql.binds)
        q.addBindValue(v);
    q.addBindValue(limit);
    if (!q.exec()) {
        m_lastError = q.lastError().text();
        return runs;
    }
    while (q.next())
        runs.append(summaryFrom(q));
    return runs;
}

std::optional<QList<std::pair<qint64, QString>>> HistoryDatabase::runIds(const RunFilter &filter)
{
    const RunFilterSql sql = runFilterSql(filter, m_engine);
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("SELECT r.id, r.run_id FROM runs r ") + (sql.where.isEmpty() ? QString() : QStringLiteral("WHERE ") + sql.where) +
              QStringLiteral(" ORDER BY r.id"));
    for (const QVariant &v : sql.binds)
        q.addBindValue(v);
    if (!q.exec()) {
        m_lastError = q.lastError().text();
        return std::nullopt;
    }
    QList<std::pair<qint64, QString>> ids;
    while (q.next())
        ids.append({q.value(0).toLongLong(), q.value(1).toString()});
    return ids;
}

std::optional<RunSummary> HistoryDatabase::findRun(const QString &reference)
{
    QSqlQuery q(m_db);
    if (reference == QLatin1String("last")) {
        q.prepare(summarySelect() + QStringLiteral("ORDER BY r.id DESC LIMIT 1"));
    } else {
        bool numeric = false;
        const qint64 id = reference.toLongLong(&numeric);
        q.prepare(summarySelect() +
                  (numeric ? QStringLiteral("WHERE r.id = ?") : QStringLiteral("WHERE r.run_id = ?")));
        if (numeric)
            q.addBindValue(id);
        else
            q.addBindValue(reference);
    }
    if (!q.exec()) {
        m_lastError = q.lastError().text();
        return std::nullopt;
    }
    if (!q.next()) {
        m_lastError = QStringLiteral("no run '%1' in %2").arg(reference, m_path);
        return std::nullopt;
    }
    return summaryFrom(q);
}

std::optional<RunData> HistoryDatabase::loadRunForTakeOver(qint64 id)
{
    std::optional<RunData> data = loadRun(id, false);
    std::map<int, StepRow> newest;
    if (!data || !forEachStepChunk(id, 0, [&](const QList<StepRow> &rows) {
            for (const StepRow &row : rows)
                newest[row.rank] = row; // ascending steps
        }))
        return std::nullopt;
    for (const auto &[rank, row] : newest)
        data->steps.append(row);
    return data;
}

std::optional<RunData> HistoryDatabase::loadRun(qint64 id, bool withSteps)
{
    auto summary = findRun(QString::number(id));
    if (!summary)
        return std::nullopt;
    RunData data;
    data.run = *summary;
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("SELECT plan_json FROM runs WHERE id = ?"));
    q.addBindValue(id);
    if (q.exec() && q.next())
        data.planJson = q.value(0).toString();

    q.prepare(QStringLiteral("SELECT rank, host, pid, device, dp, tp, pp, cp, exit_code, dropped, received_seq, goodbye_seq, lost,"
                             " precision, kernels, threads FROM ranks WHERE run = ? ORDER BY rank"));
    q.addBindValue(id);
    if (q.exec()) {
        while (q.next()) {
            RankRow r;
            r.rank = q.value(0).toInt();
            r.host = q.value(1).toString();
            r.pid = q.value(2).toLongLong();
            r.device = q.value(3).toString();
            r.dp = q.value(4).toInt();
            r.tp = q.value(5).toInt();
            r.pp = q.value(6).toInt();
            r.cp = q.value(7).toInt();
            r.exitCode = q.value(8).isNull() ? -1 : q.value(8).toInt();
            r.dropped = q.value(9).toLongLong();
            r.receivedSeq = q.value(10).toLongLong();
            r.goodbyeSeq = q.value(11).isNull() ? -1 : q.value(11).toLongLong();
            r.lost = q.value(12).toLongLong();
            r.precision = q.value(13).toString();
            r.kernels = q.value(14).toString();
            r.threads = q.value(15).toInt();
            data.ranks.append(r);
        }
    }
    if (withSteps)
        if (QString why; !readStepRows(m_db, id, data.steps, &why))
            m_lastError = why;

    q.prepare(QStringLiteral("SELECT rank, step, kind, message, at FROM events WHERE run = ? ORDER BY id"));
    q.addBindValue(id);
    if (q.exec()) {
        while (q.next()) {
            EventRow e;
            e.rank = q.value(0).toInt();
            e.step = q.value(1).toLongLong();
            e.kind = q.value(2).toString();
            e.message = q.value(3).toString();
            e.at = QDateTime::fromString(q.value(4).toString(), Qt::ISODateWithMs);
            data.events.append(e);
        }
    }
    data.stalls = stallsOf(id);
    return data;
}

QList<StallRow> HistoryDatabase::stallsOf(qint64 id)
{
    QList<StallRow> stalls;
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("SELECT number, attempt, holders, waiting, silent, step, started_at, ended_at, duration_ms, outcome, what"
                             " FROM stalls WHERE run = ? ORDER BY number"));
    q.addBindValue(id);
    if (!q.exec())
        return stalls;
    auto ranks = [](const QString &text) {
        QList<int> out;
        for (const QString &part : text.split(QLatin1Char(','), Qt::SkipEmptyParts))
            if (bool ok = false; part.toInt(&ok) >= 0 && ok)
                out.append(part.toInt());
        return out;
    };
    while (q.next()) {
        StallRow s;
        s.number = q.value(0).toInt();
        s.attempt = q.value(1).toInt();
        s.holders = ranks(q.value(2).toString());
        s.waiting = ranks(q.value(3).toString());
        s.silent = q.value(4).toInt() != 0;
        s.step = q.value(5).toLongLong();
        s.startedAt = QDateTime::fromString(q.value(6).toString(), Qt::ISODateWithMs);
        s.endedAt = QDateTime::fromString(q.value(7).toString(), Qt::ISODateWithMs);
        s.durationMs = q.value(8).toLongLong();
        s.outcome = q.value(9).toString();
        s.what = q.value(10).toString();
        stalls.append(s);
    }
    return stalls;
}

} // namespace trellis::launcher
