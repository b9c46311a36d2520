// The history's schema, written once for both engines, and its migrations (SQLite: PRAGMA
// user_version; PostgreSQL: the trellis_schema table under an advisory lock). See
// history_database.h; split from history_database.cpp, which opens and reads.
#include "launcher/history/history_database.h"

#include <QSqlError>
#include <QSqlQuery>
#include <QVariant>

#include <span>
#include <utility>

namespace trellis::launcher {
namespace {
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
// Schema 16: who recorded the run into this history — the database role on a server (what a
// row-level security policy compares with current_user: "only your own runs", docs/history.md),
// the user name for a file. Older runs hold NULL.
const char *const kSchemaV16[] = {
    "ALTER TABLE runs ADD COLUMN owner TEXT",
    "CREATE INDEX IF NOT EXISTS runs_owner ON runs(owner)",
    // Which spooled runs a server holds already (history_spool.h): a spool's run is merged in the
    // transaction that records it here, so a merge done again (the spool not removed after it, a
    // commit whose answer was lost) merges nothing twice.
    "CREATE TABLE IF NOT EXISTS spool_merges(spool TEXT NOT NULL, run_id TEXT NOT NULL, merged_at TEXT NOT NULL,"
    " PRIMARY KEY(spool, run_id))",
};

// Schema 17: how the run came to be here (RunKind: launched, simulated, collected, adopted),
// written by whoever creates the run. Runs recorded before are told apart as the readers told them
// then: a collected run by its target, a simulated one by its launch command.
const char *const kSchemaV17[] = {
    "ALTER TABLE runs ADD COLUMN kind TEXT NOT NULL DEFAULT 'launched'",
    "UPDATE runs SET kind = 'collected' WHERE target = 'collected'",
    "UPDATE runs SET kind = 'simulated' WHERE launch_command LIKE '% simulate-ranks %'",
    "CREATE INDEX IF NOT EXISTS runs_kind ON runs(kind)",
};
// Schema 18: blocks written from now on hold 28 fields a record (encoding 5: the step boundary's
// checkpoint time, whether a shard was written behind the step, the write time of the save put in
// place); as for schema 8, nothing stored changes, but a Trellis of schema 17 must not read them.
const char *const kSchemaV18[] = {
    "SELECT 1",
};

} // namespace

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
    const std::pair<int, std::span<const char *const>> steps[] = {{1, kSchemaV1}, {2, kSchemaV2}, {3, kSchemaV3}, {4, kSchemaV4}, {5, kSchemaV5}, {6, kSchemaV6}, {7, kSchemaV7}, {8, kSchemaV8}, {9, kSchemaV9}, {10, kSchemaV10}, {11, kSchemaV11}, {12, kSchemaV12}, {13, kSchemaV13}, {14, kSchemaV14}, {15, kSchemaV15}, {16, kSchemaV16}, {17, kSchemaV17}, {18, kSchemaV18}};
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

} // namespace trellis::launcher
