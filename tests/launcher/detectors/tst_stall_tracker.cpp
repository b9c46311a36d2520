// Tests for launcher/detectors/stall_tracker.h: a holder is named a stall at once and the run goes
// on; a hang is decided only when certain — a gone process after its grace, a stopped one (or a
// silent remote one) past the confirmation time, a holder that has not moved for the learned
// timeout (a multiple of the longest step, the floor before a first step) — and a stall that
// clears is a record with its start, end, holders and waiters.
#include "launcher/detectors/stall_tracker.h"

#include <QTest>

using namespace trellis::launcher;

namespace {

HangReport silentReport(std::vector<int> holders, std::vector<int> waiting)
{
    HangReport r;
    r.culprits = std::move(holders);
    r.waiting = std::move(waiting);
    r.silent = true;
    r.message = "rank 3 on vm stopped responding (no heartbeat for 1.6 s)";
    return r;
}

HangReport stuckReport(std::vector<int> holders, std::vector<int> waiting)
{
    HangReport r = silentReport(std::move(holders), std::move(waiting));
    r.silent = false;
    r.message = "rank 3 on vm (in forward of step 5) stopped making progress";
    return r;
}

HangRule rule()
{
    HangRule r;
    r.confirmMs = 30000;
    r.stepFactor = 5;
    r.floorMs = 60000;
    r.crashGraceMs = 3000;
    return r;
}

} // namespace

class TstStallTracker : public QObject {
    Q_OBJECT
private slots:
    // A pause of 2.5 s: named when the detector fires, cleared when it stops firing; no hang.
    void aPauseIsAStallThatClears()
    {
        StallTracker t(rule());
        auto report = silentReport({3}, {0, 1, 2});
        report.silentMs = 1600; // stopped at 0, named 1.6 s later
        auto u = t.observe(report, 1600, 31);
        QVERIFY(u.started);
        QVERIFY(!u.cleared);
        QCOMPARE(u.started->number, 1);
        QCOMPARE(u.started->holders, std::vector<int>{3});
        QCOMPARE(u.started->waiting, (std::vector<int>{0, 1, 2}));
        QCOMPARE(u.started->step, std::uint64_t(31));
        // Still stopped 2 s later: the same stall, no verdict.
        u = t.observe(report, 2400, 31);
        QVERIFY(!u.started && !u.cleared);
        QVERIFY(!t.decide(2400, {{3, HolderState{true, false, true}}}, {{3, 2400}}));
        // Continued: the detector is quiet, the stall is a record.
        u = t.observe(std::nullopt, 2600, 32);
        QVERIFY(u.cleared);
        QCOMPARE(u.cleared->startMs, std::int64_t(0)); // when it went silent, not when it was named
        QCOMPARE(u.cleared->namedMs, std::int64_t(1600));
        QCOMPARE(u.cleared->endMs, std::int64_t(2600));
        QCOMPARE(u.cleared->durationMs(), std::int64_t(2600));
        QVERIFY(!t.current());
        QCOMPARE(t.history().size(), std::size_t(1));
    }

    // Another holder is another stall: the first ends, the second begins, numbered in order; a
    // stall whose holders change while one of them still holds goes on.
    void anotherHolderIsAnotherStall()
    {
        StallTracker t(rule());
        t.observe(silentReport({3}, {0}), 1000, 5);
        auto u = t.observe(stuckReport({1}, {0}), 3000, 6);
        QVERIFY(u.cleared && u.started);
        QCOMPARE(u.cleared->holders, std::vector<int>{3});
        QCOMPARE(u.started->holders, std::vector<int>{1});
        QCOMPARE(u.started->number, 2);
        QVERIFY(!u.started->silent);
        // More ranks come to wait: the same stall, its waiters grow.
        u = t.observe(stuckReport({1}, {0, 2, 3}), 3500, 6);
        QVERIFY(!u.cleared && !u.started);
        QCOMPARE(t.current()->waiting, (std::vector<int>{0, 2, 3}));
        // Another rank holds them up as well (starved for a moment): a stall of both, with its own
        // timing, not named again; rank 0 moves again while rank 1 still holds: the same stall,
        // narrowed, not named again.
        u = t.observe(stuckReport({0, 1}, {2, 3}), 4000, 6);
        QVERIFY(u.cleared && !u.started && u.grew);
        QCOMPARE(t.current()->holders, (std::vector<int>{0, 1}));
        QCOMPARE(t.current()->number, 3);
        u = t.observe(stuckReport({1}, {0, 2, 3}), 4500, 6);
        QVERIFY(!u.cleared && !u.started);
        QCOMPARE(t.current()->holders, std::vector<int>{1});
        QCOMPARE(t.current()->number, 3);
        // Then another rank alone, none of the holders: another stall, named.
        u = t.observe(stuckReport({2}, {0, 1, 3}), 5000, 7);
        QVERIFY(u.cleared && u.started);
        QCOMPARE(u.started->number, 4);
    }

