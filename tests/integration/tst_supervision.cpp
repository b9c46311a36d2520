// Supervision end to end, with the real trainer under mpirun, real signals and a real SQLite
// file: stalls named and recorded while the run goes on (a rank paused, silent, slow for a step;
// a machine kept busy), hangs decided only when certain (a rank stopped for good, past the
// confirmation time; an endless loop, past the learned timeout), named with host and collective; restarts
// (kill -9 of a rank resumed bit for bit, a spent budget, elastic shrinking); stragglers; NaN;
// alerts to a command hook and a webhook; the Prometheus endpoint checked by promtool and scraped
// by a real Prometheus server. Who owns a run (followers, the workbench and supervisors killed,
// one supervisor per run, a history in trouble) is tst_run_ownership.
#include "tests/support/cli_test_support.h"
#include "tests/support/history_checks.h"
#include "launcher/history/history_database.h"

#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QProcessEnvironment>
#include <QHostAddress>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QSet>
#include <QSqlDatabase>
#include <QSqlQuery>
#include <QStandardPaths>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include <map>
#include <memory>
#include <optional>

#include <signal.h>

using namespace trellis::launcher;
using trellis::test::cli;
using trellis::test::kCli;
using trellis::test::kPlan;
using trellis::test::Result;
using trellis::test::restartPlan;

class TstSupervision : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString db() const { return m_dir.filePath(QStringLiteral("history.sqlite")); }

