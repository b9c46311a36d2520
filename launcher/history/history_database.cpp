// SQLite history: schema, migrations and the runs' records. See history_database.h; the rows
// read back (steps, collectives, routing, spans) are history_queries.cpp.
#include "launcher/history/history_database.h"
#include "launcher/owner_only.h"

#include "launcher/history/collective_blocks.h"
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

const char *const kSchemaV1[] = {
    "CREATE TABLE runs("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " run_id TEXT NOT NULL UNIQUE,"
    " name TEXT,"
    " plan_json TEXT NOT NULL,"
    " target TEXT,"
    " status TEXT NOT NULL,"
    " world_size INTEGER,"
    " total_steps INTEGER,"
    " started_at TEXT,"
    " ended_at TEXT,"
    " exit_code INTEGER,"
    " error TEXT)",
    "CREATE TABLE ranks("
    " run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " rank INTEGER NOT NULL,"
    " host TEXT, pid INTEGER, device TEXT,"
    " dp INTEGER, tp INTEGER, pp INTEGER, cp INTEGER,"
    " exit_code INTEGER, dropped INTEGER DEFAULT 0,"
    " PRIMARY KEY(run, rank))",
    "CREATE TABLE step_metrics("
    " run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " rank INTEGER NOT NULL, step INTEGER NOT NULL,"
    " step_ms REAL, compute_ms REAL, comm_ms REAL, comm_exposed_ms REAL, bubble_ms REAL, idle_ms REAL,"
    " tokens INTEGER, tokens_per_s REAL, loss REAL, grad_norm REAL, lr REAL,"
    " mem_parameters INTEGER, mem_gradients INTEGER, mem_optimizer INTEGER, mem_activations INTEGER,"
    " mem_comm INTEGER, peak_rss INTEGER,"
    " PRIMARY KEY(run, rank, step))",
    "CREATE TABLE collective_stats("
    " run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " rank INTEGER NOT NULL, step INTEGER NOT NULL, grp TEXT, op TEXT,"
    " bytes INTEGER, ms REAL, bus_gbps REAL, count INTEGER)",
    "CREATE INDEX collective_stats_run ON collective_stats(run, step)",
    "CREATE TABLE events("
    " id INTEGER PRIMARY KEY AUTOINCREMENT,"
    " run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " rank INTEGER, step INTEGER, kind TEXT, message TEXT, at TEXT)",
    "CREATE INDEX events_run ON events(run)",
};

const char *const kSchemaV2[] = {
    "CREATE TABLE spans("
    " run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " rank INTEGER NOT NULL, step INTEGER NOT NULL, name TEXT,"
    " start_ns INTEGER, end_ns INTEGER, micro_batch INTEGER, stage INTEGER)",
    "CREATE INDEX spans_run ON spans(run, rank, start_ns)",
};

// Which process launched a run, so a run whose launcher is gone is not left "running" forever.
const char *const kSchemaV3[] = {
    "ALTER TABLE runs ADD COLUMN launcher_host TEXT",
    "ALTER TABLE runs ADD COLUMN launcher_pid INTEGER",
};

// How much of each rank's telemetry is stored: complete when received_seq = goodbye_seq + 1.
const char *const kSchemaV4[] = {
    "ALTER TABLE ranks ADD COLUMN received_seq INTEGER DEFAULT 0",
    "ALTER TABLE ranks ADD COLUMN goodbye_seq INTEGER",
    "ALTER TABLE ranks ADD COLUMN lost INTEGER DEFAULT 0",
};

// Step reports packed per rank and writer transaction (launcher/history/step_blocks.h); step_metrics keeps
// what earlier versions wrote and is read together with the blocks.
const char *const kSchemaV5[] = {
    "CREATE TABLE step_blocks("
    " run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " rank INTEGER NOT NULL, first_step INTEGER NOT NULL, last_step INTEGER NOT NULL, last_loss REAL,"
    " n INTEGER NOT NULL, rows BLOB NOT NULL)",
    "CREATE INDEX step_blocks_run ON step_blocks(run, last_step, rank)",
    "CREATE INDEX step_blocks_rank ON step_blocks(run, rank, last_step)",
};

