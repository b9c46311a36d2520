// RunFeed's reading of the history (run_feed.h): the backfill when it attaches, the catch-up with
// what the supervisor published before the subscription took hold, and the refills of steps the
// live feed skipped, each a window of steps at a time. Threading: the feed thread only.
#include "launcher/feed/run_feed.h"
#include "launcher/feed/run_feed_state.h"

#include "launcher/document/calibration_file.h"
#include "launcher/history/history_database.h"

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace trellis::launcher {
namespace {

// Each rank's first step among the live messages waiting.
std::map<int, qint64> firstLiveSteps(const ArenaBatch<proto::FeedMessage> &pending)
{
    std::map<int, qint64> first;
    const auto note = [&first](const proto::Envelope &e) {
        if (e.has_step())
            first.emplace(static_cast<int>(e.rank()), static_cast<qint64>(e.step().step()));
    };
    for (const proto::FeedMessage &m : pending) {
        if (m.has_telemetry())
            note(m.telemetry());
        for (const proto::Envelope &e : m.telemetry_batch().envelopes())
            note(e);
    }
    return first;
}

// Whether a rank's first waiting live step leaves a gap after the newest step shown for it.
bool gapBeforeLive(const ArenaBatch<proto::FeedMessage> &pending, const std::map<int, qint64> &maxStep)
{
    for (const auto &[rank, step] : firstLiveSteps(pending)) {
        const auto shown = maxStep.find(rank);
        if (step > (shown == maxStep.end() ? 0 : shown->second) + 1)
            return true;
    }
    return false;
}

} // namespace

// Backfill from the history; `final`: the history's word is the last (the run has ended,
// failed if the history does not say how). True when the run has ended.
bool RunFeed::backfillFromHistory(FeedState &st, bool final)
{
    HistoryDatabase db;
    if (!db.open(st.database, false).isEmpty())
        return false;
    const auto summary = db.findRun(st.runId);
    if (!summary)
        return false;
    const auto data = db.loadRun(summary->id, false); // the steps follow a window at a time
    if (!data)
        return false;
    st.builder.setWorldSize(data->run.worldSize);
    if (!st.predicted) {
        st.builder.setPrediction(telemetry::predictionFor(data->planJson, defaultCalibrationPath(st.database)));
        st.predicted = true;
    }
    for (const RankRow &r : data->ranks)
        st.builder.setRank(r);
    db.forEachCollectiveChunk(summary->id, [&](const QList<CollectiveRow> &rows) {
        for (const CollectiveRow &c : rows)
            st.builder.addCollective(c);
    });
    for (const EventRow &e : data->events)
        st.builder.addEvent(e);
    for (const StallRow &s : data->stalls)
        st.builder.addStall(s);
    db.forEachStepChunk(summary->id, 0, [&](const QList<StepRow> &rows) {
        for (const StepRow &row : rows)
            addStepRow(st, row);
    });
    {
        std::lock_guard lock(m_mutex);
        m_worldSize = data->run.worldSize;
        m_progress.totalSteps = data->run.totalSteps;
    }
    updateProgress(st);
    if (!final)
        for (const EventRow &e : data->events)
            post(EventNote{e});
    const RunState s = runStateFromString(data->run.status);
    if (final || isFinal(s)) {
        postNewSteps(st);
        const RunState end = isFinal(s) ? s : RunState::Failed;
        const QString why = isFinal(s) ? data->run.error
                                       : QStringLiteral("its supervisor ended without saying how the run ended");
        {
            std::lock_guard lock(m_mutex);
            m_message = why;
        }
        setState(end);
        publishSnapshot(st, true);
        post(FinishedNote{end, data->run.exitCode, why});
        return true;
    }
    setState(s == RunState::Idle ? RunState::Launching : s);
    return false;
}

// The history may not hold yet what the supervisor published before this subscription took
// hold (its writer is late on a busy machine): while a rank's first live step leaves a gap
// after what the history gave, read the history's steps again (live messages keep queueing).
void RunFeed::catchUpWithHistory(FeedState &st)
{
    for (int tries = 0; tries < 40 && gapBeforeLive(st.pending, st.maxStep) && !m_stop; ++tries) {
        receiveFeed(st.socket.get(), 250, st.pending);
        HistoryDatabase db;
        if (!db.open(st.database, false).isEmpty())
            continue;
        // Only the steps after the oldest rank's newest shown: the rest is in already.
        qint64 from = 0;
        if (!st.maxStep.empty() && static_cast<int>(st.maxStep.size()) >= worldSize()) {
            from = std::numeric_limits<qint64>::max();
            for (const auto &[rank, step] : st.maxStep)
                from = std::min(from, step + 1);
        }
        if (const auto summary = db.findRun(st.runId))
            db.forEachStepChunk(summary->id, from, [&](const QList<StepRow> &rows) {
                for (const StepRow &row : rows)
                    addStepRow(st, row);
            });
    }
    updateProgress(st);
    postNewSteps(st);
}

// The history, opened once for the refills; null where it cannot be read or lacks the run.
HistoryDatabase *RunFeed::refillHistory(FeedState &st)
{
    if (!st.refillDb) {
        st.refillDb = std::make_unique<HistoryDatabase>();
        if (!st.refillDb->open(st.database, false).isEmpty()) {
            st.refillDb.reset();
            return nullptr;
        }
    }
    if (st.refillRunId < 0)
        if (const auto summary = st.refillDb->findRun(st.runId))
            st.refillRunId = summary->id;
    return st.refillRunId < 0 ? nullptr : st.refillDb.get();
}

// Reads the steps the live feed skipped from the history (at most once a second unless `force`).
void RunFeed::refillMissing(FeedState &st, bool force)
{
    if (st.missing.empty() || (!force && st.sinceRefill.isValid() && st.sinceRefill.elapsed() < 1000))
        return;
    st.sinceRefill.restart();
    if (!refillHistory(st))
        return;
    bool progress = false;
    for (auto it = st.missing.begin(); it != st.missing.end();) {
        auto &steps = it->second;
        for (const StepRow &row : st.refillDb->stepsBetween(st.refillRunId, it->first, *steps.begin(), *steps.rbegin()))
            if (steps.erase(row.step)) {
                --st.missingCount;
                progress = true;
                if (keeps(row.rank))
                    m_series.append(row);
                st.builder.addStep(row);
            }
        it = steps.empty() ? st.missing.erase(it) : std::next(it);
    }
    if (progress) {
        st.snapshotDirty = true;
        st.missingProgress.restart();
    }
    // What the history does not have after 30 s without progress, it will not get.
    if (st.missing.empty() || st.missingProgress.elapsed() > 30000) {
        st.missing.clear();
        st.missingCount = 0;
        st.missingProgress.invalidate();
    }
}

// At the run's end, after the live feed lost messages: the newest steps of a rank that no later
// step revealed as missing (up to `lastStep`), read from the history, where they all are by then.
void RunFeed::refillTails(FeedState &st, qint64 lastStep)
{
    if (m_gaps.load() == 0)
        return; // every message the supervisor published arrived
    for (const auto &[rank, step] : st.maxStep)
        lastStep = std::max(lastStep, step);
    HistoryDatabase *db = refillHistory(st);
    if (!db)
        return;
    // One pass from the oldest step some rank lacks (a rank not seen at all: from the start).
    qint64 from = std::numeric_limits<qint64>::max();
    for (int rank = 0, world = worldSize(); rank < world; ++rank) {
        const auto shown = st.maxStep.find(rank);
        from = std::min(from, shown == st.maxStep.end() ? 0 : shown->second + 1);
    }
    if (from > lastStep)
        return;
    db->forEachStepChunk(st.refillRunId, from, [&](const QList<StepRow> &rows) {
        for (const StepRow &row : rows)
            if (row.step <= lastStep)
                addStepRow(st, row); // what a rank showed already is skipped there
    });
}

} // namespace trellis::launcher