private slots:
    // A rank that keeps running but never leaves its phase (--inject hang: an endless loop in
    // forward, its heartbeats going on) while the others wait for it in a collective: a stall at
    // once, a hang after the learned timeout (here its floor, --hang-timeout 4: the steps are far
    // shorter than 4 s / 5), named with its host and phase and the collective the others wait in.
    void endlessLoopIsAHangAfterTheLearnedTimeout()
    {
        const Result r = cli({QStringLiteral("--db"), db(), QStringLiteral("run"), kPlan, QStringLiteral("--inject"),
                              QStringLiteral("hang@1:4"), QStringLiteral("--hang-timeout"), QStringLiteral("4"),
                              QStringLiteral("--quiet")});
        QCOMPARE(r.code, 1);
        static const QRegularExpression stall(
            QStringLiteral("stall: rank 1 on \\S+ \\(in forward of step 4\\) stopped making progress; ranks 0,2,3 wait in dp "
                           "all_reduce #\\d+ since \\d+\\.\\d s — the run goes on"));
        QVERIFY2(stall.match(r.err).hasMatch(), qPrintable(r.err));
        static const QRegularExpression hang(
            QStringLiteral("hang: rank 1 on \\S+ \\(in forward of step 4\\) stopped making progress; ranks 0,2,3 wait in dp "
                           "all_reduce #\\d+ since \\d+\\.\\d s; rank 1 has not moved for (\\d+\\.\\d) s \\(the learned timeout: "
                           "4\\.0 s, 5x the longest step"));
        const auto m = hang.match(r.err);
        QVERIFY2(m.hasMatch(), qPrintable(r.err));
        QVERIFY2(m.captured(1).toDouble() >= 4.0, qPrintable(r.err));
    }

    // A rank that sends nothing for 13 s while its process runs normally (--inject stall: what a
    // loaded machine that keeps it off the CPU does; a node relay being started again looks the
    // same) is not a hang: the others wait for it, it goes on, the run completes with every step
    // and no hang event. (Called hung after 10 s before: the flake of tst_run_ownership's relay
    // test on a loaded CI machine.)
    void stalledRankIsNotAHang()
    {
        const QString plan = restartPlan(m_dir, QStringLiteral("stall"), 12, 0, QStringLiteral(R"("max_restarts": 0)"));
        QElapsedTimer took;
        took.start();
        const Result r = cli({QStringLiteral("--db"), db(), QStringLiteral("run"), plan, QStringLiteral("--inject"),
                              QStringLiteral("stall@1:4"), QStringLiteral("--quiet")});
        QVERIFY2(r.code == 0, qPrintable(trellis::test::failure(r)));
        QVERIFY2(took.elapsed() >= 13000, qPrintable(QStringLiteral("the stall did not happen: %1 ms").arg(took.elapsed())));
        HistoryDatabase h;
        QCOMPARE(h.open(db(), false), QString());
        const QString runId = r.out.section(QLatin1Char('\n'), 0, 0).mid(4).trimmed();
        const auto data = h.loadRun(h.findRun(runId)->id);
        QVERIFY(data);
        QCOMPARE(data->run.status, QStringLiteral("completed"));
        for (const EventRow &e : data->events)
            QVERIFY2(e.kind != QLatin1String("hang"), qPrintable(e.message));
        QVERIFY(trellis::test::historyIsComplete(db(), runId, 12));
        // A stall it was, and its record says so: rank 1, silent, cleared after about 13 s.
        QVERIFY2(!data->stalls.isEmpty(), "no stall recorded");
        const StallRow &s = data->stalls.first();
        QCOMPARE(s.holders, QList<int>{1});
        QVERIFY(s.silent);
        QCOMPARE(s.outcome, QStringLiteral("cleared"));
        QVERIFY2(s.durationMs >= 11000, qPrintable(QString::number(s.durationMs)));
    }

    // One rank's whole process stopped for 2.5 s (SIGSTOP, then SIGCONT: a VM steal, a debugger,
    // a laptop's suspend) at three steps of one run: three stalls named and recorded, each about
    // as long as the pause, the run completes, and its losses are bit for bit an uninterrupted
    // run's.
    void pausedRankIsAStallNotAHang()
    {
        const QString plan = restartPlan(m_dir, QStringLiteral("pauses"), 40, 0, QStringLiteral(R"("max_restarts": 0)"));
        const QString database = m_dir.filePath(QStringLiteral("pauses.sqlite"));
        const Result r = cli({QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--inject"),
                              QStringLiteral("pause@3:8,20,32"), QStringLiteral("--quiet")});
        QVERIFY2(r.code == 0, qPrintable(trellis::test::failure(r)));
        const QString runId = r.out.section(QLatin1Char('\n'), 0, 0).mid(4).trimmed();
        HistoryDatabase h;
        QCOMPARE(h.open(database, false), QString());
        const auto data = h.loadRun(h.findRun(runId)->id, false);
        QVERIFY(data);
        QCOMPARE(data->run.status, QStringLiteral("completed"));
        for (const EventRow &e : data->events)
            QVERIFY2(e.kind != QLatin1String("hang"), qPrintable(e.message));
        QCOMPARE(data->stalls.size(), 3);
        for (const StallRow &s : data->stalls) {
            QCOMPARE(s.holders, QList<int>{3});
            QCOMPARE(s.waiting, (QList<int>{0, 1, 2}));
            QVERIFY(s.silent);
            QCOMPARE(s.outcome, QStringLiteral("cleared"));
            QVERIFY2(s.durationMs >= 2000 && s.durationMs < 15000, qPrintable(stallSummary(s)));
        }
        QVERIFY(trellis::test::historyIsComplete(database, runId, 40));
        const Result clean = cli({QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--quiet")});
        QVERIFY2(clean.code == 0, qPrintable(trellis::test::failure(clean)));
        const QString cleanId = clean.out.section(QLatin1Char('\n'), 0, 0).mid(4).trimmed();
        for (int rank = 0; rank < 4; ++rank) {
            const auto paused = trellis::test::lossesOf(database, runId, rank), plain = trellis::test::lossesOf(database, cleanId, rank);
            QCOMPARE(paused.size(), std::size_t(40));
            QVERIFY(paused == plain); // bit for bit, every step
        }
    }

    // One rank 5 s slow in a single step (--inject delay: a throttled GPU, a slow read) while the
    // others wait for it: a stall (not silent: it answers, and moves on), no kill, and no
    // straggler either — one slow step among eight is no slow rank.
    void slowStepIsAStallNotAKill()
    {
        const QString plan = restartPlan(m_dir, QStringLiteral("delay"), 16, 0, QStringLiteral(R"("max_restarts": 0)"));
        const QString database = m_dir.filePath(QStringLiteral("delay.sqlite"));
        const Result r = cli({QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--inject"),
                              QStringLiteral("delay@1:6"), QStringLiteral("--quiet")});
        QVERIFY2(r.code == 0, qPrintable(trellis::test::failure(r)));
        const QString runId = r.out.section(QLatin1Char('\n'), 0, 0).mid(4).trimmed();
        HistoryDatabase h;
        QCOMPARE(h.open(database, false), QString());
        const auto data = h.loadRun(h.findRun(runId)->id, false);
        QVERIFY(data);
        QCOMPARE(data->run.status, QStringLiteral("completed"));
        for (const EventRow &e : data->events) {
            QVERIFY2(e.kind != QLatin1String("hang"), qPrintable(e.message));
            QVERIFY2(e.kind != QLatin1String("straggler"), qPrintable(e.message));
        }
        QCOMPARE(data->stalls.size(), 1);
        const StallRow &s = data->stalls.first();
        // Seen once in about ten runs of the suite alone (2026-12-06): holders {1, another rank}
        // for the whole stall. The record's words name each holder's state (its phase and step, or
        // the call it waits in), so a failure says which rank and why.
        QVERIFY2(s.holders == QList<int>{1}, qPrintable(QStringLiteral("holders %1: %2").arg(
                                                 QString::number(s.holders.size()), s.what)));
        QVERIFY(!s.silent);
        QCOMPARE(s.outcome, QStringLiteral("cleared"));
        QVERIFY2(s.what.contains(QStringLiteral("stopped making progress")), qPrintable(s.what));
    }

    // One rank stopped for good (--inject stop: SIGSTOP): a stall named at once — silent for at
    // most 3 s by the supervisor's own clock —, the hang decided after launch.hang_confirm_s (5 s
    // here) of it staying stopped, and the run restarted from its checkpoint as launch.restart
    // says, to completion.
    void stoppedRankIsAHangAfterTheConfirmationTime()
    {
        const QString plan = restartPlan(m_dir, QStringLiteral("stopped"), 24, 4, QStringLiteral(R"("max_restarts": 1, "backoff_s": 1)"));
        QVERIFY(trellis::test::setPlanFields(plan, QStringLiteral("launch"), {{QStringLiteral("hang_confirm_s"), 5}}));
        const QString database = m_dir.filePath(QStringLiteral("stopped.sqlite"));
        const Result r = cli({QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--inject"),
                              QStringLiteral("stop@2:10"), QStringLiteral("--quiet")});
        QVERIFY2(r.code == 0, qPrintable(trellis::test::failure(r)));
        static const QRegularExpression stall(QStringLiteral(
            "stall: rank 2 on \\S+ stopped responding \\(no heartbeat for (\\d+\\.\\d) s\\); ranks? [0134,-]+ waits? in dp "
            "all_reduce #\\d+ since \\d+\\.\\d s \\[rank 2's process is stopped\\] — the run goes on"));
        const auto named = stall.match(r.err);
        QVERIFY2(named.hasMatch(), qPrintable(r.err));
        QVERIFY2(named.captured(1).toDouble() >= 1.5 && named.captured(1).toDouble() <= 3.0, qPrintable(r.err));
        static const QRegularExpression hang(QStringLiteral(
            "rank 2's process has been stopped for (\\d+\\.\\d) s \\(launch.hang_confirm_s 5.0 s\\)"));
        const auto decided = hang.match(r.err);
        QVERIFY2(decided.hasMatch(), qPrintable(r.err));
        QVERIFY2(decided.captured(1).toDouble() >= 5.0 && decided.captured(1).toDouble() < 6.5, qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("restart 1/1 after hang")), qPrintable(r.err));
        const QString runId = r.out.section(QLatin1Char('\n'), 0, 0).mid(4).trimmed();
        HistoryDatabase h;
        QCOMPARE(h.open(database, false), QString());
        const auto data = h.loadRun(h.findRun(runId)->id, false);
        QVERIFY(data);
        QCOMPARE(data->run.status, QStringLiteral("completed"));
        QCOMPARE(data->stalls.size(), 1);
        QCOMPARE(data->stalls.first().outcome, QStringLiteral("hang"));
        QCOMPARE(data->stalls.first().holders, QList<int>{2});
    }

    // The quick start (trimmed to 40 steps) with both cores kept busy by other processes for the
    // whole time, again and again (4 runs here, 20 in tests/bench/bench_straggler_false_alarms.sh; TRELLIS_BUSY_RUNS changes the count): no run is
    // killed. Stalls may be named — a starved rank holds the others up — but none is a hang.
    void busyMachineKillsNoRun()
    {
        const int runs = qEnvironmentVariableIntValue("TRELLIS_BUSY_RUNS") > 0 ? qEnvironmentVariableIntValue("TRELLIS_BUSY_RUNS") : 4;
        QFile source(QStringLiteral(TRELLIS_SOURCE_DIR "/resources/plans/quickstart.json"));
        QVERIFY(source.open(QIODevice::ReadOnly));
        QJsonObject quick = QJsonDocument::fromJson(source.readAll()).object();
        QJsonObject training = quick[QStringLiteral("training")].toObject();
        training[QStringLiteral("steps")] = 40;
        QJsonObject data = training[QStringLiteral("data")].toObject();
        data[QStringLiteral("path")] = QStringLiteral(TRELLIS_SOURCE_DIR "/resources/corpus/licenses.txt");
        training[QStringLiteral("data")] = data;
        quick[QStringLiteral("training")] = training;
        const QString plan = m_dir.filePath(QStringLiteral("busy.json"));
        QFile f(plan);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write(QJsonDocument(quick).toJson());
        f.close();
        std::vector<std::unique_ptr<QProcess>> load; // two busy loops, as many as this machine has cores (2 in CI)
        for (int i = 0; i < 2; ++i) {
            load.push_back(std::make_unique<QProcess>());
            load.back()->start(QStringLiteral("sh"), {QStringLiteral("-c"), QStringLiteral("while :; do :; done")});
            QVERIFY(load.back()->waitForStarted());
        }
        const auto stopLoad = qScopeGuard([&load] {
            for (auto &p : load) {
                p->kill();
                p->waitForFinished();
            }
        });
        const QString database = m_dir.filePath(QStringLiteral("busy.sqlite"));
        int stalls = 0;
        for (int i = 0; i < runs; ++i) {
            const Result r = cli({QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--quiet")});
            QVERIFY2(r.code == 0, qPrintable(QStringLiteral("run %1 of %2: %3").arg(i + 1).arg(runs).arg(trellis::test::failure(r))));
            stalls += static_cast<int>(r.err.count(QStringLiteral("stall: ")));
        }
        qInfo("%d runs under load completed; %d stalls named on the way", runs, stalls);
    }

    // The Prometheus endpoint of a running run: promtool accepts its exposition, and a real
    // Prometheus server (Debian's) scrapes it and answers a query about the run's step.
    void metricsEndpointIsScraped()
    {
        const QString plan = restartPlan(m_dir, QStringLiteral("metrics"), 100000, 0, QStringLiteral(R"("max_restarts": 0)"));
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
        const QString plan = restartPlan(m_dir, QStringLiteral("alerts"), 24, 0, restart);
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
        const QString plan = restartPlan(m_dir, QStringLiteral("slow"), 24, 0, QStringLiteral(R"("max_restarts": 0)"));
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

    // Restarts (launch.restart).

    // kill -9 of one of 4 ranks mid-run: mpirun's report names the rank and the signal, the run
    // resumes from its newest checkpoint by itself, and ends with the losses of every step and
    // the final checkpoint's shards bit for bit those of an uninterrupted run.
    void killedRankRestartsBitwise()
    {
        const int steps = 160;
        const QString straight = restartPlan(m_dir, QStringLiteral("straight"), steps, 10, QStringLiteral(R"("max_restarts": 0)"));
        const QString killed = restartPlan(m_dir, QStringLiteral("killed"), steps, 10,
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
            const QByteArray straightShard = fa.readAll(), killedShard = fb.readAll();
            // Rank 0 writes the model and its moments (dp without ZeRO: the others hold copies and
            // write their own state only); an empty or missing pair would compare equal.
            QVERIFY2(!straightShard.isEmpty() && (r > 0 || straightShard.size() > 100000),
                     qPrintable(shard + QStringLiteral(": %1 bytes").arg(straightShard.size())));
            QVERIFY2(straightShard == killedShard, qPrintable(shard));
        }
    }

    // A fault injected once fires once: the first attempt crashes at step 5, the restart resumes
    // past it and the run completes after exactly one restart. Bad syntax starts nothing.
    void injectedFaultFiresInTheFirstAttemptOnly()
    {
        const QString plan = restartPlan(m_dir, QStringLiteral("once"), 12, 2, QStringLiteral(R"("max_restarts": 2, "backoff_s": 0.1)"));
        const Result r = cli({QStringLiteral("--db"), db(), QStringLiteral("run"), plan, QStringLiteral("--inject"),
                              QStringLiteral("crash@1:5"), QStringLiteral("--quiet")});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.err.contains(QStringLiteral("restart 1/2 after crash in step 5")), qPrintable(r.err));
        QVERIFY2(!r.err.contains(QStringLiteral("restart 2/2")), qPrintable(r.err));
        HistoryDatabase h;
        QCOMPARE(h.open(db(), false), QString());
        const auto data = h.loadRun(h.findRun(r.out.section(QLatin1Char('\n'), 0, 0).mid(4).trimmed())->id);
        QVERIFY(data);
        QCOMPARE(data->run.status, QStringLiteral("completed"));
        // The record holds each attempt's exact command: the fault in the first, --resume in the second.
        QCOMPARE(data->run.launchCommands.size(), 2);
        QVERIFY2(data->run.launchCommands[0].contains(QStringLiteral(" --inject crash@1:5")) &&
                     !data->run.launchCommands[0].contains(QStringLiteral("--resume")),
                 qPrintable(data->run.launchCommands[0]));
        QVERIFY2(data->run.launchCommands[1].contains(QStringLiteral(" --resume")) &&
                     !data->run.launchCommands[1].contains(QStringLiteral("--inject")),
                 qPrintable(data->run.launchCommands[1]));
        const Result shown = cli({QStringLiteral("--db"), db(), QStringLiteral("runs"), data->run.runId});
        QCOMPARE(shown.code, 0);
        QVERIFY2(shown.out.contains(QStringLiteral("launch command (attempt 2): ") + data->run.launchCommands[1]), qPrintable(shown.out));
        int crashes = 0;
        for (const auto &e : data->events)
            crashes += e.kind == QStringLiteral("restart") && e.message.startsWith(QStringLiteral("restart "));
        QCOMPARE(crashes, 1);

        const int runsBefore = h.listRuns().size();
        for (const QString &bad : {QStringLiteral("crash@1:5/0"), QStringLiteral("crash@1:5/x"), QStringLiteral("boom@1:5"),
                                  QStringLiteral("crash@1:0"), QStringLiteral("crash@1;rm -rf /:5")}) {
            const Result refused = cli({QStringLiteral("--db"), db(), QStringLiteral("run"), plan, QStringLiteral("--inject"), bad,
                                        QStringLiteral("--quiet")});
            QVERIFY2(refused.code != 0 && refused.err.contains(QStringLiteral("--inject")), qPrintable(bad + QStringLiteral(": ") + refused.err));
        }
        QCOMPARE(h.listRuns().size(), runsBefore); // nothing was started or recorded
    }

    // The same failure every attempt (/*): after max_restarts the run fails with the whole story.
    void restartBudgetExhausted()
    {
        const QString plan = restartPlan(m_dir, QStringLiteral("doomed"), 20, 2, QStringLiteral(R"("max_restarts": 2, "backoff_s": 0.1)"));
        const Result r = cli({QStringLiteral("--db"), db(), QStringLiteral("run"), plan, QStringLiteral("--inject"),
                              QStringLiteral("crash@1:5/*"), QStringLiteral("--quiet")});
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
        const QString plan = restartPlan(m_dir, QStringLiteral("elastic"), 12, 2, QStringLiteral(R"("max_restarts": 1, "backoff_s": 0.1, "elastic": true)"),
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

};

QTEST_GUILESS_MAIN(TstSupervision)
#include "tst_supervision.moc"