// Mixture-of-experts routing, one row per rank and step (tokens: packCounts).
const char *const kSchemaV6[] = {
    "CREATE TABLE expert_load("
    " run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " rank INTEGER NOT NULL, step INTEGER NOT NULL, layers INTEGER NOT NULL, experts INTEGER NOT NULL,"
    " tokens BLOB NOT NULL, dropped INTEGER, aux_loss REAL,"
    " PRIMARY KEY(run, step, rank))",
};
// Schema 7: step blocks say how their records are encoded (launcher/history/step_blocks.h); the blocks
// written before are fixed records.
const char *const kSchemaV7[] = {
    "ALTER TABLE step_blocks ADD COLUMN encoding INTEGER NOT NULL DEFAULT 0",
};
// Schema 8: blocks written from now on hold 22 fields a record (encoding 2: the master weights'
// bytes and fp16's loss scale and skipped updates); nothing stored changes, but a Trellis of
// schema 7 must not read such blocks, so the version says so.
const char *const kSchemaV8[] = {
    "SELECT 1",
};
// Schema 9: each attempt's exact launch command (the program and its arguments as started, one
// attempt a line), so a run can be reproduced or audited from its record.
const char *const kSchemaV9[] = {
    "ALTER TABLE runs ADD COLUMN launch_command TEXT",
};
// Schema 10: blocks written from now on hold 25 fields a record (encoding 3: local updates' outer
// steps and the dp bytes sent and saved); as for schema 8, nothing stored changes, but a Trellis
// of schema 9 must not read such blocks.
const char *const kSchemaV10[] = {
    "SELECT 1",
};
// Schema 11: blocks hold a group of consecutive ranks (step blocks from now on in encoding 4,
// launcher/history/step_blocks.h: `rank` the group's first, `last_rank` its last; NULL in older
// blocks of one rank), and collective reports are packed the same way
// (launcher/history/collective_blocks.h); collective_stats keeps what earlier versions wrote and
// is read together with the blocks.
const char *const kSchemaV11[] = {
    "ALTER TABLE step_blocks ADD COLUMN last_rank INTEGER",
    "CREATE TABLE IF NOT EXISTS collective_blocks("
    " run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " rank INTEGER NOT NULL, last_rank INTEGER NOT NULL, first_step INTEGER NOT NULL, last_step INTEGER NOT NULL,"
    " n INTEGER NOT NULL, rows BLOB NOT NULL)",
    "CREATE INDEX IF NOT EXISTS collective_blocks_run ON collective_blocks(run, last_step)",
};
// Schema 12: stalls, one row a stall once it ended (launcher/detectors/stall_tracker.h): who held
// whom up, from when to when, and how it ended (cleared, hang, ended with the job).
const char *const kSchemaV12[] = {
    "CREATE TABLE IF NOT EXISTS stalls("
    " run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " number INTEGER NOT NULL, attempt INTEGER NOT NULL, holders TEXT NOT NULL, waiting TEXT NOT NULL,"
    " silent INTEGER NOT NULL, step INTEGER NOT NULL, started_at TEXT, ended_at TEXT, duration_ms INTEGER NOT NULL,"
    " outcome TEXT NOT NULL, what TEXT)",
    "CREATE INDEX IF NOT EXISTS stalls_run ON stalls(run, number)",
};
// Schema 13: what each rank's Hello says of its kernels — the precision it trains in, how its
// kernels run it (the 16-bit GEMM backend), its kernel threads. Older runs' ranks hold NULL.
const char *const kSchemaV13[] = {
    "ALTER TABLE ranks ADD COLUMN precision TEXT",
    "ALTER TABLE ranks ADD COLUMN kernels TEXT",
    "ALTER TABLE ranks ADD COLUMN threads INTEGER",
};