    // A stopped holder is a hang once it has stayed stopped for the confirmation time, counted
    // from when it was first seen stopped; continued in between, the count starts again.
    void aStoppedHolderIsAHangAfterTheConfirmationTime()
    {
        StallTracker t(rule());
        t.observe(silentReport({3}, {0, 1, 2}), 1000, 7);
        const std::map<int, HolderState> stopped{{3, HolderState{true, false, true}}};
        const std::map<int, HolderState> running{{3, HolderState{true, false, false}}};
        QVERIFY(!t.decide(1000, stopped, {}));
        QVERIFY(!t.decide(20000, stopped, {}));
        QVERIFY(!t.decide(20500, running, {})); // continued for a moment
        QVERIFY(!t.decide(21000, stopped, {}));
        QVERIFY(!t.decide(50999, stopped, {}));
        const auto v = t.decide(51000, stopped, {});
        QVERIFY(v);
        QCOMPARE(v->holder, 3);
        QVERIFY2(v->reason.find("stopped for 30.0 s") != std::string::npos, v->reason.c_str());
        QVERIFY2(v->reason.find("launch.hang_confirm_s") != std::string::npos, v->reason.c_str());
    }

    // A holder whose process is gone crashed: mpirun's report comes first; after its grace, a hang.
    void aGoneHolderIsAHangAfterTheCrashGrace()
    {
        StallTracker t(rule());
        t.observe(silentReport({2}, {0, 1}), 1000, 7);
        const std::map<int, HolderState> gone{{2, HolderState{true, true, false}}};
        QVERIFY(!t.decide(1000, gone, {}));
        QVERIFY(!t.decide(3999, gone, {}));
        const auto v = t.decide(4000, gone, {});
        QVERIFY(v);
        QVERIFY2(v->reason.find("process is gone (3.0 s without mpirun's report of how it ended)") != std::string::npos, v->reason.c_str());
        // A job a collector watches was not started by an mpirun of ours: the verdict says whose
        // report it waited for.
        StallTracker watched(rule());
        watched.setCrashReporter("the job's launcher");
        watched.observe(silentReport({2}, {0, 1}), 1000, 7);
        QVERIFY(!watched.decide(1000, gone, {}));
        const auto w = watched.decide(4000, gone, {});
        QVERIFY(w);
        QVERIFY2(w->reason.find("without the job's launcher's report") != std::string::npos && w->reason.find("mpirun") == std::string::npos,
                 w->reason.c_str());
    }

    // A holder named while busy (holding a collective, still sending heartbeats) whose process
    // then dies: certain after the crash grace, as for a holder named silent. Before the fix a
    // holder not silent when named skipped every rule once gone and was never decided.
    void aBusyHolderThatDiesIsAHangAfterTheCrashGrace()
    {
        StallTracker t(rule());
        t.observe(stuckReport({2}, {0, 1, 3}), 1000, 7);
        const std::map<int, HolderState> running{{2, HolderState{true, false, false}}};
        QVERIFY(!t.decide(2000, running, {{2, 2000}}));
        const std::map<int, HolderState> gone{{2, HolderState{true, true, false}}};
        QVERIFY(!t.decide(5000, gone, {{2, 5000}}));
        QVERIFY(!t.decide(7999, gone, {{2, 7999}}));
        const auto v = t.decide(8000, gone, {{2, 8000}});
        QVERIFY(v);
        QCOMPARE(v->holder, 2);
        QVERIFY2(v->reason.find("process is gone") != std::string::npos, v->reason.c_str());
    }

