// Who owns a run, end to end with the real trainer, real signals and a real SQLite file: runs
// outlive their followers (attach) and the workbench that launched them, both killed with kill -9,
// with every telemetry message recorded; a supervisor killed with kill -9 is replaced by one that
// adopts its job and loses nothing; two supervisors never own the same run; a history database
// locked or deleted mid-run does not stop it.
#include "tests/support/cli_test_support.h"
#include "tests/support/history_checks.h"
#include "backend/protocol/relay.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>

#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

#include <signal.h>

using namespace trellis::launcher;
using namespace trellis::test;

// Each run's steps are sized to outlast the test's action mid-run with room to spare on a machine
// three times as fast as CI's (measured on CI's kind, 15 ms a step: the adopter takes the job 1.3 s
// after its supervisor's kill, the ranks start their relay again 4 s after its kill, the lock is
// held 6 s), and no more: a run's every step is CPU the suites beside it wait for.
class TstRunOwnership : public QObject {
    Q_OBJECT
    QTemporaryDir m_dir;

private slots:
    // run --detach: a process of its own session owns the run; a follower (attach) killed with
    // kill -9 mid-run changes nothing: the run completes, a new follower sees it end, every rank's
    // every step is in the history, and SQLite's integrity check passes.
    void detachedRunOutlivesItsFollowers()
    {
        const int steps = 120;
        const QString plan = restartPlan(m_dir, QStringLiteral("detached"), steps, 0, QStringLiteral(R"("max_restarts": 0)"));
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
        QVERIFY2(end.code == 0, qPrintable(failure(end)));
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
        QVERIFY(historyIsComplete(database, runId, steps));
    }

    // kill -9 of the workbench that launched a run: the run (its supervisor's) goes on to the end
    // and the history holds all of it: every rank's every step, every telemetry message in
    // sequence (no gap up to each rank's Goodbye), an intact SQLite file.
    void killedWorkbenchLeavesTheRunGoing()
    {
#if !defined(TRELLIS_HAVE_WORKBENCH)
        QSKIP("the workbench is not built here (-DTRELLIS_BUILD_GUI=OFF)");
#endif
        const int steps = 600;
        const QString plan = restartPlan(m_dir, QStringLiteral("workbench"), steps, 0, QStringLiteral(R"("max_restarts": 0)"));
        const QString database = m_dir.filePath(QStringLiteral("workbench.sqlite"));
        QProcess gui;
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
        gui.setProcessEnvironment(env);
        gui.start(QStringLiteral(TRELLIS_BINARY_DIR "/bin/trellis"), {QStringLiteral("--db"), database, QStringLiteral("--launch"), plan});
        QVERIFY(gui.waitForStarted());
        // Mid-run: some steps are in the history.
        QVERIFY(waitForSteps(database, 40, 120000));
        QVERIFY2(stepRows(database) < 4 * steps, "the run ended before the workbench was killed: give it more steps");
        const qint64 guiPid = gui.processId();
        ::kill(static_cast<pid_t>(guiPid), SIGKILL);
        // A killed process is gone once the kernel has torn down all of its threads; on a loaded
        // two-core CI machine with the workbench's threads mid-write that once took over 10 s.
        // Wait a minute, and say what state it was in if it still has not gone.
        if (!gui.waitForFinished(60000)) {
            QFile stat(QStringLiteral("/proc/%1/stat").arg(guiPid));
            QFile wchan(QStringLiteral("/proc/%1/wchan").arg(guiPid));
            const bool readStat = stat.open(QIODevice::ReadOnly);
            const bool readWchan = wchan.open(QIODevice::ReadOnly);
            QFAIL(qPrintable(QStringLiteral("the workbench (pid %1) was still there a minute after kill -9: stat %2, wchan %3")
                                 .arg(guiPid)
                                 .arg(readStat ? QString::fromLatin1(stat.readAll().trimmed()) : QStringLiteral("unreadable"),
                                      readWchan ? QString::fromLatin1(wchan.readAll()) : QStringLiteral("unreadable"))));
        }
        const Result end = cli({QStringLiteral("--db"), database, QStringLiteral("attach"), QStringLiteral("last")}, 240000);
        QVERIFY2(end.code == 0, qPrintable(failure(end)));
        const QString runId = end.out.section(QLatin1Char('\n'), 0, 0).section(QLatin1Char(' '), 1, 1);
        QVERIFY2(end.out.contains(QStringLiteral("run %1 completed").arg(runId)), qPrintable(end.out));
        QVERIFY(historyIsComplete(database, runId, steps));
    }