// Schema 14: what people add to a run — a note, tags (a table, one row a tag), archived — and the
// run's figures once it ended (the job's median tokens/s, MFU; figures_step: the last step they
// were computed from), computed from its steps by whoever lists it first (run_catalog.h) and kept.
// The plan's fields are read from plan_json with json_extract, which PostgreSQL's jsonb mirrors.
const char *const kSchemaV14[] = {
    "ALTER TABLE runs ADD COLUMN note TEXT",
    "ALTER TABLE runs ADD COLUMN archived INTEGER NOT NULL DEFAULT 0",
    "ALTER TABLE runs ADD COLUMN tokens_per_s REAL",
    "ALTER TABLE runs ADD COLUMN mfu REAL",
    "ALTER TABLE runs ADD COLUMN figures_step INTEGER",
    "CREATE TABLE IF NOT EXISTS run_tags("
    " run INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,"
    " tag TEXT NOT NULL,"
    " PRIMARY KEY(run, tag))",
    "CREATE INDEX IF NOT EXISTS run_tags_tag ON run_tags(tag)",
    "ALTER TABLE runs ADD COLUMN plan_name TEXT",
    "ALTER TABLE runs ADD COLUMN plan_precision TEXT",
    "ALTER TABLE runs ADD COLUMN plan_layout TEXT",
    "UPDATE runs SET plan_name = %NAME%, plan_precision = %PRECISION%, plan_layout = %LAYOUT%",
};
// Schema 15: where a run's files are ("HOST:FOLDER"): a team's history (PostgreSQL) is read on
// machines that do not hold them.
const char *const kSchemaV15[] = {
    "ALTER TABLE runs ADD COLUMN files_at TEXT",
};

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
    const QVariant v = m_db.driver()->handle();
    if (!v.isValid() || (qstrcmp(v.typeName(), "PGconn*") != 0 && qstrcmp(v.typeName(), "pg_conn*") != 0))
        return !m_db.isOpen();
    PGconn *connection = *static_cast<PGconn *const *>(v.constData());
    return !connection || PQstatus(connection) != CONNECTION_OK;
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
        m_db.close();
        return QStringLiteral("history database %1: not a SQLite database (%2)").arg(path, why);
    }
    q.exec(QStringLiteral("PRAGMA journal_mode=WAL"));
    q.exec(QStringLiteral("PRAGMA synchronous=NORMAL"));
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
            abandoned.append({q.value(0).toLongLong(), QStringLiteral("its launcher is unknown and no longer writes to this history")});
        else if (launcherHost == host && !liveness.processAlive(pid))
            abandoned.append({q.value(0).toLongLong(),
                              QStringLiteral("its launcher (%1, pid %2) ended while the run was going; how the ranks ended is unknown")
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

QString HistoryDatabase::migrate()
{
    QSqlQuery q(m_db);
    if (!q.exec(QStringLiteral("PRAGMA user_version")) || !q.next())
        return QStringLiteral("cannot read schema version (%1)").arg(q.lastError().text());
    const int version = q.value(0).toInt();
    if (version > kHistorySchemaVersion)
        return QStringLiteral("schema version %1 is newer than this Trellis understands (%2); refusing to touch it")
            .arg(version)
            .arg(kHistorySchemaVersion);
    if (version == kHistorySchemaVersion)
        return {};
    if (version == 0) {
        q.exec(QStringLiteral("SELECT count(*) FROM sqlite_master WHERE type='table'"));
        if (q.next() && q.value(0).toInt() > 0)
            return QStringLiteral("holds tables but no Trellis schema version; not a Trellis history database");
    }
    if (!m_db.transaction())
        return QStringLiteral("cannot start migration (%1)").arg(m_db.lastError().text());
    if (QString why = migrationSteps(version); !why.isEmpty()) {
        m_db.rollback();
        return why;
    }
    q.exec(QStringLiteral("PRAGMA user_version=%1").arg(kHistorySchemaVersion));
    if (!m_db.commit())
        return QStringLiteral("migration commit failed (%1)").arg(m_db.lastError().text());
    return {};
}

// PostgreSQL keeps the version in a table of its own. Every open takes the advisory lock for the
// transaction that reads it, so of several supervisors starting at once against a new or older
// database one migrates and the others wait, then find it done (DDL is transactional: a migration
// that fails leaves the database as it was).
QString HistoryDatabase::migrateServer(bool create)
{
    constexpr qint64 kMigrationLock = 0x7472656c6c6973; // "trellis"
    if (!m_db.transaction())
        return QStringLiteral("cannot start a transaction (%1)").arg(m_db.lastError().text().trimmed());
    QSqlQuery q(m_db);
    const auto fail = [&](const QString &why) {
        m_db.rollback();
        return why;
    };
    if (!q.exec(QStringLiteral("SELECT pg_advisory_xact_lock(%1)").arg(kMigrationLock)))
        return fail(QStringLiteral("cannot take the migration lock (%1)").arg(q.lastError().text().trimmed()));
    if (!q.exec(QStringLiteral("SELECT to_regclass('trellis_schema') IS NOT NULL")) || !q.next())
        return fail(QStringLiteral("cannot read schema version (%1)").arg(q.lastError().text().trimmed()));
    int version = 0;
    if (q.value(0).toBool()) {
        if (!q.exec(QStringLiteral("SELECT max(version) FROM trellis_schema")) || !q.next())
            return fail(QStringLiteral("cannot read schema version (%1)").arg(q.lastError().text().trimmed()));
        version = q.value(0).toInt();
    } else {
        if (!q.exec(QStringLiteral("SELECT count(*) FROM information_schema.tables WHERE table_schema = current_schema()")) || !q.next())
            return fail(QStringLiteral("cannot list tables (%1)").arg(q.lastError().text().trimmed()));
        if (q.value(0).toInt() > 0)
            return fail(QStringLiteral("its schema holds tables but no Trellis schema version; not a Trellis history "
                                       "database (give another database, or another schema with options=-csearch_path=NAME)"));
        if (!create)
            return fail(QStringLiteral("holds no Trellis history yet"));
    }
    if (version > kHistorySchemaVersion)
        return fail(QStringLiteral("schema version %1 is newer than this Trellis understands (%2); refusing to touch it")
                        .arg(version)
                        .arg(kHistorySchemaVersion));
    if (version < kHistorySchemaVersion) {
        if (QString why = migrationSteps(version); !why.isEmpty())
            return fail(why);
        const QString record = version == 0 ? QStringLiteral("CREATE TABLE trellis_schema(version INTEGER NOT NULL)")
                                            : QStringLiteral("DELETE FROM trellis_schema");
        if (!q.exec(record) || !q.exec(QStringLiteral("INSERT INTO trellis_schema(version) VALUES(%1)").arg(kHistorySchemaVersion)))
            return fail(QStringLiteral("cannot record schema version (%1)").arg(q.lastError().text().trimmed()));
    }
    if (!m_db.commit())
        return QStringLiteral("migration commit failed (%1)").arg(m_db.lastError().text().trimmed());
    return {};
}

// Each step brings version N−1 to N; a database is taken from where it is to the newest. The
// statements are SQLite's, and PostgreSQL's through postgresDdl (history_engine.h).
QString HistoryDatabase::migrationSteps(int version)
{
    const std::pair<int, std::span<const char *const>> steps[] = {{1, kSchemaV1}, {2, kSchemaV2}, {3, kSchemaV3}, {4, kSchemaV4}, {5, kSchemaV5}, {6, kSchemaV6}, {7, kSchemaV7}, {8, kSchemaV8}, {9, kSchemaV9}, {10, kSchemaV10}, {11, kSchemaV11}, {12, kSchemaV12}, {13, kSchemaV13}, {14, kSchemaV14}, {15, kSchemaV15}};
    QSqlQuery q(m_db);
    for (const auto &[target, statements] : steps) {
        if (version >= target)
            continue;
        for (const char *statement : statements) {
            QString sql = QString::fromUtf8(statement)
                              .replace(QStringLiteral("%NAME%"), planNameSql(m_engine, QStringLiteral("plan_json")))
                              .replace(QStringLiteral("%PRECISION%"), planPrecisionSql(m_engine, QStringLiteral("plan_json")))
                              .replace(QStringLiteral("%LAYOUT%"), planLayoutSql(m_engine, QStringLiteral("plan_json")));
            if (m_engine == HistoryEngine::Postgres)
                sql = postgresDdl(sql);
            if (!q.exec(sql))
                return QStringLiteral("migration to version %1 failed (%2)").arg(target).arg(q.lastError().text().trimmed());
        }
    }
    return {};
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
    " r.files_at"
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
