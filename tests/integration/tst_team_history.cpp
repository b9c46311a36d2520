// A team's history on a real PostgreSQL server (a private one, tests/support/postgres_cluster.sh,
// with TLS): trellis-cli end to end with --db postgresql://… — the real trainer under mpirun
// writing its run there, the runs list, records, exports, reports and comparison read back;
// several supervisors starting at once on a new database (one migration, distinct run ids); runs
// copied between an SQLite file and the server both ways, twice; what the server's roles allow;
// credentials from PGPASSWORD and a password file, TLS verified; and the refusals: a password in
// the string, a server that is not there, a wrong password, a connection string taken for a file.
#include "launcher/history/history_database.h"
#include "launcher/history/history_reader.h"
#include "launcher/history/history_writer.h"
#include "launcher/history_location.h"
#include "tests/support/cli_test_support.h"
#include "tests/support/history_checks.h"
#include "tests/support/history_engines.h"

#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QSysInfo>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QProcess>
#include <QSet>
#include <QRegularExpression>
#include <QSqlError>
#include <QSqlQuery>
#include <QTemporaryDir>
#include <QTest>

#include <signal.h>

#include <algorithm>
#include <vector>

using namespace trellis::launcher;
using trellis::test::cli;
using trellis::test::failure;
using trellis::test::kCli;
using trellis::test::kPlan;
using trellis::test::Result;
using trellis::test::storedReports;

namespace {

// The steps, ranks, events, tags and note of a run as a history holds them, for comparing two.
QString fingerprint(HistoryDatabase &db, const QString &runId)
{
    const auto run = db.findRun(runId);
    if (!run)
        return QStringLiteral("no run ") + runId;
    const auto data = db.loadRun(run->id);
    QStringList parts{run->status, QString::number(run->worldSize), QString::number(run->stepsDone), run->note,
                      run->tags.join(QLatin1Char(',')), run->launchCommands.join(QLatin1Char('|'))};
    for (const StepRow &s : data->steps)
        parts << QStringLiteral("%1/%2/%3/%4").arg(s.rank).arg(s.step).arg(s.loss, 0, 'g', 17).arg(s.stepMs, 0, 'g', 17);
    for (const RankRow &r : data->ranks)
        parts << QStringLiteral("%1@%2:%3").arg(r.rank).arg(r.host).arg(r.exitCode);
    for (const EventRow &e : data->events)
        parts << e.kind + QLatin1Char(':') + e.message;
    parts << QString::number(db.collectivesOf(run->id).size());
    return parts.join(QLatin1Char('\n'));
}

bool writeFile(const QString &path, const QByteArray &bytes)
{
    QFile f(path);
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(bytes) == bytes.size();
}

} // namespace

class TstTeamHistory : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;
    trellis::test::HistoryEngines m_server;
    QString m_url; // the superuser's, on the Unix socket
    QString port() const { return trellis::test::readAll(m_server.serverDir() + QStringLiteral("/port")).trimmed(); }