    // kill -9 of a run's supervisor: the job goes on under its keeper, `ps` names it as a job
    // without a supervisor, and `adopt` takes it over — the run is then the adopter's, so another
    // command's open of the history leaves it running; the ranks resend what the dead supervisor
    // never committed, so the history ends complete: every step, every telemetry message in
    // sequence, nothing dropped.
    void killedSupervisorIsAdopted()
    {
        // Sized by time (rank 0 200 ms slower a step from step 40): the job outlasts the kill, ps
        // and the adoption with 150 steps of compute rather than 1,000.
        const int steps = 150;
        const QString plan = restartPlan(m_dir, QStringLiteral("adopted"), steps, 0, QStringLiteral(R"("max_restarts": 0)"));
        const QString database = m_dir.filePath(QStringLiteral("adopted.sqlite"));
        const Result started = cli({QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--detach"),
                                    QStringLiteral("--inject"), QStringLiteral("slow@0:40")},
                                   60000);
        QVERIFY2(started.code == 0, qPrintable(started.out + started.err));
        const QString runId = started.out.section(QLatin1Char('\n'), 0, 0).mid(4).trimmed();
        static const QRegularExpression pidOf(QStringLiteral("owner pid (\\d+)"));
        const auto owner = pidOf.match(started.out);
        QVERIFY2(owner.hasMatch(), qPrintable(started.out));
        QVERIFY(waitForSteps(database, 40, 120000));
        QVERIFY(::kill(static_cast<pid_t>(owner.captured(1).toLongLong()), SIGKILL) == 0);
        QTest::qWait(1000); // the ranks train on, keeping their telemetry
        const Result ps = cli({QStringLiteral("ps")});
        QVERIFY2(ps.out.contains(QStringLiteral("run %1 has no supervisor").arg(runId)), qPrintable(ps.out));
        QProcess adopter;
        adopter.setProcessChannelMode(QProcess::MergedChannels);
        adopter.start(kCli, {QStringLiteral("adopt"), runId, QStringLiteral("--quiet")});
        QVERIFY(adopter.waitForStarted());
        // Adopted, the run is its new supervisor's: another command's open of the history (which
        // closes runs whose launcher is gone) leaves it running.
        const auto status = [&] {
            HistoryDatabase h;
            return h.open(database, false).isEmpty() && h.findRun(runId) ? h.findRun(runId)->status : QString();
        };
        const auto adoptedEvent = [&] {
            HistoryDatabase h;
            const auto run = h.open(database, false).isEmpty() ? h.findRun(runId) : std::nullopt;
            const auto data = run ? h.loadRun(run->id, false) : std::nullopt;
            return data && std::any_of(data->events.begin(), data->events.end(),
                                       [](const EventRow &e) { return e.kind == QLatin1String("adopted"); });
        };
        QTRY_VERIFY_WITH_TIMEOUT(adoptedEvent(), 30000);
        const Result listed = cli({QStringLiteral("--db"), database, QStringLiteral("runs")});
        QVERIFY2(listed.code == 0, qPrintable(failure(listed)));
        if (adopter.state() == QProcess::Running)
            QCOMPARE(status(), QStringLiteral("running"));
        QVERIFY(adopter.waitForFinished(240000));
        QVERIFY2(adopter.exitCode() == 0, adopter.readAll().right(2000).constData());
        QVERIFY(historyIsComplete(database, runId, steps));
        HistoryDatabase h;
        QCOMPARE(h.open(database, false), QString());
        const auto data = h.loadRun(h.findRun(runId)->id);
        QVERIFY(std::any_of(data->events.begin(), data->events.end(),
                            [](const EventRow &e) { return e.kind == QLatin1String("adopted"); }));
        QCOMPARE(toString(h.findRun(runId)->kind), QStringLiteral("adopted")); // launched, then adopted
        QVERIFY2(listed.out.contains(QRegularExpression(QRegularExpression::escape(runId) + QStringLiteral(" +adopted +\\S+ +adopted "))), qPrintable(listed.out));
    }

