// trellis-cli end to end: the real trainer under mpirun, real ZeroMQ telemetry, a real SQLite
// file. A 4-rank run lands 4 ranks × every step in the database and writes a report; exports
// work; an injected crash becomes a failed run with its exit code and stderr; bad plans and bad
// database paths get clear messages.
#include "launcher/history_database.h"
#include "plan/cost_model.h"
#include "plan/plan_json.h"

#include <algorithm>

#include <signal.h>

#include <QDir>
#include <QElapsedTimer>
#include <QRegularExpression>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMap>
#include <QProcess>
#include <QSet>
#include <QSqlQuery>
#include <QHostAddress>
#include <QScopeGuard>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QUrl>
#include <QTest>

using namespace trellis::launcher;

namespace {

// The cost model's memory for a plan file, per pipeline stage (rank 0 of each stage).
std::vector<trellis::plan::StageMemory> predictedMemory(const QString &planPath)
{
    auto loaded = trellis::plan::loadPlanFile(planPath.toStdString());
    if (!loaded)
        return {};
    const auto &p = loaded.value();
    return trellis::plan::estimatePlan(p, trellis::plan::deviceFor(p.cluster)).memory;
}

const QString kCli = QStringLiteral(TRELLIS_BINARY_DIR "/bin/trellis-cli");
const QString kPlan = QStringLiteral(TRELLIS_SOURCE_DIR "/tests/data/plans/dp4_short.json");

struct Result {
    int code = -1;
    QString out, err;
};

Result cli(const QStringList &args, int timeoutMs = 240000)
{
    QProcess p;
    p.start(kCli, args);
    Result r;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.err = QStringLiteral("timed out");
        return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

} // namespace

class TstCli : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString db() const { return m_dir.filePath(QStringLiteral("history.sqlite")); }

private slots:
    void runRecordsEveryRankAndStep()
    {
        const QString report = m_dir.filePath(QStringLiteral("report.html"));
        const Result r = cli({QStringLiteral("--db"), db(), QStringLiteral("run"), kPlan, QStringLiteral("--report"), report});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        QVERIFY2(r.out.startsWith(QStringLiteral("run ")), qPrintable(r.out)); // the run id comes first
        const QString runId = r.out.section(QLatin1Char('\n'), 0, 0).mid(4).trimmed();
        QVERIFY(r.out.contains(QStringLiteral("completed 12 steps")));

        HistoryDatabase h;
        QCOMPARE(h.open(db(), false), QString());
        auto run = h.findRun(runId);
        QVERIFY(run.has_value());
        QCOMPARE(run->status, QStringLiteral("completed"));
        QCOMPARE(run->worldSize, 4);
        auto data = h.loadRun(run->id);
        QCOMPARE(data->ranks.size(), 4);
        QCOMPARE(data->steps.size(), 4 * 12);
        for (const auto &rank : data->ranks) {
            QCOMPARE(rank.exitCode, 0);
            QVERIFY(!rank.host.isEmpty());
        }
        // Every DP rank reports the same global loss; it falls over the run.
        QCOMPARE(data->steps[0].loss, data->steps[3].loss);
        QVERIFY(data->steps.last().loss < data->steps.first().loss);
        QSqlQuery q(h.connection());
        QVERIFY(q.exec(QStringLiteral("SELECT count(*) FROM collective_stats WHERE run = %1").arg(run->id)) && q.next());
        QVERIFY(q.value(0).toInt() >= 4 * 12);

        QFile html(report);
        QVERIFY(html.open(QIODevice::ReadOnly));
        const QByteArray text = html.readAll();
        QVERIFY(text.contains("<svg"));
        QVERIFY(text.contains(runId.toUtf8()));
    }

    void runsExportAndReport()
    {
        const Result runs = cli({QStringLiteral("--db"), db(), QStringLiteral("runs")});
        QCOMPARE(runs.code, 0);
        QVERIFY(runs.out.contains(QStringLiteral("dp4-short")));
        QVERIFY(runs.out.contains(QStringLiteral("completed")));

        const Result csv = cli({QStringLiteral("--db"), db(), QStringLiteral("export"), QStringLiteral("last"),
                                QStringLiteral("--format"), QStringLiteral("csv")});
        QCOMPARE(csv.code, 0);
        const QStringList lines = csv.out.trimmed().split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 1 + 4 * 12);
        QVERIFY(lines[0].startsWith(QStringLiteral("run_id,rank,step,loss,step_ms,tokens_per_s")));

        const Result json = cli({QStringLiteral("--db"), db(), QStringLiteral("export"), QStringLiteral("1"),
                                 QStringLiteral("--format"), QStringLiteral("json")});
        QCOMPARE(json.code, 0);
        QVERIFY(json.out.contains(QStringLiteral("\"steps\"")));

        const QString out = m_dir.filePath(QStringLiteral("again.html"));
        const Result report = cli({QStringLiteral("--db"), db(), QStringLiteral("report"), QStringLiteral("last"),
                                   QStringLiteral("--out"), out});
        QCOMPARE(report.code, 0);
        QVERIFY(QFile::exists(out));