private slots:
    void initTestCase()
    {
        qputenv("TRELLIS_TEST_HISTORY", "postgresql");
        // The suite's server speaks TLS on TCP (tests/support/postgres_cluster.sh up --tls).
        QCOMPARE(m_server.start({QStringLiteral("--tls")}), QString());
        // A server history keeps its runs' files in the user's data folder: the suite's own.
        qputenv("XDG_DATA_HOME", QFile::encodeName(m_dir.filePath(QStringLiteral("data"))));
        m_url = m_server.fresh(m_dir, {});
        QVERIFY(!m_url.isEmpty());
    }
    void cleanupTestCase() { m_server.stop(); }

    // The real trainer's 4-rank run lands in the server; every reading command reads it there.
    void aRunLandsInTheTeamHistory()
    {
        const QString report = m_dir.filePath(QStringLiteral("report.html"));
        Result r = cli({QStringLiteral("--db"), m_url, QStringLiteral("run"), kPlan, QStringLiteral("--report"), report});
        QVERIFY2(r.code == 0, qPrintable(failure(r)));
        const QString runId = r.out.section(QLatin1Char('\n'), 0, 0).mid(4).trimmed();
        QVERIFY2(QStringLiteral("20261202-000000-0123abcd").size() == runId.size(), qPrintable(runId)); // time + 32 random bits
        {
            HistoryDatabase h;
            QCOMPARE(h.open(m_url, false), QString());
            QCOMPARE(h.engine(), HistoryEngine::Postgres);
            const auto run = h.findRun(runId);
            QVERIFY(run.has_value());
            QCOMPARE(run->status, QStringLiteral("completed"));
            const auto data = h.loadRun(run->id);
            QCOMPARE(data->ranks.size(), 4);
            QCOMPARE(data->steps.size(), 4 * 12);
            for (const RankRow &rank : data->ranks)
                QCOMPARE(rank.goodbyeSeq + 1, rank.receivedSeq); // every rank's telemetry, acknowledged
            QVERIFY(h.collectivesOf(run->id).size() >= 4 * 12);
        }
        QVERIFY(trellis::test::readAll(report).contains(runId));
        // The run's folder is on this machine, in the user's data folder (not beside a file).
        QVERIFY(QFileInfo(m_dir.filePath(QStringLiteral("data/trellis/runs/")) + runId + QStringLiteral("/plan.json")).isFile());

        r = cli({QStringLiteral("--db"), m_url, QStringLiteral("simulate"), QStringLiteral("--ranks"), QStringLiteral("2"),
                 QStringLiteral("--seconds"), QStringLiteral("1"), QStringLiteral("--quiet"), QStringLiteral("--run-id"), QStringLiteral("team-sim")});
        QVERIFY2(r.code == 0, qPrintable(failure(r)));
        // $TRELLIS_HISTORY names the history when --db does not.
        qputenv("TRELLIS_HISTORY", m_url.toUtf8());
        r = cli({QStringLiteral("runs")});
        qunsetenv("TRELLIS_HISTORY");
        QVERIFY2(r.code == 0 && r.out.contains(runId) && r.out.contains(QStringLiteral("team-sim")), qPrintable(failure(r)));
        r = cli({QStringLiteral("--db"), m_url, QStringLiteral("runs"), runId});
        QVERIFY2(r.code == 0 && r.out.contains(QStringLiteral("completed")), qPrintable(failure(r)));
        // The record says where the run's files are: this machine, the user's data folder.
        QVERIFY2(r.out.contains(QStringLiteral("files: %1:%2").arg(QSysInfo::machineHostName(), m_dir.filePath(QStringLiteral("data/trellis/runs/")) + runId)),
                 qPrintable(r.out));
        r = cli({QStringLiteral("--db"), m_url, QStringLiteral("export"), runId, QStringLiteral("--format"), QStringLiteral("csv")});
        QVERIFY2(r.code == 0, qPrintable(failure(r)));
        QCOMPARE(r.out.trimmed().split(QLatin1Char('\n')).size(), 1 + 4 * 12);
        const QString compared = m_dir.filePath(QStringLiteral("compare.html"));
        r = cli({QStringLiteral("--db"), m_url, QStringLiteral("compare"), runId, QStringLiteral("team-sim"), QStringLiteral("--report"), compared});
        QVERIFY2(r.code == 0 && QFileInfo(compared).size() > 0, qPrintable(failure(r)));
        r = cli({QStringLiteral("--db"), m_url, QStringLiteral("runs"), QStringLiteral("tag"), runId, QStringLiteral("team")});
        QVERIFY2(r.code == 0, qPrintable(failure(r)));
        r = cli({QStringLiteral("--db"), m_url, QStringLiteral("runs"), QStringLiteral("--filter"), QStringLiteral("tag:team parallel.dp=4")});
        QVERIFY2(r.code == 0 && r.out.contains(runId) && !r.out.contains(QStringLiteral("team-sim")), qPrintable(failure(r)));
    }

    // Several supervisors starting at once on a new database: one migrates, the others wait for
    // it (the advisory lock); every run lands, each with its own id.
    void supervisorsStartingAtOnceMigrateOnce()
    {
        const QString url = m_server.fresh(m_dir, {});
        std::vector<std::unique_ptr<QProcess>> supervisors;
        for (int i = 0; i < 4; ++i) {
            auto p = std::make_unique<QProcess>();
            p->start(kCli, {QStringLiteral("--db"), url, QStringLiteral("simulate"), QStringLiteral("--ranks"), QStringLiteral("2"),
                            QStringLiteral("--seconds"), QStringLiteral("1"), QStringLiteral("--quiet")});
            supervisors.push_back(std::move(p));
        }
        for (auto &p : supervisors) {
            QVERIFY(p->waitForFinished(120000));
            QVERIFY2(p->exitCode() == 0, p->readAllStandardError().constData());
        }
        HistoryDatabase h;
        QCOMPARE(h.open(url, false), QString());
        QSqlQuery q(h.connection());
        QVERIFY(q.exec(QStringLiteral("SELECT count(*), min(version) FROM trellis_schema")) && q.next());
        QCOMPARE(q.value(0).toInt(), 1);
        QCOMPARE(q.value(1).toInt(), kHistorySchemaVersion);
        QSet<QString> ids;
        for (const RunSummary &run : h.listRuns()) {
            QCOMPARE(run.status, QStringLiteral("completed"));
            ids.insert(run.runId);
        }
        QCOMPARE(ids.size(), 4);
    }

    // A user's local runs join the team's and come back, row for row; copying again copies nothing.
    void runsAreCopiedBothWays()
    {
        const QString local = m_dir.filePath(QStringLiteral("mine.sqlite"));
        for (const char *id : {"mine-1", "mine-2"}) {
            const Result r = cli({QStringLiteral("--db"), local, QStringLiteral("simulate"), QStringLiteral("--ranks"), QStringLiteral("3"),
                                  QStringLiteral("--seconds"), QStringLiteral("1"), QStringLiteral("--quiet"), QStringLiteral("--run-id"),
                                  QLatin1String(id)});
            QVERIFY2(r.code == 0, qPrintable(failure(r)));
        }
        QCOMPARE(cli({QStringLiteral("--db"), local, QStringLiteral("runs"), QStringLiteral("note"), QStringLiteral("mine-1"),
                      QStringLiteral("from my laptop")}).code, 0);
        QCOMPARE(cli({QStringLiteral("--db"), local, QStringLiteral("runs"), QStringLiteral("tag"), QStringLiteral("mine-1"), QStringLiteral("laptop")}).code, 0);
        const QString team = m_server.fresh(m_dir, {});
        Result r = cli({QStringLiteral("history"), QStringLiteral("copy"), QStringLiteral("--from"), local, QStringLiteral("--to"), team});
        QVERIFY2(r.code == 0 && r.out.contains(QStringLiteral("2 copied, 0 already there")), qPrintable(failure(r)));
        r = cli({QStringLiteral("history"), QStringLiteral("copy"), QStringLiteral("--from"), local, QStringLiteral("--to"), team});
        QVERIFY2(r.code == 0 && r.out.contains(QStringLiteral("0 copied, 2 already there")), qPrintable(failure(r)));
        const QString back = m_dir.filePath(QStringLiteral("back.sqlite"));
        r = cli({QStringLiteral("--db"), team, QStringLiteral("history"), QStringLiteral("copy"), QStringLiteral("--to"), back,
                 QStringLiteral("mine-1")});
        QVERIFY2(r.code == 0 && r.out.contains(QStringLiteral("1 copied")), qPrintable(failure(r)));
        r = cli({QStringLiteral("history"), QStringLiteral("copy"), QStringLiteral("--from"), team, QStringLiteral("--to"), team});
        QCOMPARE(r.code, 2);
        r = cli({QStringLiteral("history"), QStringLiteral("copy"), QStringLiteral("--from"), team, QStringLiteral("--to"), back, QStringLiteral("nope")});
        QVERIFY2(r.code == 1 && r.err.contains(QStringLiteral("not copied nope")), qPrintable(failure(r)));

        HistoryDatabase a, b, c;
        QCOMPARE(a.open(local, false), QString());
        QCOMPARE(b.open(team, false), QString());
        QCOMPARE(c.open(back, false), QString());
        for (const QString &id : {QStringLiteral("mine-1"), QStringLiteral("mine-2")}) {
            const QString original = fingerprint(a, id);
            QVERIFY(original.count(QLatin1Char('\n')) > 3 * 4);
            QCOMPARE(fingerprint(b, id), original);
        }
        QCOMPARE(fingerprint(c, QStringLiteral("mine-1")), fingerprint(a, QStringLiteral("mine-1")));
        QVERIFY(!c.findRun(QStringLiteral("mine-2")));
    }

    // Who may change what is the server's to say (roles and grants): a reader lists and reads, its
    // attempt to tag is refused by the server, named. Credentials come from PGPASSWORD or a
    // password file, over TLS verified against the authority's certificate.
    void rolesCredentialsAndTls()
    {
        QCOMPARE(m_server.run(QStringLiteral("CREATE ROLE reader LOGIN PASSWORD 'reader-secret'")), QString());
        HistoryDatabase owner;
        QCOMPARE(owner.open(m_url, false), QString());
        QVERIFY(QSqlQuery(owner.connection()).exec(QStringLiteral("GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")));
        const QString ca = m_server.serverDir() + QStringLiteral("/tls/ca.crt");
        const QString dbName = m_url.section(QLatin1Char('/'), 3).section(QLatin1Char('?'), 0, 0);
        const QString tcp = QStringLiteral("postgresql://reader@localhost:%1/%2?sslmode=verify-full&sslrootcert=%3").arg(port(), dbName, ca);

        qputenv("PGPASSWORD", "reader-secret");
        Result r = cli({QStringLiteral("--db"), tcp, QStringLiteral("runs")});
        QVERIFY2(r.code == 0 && r.out.contains(QStringLiteral("team-sim")), qPrintable(failure(r)));
        r = cli({QStringLiteral("--db"), tcp, QStringLiteral("runs"), QStringLiteral("tag"), QStringLiteral("team-sim"), QStringLiteral("mine")});
        QVERIFY2(r.code != 0 && r.err.contains(QStringLiteral("permission denied for table run_tags")), qPrintable(failure(r)));
        qputenv("PGPASSWORD", "wrong");
        r = cli({QStringLiteral("--db"), tcp, QStringLiteral("runs")});
        QVERIFY2(r.code != 0 && r.err.contains(QStringLiteral("password authentication failed")), qPrintable(failure(r)));
        qunsetenv("PGPASSWORD");
        QFile pgpass(m_dir.filePath(QStringLiteral("pgpass")));
        QVERIFY(pgpass.open(QIODevice::WriteOnly));
        pgpass.write(QStringLiteral("localhost:%1:*:reader:reader-secret\n").arg(port()).toUtf8());
        pgpass.close();
        pgpass.setPermissions(QFile::ReadOwner | QFile::WriteOwner);
        qputenv("PGPASSFILE", QFile::encodeName(pgpass.fileName()));
        r = cli({QStringLiteral("--db"), tcp, QStringLiteral("runs")});
        QVERIFY2(r.code == 0 && r.out.contains(QStringLiteral("team-sim")), qPrintable(failure(r)));
        // verify-full against another authority: refused before any password is sent.
        QFile::copy(m_server.serverDir() + QStringLiteral("/tls/server.crt"), m_dir.filePath(QStringLiteral("not-the-ca.crt")));
        r = cli({QStringLiteral("--db"), QString(tcp).replace(ca, m_dir.filePath(QStringLiteral("not-the-ca.crt"))), QStringLiteral("runs")});
        QVERIFY2(r.code != 0 && r.err.contains(QStringLiteral("certificate")), qPrintable(failure(r)));
        qunsetenv("PGPASSFILE");
    }

    // "Only your own runs": every run records its role (runs.owner); with docs/history.md's
    // row-level security policies, applied as written there, each role reads every run and
    // changes only its own — another's tag, note, rename, archive, untag and delete refused and
    // said so, nothing changed, a run not deleted keeping its files — and a lead changes any.
    void onlyYourOwnRunsByPolicy()
    {
        const QString url = m_server.fresh(m_dir, {});
        for (const char *role : {"ann", "bob", "lead"})
            QCOMPARE(m_server.run(QStringLiteral("CREATE ROLE %1 LOGIN").arg(QLatin1String(role))), QString());
        const QString docs = trellis::test::readAll(QStringLiteral(TRELLIS_SOURCE_DIR "/docs/history.md"));
        const QString section = docs.section(QStringLiteral("### Who may change whose runs"), 1).section(QStringLiteral("```sql"), 1, 1).section(QStringLiteral("```"), 0, 0);
        QVERIFY2(section.contains(QStringLiteral("ROW LEVEL SECURITY")), qPrintable(section));
        {
            HistoryDatabase owner; // the tables' owner makes them, grants, and adds the policies
            QCOMPARE(owner.open(url, true), QString());
            QSqlQuery q(owner.connection());
            for (const QString &statement : {QStringLiteral("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ann, bob, lead"),
                                             QStringLiteral("GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO ann, bob, lead")})
                QVERIFY2(q.exec(statement), qPrintable(q.lastError().text()));
            for (QString statement : section.split(QLatin1Char(';'))) {
                statement = statement.split(QLatin1Char('\n')).filter(QRegularExpression(QStringLiteral("^(?!\\s*--)"))).join(QLatin1Char('\n')).trimmed();
                if (!statement.isEmpty())
                    QVERIFY2(q.exec(statement), qPrintable(statement + QStringLiteral(": ") + q.lastError().text()));
            }
        }
        const auto as = [&](const char *role) { return QString(url).replace(QStringLiteral("trellis@"), QLatin1String(role) + QLatin1Char('@')); };
        for (const char *role : {"ann", "bob"}) {
            const Result r = cli({QStringLiteral("--db"), as(role), QStringLiteral("simulate"), QStringLiteral("--ranks"), QStringLiteral("2"),
                                  QStringLiteral("--seconds"), QStringLiteral("1"), QStringLiteral("--quiet"), QStringLiteral("--run-id"),
                                  QLatin1String(role) + QStringLiteral("-run")});
            QVERIFY2(r.code == 0, qPrintable(failure(r)));
        }
        Result r = cli({QStringLiteral("--db"), as("bob"), QStringLiteral("runs"), QStringLiteral("ann-run")});
        QVERIFY2(r.code == 0 && r.out.contains(QStringLiteral("owner: ann")), qPrintable(failure(r)));
        r = cli({QStringLiteral("--db"), as("bob"), QStringLiteral("runs"), QStringLiteral("--filter"), QStringLiteral("owner:me")});
        QVERIFY2(r.code == 0 && r.out.contains(QStringLiteral("bob-run")) && !r.out.contains(QStringLiteral("ann-run")), qPrintable(failure(r)));
        r = cli({QStringLiteral("--db"), as("bob"), QStringLiteral("runs"), QStringLiteral("--filter"), QStringLiteral("owner:ann")});
        QVERIFY2(r.code == 0 && r.out.contains(QStringLiteral("ann-run")) && !r.out.contains(QStringLiteral("bob-run")), qPrintable(failure(r)));

        const QString annFiles = m_dir.filePath(QStringLiteral("data/trellis/runs/simulated/ann-run.plan.json"));
        QVERIFY(QFileInfo::exists(annFiles));
        const QList<QStringList> edits = {{QStringLiteral("note"), QStringLiteral("ann-run"), QStringLiteral("bob was here")},
                                          {QStringLiteral("rename"), QStringLiteral("ann-run"), QStringLiteral("bobs")},
                                          {QStringLiteral("archive"), QStringLiteral("ann-run")},
                                          {QStringLiteral("delete"), QStringLiteral("ann-run"), QStringLiteral("--yes")}};
        for (const QStringList &edit : edits) {
            r = cli(QStringList{QStringLiteral("--db"), as("bob"), QStringLiteral("runs")} + edit);
            QVERIFY2(r.code != 0 && r.err.contains(QStringLiteral("the server let bob change none of it")) && r.err.contains(QStringLiteral("ann's")),
                     qPrintable(edit.join(QLatin1Char(' ')) + QStringLiteral(": ") + failure(r)));
        }
        r = cli({QStringLiteral("--db"), as("bob"), QStringLiteral("runs"), QStringLiteral("tag"), QStringLiteral("ann-run"), QStringLiteral("bobs")});
        QVERIFY2(r.code != 0 && r.err.contains(QStringLiteral("tag 'bobs' refused: a row-level security policy")), qPrintable(failure(r)));
        QVERIFY(QFileInfo::exists(annFiles)); // not deleted: its files stay
        r = cli({QStringLiteral("--db"), as("ann"), QStringLiteral("runs"), QStringLiteral("tag"), QStringLiteral("ann-run"), QStringLiteral("mine")});
        QVERIFY2(r.code == 0, qPrintable(failure(r)));
        r = cli({QStringLiteral("--db"), as("bob"), QStringLiteral("runs"), QStringLiteral("untag"), QStringLiteral("ann-run"), QStringLiteral("mine")});
        QVERIFY2(r.code != 0 && r.err.contains(QStringLiteral("the server let bob change none of it")), qPrintable(failure(r)));
        r = cli({QStringLiteral("--db"), as("bob"), QStringLiteral("runs"), QStringLiteral("note"), QStringLiteral("bob-run"), QStringLiteral("my own")});
        QVERIFY2(r.code == 0, qPrintable(failure(r)));
        r = cli({QStringLiteral("--db"), as("lead"), QStringLiteral("runs"), QStringLiteral("note"), QStringLiteral("ann-run"), QStringLiteral("seen by the lead")});
        QVERIFY2(r.code == 0, qPrintable(failure(r)));
        { // adopting: a supervisor of another role is told before it takes the run over
            HistoryDatabase asBob;
            QCOMPARE(asBob.open(as("bob"), false), QString());
            const QString e = asBob.mayChangeRun(asBob.findRun(QStringLiteral("ann-run"))->id);
            QVERIFY2(e.contains(QStringLiteral("run ann-run cannot be recorded: the server let bob change none of it")), qPrintable(e));
            QCOMPARE(asBob.mayChangeRun(asBob.findRun(QStringLiteral("bob-run"))->id), QString());
        }
        HistoryDatabase check;
        QCOMPARE(check.open(url, false), QString());
        const auto ann = check.findRun(QStringLiteral("ann-run"));
        QVERIFY(ann.has_value());
        QCOMPARE(ann->name, QStringLiteral("simulated-2"));
        QCOMPARE(ann->note, QStringLiteral("seen by the lead"));
        QCOMPARE(ann->tags, QStringList{QStringLiteral("mine")});
        QVERIFY(!ann->archived);
        QCOMPARE(ann->owner, QStringLiteral("ann"));
        QCOMPARE(check.findRun(QStringLiteral("bob-run"))->note, QStringLiteral("my own"));
    }

    // The server goes away mid-run and comes back: the run goes on, says so, and loses nothing —
    // what could not be written waits in the supervisor, unacknowledged, and is written once the
    // server is back.
    void aServerThatGoesAwayLosesNothing()
    {
        const QString url = m_server.fresh(m_dir, {});
        QProcess supervisor;
        supervisor.start(kCli, {QStringLiteral("--db"), url, QStringLiteral("simulate"), QStringLiteral("--ranks"), QStringLiteral("3"),
                                QStringLiteral("--hz"), QStringLiteral("20"), QStringLiteral("--seconds"), QStringLiteral("6"),
                                QStringLiteral("--quiet"), QStringLiteral("--run-id"), QStringLiteral("through-outage")});
        qint64 before = 0;
        {
            HistoryDatabase h;
            QCOMPARE(h.open(url), QString()); // the supervisor may not have made the tables yet
            QTRY_VERIFY_WITH_TIMEOUT(h.findRun(QStringLiteral("through-outage")) &&
                                         (before = h.findRun(QStringLiteral("through-outage"))->stepsDone) >= 20,
                                     20000);
        }
        QVERIFY(m_server.down());
        // Meanwhile the rows go to a spool on this machine, acknowledged from there.
        const QDir spool(m_dir.filePath(QStringLiteral("data/trellis/spool")));
        QTRY_VERIFY_WITH_TIMEOUT(!spool.entryList({QStringLiteral("*.sqlite")}, QDir::Files).isEmpty(), 5000);
        QTest::qWait(1500);
        QVERIFY(m_server.up());
        QVERIFY(supervisor.waitForFinished(60000));
        QVERIFY2(supervisor.exitCode() == 0, supervisor.readAllStandardError().constData());
        HistoryDatabase h;
        QCOMPARE(h.open(url, false), QString());
        const auto run = h.findRun(QStringLiteral("through-outage"));
        QCOMPARE(run->status, QStringLiteral("completed"));
        QVERIFY2(run->stepsDone > before + 40, qPrintable(QString::number(run->stepsDone))); // it went on meanwhile
        const auto data = h.loadRun(run->id);
        QMap<int, QList<qint64>> steps;
        for (const StepRow &s : data->steps)
            steps[s.rank] << s.step;
        QCOMPARE(steps.size(), 3);
        for (const QList<qint64> &mine : steps) {
            QCOMPARE(mine.size(), run->stepsDone); // every step once, none lost in the outage
            QCOMPARE(mine.last(), run->stepsDone);
        }
        for (const RankRow &rank : data->ranks)
            QCOMPARE(rank.goodbyeSeq + 1, rank.receivedSeq);
        QStringList said;
        for (const EventRow &e : data->events)
            if (e.kind == QLatin1String("history"))
                said << e.message;
        QVERIFY2(said.join(QLatin1Char('\n')).contains(QStringLiteral("cannot be reached")) &&
                     said.join(QLatin1Char('\n')).contains(QStringLiteral("are committed to")) &&
                     said.join(QLatin1Char('\n')).contains(QStringLiteral("reachable again")),
                 qPrintable(said.join(QLatin1Char('\n'))));
        QTRY_VERIFY(spool.entryList({QStringLiteral("*.sqlite")}, QDir::Files).isEmpty()); // merged, removed
    }

    // The run ends while its server is still away: what the server missed stays in the spool, and
    // the next supervisor of that server started on this machine writes it there.
    void aRunThatEndsWhileTheServerIsAwayIsWrittenLater()
    {
        const QString url = m_server.fresh(m_dir, {});
        QProcess supervisor;
        supervisor.start(kCli, {QStringLiteral("--db"), url, QStringLiteral("simulate"), QStringLiteral("--ranks"), QStringLiteral("2"),
                                QStringLiteral("--hz"), QStringLiteral("20"), QStringLiteral("--seconds"), QStringLiteral("3"),
                                QStringLiteral("--quiet"), QStringLiteral("--run-id"), QStringLiteral("ended-away")});
        {
            HistoryDatabase h;
            QCOMPARE(h.open(url), QString());
            QTRY_VERIFY_WITH_TIMEOUT(h.findRun(QStringLiteral("ended-away")) && h.findRun(QStringLiteral("ended-away"))->stepsDone >= 10, 20000);
        }
        QVERIFY(m_server.down());
        QVERIFY(supervisor.waitForFinished(60000));
        const QDir spool(m_dir.filePath(QStringLiteral("data/trellis/spool")));
        QCOMPARE(spool.entryList({QStringLiteral("*.sqlite")}, QDir::Files).size(), 1);
        // Kept aside as it is now: put back after it was merged, it is the spool of a supervisor
        // that merged and died before removing it.
        const QString spoolName = spool.entryList({QStringLiteral("*.sqlite")}, QDir::Files).first();
        const QString aside = m_dir.filePath(QStringLiteral("spool-aside.sqlite"));
        QFile::remove(aside);
        QVERIFY(QFile::copy(spool.filePath(spoolName), aside));
        QVERIFY(m_server.up());
        {
            HistoryDatabase h;
            QCOMPARE(h.open(url), QString());
            QCOMPARE(h.findRun(QStringLiteral("ended-away"))->status, QStringLiteral("running")); // as the server last heard
        }
        const Result next = cli({QStringLiteral("--db"), url, QStringLiteral("simulate"), QStringLiteral("--ranks"), QStringLiteral("1"),
                                 QStringLiteral("--seconds"), QStringLiteral("1"), QStringLiteral("--quiet")});
        QVERIFY2(next.code == 0, qPrintable(failure(next)));
        QVERIFY2(spool.entryList({QStringLiteral("*.sqlite")}, QDir::Files).isEmpty(), qPrintable(failure(next)));
        HistoryDatabase h;
        QCOMPARE(h.open(url), QString());
        const auto run = h.findRun(QStringLiteral("ended-away"));
        QCOMPARE(run->status, QStringLiteral("completed"));
        const auto data = h.loadRun(run->id);
        QSet<QPair<int, qint64>> seen;
        for (const StepRow &s : data->steps)
            seen.insert({s.rank, s.step});
        QCOMPARE(seen.size(), 2 * run->stepsDone);
        QVERIFY(run->stepsDone >= 50);
        for (const RankRow &rank : data->ranks)
            QCOMPARE(rank.goodbyeSeq + 1, rank.receivedSeq);
        // As written, not as read: a read keeps one copy of a step written twice.
        QCOMPARE(storedReports(h, run->id), qint64(2) * run->stepsDone);

        // Merged again: the server knows that spool's run is in, so nothing is written twice.
        QVERIFY(QFile::copy(aside, spool.filePath(spoolName)));
        const Result again = cli({QStringLiteral("--db"), url, QStringLiteral("simulate"), QStringLiteral("--ranks"), QStringLiteral("1"),
                                  QStringLiteral("--seconds"), QStringLiteral("1"), QStringLiteral("--quiet")});
        QVERIFY2(again.code == 0, qPrintable(failure(again)));
        QVERIFY(spool.entryList({QStringLiteral("*.sqlite")}, QDir::Files).isEmpty());
        QCOMPARE(storedReports(h, run->id), qint64(2) * run->stepsDone);
        const auto twice = h.loadRun(run->id);
        QCOMPARE(twice->events.size(), data->events.size());
        QCOMPARE(twice->run.launchCommands, data->run.launchCommands);
        QCOMPARE(twice->ranks.size(), data->ranks.size());
    }

    // Another user's workbench follows a run from the database alone: the writer NOTIFYs each
    // transaction's runs, the reader (HistoryReader, as the workbench holds it) hears it. The delay
    // from a row reaching the supervisor's writer to the other reader hearing of it is measured
    // (the writer commits every 200 ms, so most of it is waiting for the next transaction).
    void anotherUsersReaderHearsEveryWrite()
    {
        const QString url = m_server.fresh(m_dir, {});
        HistoryWriter writer(url);
        QCOMPARE(writer.start(), QString());
        writer.enqueue(NewRunOp{QStringLiteral("heard"), QStringLiteral("heard"), QStringLiteral("{}"), QStringLiteral("local"), 1, 100,
                                QDateTime::currentDateTimeUtc()});
        QVERIFY(writer.flush());
        HistoryReader reader(url);
        QList<qint64> heardAt;
        QElapsedTimer clock;
        clock.start();
        connect(&reader, &HistoryReader::runWritten, this, [&](const QString &runId) {
            if (runId == QLatin1String("heard"))
                heardAt << clock.nsecsElapsed();
        });
        reader.startThread();
        QSignalSpy listed(&reader, &HistoryReader::runsReady);
        QMetaObject::invokeMethod(&reader, &HistoryReader::requestRuns); // opens, and LISTENs
        QTRY_COMPARE(listed.size(), 1);
        std::vector<double> delaysMs;
        for (int step = 1; step <= 12; ++step) {
            QTest::qWait(61 * step % 230); // at points all over the writer's interval
            const qsizetype before = heardAt.size();
            StepRow row;
            row.step = step;
            row.loss = 1.0 / step;
            const qint64 sent = clock.nsecsElapsed();
            writer.enqueue(StepOp{QStringLiteral("heard"), {row}});
            QTRY_VERIFY_WITH_TIMEOUT(heardAt.size() > before, 5000);
            delaysMs.push_back((heardAt.last() - sent) / 1e6);
        }
        std::sort(delaysMs.begin(), delaysMs.end());
        qInfo("a row reaching the writer -> another reader hears of it: median %.0f ms, max %.0f ms (%zu rows, writer every 200 ms)",
              delaysMs[delaysMs.size() / 2], delaysMs.back(), delaysMs.size());
        // What it hears is there to read.
        HistoryDatabase h;
        QCOMPARE(h.open(url, false), QString());
        QCOMPARE(h.findRun(QStringLiteral("heard"))->stepsDone, qint64(12));
        writer.stop();
    }

    // A run's supervisor killed (kill -9) on a team's history: adopt takes the run over from the
    // server's record (no --db: the run registry names the history), a follower attaches, and the
    // run ends complete there — every rank's every step, every telemetry message in sequence.
    void aKilledSupervisorIsAdoptedFromTheServer()
    {
        const int steps = 400;
        const QString url = m_server.fresh(m_dir, {});
        const QString plan = trellis::test::restartPlan(m_dir, QStringLiteral("team-adopted"), steps, 0, QStringLiteral(R"("max_restarts": 0)"));
        const Result started = cli({QStringLiteral("--db"), url, QStringLiteral("run"), plan, QStringLiteral("--detach")}, 60000);
        QVERIFY2(started.code == 0, qPrintable(failure(started)));
        const QString runId = started.out.section(QLatin1Char('\n'), 0, 0).mid(4).trimmed();
        static const QRegularExpression pidOf(QStringLiteral("owner pid (\\d+)"));
        const auto owner = pidOf.match(started.out);
        QVERIFY2(owner.hasMatch(), qPrintable(started.out));
        const auto stepsDone = [&] {
            HistoryDatabase h;
            const auto run = h.open(url, false).isEmpty() ? h.findRun(runId) : std::nullopt;
            return run ? run->stepsDone : qint64(0);
        };
        QTRY_VERIFY_WITH_TIMEOUT(stepsDone() >= 20, 60000);
        QVERIFY(::kill(static_cast<pid_t>(owner.captured(1).toLongLong()), SIGKILL) == 0);
        QProcess adopter;
        adopter.setProcessChannelMode(QProcess::MergedChannels);
        adopter.start(kCli, {QStringLiteral("adopt"), runId, QStringLiteral("--quiet")});
        QVERIFY(adopter.waitForStarted());
        // Once the adopter has taken the run (its event is in the server's record), a follower attaches.
        const auto adopted = [&] {
            HistoryDatabase h;
            const auto run = h.open(url, false).isEmpty() ? h.findRun(runId) : std::nullopt;
            const auto data = run ? h.loadRun(run->id, false) : std::nullopt;
            return data && std::any_of(data->events.begin(), data->events.end(), [](const EventRow &e) { return e.kind == QLatin1String("adopted"); });
        };
        QElapsedTimer waited;
        waited.start();
        while (!adopted() && waited.elapsed() < 30000)
            QTest::qWait(250);
        if (!adopted()) { // what the adopter said, and whether it is still there
            adopter.waitForReadyRead(100);
            QFAIL(qPrintable(QStringLiteral("no 'adopted' event in 30 s; the adopter is %1 and said: %2")
                                 .arg(adopter.state() == QProcess::Running ? QStringLiteral("running")
                                                                           : QStringLiteral("gone (exit %1)").arg(adopter.exitCode()),
                                      QString::fromUtf8(adopter.readAll()).right(3000))));
        }
        const Result followed = cli({QStringLiteral("--db"), url, QStringLiteral("attach"), runId}, 180000);
        QVERIFY2(followed.code == 0 && followed.out.contains(QStringLiteral("run %1 completed").arg(runId)), qPrintable(failure(followed)));
        QVERIFY(adopter.waitForFinished(180000));
        if (adopter.exitCode() != 0) { // what it said, without the driver's repeated notices
            QStringList said;
            for (const QString &line : QString::fromUtf8(adopter.readAll()).split(QLatin1Char('\n')))
                if (!line.trimmed().isEmpty() && !line.startsWith(QLatin1String("Unable to free statement")))
                    said << line;
            QFAIL(qPrintable(QStringLiteral("the adopter exited %1: %2").arg(QString::number(adopter.exitCode()), said.join(QLatin1Char('\n')).right(3000))));
        }
        HistoryDatabase h;
        QCOMPARE(h.open(url, false), QString());
        const auto data = h.loadRun(h.findRun(runId)->id);
        QCOMPARE(data->run.status, QStringLiteral("completed"));
        QSet<QPair<int, qint64>> seen;
        for (const StepRow &s : data->steps)
            seen.insert({s.rank, s.step});
        QCOMPARE(seen.size(), 4 * steps);
        for (const RankRow &r : data->ranks)
            QVERIFY2(r.receivedSeq == r.goodbyeSeq + 1 && r.lost == 0 && r.dropped == 0, qPrintable(QString::number(r.rank)));
        QVERIFY(std::any_of(data->events.begin(), data->events.end(), [](const EventRow &e) { return e.kind == QLatin1String("adopted"); }));
    }

    // A plan that names its history (telemetry.history) records its runs there, before
    // $TRELLIS_HISTORY; --db comes before the plan; a file is relative to the plan's folder; a
    // plan holding a password is refused without echoing it. --name names the run.
    void aPlanNamesItsHistory()
    {
        const QString url = m_server.fresh(m_dir, {});
        QVERIFY(!url.isEmpty());
        QJsonObject plan = QJsonDocument::fromJson(trellis::test::readAll(kPlan).toUtf8()).object();
        QJsonObject training = plan[QStringLiteral("training")].toObject();
        QJsonObject data = training[QStringLiteral("data")].toObject();
        data[QStringLiteral("path")] = QFileInfo(QFileInfo(kPlan).dir(), data[QStringLiteral("path")].toString()).absoluteFilePath();
        training[QStringLiteral("data")] = data;
        plan[QStringLiteral("training")] = training;
        plan[QStringLiteral("telemetry")] = QJsonObject{{QStringLiteral("history"), url}};
        QDir(m_dir.path()).mkpath(QStringLiteral("plans"));
        const QString planPath = m_dir.filePath(QStringLiteral("plans/team.json"));
        QVERIFY(writeFile(planPath, QJsonDocument(plan).toJson()));

        const QString envFile = m_dir.filePath(QStringLiteral("from-environment.sqlite"));
        qputenv("TRELLIS_HISTORY", QFile::encodeName(envFile));
        Result r = cli({QStringLiteral("run"), planPath, QStringLiteral("--run-id"), QStringLiteral("planned-1"), QStringLiteral("--name"),
                        QStringLiteral("named here")});
        QVERIFY2(r.code == 0 && r.err.contains(QStringLiteral("history: ") + url), qPrintable(failure(r)));
        QVERIFY(!QFileInfo::exists(envFile)); // the plan's history came before the environment's
        const QString givenFile = m_dir.filePath(QStringLiteral("given.sqlite"));
        r = cli({QStringLiteral("--db"), givenFile, QStringLiteral("run"), planPath, QStringLiteral("--quiet"), QStringLiteral("--run-id"),
                 QStringLiteral("planned-2")});
        qunsetenv("TRELLIS_HISTORY");
        QVERIFY2(r.code == 0, qPrintable(failure(r)));
        {
            HistoryDatabase server;
            QCOMPARE(server.open(url, false), QString());
            const auto run = server.findRun(QStringLiteral("planned-1"));
            QVERIFY(run.has_value());
            QCOMPARE(run->status, QStringLiteral("completed"));
            QCOMPARE(run->name, QStringLiteral("named here"));
            QVERIFY(!server.findRun(QStringLiteral("planned-2"))); // --db came before the plan
            HistoryDatabase file;
            QCOMPARE(file.open(givenFile, false), QString());
            QVERIFY(file.findRun(QStringLiteral("planned-2")).has_value());
            QCOMPARE(file.findRun(QStringLiteral("planned-2"))->name, QStringLiteral("dp4-short"));
        }
        // A file the plan names is beside the plan, whatever the working folder.
        QCOMPARE(planHistory(QStringLiteral("runs/team.sqlite"), planPath), m_dir.filePath(QStringLiteral("plans/runs/team.sqlite")));
        QCOMPARE(planHistory(url, planPath), url);
        QCOMPARE(historyForPlan(QStringLiteral("a.sqlite"), planPath, true, givenFile), givenFile);
        QCOMPARE(historyForPlan(QString(), planPath, false, envFile), envFile);
        QCOMPARE(historyForPlan(QStringLiteral("a.sqlite"), planPath, false, envFile), m_dir.filePath(QStringLiteral("plans/a.sqlite")));
        // A password in a plan: refused by validate and run alike, never echoed, nothing run.
        plan[QStringLiteral("telemetry")] = QJsonObject{{QStringLiteral("history"), QStringLiteral("postgresql://ann:hunter2@db.example/team")}};
        QVERIFY(writeFile(planPath, QJsonDocument(plan).toJson()));
        for (const QString &command : {QStringLiteral("validate"), QStringLiteral("run")}) {
            r = cli({command, planPath});
            QVERIFY2(r.code != 0 && (r.out + r.err).contains(QStringLiteral("telemetry.history: holds a password")), qPrintable(failure(r)));
            QVERIFY2(!(r.out + r.err).contains(QStringLiteral("hunter2")), qPrintable(failure(r)));
        }
    }

    // A password in the string, a server that is not there, a database that does not exist: each
    // named; a connection string is never taken for a file name (no file or folder appears).
    void badConnectionsAreNamed()
    {
        QTemporaryDir cwd;
        QProcess p;
        p.setWorkingDirectory(cwd.path());
        const auto run = [&](const QStringList &args) {
            p.start(kCli, args);
            p.waitForFinished(60000);
            return Result{p.exitCode(), QString::fromUtf8(p.readAllStandardOutput()), QString::fromUtf8(p.readAllStandardError())};
        };
        Result r = run({QStringLiteral("--db"), QStringLiteral("postgresql://ann:hunter2@localhost/team"), QStringLiteral("runs")});
        QVERIFY2(r.code != 0 && r.err.contains(QStringLiteral("~/.pgpass")), qPrintable(failure(r)));
        QVERIFY2(!r.err.contains(QStringLiteral("hunter2")), qPrintable(r.err)); // never echoed
        r = run({QStringLiteral("--db"), QStringLiteral("postgresql://trellis@/trellis?host=%1&port=1").arg(cwd.path()), QStringLiteral("runs")});
        QVERIFY2(r.code != 0 && r.err.contains(QStringLiteral("cannot connect")), qPrintable(failure(r)));
        r = run({QStringLiteral("--db"), QString(m_url).replace(QRegularExpression(QStringLiteral("@/t\\d+\\?")), QStringLiteral("@/absent?")),
                 QStringLiteral("run"), kPlan});
        QVERIFY2(r.code != 0 && r.err.contains(QStringLiteral("\"absent\" does not exist")), qPrintable(failure(r)));
        r = run({QStringLiteral("--db"), QStringLiteral("postgresq://trellis@localhost/team"), QStringLiteral("run"), kPlan});
        QVERIFY2(r.code != 0 && r.err.contains(QStringLiteral("'postgresq://' is not a history")), qPrintable(failure(r)));
        r = run({QStringLiteral("--db"), QStringLiteral("postgresql://%zz"), QStringLiteral("runs")});
        QVERIFY2(r.code != 0 && r.err.contains(QStringLiteral("not a PostgreSQL connection string")), qPrintable(failure(r)));
        QCOMPARE(QDir(cwd.path()).entryList(QDir::AllEntries | QDir::NoDotAndDotDot | QDir::Hidden), QStringList());
    }
};

QTEST_GUILESS_MAIN(TstTeamHistory)
#include "tst_team_history.moc"