    // A plan with telemetry.relay on: the ranks' telemetry goes through their node's relay (one
    // connection to the supervisor). The relay killed with kill -9 mid-run is started again by the
    // ranks, which send again what it never delivered: the run completes with every step of every
    // rank and every telemetry message in sequence, and the new relay ends once every rank's
    // Goodbye is acknowledged.
    void killedRelayIsStartedAgain()
    {
        // Long enough in time, not in work (as lockedDatabaseKeepsTheRunGoing): from step 40 on,
        // rank 0 takes 200 ms more a step, so the run outlasts the relay's kill and restart.
        const int steps = 120;
        const QString plan = restartPlan(m_dir, QStringLiteral("relayed"), steps, 0, QStringLiteral(R"("max_restarts": 0)"));
        {
            QFile f(plan);
            QVERIFY(f.open(QIODevice::ReadOnly));
            QJsonObject root = QJsonDocument::fromJson(f.readAll()).object();
            f.close();
            root[QStringLiteral("telemetry")] = QJsonObject{{QStringLiteral("relay"), QStringLiteral("on")}};
            QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
            f.write(QJsonDocument(root).toJson());
        }
        const QString database = m_dir.filePath(QStringLiteral("relayed.sqlite"));
        const Result started = cli({QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--detach"),
                                    QStringLiteral("--inject"), QStringLiteral("slow@0:40")},
                                   60000);
        QVERIFY2(started.code == 0, qPrintable(started.out + started.err));
        const QString runId = started.out.section(QLatin1Char('\n'), 0, 0).mid(4).trimmed();
        std::string error;
        const QString folder = QString::fromStdString(trellis::proto::relayFolder(runId.toStdString(), "node0", error));
        QVERIFY2(!folder.isEmpty(), error.c_str());
        QVERIFY(waitForSteps(database, 40, 120000));
        const QString log = folder + QStringLiteral("/relay.log");
        QVERIFY2(readAll(log).contains(QStringLiteral("relay: run %1, ranks 0,1,2,3").arg(runId)), qPrintable(readAll(log)));
        const qint64 pid = readAll(folder + QStringLiteral("/relay.pid")).trimmed().toLongLong();
        QVERIFY(pid > 0);
        QVERIFY(::kill(static_cast<pid_t>(pid), SIGKILL) == 0);
        const Result end = cli({QStringLiteral("--db"), database, QStringLiteral("attach"), runId}, 240000);
        QVERIFY2(end.code == 0, qPrintable(failure(end)));
        QVERIFY(historyIsComplete(database, runId, steps));
        // Started twice (by rank 0, then again by a rank that found it gone), ended by the Goodbyes.
        QTRY_VERIFY_WITH_TIMEOUT(readAll(log).contains(QStringLiteral("relay: ended (every rank said goodbye)")), 10000);
        QCOMPARE(readAll(log).count(QStringLiteral("relay: run %1,").arg(runId)), 2);
        QVERIFY(!trellis::proto::relayRunning(folder.toStdString()));
    }

    // Two supervisors never own the same run: a second `run --run-id X` while X goes is refused
    // naming the owner; `stop X` ends X cleanly (stopped, not failed).
    void oneSupervisorPerRun()
    {
        const QString plan = restartPlan(m_dir, QStringLiteral("owned"), 100000, 0, QStringLiteral(R"("max_restarts": 0)"));
        const QString database = m_dir.filePath(QStringLiteral("owned.sqlite"));
        const QString runId = QStringLiteral("owned-%1").arg(QCoreApplication::applicationPid());
        QProcess first;
        first.start(kCli, {QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--quiet"),
                           QStringLiteral("--run-id"), runId});
        QVERIFY(first.waitForStarted());
        auto cleanup = qScopeGuard([&first] {
            if (first.state() != QProcess::NotRunning) {
                first.kill();
                first.waitForFinished();
            }
        });
        QVERIFY(waitForSteps(database, 4, 120000));
        QVERIFY(cli({QStringLiteral("ps")}).out.contains(runId));
        const Result second = cli({QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--quiet"),
                                   QStringLiteral("--run-id"), runId});
        QCOMPARE(second.code, 1);
        QVERIFY2(second.err.contains(QStringLiteral("run %1 is already owned by its supervisor (pid %2)").arg(runId).arg(first.processId())),
                 qPrintable(second.err));
        const Result stop = cli({QStringLiteral("stop"), runId});
        QVERIFY2(stop.code == 0, qPrintable(stop.err));
        QVERIFY(first.waitForFinished(60000));
        QCOMPARE(first.exitCode(), 1);
        HistoryDatabase h;
        QCOMPARE(h.open(database, false), QString());
        QCOMPARE(h.findRun(runId)->status, QStringLiteral("stopped"));
        QVERIFY(!cli({QStringLiteral("ps")}).out.contains(runId));
        QCOMPARE(cli({QStringLiteral("stop"), runId}).code, 1);
    }