        const Result missing = cli({QStringLiteral("--db"), db(), QStringLiteral("export"), QStringLiteral("nope"),
                                    QStringLiteral("--format"), QStringLiteral("csv")});
        QCOMPARE(missing.code, 1);
        QVERIFY2(missing.err.contains(QStringLiteral("no run 'nope'")), qPrintable(missing.err));
    }

    void crashBecomesFailedRun()
    {
        const Result r = cli({QStringLiteral("--db"), db(), QStringLiteral("run"), kPlan, QStringLiteral("--inject"),
                              QStringLiteral("crash@2:3"), QStringLiteral("--quiet")});
        QCOMPARE(r.code, 1);
        const QString runId = r.out.section(QLatin1Char('\n'), 0, 0).mid(4).trimmed();
        QVERIFY2(r.err.contains(QStringLiteral("exit code 70")), qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("injected crash at step 3")), qPrintable(r.err));
        HistoryDatabase h;
        QCOMPARE(h.open(db(), false), QString());
        auto run = h.findRun(runId);
        QVERIFY(run.has_value());
        QCOMPARE(run->status, QStringLiteral("failed"));
        QCOMPARE(run->exitCode, 70);
        QVERIFY(run->error.contains(QStringLiteral("rank 2: ")));
    }

    // An exception anywhere in the training loop reaches the trainer's top-level catch: a failure
    // Event with the message in the history, and the documented exit code (12, internal error).
    void exceptionBecomesEventAndExitCode()
    {
        const Result r = cli({QStringLiteral("--db"), db(), QStringLiteral("run"), kPlan, QStringLiteral("--inject"),
                              QStringLiteral("throw@1:2"), QStringLiteral("--quiet")});
        QCOMPARE(r.code, 1);
        const QString runId = r.out.section(QLatin1Char('\n'), 0, 0).mid(4).trimmed();
        HistoryDatabase h;
        QCOMPARE(h.open(db(), false), QString());
        auto run = h.findRun(runId);
        QVERIFY(run.has_value());
        QCOMPARE(run->status, QStringLiteral("failed"));
        QCOMPARE(run->exitCode, 12);
        const auto data = h.loadRun(run->id);
        QVERIFY(data);
        bool found = false;
        for (const auto &e : data->events)
            found = found || (e.rank == 1 && e.step == 2 && e.message.contains(QStringLiteral("internal error: injected exception at step 2")));
        QVERIFY2(found, qPrintable(r.err));
    }

    // A rank that stops making progress (its heartbeats go on) while the others wait for it in a
    // collective: named with its host and phase, and the collective the others wait in.
    void hangIsDetected()
    {
        const Result r = cli({QStringLiteral("--db"), db(), QStringLiteral("run"), kPlan, QStringLiteral("--inject"),
                              QStringLiteral("hang@1:4"), QStringLiteral("--hang-timeout"), QStringLiteral("30"),
                              QStringLiteral("--quiet")});
        QCOMPARE(r.code, 1);
        static const QRegularExpression pattern(
            QStringLiteral("hang: rank 1 on \\S+ \\(in forward of step 4\\) stopped making progress; ranks 0,2,3 wait in dp "
                           "all_reduce #\\d+ since \\d+\\.\\d s"));
        QVERIFY2(pattern.match(r.err).hasMatch(), qPrintable(r.err));
    }

    // The Prometheus endpoint of a running run: promtool accepts its exposition, and a real
    // Prometheus server (Debian's) scrapes it and answers a query about the run's step.
    void metricsEndpointIsScraped()
    {
        const QString plan = restartPlan(QStringLiteral("metrics"), 100000, 0, QStringLiteral(R"("max_restarts": 0)"));
        QProcess run;
        run.start(kCli, {QStringLiteral("--db"), db(), QStringLiteral("run"), plan, QStringLiteral("--quiet"),
                         QStringLiteral("--metrics-port"), QStringLiteral("0")});
        QVERIFY(run.waitForStarted());
        auto stopRun = qScopeGuard([&run] {
            run.terminate();
            if (!run.waitForFinished(10000))
                run.kill();
            run.waitForFinished();
        });
        QString endpoint;
        QElapsedTimer waited;
        waited.start();
        while (endpoint.isEmpty() && waited.elapsed() < 30000) {
            run.waitForReadyRead(200);
            static const QRegularExpression line(QStringLiteral("metrics (http://127\\.0\\.0\\.1:(\\d+)/metrics)"));
            const auto m = line.match(QString::fromUtf8(run.peek(4096)));
            if (m.hasMatch())
                endpoint = m.captured(1);
        }
        QVERIFY2(!endpoint.isEmpty(), qPrintable(QString::fromUtf8(run.readAllStandardError())));
        const quint16 port = static_cast<quint16>(QUrl(endpoint).port());
        // Scrape once steps flow.
        QByteArray body;
        while (waited.elapsed() < 60000) {
            QTest::qWait(300);
            QTcpSocket socket;
            socket.connectToHost(QHostAddress::LocalHost, port);
            if (!socket.waitForConnected(2000))
                continue;
            socket.write("GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
            QByteArray reply;
            while (socket.waitForReadyRead(2000))
                reply += socket.readAll();
            body = reply.mid(reply.indexOf("\r\n\r\n") + 4);
            if (body.contains("trellis_step_seconds{") && body.contains("trellis_bus_bandwidth_gbps{"))
                break;
        }
        QVERIFY2(body.contains("trellis_tokens_per_second{run=") && body.contains("trellis_heartbeat_age_seconds{"), body.constData());
        const QString promtool = QStandardPaths::findExecutable(QStringLiteral("promtool"));
        if (promtool.isEmpty())
            QSKIP("promtool not installed (scripts/install-deps.sh installs Debian's prometheus)");
        QProcess check;
        check.start(promtool, {QStringLiteral("check"), QStringLiteral("metrics")});
        check.write(body);
        check.closeWriteChannel();
        QVERIFY(check.waitForFinished(30000));
        QVERIFY2(check.exitCode() == 0, qPrintable(QString::fromUtf8(check.readAllStandardOutput() + check.readAllStandardError())));

        // A real Prometheus scraping it every second.
        const QString prometheus = QStandardPaths::findExecutable(QStringLiteral("prometheus"));
        if (prometheus.isEmpty())
            QSKIP("prometheus not installed");
        QTcpServer probe; // a free loopback port for Prometheus' own web interface
        QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
        const quint16 webPort = probe.serverPort();
        probe.close();
        const QString config = m_dir.filePath(QStringLiteral("prometheus.yml"));
        QFile yml(config);
        QVERIFY(yml.open(QIODevice::WriteOnly));
        yml.write(QStringLiteral("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: trellis\n    static_configs:\n"
                                 "      - targets: ['127.0.0.1:%1']\n").arg(port).toUtf8());
        yml.close();
        QProcess server;
        server.setProcessChannelMode(QProcess::MergedChannels);
        server.start(prometheus, {QStringLiteral("--config.file=") + config,
                                  QStringLiteral("--storage.tsdb.path=") + m_dir.filePath(QStringLiteral("tsdb")),
                                  QStringLiteral("--web.listen-address=127.0.0.1:%1").arg(webPort)});
        QVERIFY(server.waitForStarted());
        auto stopServer = qScopeGuard([&server] {
            server.terminate();
            if (!server.waitForFinished(10000))
                server.kill();
        });
        double step = -1;
        QElapsedTimer asked;
        asked.start();
        while (step <= 0 && asked.elapsed() < 60000) {
            QTest::qWait(1000);
            QTcpSocket socket;
            socket.connectToHost(QHostAddress::LocalHost, webPort);
            if (!socket.waitForConnected(2000))
                continue;
            socket.write("GET /api/v1/query?query=trellis_step HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
            QByteArray reply;
            while (socket.waitForReadyRead(2000))
                reply += socket.readAll();
            const QJsonDocument json = QJsonDocument::fromJson(reply.mid(reply.indexOf("\r\n\r\n") + 4));
            const QJsonArray result = json.object().value(QStringLiteral("data")).toObject().value(QStringLiteral("result")).toArray();
            if (!result.isEmpty())
                step = result.first().toObject().value(QStringLiteral("value")).toArray().at(1).toString().toDouble();
        }
        QVERIFY2(step > 0, qPrintable(QString::fromUtf8(server.readAll().right(2000))));
        qInfo("Prometheus scraped the run: trellis_step = %g", step);
    }

    // launch.alerts: the command hook gets the alert in its environment and the webhook a JSON
    // POST, for a straggler here.
    void alertsReachHookAndWebhook()
    {
        QTcpServer hook;
        QVERIFY(hook.listen(QHostAddress::LocalHost, 0));
        QByteArray posted;
        connect(&hook, &QTcpServer::newConnection, this, [&] {
            QTcpSocket *s = hook.nextPendingConnection();
            connect(s, &QTcpSocket::readyRead, this, [&posted, s] {
                posted += s->readAll();
                if (posted.contains("}")) {
                    s->write("HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n");
                    s->disconnectFromHost();
                }
            });
        });
        const QString file = m_dir.filePath(QStringLiteral("alerts.txt"));
        // (No raw string here: moc misreads escaped quotes inside one.)
        const QString restart = QStringLiteral("\"max_restarts\": 0}, \"alerts\": {\"command\": [\"/bin/sh\", \"-c\", "
                                               "\"echo \\\"$TRELLIS_ALERT_KIND $TRELLIS_RUN_ID $TRELLIS_ALERT_MESSAGE\\\" >> %1\"], "
                                               "\"webhook\": \"http://127.0.0.1:%2/hook\"")
                                    .arg(file)
                                    .arg(hook.serverPort());
        const QString plan = restartPlan(QStringLiteral("alerts"), 24, 0, restart);
        QProcess run;
        run.start(kCli, {QStringLiteral("--db"), db(), QStringLiteral("run"), plan, QStringLiteral("--quiet"), QStringLiteral("--inject"),
                         QStringLiteral("slow@2:5")});
        QVERIFY(run.waitForStarted());
        QElapsedTimer waited;
        waited.start();
        while (run.state() != QProcess::NotRunning && waited.elapsed() < 120000)
            QTest::qWait(100);
        QCOMPARE(run.exitCode(), 0);
        QTRY_VERIFY_WITH_TIMEOUT(posted.contains("\"kind\":\"straggler\""), 5000);
        QVERIFY2(posted.startsWith("POST /hook"), posted.constData());
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(file), 5000);
        QFile f(file);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QString text = QString::fromUtf8(f.readAll());
        QVERIFY2(text.startsWith(QStringLiteral("straggler ")) && text.contains(QStringLiteral("rank 2 on ")), qPrintable(text));
    }

    // run --detach: a process of its own session owns the run; a follower (attach) killed with
    // kill -9 mid-run changes nothing: the run completes, a new follower sees it end, every rank's
    // every step is in the history, and SQLite's integrity check passes.
    void detachedRunOutlivesItsFollowers()
    {
        const int steps = 120;
        const QString plan = restartPlan(QStringLiteral("detached"), steps, 0, QStringLiteral(R"("max_restarts": 0)"));
        const QString database = m_dir.filePath(QStringLiteral("detached.sqlite"));
        const Result started = cli({QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--detach")}, 60000);
        QVERIFY2(started.code == 0, qPrintable(started.out + started.err));
        const QString runId = started.out.section(QLatin1Char('\n'), 0, 0).mid(4).trimmed();
        QVERIFY(!runId.isEmpty());
        QProcess follower;
        follower.start(kCli, {QStringLiteral("--db"), database, QStringLiteral("attach"), runId});
        QVERIFY(follower.waitForStarted());
        QElapsedTimer waited;
        waited.start();
        while (waited.elapsed() < 60000 && !follower.peek(1 << 16).contains("\nstep 5/"))
            follower.waitForReadyRead(200);
        QVERIFY2(follower.peek(1 << 16).contains("\nstep 5/"), follower.peek(1 << 16).constData());
        ::kill(static_cast<pid_t>(follower.processId()), SIGKILL);
        follower.waitForFinished();
        const Result end = cli({QStringLiteral("--db"), database, QStringLiteral("attach"), runId}, 120000);
        QVERIFY2(end.code == 0, qPrintable(end.out + end.err));
        QVERIFY2(end.out.contains(QStringLiteral("run %1 completed").arg(runId)), qPrintable(end.out));
        HistoryDatabase h;
        QCOMPARE(h.open(database, false), QString());
        const auto data = h.loadRun(h.findRun(runId)->id);
        QVERIFY(data);
        QCOMPARE(data->run.status, QStringLiteral("completed"));
        QSet<QPair<int, qint64>> seen;
        for (const auto &s : data->steps)
            seen.insert({s.rank, s.step});
        QCOMPARE(seen.size(), 4 * steps); // no step of any rank lost
        {
            QSqlDatabase check = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("integrity"));
            check.setDatabaseName(database);
            QVERIFY(check.open());
            QSqlQuery q(check);
            QVERIFY(q.exec(QStringLiteral("PRAGMA integrity_check")) && q.next());
            QCOMPARE(q.value(0).toString(), QStringLiteral("ok"));
        }
        QSqlDatabase::removeDatabase(QStringLiteral("integrity"));
    }

    // A NaN in rank 2's copy of a parameter at step 3: the run stops (exit 7) naming the step, the
    // rank and the tensor. With on_non_finite: skip, a transient NaN loss (one step of one rank)
    // skips that update and the run completes.
    void nonFiniteIsNamed()
    {
        const Result stop = cli({QStringLiteral("--db"), db(), QStringLiteral("run"), kPlan, QStringLiteral("--inject"),
                                 QStringLiteral("nan@2:3"), QStringLiteral("--quiet")});
        QCOMPARE(stop.code, 1);
        QVERIFY2(stop.err.contains(QStringLiteral("exit code 7")), qPrintable(stop.err));
        QVERIFY2(stop.err.contains(QStringLiteral("non-finite loss (nan) at step 3: parameter lnf.weight on rank 2 is the first non-finite tensor")),
                 qPrintable(stop.err));

        QString planText;
        {
            QFile f(kPlan);
            QVERIFY(f.open(QIODevice::ReadOnly));
            planText = QString::fromUtf8(f.readAll());
        }
        planText.replace(QStringLiteral("\"seed\": 7,"), QStringLiteral("\"seed\": 7, \"on_non_finite\": \"skip\","));
        planText.replace(QStringLiteral("../../../resources"), QStringLiteral(TRELLIS_SOURCE_DIR "/resources"));
        const QString skipPlan = m_dir.filePath(QStringLiteral("skip.json"));
        QFile out(skipPlan);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(planText.toUtf8());
        out.close();
        const Result skip = cli({QStringLiteral("--db"), db(), QStringLiteral("run"), skipPlan, QStringLiteral("--inject"),
                                 QStringLiteral("nanloss@1:4"), QStringLiteral("--quiet")});
        QVERIFY2(skip.code == 0, qPrintable(skip.err));
        QVERIFY2(skip.err.contains(QStringLiteral("skipped the update of step 4: non-finite loss (nan) at step 4: the loss of rank 1's micro-batches is the first non-finite value")),
                 qPrintable(skip.err));
    }

    // --inject slow@2:5 adds 200 ms to rank 2's every step from step 5: flagged within 10 steps,
    // named with how much slower; the same plan run clean raises no alarm.
    void slowRankIsFlagged()
    {
        const QString plan = restartPlan(QStringLiteral("slow"), 24, 0, QStringLiteral(R"("max_restarts": 0)"));
        const Result slow = cli({QStringLiteral("--db"), db(), QStringLiteral("run"), plan, QStringLiteral("--inject"),
                                 QStringLiteral("slow@2:5"), QStringLiteral("--quiet")});
        QVERIFY2(slow.code == 0, qPrintable(slow.err));
        const Result clean = cli({QStringLiteral("--db"), db(), QStringLiteral("run"), plan, QStringLiteral("--quiet")});
        QVERIFY2(clean.code == 0, qPrintable(clean.err));
        HistoryDatabase h;
        QCOMPARE(h.open(db(), false), QString());
        auto events = [&](const Result &r) {
            return h.loadRun(h.findRun(r.out.section(QLatin1Char('\n'), 0, 0).mid(4).trimmed())->id)->events;
        };
        QList<EventRow> flagged;
        for (const auto &e : events(slow))
            if (e.kind == QStringLiteral("straggler"))
                flagged << e;
        QCOMPARE(flagged.size(), 1);
        QCOMPARE(flagged.front().rank, 2);
        QVERIFY2(flagged.front().step <= 14, qPrintable(QString::number(flagged.front().step)));
        static const QRegularExpression pattern(QStringLiteral("^rank 2 on \\S+ is a straggler: [0-9.]+ ms of compute a step, ([0-9.]+)x the median rank"));
        const auto m = pattern.match(flagged.front().message);
        QVERIFY2(m.hasMatch() && m.captured(1).toDouble() >= 2.0, qPrintable(flagged.front().message));
        qInfo("%s (at step %lld)", qPrintable(flagged.front().message), flagged.front().step);
        for (const auto &e : events(clean))
            QVERIFY2(e.kind != QStringLiteral("straggler"), qPrintable(e.message));
    }

    // SIGSTOP of one of 4 ranks: its heartbeats stop; the supervisor names it, its host and the
    // collective the others wait in, within 3 s of its last heartbeat (the report says how long
    // it has been silent: 3 heartbeat intervals plus the 250 ms check, 2 s at most here).
    void stoppedRankIsNamed()
    {
        const QString plan = m_dir.filePath(QStringLiteral("long.json"));
        QFile f(plan);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QStringLiteral(R"({"schema": "trellis.plan/1", "name": "long",
          "model": {"layers": 2, "hidden": 64, "heads": 4, "ffn": 256, "seq_len": 64, "vocab": 256},
          "cluster": {"nodes": [{"host": "localhost", "slots": 4}]},
          "parallel": {"dp": 4, "micro_batch_size": 2},
          "training": {"steps": 100000, "lr": 0.003, "min_lr": 0.0003, "seed": 7,
                       "data": {"source": "text", "path": "%1"}}})")
                    .arg(QStringLiteral(TRELLIS_SOURCE_DIR "/resources/corpus/licenses.txt"))
                    .toUtf8());
        f.close();
        const QString database = m_dir.filePath(QStringLiteral("stopped.sqlite"));
        QProcess run;
        run.start(kCli, {QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--quiet")});
        QVERIFY(run.waitForStarted());
        // Wait for every rank's pid (Hello) and a few steps.
        qint64 pid = 0;
        QElapsedTimer waited;
        waited.start();
        while (waited.elapsed() < 60000 && pid == 0) {
            QTest::qWait(200);
            HistoryDatabase h;
            if (!h.open(database, false).isEmpty())
                continue;
            const auto last = h.findRun(QStringLiteral("last"));
            if (!last)
                continue;
            const auto data = h.loadRun(last->id);
            if (!data || data->ranks.size() < 4 || last->stepsDone < 3)
                continue;
            for (const auto &rank : data->ranks)
                if (rank.rank == 2)
                    pid = rank.pid;
        }
        QVERIFY2(pid > 0, "the run never reported rank 2's pid");
        QVERIFY(::kill(static_cast<pid_t>(pid), SIGSTOP) == 0);
        QElapsedTimer sinceStop;
        sinceStop.start();
        const bool ended = run.waitForFinished(60000);
        const qint64 detectedMs = sinceStop.elapsed();
        ::kill(static_cast<pid_t>(pid), SIGCONT); // whatever is left of it may go now
        if (!ended) {
            run.kill();
            run.waitForFinished();
        }
        QVERIFY(ended);
        const QString err = QString::fromUtf8(run.readAllStandardError());
        static const QRegularExpression pattern(QStringLiteral(
            "hang: rank 2 on \\S+ stopped responding \\(no heartbeat for (\\d+\\.\\d) s\\); ranks? [0134,]+ waits? in dp "
            "all_reduce #\\d+ since \\d+\\.\\d s \\[rank 2's process is stopped\\]"));
        const auto m = pattern.match(err);
        QVERIFY2(m.hasMatch(), qPrintable(err));
        qInfo("SIGSTOP to the end of the run: %lld ms; the report: no heartbeat for %s s", detectedMs,
              qPrintable(m.captured(1)));
        QVERIFY2(m.captured(1).toDouble() <= 3.0, qPrintable(err));
    }

    // Restarts (launch.restart). A plan of `steps` on 4 ranks of dp, checkpointing every `every`.
    QString restartPlan(const QString &name, int steps, int every, const QString &restart, const QString &cluster = {})
    {
        const QString path = m_dir.filePath(name + QStringLiteral(".json"));
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly))
            return {};
        f.write(QStringLiteral(R"({"schema": "trellis.plan/1", "name": "%1",
          "model": {"layers": 2, "hidden": 64, "heads": 4, "ffn": 256, "seq_len": 64, "vocab": 256},
          "cluster": %2,
          "parallel": {"dp": 4, "micro_batch_size": 2},
          "training": {"steps": %3, "lr": 0.003, "min_lr": 0.0003, "seed": 7,
                       "data": {"source": "text", "path": "%4"},
                       "checkpoint": {"every": %5, "dir": "%6", "keep": 3}},
          "launch": {"restart": {%7}}})")
                    .arg(name, cluster.isEmpty() ? QStringLiteral(R"({"nodes": [{"host": "localhost", "slots": 4}]})") : cluster)
                    .arg(steps)
                    .arg(QStringLiteral(TRELLIS_SOURCE_DIR "/resources/corpus/licenses.txt"))
                    .arg(every)
                    .arg(m_dir.filePath(name + QStringLiteral("-ckpt")), restart)
                    .toUtf8());
        return path;
    }

    // kill -9 of one of 4 ranks mid-run: mpirun's report names the rank and the signal, the run
    // resumes from its newest checkpoint by itself, and ends with the losses of every step and
    // the final checkpoint's shards bit for bit those of an uninterrupted run.
    void killedRankRestartsBitwise()
    {
        const int steps = 160;
        const QString straight = restartPlan(QStringLiteral("straight"), steps, 10, QStringLiteral(R"("max_restarts": 0)"));
        const QString killed = restartPlan(QStringLiteral("killed"), steps, 10,
                                           QStringLiteral(R"("max_restarts": 2, "backoff_s": 0.2)"));
        const QString database = m_dir.filePath(QStringLiteral("restart.sqlite"));
        const Result a = cli({QStringLiteral("--db"), database, QStringLiteral("run"), straight, QStringLiteral("--quiet")});
        QVERIFY2(a.code == 0, qPrintable(a.err));
        QProcess run;
        run.start(kCli, {QStringLiteral("--db"), database, QStringLiteral("run"), killed, QStringLiteral("--quiet")});
        QVERIFY(run.waitForStarted());
        qint64 pid = 0;
        QElapsedTimer waited;
        waited.start();
        while (waited.elapsed() < 60000 && pid == 0) {
            QTest::qWait(100);
            HistoryDatabase h;
            if (!h.open(database, false).isEmpty())
                continue;
            const auto last = h.findRun(QStringLiteral("last"));
            if (!last || last->name != QStringLiteral("killed"))
                continue;
            const auto data = h.loadRun(last->id);
            if (!data || data->ranks.size() < 4 || last->stepsDone < 14)
                continue;
            for (const auto &rank : data->ranks)
                if (rank.rank == 2)
                    pid = rank.pid;
        }
        QVERIFY2(pid > 0, "the run never reached step 14");
        QVERIFY(::kill(static_cast<pid_t>(pid), SIGKILL) == 0);
        const QDateTime killedAt = QDateTime::currentDateTimeUtc();
        QVERIFY(run.waitForFinished(120000));
        const QString err = QString::fromUtf8(run.readAllStandardError());
        QVERIFY2(run.exitCode() == 0, qPrintable(err));

        HistoryDatabase h;
        QCOMPARE(h.open(database, false), QString());
        const auto runs = h.listRuns();
        std::optional<RunData> first, second;
        for (const auto &r : runs) {
            if (r.name == QStringLiteral("straight"))
                first = h.loadRun(r.id);
            if (r.name == QStringLiteral("killed"))
                second = h.loadRun(r.id);
        }
        QVERIFY(first && second);
        QCOMPARE(second->run.status, QStringLiteral("completed"));
        int restarts = 0;
        for (const auto &e : second->events) {
            if (e.kind != QStringLiteral("restart") || !e.message.startsWith(QStringLiteral("restart ")))
                continue; // the trainer's own "resumed from" event has this kind too
            ++restarts;
            QVERIFY2(e.message.contains(QStringLiteral("restart 1/2 after crash")) && e.message.contains(QStringLiteral("rank 2")) &&
                         e.message.contains(QStringLiteral("signal 9")) && e.message.contains(QStringLiteral("resuming from the checkpoint of step")),
                     qPrintable(e.message));
            qInfo("kill -9 to the restart decision: %lld ms; %s", killedAt.msecsTo(e.at), qPrintable(e.message));
        }
        QCOMPARE(restarts, 1);
        // The loss of every step (rank 0's) and the final checkpoint, bit for bit.
        std::map<qint64, double> lossA, lossB;
        for (const auto &s : first->steps)
            if (s.rank == 0)
                lossA[s.step] = s.loss;
        for (const auto &s : second->steps)
            if (s.rank == 0)
                lossB[s.step] = s.loss;
        QCOMPARE(lossB.size(), size_t(steps));
        QVERIFY(lossA == lossB);
        for (int r = 0; r < 4; ++r) {
            const QString shard = QStringLiteral("/step-%1/rank-%2.bin").arg(steps, 8, 10, QLatin1Char('0')).arg(r, 5, 10, QLatin1Char('0'));
            QFile fa(m_dir.filePath(QStringLiteral("straight-ckpt")) + shard), fb(m_dir.filePath(QStringLiteral("killed-ckpt")) + shard);
            QVERIFY(fa.open(QIODevice::ReadOnly) && fb.open(QIODevice::ReadOnly));
            QVERIFY2(fa.readAll() == fb.readAll(), qPrintable(shard));
        }
    }

    // The same failure every attempt: after max_restarts the run fails with the whole story.
    void restartBudgetExhausted()
    {
        const QString plan = restartPlan(QStringLiteral("doomed"), 20, 2, QStringLiteral(R"("max_restarts": 2, "backoff_s": 0.1)"));
        const Result r = cli({QStringLiteral("--db"), db(), QStringLiteral("run"), plan, QStringLiteral("--inject"),
                              QStringLiteral("crash@1:5"), QStringLiteral("--quiet")});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains(QStringLiteral("restart 1/2 after crash in step 5")), qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("restart 2/2 after crash in step 5")), qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("failed: restart budget exhausted: failed after 2 restarts (crash in step 5; crash in step 5); last: exit code 70 (injected crash (fault injection)): rank 1 on")),
                 qPrintable(r.err));
    }

    // elastic: the crashed rank's node is left out and the run goes on at dp 2 with twice the
    // micro-batches (the same global batch), resharding the dp 4 checkpoint.
    void elasticRestartExcludesTheNode()
    {
        const QString plan = restartPlan(QStringLiteral("elastic"), 12, 2, QStringLiteral(R"("max_restarts": 1, "backoff_s": 0.1, "elastic": true)"),
                                         QStringLiteral(R"({"nodes": [{"host": "localhost", "slots": 2}, {"host": "localhost", "slots": 2}]})"));
        const Result r = cli({QStringLiteral("--db"), db(), QStringLiteral("run"), plan, QStringLiteral("--inject"),
                              QStringLiteral("crash@3:5"), QStringLiteral("--quiet")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("elastic: node 1 (localhost) excluded; dp 4 -> 2, micro-batches 1 -> 2")), qPrintable(r.err));
        HistoryDatabase h;
        QCOMPARE(h.open(db(), false), QString());
        const auto data = h.loadRun(h.findRun(r.out.section(QLatin1Char('\n'), 0, 0).mid(4).trimmed())->id);
        QVERIFY(data);
        QCOMPARE(data->run.status, QStringLiteral("completed"));
        QSet<int> lateRanks;
        for (const auto &s : data->steps)
            if (s.step == 12)
                lateRanks.insert(s.rank);
        QCOMPARE(lateRanks, (QSet<int>{0, 1}));
    }

    void badInput_data()
    {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("message");
        const QString bad = QStringLiteral(TRELLIS_SOURCE_DIR "/tests/data/plans/bad_tp.json");
        QTest::newRow("unknown key") << QStringList{QStringLiteral("validate"), bad} << 1 << QStringLiteral("parallel.colour: unknown key");
        QTest::newRow("missing plan") << QStringList{QStringLiteral("validate"), QStringLiteral("/nope.json")} << 1
                                      << QStringLiteral("/nope.json: no such file");
        QTest::newRow("no db") << QStringList{QStringLiteral("--db"), QStringLiteral("/nonexistent/dir/h.sqlite"), QStringLiteral("runs")}
                               << 1 << QStringLiteral("history database /nonexistent/dir/h.sqlite: no such file");
        QTest::newRow("unwritable db") << QStringList{QStringLiteral("--db"), QStringLiteral("/proc/trellis/h.sqlite"), QStringLiteral("run"), kPlan}
                                       << 1 << QStringLiteral("history database /proc/trellis/h.sqlite: cannot create folder");
        QTest::newRow("unknown command") << QStringList{QStringLiteral("fly")} << 2 << QStringLiteral("unknown command 'fly'");
    }
    void badInput()
    {
        QFETCH(QStringList, args);
        QFETCH(int, code);
        QFETCH(QString, message);
        const Result r = cli(args);
        QCOMPARE(r.code, code);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
    }

    void memoryByCategory_data()
    {
        QTest::addColumn<int>("zero");
        QTest::newRow("zero 0") << 0;
        QTest::newRow("zero 1") << 1;
        QTest::newRow("zero 2") << 2;
        QTest::newRow("zero 3") << 3;
    }
    void memoryByCategory()
    {
        // The dp4_short model: V 256, C 64, F 256, S 64, 2 layers -> 120576 parameters. Its ZeRO
        // units (embeddings 20480, layers 49984 each, final norm 128) all split evenly over 4
        // ranks, so the sharded stages hold exactly a quarter.
        QFETCH(int, zero);
        const qint64 params = 120576;
        QFile in(kPlan);
        QVERIFY(in.open(QIODevice::ReadOnly));
        QString text = QString::fromUtf8(in.readAll());
        text.replace(QStringLiteral("\"micro_batches\": 1}"), QStringLiteral("\"micro_batches\": 1, \"zero\": %1, \"bucket_mb\": 0.05}").arg(zero));
        text.replace(QStringLiteral("../../../resources"), QStringLiteral(TRELLIS_SOURCE_DIR "/resources"));
        text.replace(QStringLiteral("\"steps\": 12"), QStringLiteral("\"steps\": 3"));
        const QString plan = m_dir.filePath(QStringLiteral("zero%1.json").arg(zero));
        QFile out(plan);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(text.toUtf8());
        out.close();
        const QString database = m_dir.filePath(QStringLiteral("zero%1.sqlite").arg(zero));
        const Result r = cli({QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--quiet")});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        HistoryDatabase h;
        QCOMPARE(h.open(database, false), QString());
        auto data = h.loadRun(h.findRun(QStringLiteral("last"))->id);
        qint64 optimizerSum = 0;
        // The cost model predicts what rank 0 holds, byte for byte.
        const auto predicted = predictedMemory(plan);
        QCOMPARE(predicted.size(), size_t(1));
        for (const auto &s : data->steps) {
            if (s.step != 3)
                continue;
            if (s.rank == 0) {
                QCOMPARE(qint64(predicted[0].parameters), s.memParameters);
                QCOMPARE(qint64(predicted[0].gradients), s.memGradients);
                QCOMPARE(qint64(predicted[0].optimizer), s.memOptimizer);
                QCOMPARE(qint64(predicted[0].activations), s.memActivations);
            }
            QCOMPARE(s.memParameters, zero == 3 ? params : params * 4);
            QCOMPARE(s.memGradients, zero >= 2 ? params : params * 4);
            QVERIFY(s.memActivations > 0);
            QVERIFY(s.peakRss > 0);
            optimizerSum += s.memOptimizer;
            if (zero == 0) {
                QCOMPARE(s.memOptimizer, params * 8); // Adam moments m and v, fp32
                QCOMPARE(s.memComm, qint64(0));
            } else if (zero >= 2) {
                QCOMPARE(s.memOptimizer, params * 2); // a quarter of m and v
                // Transient: unit gradient buffers in flight (and gathered units at stage 3).
                QVERIFY(s.memComm >= 49984 * 4);
            } else {
                // Each rank keeps the moments of its chunk of every bucket: about a quarter.
                QVERIFY2(std::abs(double(s.memOptimizer) - params * 8 / 4.0) <= 8.0 * 4 * 64,
                         qPrintable(QStringLiteral("rank %1 holds %2 bytes").arg(s.rank).arg(s.memOptimizer)));
                QVERIFY(s.memComm > 0);
            }
        }
        QCOMPARE(optimizerSum, zero == 0 ? params * 8 * 4 : params * 8); // sharded: the ranks together hold one copy
        // The DP collectives of a step, bytes and calls, as the cost model predicts them.
        auto loaded = trellis::plan::loadPlanFile(plan.toStdString());
        QVERIFY(loaded);
        const auto estimate = trellis::plan::estimatePlan(loaded.value(), trellis::plan::deviceFor(loaded.value().cluster));
        int compared = 0;
        for (const auto &c : h.collectivesOf(data->run.id)) {
            if (c.rank != 0 || c.step != 3)
                continue;
            const auto it = std::find_if(estimate.collectives.begin(), estimate.collectives.end(), [&](const auto &e) {
                return QString::fromStdString(e.group) == c.group && QString::fromStdString(e.op) == c.op;
            });
            QVERIFY2(it != estimate.collectives.end(), qPrintable(c.group + QLatin1Char(' ') + c.op));
            QCOMPARE(qint64(it->bytes), c.bytes);
            QCOMPARE(it->callsPerStep, c.count);
            ++compared;
        }
        QCOMPARE(compared, zero == 0 ? 1 : 3);
    }

    // Every collective a rank issues in a step — group, operation, bytes and calls — and every
    // memory category are what the cost model predicts for its pipeline stage, for tensor,
    // sequence and pipeline parallelism, their combinations, recompute, the split backward of
    // zb-h1, ZeRO over a pipeline and sharded stages with several micro-batches and odd dp
    // (padding). ZeRO-2/3 transient buffers depend on when MPI completes a reduction: the
    // prediction is their worst case, so the measured peak must stay at or under it.
    void collectivesAndMemoryAsTheTrainerRecords_data()
    {
        QTest::addColumn<QString>("parallel");
        QTest::addColumn<int>("ranks");
        QTest::addColumn<int>("layers");
        QTest::newRow("tp2") << R"("tp": 2, "micro_batch_size": 2, "micro_batches": 2)" << 2 << 4;
        QTest::newRow("tp2 sp recompute") << R"("tp": 2, "sequence_parallel": true, "recompute": "full", "micro_batch_size": 2, "micro_batches": 2)" << 2 << 4;
        QTest::newRow("dp2 tp2") << R"("dp": 2, "tp": 2, "micro_batch_size": 2, "micro_batches": 2)" << 4 << 4;
        QTest::newRow("pp4 interleaved") << R"("pp": 4, "schedule": "interleaved-1f1b", "virtual_stages": 2, "micro_batches": 4)" << 4 << 8;
        QTest::newRow("zb-h1 tp2 sp") << R"("tp": 2, "pp": 2, "sequence_parallel": true, "schedule": "zb-h1", "micro_batch_size": 2, "micro_batches": 4)" << 4 << 4;
        QTest::newRow("gpipe tp2 recompute") << R"("tp": 2, "pp": 2, "schedule": "gpipe", "recompute": "full", "micro_batches": 3)" << 4 << 4;
        QTest::newRow("dp3 pp2 zero1") << R"("dp": 3, "pp": 2, "zero": 1, "micro_batches": 2)" << 6 << 4;
        QTest::newRow("dp2 tp2 pp2 sp") << R"("dp": 2, "tp": 2, "pp": 2, "sequence_parallel": true, "micro_batch_size": 2, "micro_batches": 4)" << 8 << 4;
        QTest::newRow("dp3 zero1") << R"("dp": 3, "zero": 1, "bucket_mb": 0.05, "micro_batches": 2)" << 3 << 4;
        QTest::newRow("dp2 zero2 m2") << R"("dp": 2, "zero": 2, "micro_batch_size": 2, "micro_batches": 2)" << 2 << 4;
        QTest::newRow("dp3 zero3 m3") << R"("dp": 3, "zero": 3, "micro_batches": 3)" << 3 << 4;
        // Combinations the strategies compose since the trainer's restructuring.
        QTest::newRow("dp2 tp2 zero1") << R"("dp": 2, "tp": 2, "zero": 1, "micro_batches": 2)" << 4 << 4;
        QTest::newRow("dp2 tp2 zero3") << R"("dp": 2, "tp": 2, "zero": 3, "sequence_parallel": true)" << 4 << 4;
        QTest::newRow("dp2 pp2 zero2") << R"("dp": 2, "pp": 2, "zero": 2, "micro_batches": 3)" << 4 << 4;
        QTest::newRow("dp2 pp2 zero3 zb-h1") << R"("dp": 2, "pp": 2, "zero": 3, "schedule": "zb-h1", "micro_batches": 2)" << 4 << 4;
    }
    void collectivesAndMemoryAsTheTrainerRecords()
    {
        QFETCH(QString, parallel);
        QFETCH(int, ranks);
        QFETCH(int, layers);
        const QString tag = QString::fromLatin1(QTest::currentDataTag()).replace(QLatin1Char(' '), QLatin1Char('_'));
        const QString plan = m_dir.filePath(tag + QStringLiteral(".json"));
        QFile out(plan);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(QStringLiteral(R"({
          "schema": "trellis.plan/1", "name": "%1",
          "model": {"layers": %2, "hidden": 32, "heads": 4, "ffn": 64, "seq_len": 32, "vocab": 256},
          "cluster": {"nodes": [{"host": "localhost", "slots": %3}]},
          "parallel": {%4},
          "training": {"steps": 3, "lr": 0.001, "min_lr": 0.0001, "seed": 3,
                       "data": {"source": "text", "path": "%5"}}
        })")
                      .arg(tag)
                      .arg(layers)
                      .arg(ranks)
                      .arg(parallel, QStringLiteral(TRELLIS_SOURCE_DIR "/resources/corpus/licenses.txt"))
                      .toUtf8());
        out.close();
        const QString database = m_dir.filePath(tag + QStringLiteral(".sqlite"));
        const Result r = cli({QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--quiet")});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        auto loaded = trellis::plan::loadPlanFile(plan.toStdString());
        QVERIFY(loaded);
        const auto &p = loaded.value();
        const auto estimate = trellis::plan::estimatePlan(p, trellis::plan::deviceFor(p.cluster));
        HistoryDatabase h;
        QCOMPARE(h.open(database, false), QString());
        const auto data = h.loadRun(h.findRun(QStringLiteral("last"))->id);
        QVERIFY(data);
        const int perStage = ranks / p.parallel.pp;
        auto stageOf = [&](int rank) { return p.parallel.pp > 1 ? rank / perStage : -1; };
        // (stage, group, op) -> (bytes, calls), measured on every rank of the stage alike.
        QMap<QString, QPair<qint64, int>> measured, predicted;
        auto key = [](int stage, const QString &group, const QString &op) {
            return QStringLiteral("stage %1 %2 %3").arg(stage).arg(group, op);
        };
        for (const auto &c : h.collectivesOf(data->run.id)) {
            if (c.step != 3)
                continue;
            const QString k = key(stageOf(c.rank), c.group, c.op);
            if (measured.contains(k))
                QCOMPARE(measured[k], qMakePair(c.bytes, c.count)); // the same on every rank of the stage
            measured[k] = qMakePair(c.bytes, c.count);
        }
        for (const auto &c : estimate.collectives)
            predicted[key(c.stage, QString::fromStdString(c.group), QString::fromStdString(c.op))] =
                qMakePair(qint64(c.bytes), c.callsPerStep);
        QVERIFY(!measured.isEmpty());
        QCOMPARE(predicted.keys(), measured.keys());
        for (auto it = measured.cbegin(); it != measured.cend(); ++it)
            QVERIFY2(predicted[it.key()] == it.value(),
                     qPrintable(QStringLiteral("%1: predicted %2 bytes in %3 calls, measured %4 in %5")
                                    .arg(it.key())
                                    .arg(predicted[it.key()].first)
                                    .arg(predicted[it.key()].second)
                                    .arg(it.value().first)
                                    .arg(it.value().second)));
        // Memory by category, rank 0 of every stage.
        QCOMPARE(int(estimate.memory.size()), p.parallel.pp);
        for (const auto &s : data->steps) {
            if (s.step != 3 || s.rank % perStage != 0)
                continue;
            const auto &m = estimate.memory[size_t(p.parallel.pp > 1 ? s.rank / perStage : 0)];
            QCOMPARE(s.memParameters, qint64(m.parameters));
            QCOMPARE(s.memGradients, qint64(m.gradients));
            QCOMPARE(s.memOptimizer, qint64(m.optimizer));
            QCOMPARE(s.memActivations, qint64(m.activations));
            if (p.parallel.zero >= 2) {
                QVERIFY2(s.memComm > 0 && s.memComm <= qint64(m.commBuffers),
                         qPrintable(QStringLiteral("%1 > %2").arg(s.memComm).arg(m.commBuffers)));
            } else {
                QCOMPARE(s.memComm, qint64(m.commBuffers));
            }
        }
    }

    // A launcher killed outright (kill -9) takes its job with it — mpirun gets SIGTERM as its
    // parent dies (and would otherwise meet a broken output pipe) — and the next look at the
    // history shows the run failed with the reason, instead of "running" for ever.
    void killedLauncherTakesTheRunDown()
    {
        const QString database = m_dir.filePath(QStringLiteral("killed.sqlite"));
        QProcess launcher;
        launcher.start(kCli, {QStringLiteral("--db"), database, QStringLiteral("run"),
                              QStringLiteral(TRELLIS_SOURCE_DIR "/resources/plans/quickstart.json"), QStringLiteral("--quiet")});
        QVERIFY(launcher.waitForReadyRead(60000));
        const QString first = QString::fromUtf8(launcher.readLine()).trimmed();
        QVERIFY2(first.startsWith(QStringLiteral("run ")), qPrintable(first));
        const QString runId = first.mid(4);
        auto jobProcesses = [&] { // processes whose command line names this run's frozen plan
            int count = 0;
            for (const QString &pid : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs)) {
                QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(pid));
                if (pid.toInt() > 0 && cmdline.open(QIODevice::ReadOnly) && cmdline.readAll().contains(runId.toUtf8() + "/plan.json"))
                    ++count;
            }
            return count;
        };
        QTRY_VERIFY_WITH_TIMEOUT(jobProcesses() >= 2, 30000); // mpirun and its ranks are up
        auto recordedStatus = [&] {
            HistoryDatabase h;
            if (!h.open(database, false).isEmpty())
                return QString();
            const auto run = h.findRun(runId);
            return run ? run->status : QString();
        };
        QTRY_COMPARE_WITH_TIMEOUT(recordedStatus(), QStringLiteral("running"), 30000); // the history has it
        launcher.kill();
        QVERIFY(launcher.waitForFinished(10000));
        QTRY_COMPARE_WITH_TIMEOUT(jobProcesses(), 0, 20000);
        HistoryDatabase h;
        QCOMPARE(h.open(database, false), QString());
        const auto run = h.findRun(runId);
        QVERIFY(run);
        QCOMPARE(run->status, QStringLiteral("failed"));
        QVERIFY2(run->error.contains(QStringLiteral("ended while the run was going")), qPrintable(run->error));
    }

    // A pipeline run through the launcher: bubble and per-stage memory reach the history, the
    // sampled timeline comes back as a Chrome trace with one track per rank and every action of
    // the schedule (8 micro-batches × F and BW on each of 2 stages) per traced step.
    void pipelineRunTrace()
    {
        const QString plan = m_dir.filePath(QStringLiteral("pp2.json"));
        QFile out(plan);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(QStringLiteral(R"({
          "schema": "trellis.plan/1", "name": "pp2",
          "model": {"layers": 4, "hidden": 32, "heads": 4, "ffn": 64, "seq_len": 32, "vocab": 256},
          "cluster": {"nodes": [{"host": "localhost", "slots": 2}]},
          "parallel": {"dp": 1, "pp": 2, "micro_batch_size": 2, "micro_batches": 8, "schedule": "1f1b"},
          "training": {"steps": 4, "lr": 0.001, "min_lr": 0.0001, "seed": 3,
                       "data": {"source": "text", "path": "%1"}},
          "telemetry": {"trace_every": 2}
        })")
                      .arg(QStringLiteral(TRELLIS_SOURCE_DIR "/resources/corpus/licenses.txt"))
                      .toUtf8());
        out.close();
        const QString database = m_dir.filePath(QStringLiteral("pp2.sqlite"));
        const Result r = cli({QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--quiet")});
        QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
        HistoryDatabase h;
        QCOMPARE(h.open(database, false), QString());
        const auto run = h.findRun(QStringLiteral("last"));
        QVERIFY(run);
        auto data = h.loadRun(run->id);
        QVERIFY(data);
        qint64 params[2] = {0, 0};
        const auto predicted = predictedMemory(plan);
        QCOMPARE(predicted.size(), size_t(2));
        for (const auto &s : data->steps) {
            QVERIFY(s.bubbleMs >= 0);
            QVERIFY(s.stepMs >= s.bubbleMs);
            if (s.step != 4)
                continue;
            params[s.rank] = s.memParameters;
            // The cost model's per-stage prediction, byte for byte (activations: one set per
            // micro-batch the schedule keeps in flight on the stage).
            const auto &m = predicted[static_cast<size_t>(s.rank)];
            QCOMPARE(qint64(m.parameters), s.memParameters);
            QCOMPARE(qint64(m.gradients), s.memGradients);
            QCOMPARE(qint64(m.optimizer), s.memOptimizer);
            QCOMPARE(qint64(m.activations), s.memActivations);
        }
        // Stage 0: embeddings (256·32 + 32·32) + 2 layers; stage 1: 2 layers + final norm + the
        // tied embedding (wte and wpe, as Megatron keeps a copy on the last stage).
        const qint64 layer = 4 * 32 * 32 + 2 * 32 * 64 + 9 * 32 + 64;
        QCOMPARE(params[0], (256 * 32 + 32 * 32 + 2 * layer) * 4);
        QCOMPARE(params[1], (2 * layer + 2 * 32 + 256 * 32 + 32 * 32) * 4);

        const QString trace = m_dir.filePath(QStringLiteral("pp2.trace.json"));
        const Result t = cli({QStringLiteral("--db"), database, QStringLiteral("trace"), QStringLiteral("last"), QStringLiteral("--out"), trace});
        QVERIFY2(t.code == 0, qPrintable(t.err));
        QFile f(trace);
        QVERIFY(f.open(QIODevice::ReadOnly));
        const QJsonObject root = QJsonDocument::fromJson(f.readAll()).object();
        QMap<QString, int> perKind;
        QSet<int> tracks;
        for (const QJsonValue &v : root.value(QStringLiteral("traceEvents")).toArray()) {
            const QJsonObject e = v.toObject();
            if (e.value(QStringLiteral("ph")).toString() != QLatin1String("X"))
                continue;
            tracks.insert(e.value(QStringLiteral("tid")).toInt());
            QVERIFY(e.value(QStringLiteral("dur")).toDouble() >= 0);
            ++perKind[e.value(QStringLiteral("cat")).toString()];
        }
        QCOMPARE(tracks, (QSet<int>{0, 1}));
        // Steps 2 and 4 traced: 2 steps × 2 stages × 8 micro-batches.
        QCOMPARE(perKind.value(QStringLiteral("F")), 32);
        QCOMPARE(perKind.value(QStringLiteral("BW")), 32);
        QCOMPARE(perKind.value(QStringLiteral("send_act")), 16);
        QCOMPARE(perKind.value(QStringLiteral("recv_grad")), 16);

        // A run without a traced timeline says how to get one.
        const Result none = cli({QStringLiteral("--db"), db(), QStringLiteral("trace"), QStringLiteral("1"), QStringLiteral("--out"), trace});
        QCOMPARE(none.code, 1);
        QVERIFY2(none.err.contains(QStringLiteral("has no timeline spans: set telemetry.trace_every")), qPrintable(none.err));
    }

    // Sequence parallelism keeps only 1/tp of the rows of every norm and residual activation:
    // per rank at tp = 2 the embedding output, each layer's ln1, attention output, residual,
    // ln2, MLP output and layer output (6C + 4 floats a row with the norms' mean and rstd) and the
    // final norm's statistics drop from 64 rows to 32.
    void sequenceParallelActivations()
    {
        qint64 bytes[2] = {0, 0};
        for (int sp : {0, 1}) {
            const QString plan = m_dir.filePath(QStringLiteral("sp%1.json").arg(sp));
            QFile out(plan);
            QVERIFY(out.open(QIODevice::WriteOnly));
            out.write(QStringLiteral(R"({
              "schema": "trellis.plan/1", "name": "sp",
              "model": {"layers": 2, "hidden": 32, "heads": 4, "ffn": 64, "seq_len": 32, "vocab": 256},
              "cluster": {"nodes": [{"host": "localhost", "slots": 2}]},
              "parallel": {"dp": 1, "tp": 2, "micro_batch_size": 2, "sequence_parallel": %1},
              "training": {"steps": 2, "lr": 0.001, "min_lr": 0.0001, "seed": 3,
                           "data": {"source": "text", "path": "%2"}}
            })")
                          .arg(sp ? QStringLiteral("true") : QStringLiteral("false"),
                               QStringLiteral(TRELLIS_SOURCE_DIR "/resources/corpus/licenses.txt"))
                          .toUtf8());
            out.close();
            const QString database = m_dir.filePath(QStringLiteral("sp%1.sqlite").arg(sp));
            const Result r = cli({QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--quiet")});
            QVERIFY2(r.code == 0, qPrintable(r.out + r.err));
            HistoryDatabase h;
            QCOMPARE(h.open(database, false), QString());
            auto data = h.loadRun(h.findRun(QStringLiteral("last"))->id);
            const auto predicted = predictedMemory(plan);
            for (const auto &s : data->steps) {
                if (s.step != 2 || s.rank != 0)
                    continue;
                bytes[sp] = s.memActivations;
                // Tensor-parallel shards and sequence-parallel rows, as the cost model has them.
                QCOMPARE(qint64(predicted[0].parameters), s.memParameters);
                QCOMPARE(qint64(predicted[0].optimizer), s.memOptimizer);
                QCOMPARE(qint64(predicted[0].activations), s.memActivations);
            }
        }
        const qint64 C = 32, L = 2, dropRows = 64 - 32;
        QCOMPARE(bytes[0] - bytes[1], dropRows * (C + L * (6 * C + 4) + 2) * 4);
    }

    // A plan written as a DeepSpeed config and as Megatron-LM arguments reads back into the same
    // plan through the CLI.
    void convertRoundTrip()
    {
        const QString plan = QStringLiteral(TRELLIS_SOURCE_DIR "/resources/plans/pipeline-cpu.json");
        for (const QString &kind : {QStringLiteral("deepspeed"), QStringLiteral("megatron")}) {
            const Result to = cli({QStringLiteral("convert"), plan, QStringLiteral("--to"), kind});
            QVERIFY2(to.code == 0, qPrintable(to.err));
            const QString config = m_dir.filePath(QStringLiteral("converted.") + kind);
            QFile f(config);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(to.out.toUtf8());
            f.close();
            const QString back = m_dir.filePath(QStringLiteral("back-") + kind + QStringLiteral(".json"));
            const Result from = cli({QStringLiteral("convert"), QStringLiteral("--from"), kind, config, QStringLiteral("--base"), plan,
                                     QStringLiteral("--out"), back});
            QVERIFY2(from.code == 0, qPrintable(from.err));
            auto original = trellis::plan::loadPlanFile(plan.toStdString());
            auto converted = trellis::plan::loadPlanFile(back.toStdString());
            QVERIFY(original && converted);
            QVERIFY2(converted.value().parallel == original.value().parallel, qPrintable(kind));
            QCOMPARE(converted.value().training.steps, original.value().training.steps);
            QCOMPARE(converted.value().training.warmupSteps, original.value().training.warmupSteps);
        }
    }

    void validateGoodPlan()
    {
        const Result r = cli({QStringLiteral("validate"), QStringLiteral(TRELLIS_SOURCE_DIR "/resources/plans/quickstart.json")});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.out.contains(QStringLiteral("valid — 4 ranks")), qPrintable(r.out));
    }
};

QTEST_GUILESS_MAIN(TstCli)
#include "tst_cli.moc"