    // A remote holder named while busy that later goes silent: the stall becomes a silent one (the
    // record says so) and is a hang once the silence, counted from when it began, passes the
    // confirmation time — not from when the stall was named, and not never.
    void aBusyRemoteHolderThatGoesSilentIsAHangAfterTheConfirmationTime()
    {
        StallTracker t(rule());
        t.observe(stuckReport({3}, {0, 1, 2}), 1000, 4);
        const std::map<int, HolderState> remote{{3, HolderState{false, false, false}}};
        QVERIFY(!t.decide(20000, remote, {{3, 2000}})); // it still answers and moves now and then
        QVERIFY(!t.current()->silent);
        HangReport quiet = silentReport({3}, {0, 1, 2});
        quiet.silentMs = 1500;
        t.observe(quiet, 21500, 4); // silent since 20000
        QVERIFY(t.current()->silent);
        QVERIFY(!t.decide(49999, remote, {{3, 2000}}));
        const auto v = t.decide(50000, remote, {{3, 2000}});
        QVERIFY(v);
        QVERIFY(v->silent);
        QVERIFY2(v->reason.find("silent for 30.0 s") != std::string::npos, v->reason.c_str());
    }

    // A remote holder cannot be looked at: silent past the confirmation time, a hang; an 8 s
    // outage (a link down and up) stays a stall.
    void aSilentRemoteHolderIsAHangAfterTheConfirmationTime()
    {
        StallTracker t(rule());
        t.observe(silentReport({2, 3}, {0, 1}), 5000, 9);
        const std::map<int, HolderState> remote{{2, HolderState{false, false, false}}, {3, HolderState{false, false, false}}};
        QVERIFY(!t.decide(13000, remote, {{2, 13000}, {3, 13000}}));
        QVERIFY(t.observe(std::nullopt, 13500, 10).cleared); // the link is up again
        t.observe(silentReport({2, 3}, {0, 1}), 20000, 11);
        QVERIFY(!t.decide(49999, remote, {}));
        const auto v = t.decide(50000, remote, {});
        QVERIFY(v);
        QVERIFY(v->silent);
        QVERIFY2(v->reason.find("cannot be looked at") != std::string::npos, v->reason.c_str());
    }

    // A local holder running normally is never decided on silence: its telemetry's path or a busy
    // machine keeps it quiet. It is a hang only when it has not moved for the learned timeout.
    void aSilentLocalHolderRunningNormallyWaitsForTheLearnedTimeout()
    {
        StallTracker t(rule());
        t.observe(silentReport({1}, {0}), 1000, 3);
        const std::map<int, HolderState> normal{{1, HolderState{true, false, false}}};
        QVERIFY(!t.decide(40000, normal, {{1, 40000}})); // past the confirmation time: still a stall
        QVERIFY(!t.decide(60999, normal, {{1, 59999}}));
        QVERIFY(t.decide(61000, normal, {{1, 60000}})); // the floor (no step seen yet)
    }

    // The learned timeout: the factor times the longest step seen, never below the floor; a
    // holder that answers but does not move (an endless loop) is a hang after it, and one that
    // moves within it is only slow.
    void theLearnedTimeoutIsAMultipleOfTheLongestStep()
    {
        StallTracker t(rule());
        QCOMPARE(t.learnedTimeoutMs(), std::int64_t(60000)); // before a first step: the floor
        t.learnStep(800);
        QCOMPARE(t.learnedTimeoutMs(), std::int64_t(60000)); // 5 × 0.8 s is below the floor
        t.learnStep(20000);
        t.learnStep(15000); // a shorter step never lowers it
        QCOMPARE(t.longestStepMs(), std::int64_t(20000));
        QCOMPARE(t.learnedTimeoutMs(), std::int64_t(100000));
        t.observe(stuckReport({3}, {0, 1, 2}), 1000, 40);
        const std::map<int, HolderState> normal{{3, HolderState{true, false, false}}};
        QVERIFY(!t.decide(90000, normal, {{3, 99999}}));
        const auto v = t.decide(90000, normal, {{3, 100000}});
        QVERIFY(v);
        QVERIFY2(v->reason.find("5x the longest step, 20.0 s") != std::string::npos, v->reason.c_str());
    }

    // The run ended (a crash, a stop, the end) while a stall lasted: it ends with it.
    void closeEndsTheStallInProgress()
    {
        StallTracker t(rule());
        QVERIFY(!t.close(10));
        t.observe(silentReport({3}, {0}), 1000, 3);
        const auto s = t.close(4000);
        QVERIFY(s);
        QCOMPARE(s->durationMs(), std::int64_t(3000));
        QVERIFY(!t.current());
        QVERIFY(!t.decide(100000, {}, {}));
    }
};

QTEST_APPLESS_MAIN(TstStallTracker)
#include "tst_stall_tracker.moc"