    // Another process holds the history database's write lock for 6 s mid-run: the run goes on,
    // the rows wait (the ranks keep their unacknowledged telemetry), and once the lock is gone
    // everything lands; both moments are recorded as events.
    void lockedDatabaseKeepsTheRunGoing()
    {
        // Long enough in time, not in work: from step 45 on, rank 0 takes 200 ms more a step (the
        // others wait for it), so the run outlasts the lock below whatever the machine's load —
        // over 20 s from step 45 to its end — without 2,000 steps of compute.
        const int steps = 150;
        const QString plan = restartPlan(m_dir, QStringLiteral("locked"), steps, 0, QStringLiteral(R"("max_restarts": 0)"));
        const QString database = m_dir.filePath(QStringLiteral("locked.sqlite"));
        QProcess run;
        run.start(kCli, {QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--quiet"), QStringLiteral("--inject"),
                         QStringLiteral("slow@0:45")});
        QVERIFY(run.waitForStarted());
        QVERIFY(waitForSteps(database, 40, 120000));
        QByteArray err;
        {
            QSqlDatabase locker = QSqlDatabase::addDatabase(QStringLiteral("QSQLITE"), QStringLiteral("locker"));
            locker.setDatabaseName(database);
            QVERIFY(locker.open());
            QSqlQuery q(locker);
            QVERIFY(q.exec(QStringLiteral("BEGIN IMMEDIATE")));
            const qint64 during = stepRows(database);
            QTest::qWait(6000);
            // Held until the supervisor has met the lock (it says so on stderr, --quiet or not):
            // a run starved of CPU by the suites beside it may send nothing for a while, and a lock
            // no write ever met tests nothing (CI, once: no event at all).
            QTRY_VERIFY_WITH_TIMEOUT((err += run.readAllStandardError()).contains("locked by another process"), 120000);
            QVERIFY(run.state() == QProcess::Running); // the run did not wait for the database
            QCOMPARE(stepRows(database), during);       // and nothing was written meanwhile
            QVERIFY(q.exec(QStringLiteral("COMMIT")));
        }
        QSqlDatabase::removeDatabase(QStringLiteral("locker"));
        QVERIFY(run.waitForFinished(240000));
        err += run.readAllStandardError();
        QVERIFY2(run.exitCode() == 0, err.constData());
        HistoryDatabase h;
        QCOMPARE(h.open(database, false), QString());
        const auto data = h.loadRun(h.findRun(QStringLiteral("last"))->id);
        QStringList history;
        for (const auto &e : data->events)
            if (e.kind == QLatin1String("history"))
                history << e.message;
        QVERIFY2(history.size() == 2 && history[0].contains(QStringLiteral("locked by another process")) &&
                     history[1].contains(QStringLiteral("writable again")),
                 qPrintable(history.join(QLatin1Char('\n'))));
        QVERIFY(historyIsComplete(database, data->run.runId, steps));
    }

    // The history database is deleted mid-run: the supervisor notices, writes a new one at the same
    // path and the run completes there, the removal recorded as an event.
    void removedDatabaseIsRecreated()
    {
        // Sized by time (rank 0 200 ms slower a step from step 40), not by 600 steps of compute.
        const int steps = 120;
        const QString plan = restartPlan(m_dir, QStringLiteral("removed"), steps, 0, QStringLiteral(R"("max_restarts": 0)"));
        const QString database = m_dir.filePath(QStringLiteral("removed.sqlite"));
        QProcess run;
        run.start(kCli, {QStringLiteral("--db"), database, QStringLiteral("run"), plan, QStringLiteral("--quiet"), QStringLiteral("--inject"),
                         QStringLiteral("slow@0:40")});
        QVERIFY(run.waitForStarted());
        QVERIFY(waitForSteps(database, 40, 120000));
        QVERIFY2(stepRows(database) < 4 * steps, "the run ended before its database was removed: give it more steps");
        for (const char *suffix : {"", "-wal", "-shm"})
            QFile::remove(database + QLatin1String(suffix));
        QVERIFY(run.waitForFinished(240000));
        QVERIFY2(run.exitCode() == 0, run.readAllStandardError().constData());
        HistoryDatabase h;
        QCOMPARE(h.open(database, false), QString());
        const auto summary = h.findRun(QStringLiteral("last"));
        QVERIFY(summary);
        QCOMPARE(summary->status, QStringLiteral("completed"));
        const auto data = h.loadRun(summary->id);
        QVERIFY(std::any_of(data->events.begin(), data->events.end(), [](const EventRow &e) {
            return e.kind == QLatin1String("history") && e.message.contains(QStringLiteral("was removed or replaced"));
        }));
        QCOMPARE(data->run.stepsDone, qint64(steps));
    }
};

QTEST_GUILESS_MAIN(TstRunOwnership)
#include "tst_run_ownership.moc"
