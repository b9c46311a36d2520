// See run_feed.h.
#include "launcher/feed/run_feed.h"

#include "launcher/ingest/arena_batch.h"
#include "launcher/document/calibration_file.h"
#include "launcher/history/history_database.h"
#include "launcher/feed/feed_publisher.h"
#include "launcher/registry/run_registry.h"
#include "launcher/thread_priority.h"
#include "launcher/ingest/telemetry_rows.h"
#include "backend/protocol/feed.pb.h"

#include <QElapsedTimer>
#include <QMetaObject>

#include <zmq.hpp>

#include <pthread.h>

#include <algorithm>
#include <limits>
#include <map>
#include <set>

namespace trellis::launcher {
namespace {

constexpr int kFeedNice = 10; // the feed thread's nice above the GUI thread's

bool isFinal(RunState s) { return s == RunState::Completed || s == RunState::Failed || s == RunState::Stopped; }

// A SUB socket on the supervisor's live feed; null without an endpoint or where it cannot be made.
std::unique_ptr<zmq::socket_t> subscribeTo(zmq::context_t &context, const std::string &endpoint)
{
    if (endpoint.empty())
        return nullptr;
    try {
        auto socket = std::make_unique<zmq::socket_t>(context, zmq::socket_type::sub);
        socket->set(zmq::sockopt::rcvhwm, FeedPublisher::kQueuedFrames); // frames of up to 64 KiB
        socket->set(zmq::sockopt::linger, 0);
        socket->set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(8 * 1024 * 1024));
        socket->set(zmq::sockopt::subscribe, "");
        socket->connect(endpoint);
        return socket;
    } catch (const zmq::error_t &) {
        return nullptr;
    }
}

// Waits up to `timeoutMs` for feed messages and appends what came (up to 4 MiB, the ones that
// parse) to `into`; without a socket it only waits.
void receiveFeed(zmq::socket_t *socket, int timeoutMs, ArenaBatch<proto::FeedMessage> &into)
{
    if (!socket) {
        std::this_thread::sleep_for(std::chrono::milliseconds(timeoutMs));
        return;
    }
    zmq::pollitem_t items[] = {{socket->handle(), 0, ZMQ_POLLIN, 0}};
    try {
        zmq::poll(items, 1, std::chrono::milliseconds(timeoutMs));
    } catch (const zmq::error_t &) {
        return;
    }
    for (std::size_t bytes = 0; (items[0].revents & ZMQ_POLLIN) && bytes < 4 * 1024 * 1024;) {
        zmq::message_t message;
        zmq::recv_result_t got;
        try {
            got = socket->recv(message, zmq::recv_flags::dontwait);
        } catch (const zmq::error_t &) {
            break;
        }
        if (!got)
            break;
        bytes += message.size();
        proto::FeedMessage *m = into.add();
        if (!m->ParseFromArray(message.data(), static_cast<int>(message.size())))
            into.removeLast();
    }
}

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

RunFeed::RunFeed(QObject *parent) : QObject(parent)
{
    qRegisterMetaType<EventRow>();
    qRegisterMetaType<RunState>();
}

RunFeed::~RunFeed() { detach(); }

std::shared_ptr<const telemetry::DashboardSnapshot> RunFeed::snapshot() const
{
    std::lock_guard lock(m_mutex);
    return m_snapshot;
}

RunProgress RunFeed::progress() const
{
    std::lock_guard lock(m_mutex);
    return m_progress;
}

RunState RunFeed::state() const
{
    std::lock_guard lock(m_mutex);
    return m_state;
}

int RunFeed::worldSize() const
{
    std::lock_guard lock(m_mutex);
    return m_worldSize;
}

int RunFeed::attempt() const
{
    std::lock_guard lock(m_mutex);
    return m_attempt;
}

QString RunFeed::message() const
{
    std::lock_guard lock(m_mutex);
    return m_message;
}

QString RunFeed::queue() const
{
    std::lock_guard lock(m_mutex);
    return m_queue;
}

void RunFeed::attach(const QString &runId, const QString &endpoint, const QString &database)
{
    detach();
    m_runId = runId;
    m_series.clear();
    {
        std::lock_guard lock(m_mutex);
        m_snapshot.reset();
    }
    m_gaps = 0;
    {
        std::lock_guard lock(m_mutex);
        m_notes.clear();
        m_progress = {};
        m_state = RunState::Launching;
        m_worldSize = 0;
        m_attempt = 0;
        m_message.clear();
    }
    m_stop = false;
    m_thread = std::thread([this, runId, e = endpoint.toStdString(), database] {
        pthread_setname_np(pthread_self(), "trellis-feed");
        // Its work grows with the message rate; the GUI thread's frames come first.
        lowerThisThreadPriority(kFeedNice);
        run(runId, e, database);
    });
}

void RunFeed::detach()
{
    m_stop = true;
    if (m_thread.joinable())
        m_thread.join();
    std::lock_guard lock(m_mutex);
    m_notes.clear();
}

void RunFeed::post(Note note)
{
    {
        std::lock_guard lock(m_mutex);
        m_notes.push_back(std::move(note));
    }
    if (!m_deliverPending.exchange(true))
        QMetaObject::invokeMethod(this, &RunFeed::deliver, Qt::QueuedConnection);
}

void RunFeed::deliver()
{
    m_deliverPending = false;
    std::deque<Note> notes;
    {
        std::lock_guard lock(m_mutex);
        notes.swap(m_notes);
    }
    // Bounded work per delivery: output beyond the last 500 lines of a batch is only counted.
    const auto outputs = std::count_if(notes.begin(), notes.end(), [](const Note &n) { return std::holds_alternative<OutputNote>(n); });
    qsizetype skipOutput = std::max<qsizetype>(0, outputs - 500);
    if (skipOutput > 0)
        emit outputLine(-1, false, tr("(%1 lines of output not shown; the run's logs hold them)").arg(skipOutput));
    int steps = 0;
    for (Note &n : notes) {
        std::visit(
            [&](auto &v) {
                using T = std::decay_t<decltype(v)>;
                if constexpr (std::is_same_v<T, StateNote>)
                    emit stateChanged(v.state);
                else if constexpr (std::is_same_v<T, StepsNote>)
                    steps += v.count;
                else if constexpr (std::is_same_v<T, OutputNote>) {
                    if (skipOutput > 0)
                        --skipOutput;
                    else
                        emit outputLine(v.rank, v.isStderr, v.text);
                } else if constexpr (std::is_same_v<T, AlertNote>)
                    emit alert(v.kind, v.message);
                else if constexpr (std::is_same_v<T, EventNote>)
                    emit event(v.row);
                else if constexpr (std::is_same_v<T, RestartNote>)
                    emit restarting(v.attempt, v.message);
                else if constexpr (std::is_same_v<T, SnapshotNote>)
                    emit snapshotReady();
                else if constexpr (std::is_same_v<T, FinishedNote>) {
                    if (steps > 0) {
                        emit stepsArrived(steps);
                        steps = 0;
                    }
                    emit finished(v.state, v.exitCode, v.message);
                }
            },
            n);
    }
    if (steps > 0)
        emit stepsArrived(steps);
}

// run()'s state, kept on the feed thread and shared by its steps.
struct RunFeed::FeedState {
    FeedState(QString id, QString db) : runId(std::move(id)), database(std::move(db)) {}

    QString runId;
    QString database;
    zmq::context_t context{1};
    std::unique_ptr<zmq::socket_t> socket; // null: history only
    ArenaBatch<proto::FeedMessage> pending;

    telemetry::SnapshotBuilder builder{64}; // sized for the real world once it is known
    quint64 feedGapsSeen = 0;
    QElapsedTimer sinceSnapshot;
    quint64 snapshotVersion = ~0ull;
    int snapshotHeat = -1;
    bool snapshotDirty = true;

    bool predicted = false;        // the prediction is made once, from the plan the history holds
    std::map<int, qint64> maxStep; // per rank, the newest step shown
    std::map<int, StepRow> latest;
    int newSteps = 0;
    // Steps the live feed skipped (its publisher's queue overflowed for this subscriber): noted
    // per rank when a later step arrives, then read from the history (committed by then).
    bool live = false;
    std::map<int, std::set<qint64>> missing;
    std::size_t missingCount = 0;
    QElapsedTimer sinceRefill, missingProgress;
    std::unique_ptr<HistoryDatabase> refillDb;
    qint64 refillRunId = -1;

    quint64 lastSeq = 0;
    bool haveSeq = false;
};

void RunFeed::run(QString runId, std::string endpoint, QString database)
{
    FeedState st(std::move(runId), std::move(database));
    st.socket = subscribeTo(st.context, endpoint);

    // Subscribed first; the history is read once everything the supervisor sent before the
    // subscription took hold has had time to be committed (its writer flushes every 200 ms).
    QElapsedTimer waited;
    waited.start();
    while (st.socket && waited.elapsed() < 500 && !m_stop)
        receiveFeed(st.socket.get(), 50, st.pending);

    if (backfillFromHistory(st, !st.socket))
        return;
    if (!st.socket) {
        setState(RunState::Failed);
        post(FinishedNote{RunState::Failed, -1, QStringLiteral("run %1 is not in %2").arg(st.runId, st.database)});
        return;
    }
    catchUpWithHistory(st);
    followFeed(st);
}

// At most 4 snapshots a second, and only when something changed (or `force`).
void RunFeed::publishSnapshot(FeedState &st, bool force)
{
    if (!force && st.sinceSnapshot.isValid() && st.sinceSnapshot.elapsed() < 250)
        return;
    const int heat = m_heatMetric.load();
    if (!force && !st.snapshotDirty && st.builder.store().version() == st.snapshotVersion && heat == st.snapshotHeat)
        return;
    {
        std::lock_guard lock(m_mutex);
        st.builder.setProgress(m_progress.step, m_progress.totalSteps, m_worldSize);
    }
    auto snapshot = st.builder.build(static_cast<telemetry::Metric>(heat));
    st.snapshotVersion = st.builder.store().version();
    st.snapshotHeat = heat;
    st.snapshotDirty = false;
    st.sinceSnapshot.restart();
    {
        std::lock_guard lock(m_mutex);
        m_snapshot = std::move(snapshot);
    }
    post(SnapshotNote{});
}

void RunFeed::addStepRow(FeedState &st, const StepRow &row)
{
    auto it = st.maxStep.find(row.rank);
    if (it != st.maxStep.end() && row.step <= it->second)
        return; // backfilled already (or repeated after a restart)
    if (st.live && it != st.maxStep.end() && row.step > it->second + 1 && st.missingCount < 200000) {
        for (qint64 step = it->second + 1; step < row.step; ++step)
            st.missingCount += st.missing[row.rank].insert(step).second ? 1 : 0;
        if (!st.missingProgress.isValid())
            st.missingProgress.start();
    }
    st.maxStep[row.rank] = row.step;
    if (keeps(row.rank))
        m_series.append(row);
    st.builder.addStep(row);
    st.latest[row.rank] = row;
    ++st.newSteps;
}

void RunFeed::updateProgress(const FeedState &st)
{
    if (st.latest.empty())
        return;
    qint64 minStep = std::numeric_limits<qint64>::max();
    double tokens = 0, slowest = 0, loss = 0;
    for (const auto &[r, s] : st.latest) {
        minStep = std::min(minStep, s.step);
        tokens += s.tokensPerS;
        slowest = std::max(slowest, s.stepMs);
        if (r == 0)
            loss = s.loss;
    }
    std::lock_guard lock(m_mutex);
    m_progress.step = std::max(m_progress.step, minStep);
    m_progress.tokensPerS = tokens;
    m_progress.stepMs = slowest;
    m_progress.loss = loss;
    m_progress.ranksReporting = static_cast<int>(st.latest.size());
}

void RunFeed::postNewSteps(FeedState &st)
{
    if (st.newSteps > 0)
        post(StepsNote{std::exchange(st.newSteps, 0)});
}

void RunFeed::setState(RunState s)
{
    bool changed = false;
    {
        std::lock_guard lock(m_mutex);
        changed = m_state != s;
        m_state = s;
    }
    if (changed)
        post(StateNote{s});
}

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
        st.builder.setRankStage(r.rank, r.pp);
    db.forEachCollectiveChunk(summary->id, [&](const QList<CollectiveRow> &rows) {
        for (const CollectiveRow &c : rows)
            st.builder.addCollective(c);
    });
    for (const EventRow &e : data->events)
        st.builder.addEvent(e);
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

// Follows the live feed until the run ends, its supervisor is gone or detach().
void RunFeed::followFeed(FeedState &st)
{
    st.live = true;
    QElapsedTimer quiet;
    quiet.start();
    ArenaBatch<proto::FeedMessage> batch = std::move(st.pending);
    while (!m_stop) {
        if (batch.empty())
            receiveFeed(st.socket.get(), 100, batch);
        if (!batch.empty())
            quiet.restart();
        bool ended = false;
        for (const proto::FeedMessage &m : batch) {
            ended = handleFeedMessage(st, m);
            if (ended)
                break;
        }
        batch.clear();
        updateProgress(st);
        postNewSteps(st);
        if (m_gaps.load() != st.feedGapsSeen) {
            st.feedGapsSeen = m_gaps.load();
            st.snapshotDirty = true;
        }
        refillMissing(st, false);
        publishSnapshot(st, false);
        if (ended)
            return;
        // The supervisor says something every second; silent for 5 s and no longer registered
        // means it is gone: what the history says is the last word.
        if (quiet.elapsed() > 5000) {
            quiet.restart();
            if (!RunRegistry::find(st.runId)) {
                if (!backfillFromHistory(st, true)) {
                    setState(RunState::Failed);
                    post(FinishedNote{RunState::Failed, -1,
                                      QStringLiteral("its supervisor ended before recording run %1 in %2").arg(st.runId, st.database)});
                }
                return;
            }
        }
    }
}

// One live message; true when it says the run has ended.
bool RunFeed::handleFeedMessage(FeedState &st, const proto::FeedMessage &m)
{
    if (st.haveSeq && m.seq() > st.lastSeq + 1)
        m_gaps += m.seq() - st.lastSeq - 1;
    st.lastSeq = m.seq();
    st.haveSeq = true;
    switch (m.payload_case()) {
    case proto::FeedMessage::kTelemetry:
        handleTelemetry(st, m.telemetry());
        return false;
    case proto::FeedMessage::kTelemetryBatch:
        for (const proto::Envelope &e : m.telemetry_batch().envelopes())
            handleTelemetry(st, e);
        return false;
    case proto::FeedMessage::kStatus:
        return handleStatus(st, m.status());
    case proto::FeedMessage::kAlert: {
        const QString kind = QString::fromStdString(m.alert().kind());
        // Supervisor events (hang, restart, straggler, …) for the events timeline; the
        // ranks' own events arrive as telemetry.
        st.builder.addEvent(EventRow{-1, m_progress.step, kind, QString::fromStdString(m.alert().message()),
                                     QDateTime::currentDateTimeUtc()});
        st.snapshotDirty = true;
        post(AlertNote{kind, QString::fromStdString(m.alert().message())});
        return false;
    }
    case proto::FeedMessage::kOutput:
        post(OutputNote{m.output().rank(), m.output().is_stderr(), QString::fromStdString(m.output().text())});
        return false;
    default:
        return false;
    }
}

void RunFeed::handleTelemetry(FeedState &st, const proto::Envelope &e)
{
    if (e.has_step()) {
        addStepRow(st, stepRowFrom(e));
        if (auto experts = expertLoadFrom(e)) {
            st.builder.addExpertLoad(*experts);
            st.snapshotDirty = true;
        }
    } else if (e.has_hello()) {
        st.builder.setRankStage(static_cast<int>(e.rank()), static_cast<int>(e.hello().coords().pp()));
        st.snapshotDirty = true;
    } else if (e.has_collective()) {
        const auto &c = e.collective();
        st.builder.addCollective(CollectiveRow{static_cast<int>(e.rank()), static_cast<qint64>(c.step()),
                                               QString::fromStdString(c.group()), QString::fromStdString(c.op()),
                                               static_cast<qint64>(c.bytes()), c.ms(), c.bus_gbps(), static_cast<int>(c.count())});
        st.snapshotDirty = true;
    } else if (e.has_event()) {
        const EventRow row{static_cast<int>(e.rank()), static_cast<qint64>(e.event().step()),
                           eventKind(e.event().kind()), QString::fromStdString(e.event().message()),
                           QDateTime::currentDateTimeUtc()};
        st.builder.addEvent(row);
        st.snapshotDirty = true;
        post(EventNote{row});
    }
}

// The supervisor's status; true when it says the run has ended.
bool RunFeed::handleStatus(FeedState &st, const proto::RunStatus &s)
{
    const RunState state = runStateFromString(QString::fromStdString(s.state()));
    int previousAttempt = 0;
    {
        std::lock_guard lock(m_mutex);
        previousAttempt = m_attempt;
        m_attempt = static_cast<int>(s.attempt());
        m_worldSize = static_cast<int>(s.world_size());
        st.builder.setWorldSize(m_worldSize);
        m_progress.totalSteps = static_cast<qint64>(s.total_steps());
        m_progress.step = std::max<qint64>(m_progress.step, static_cast<qint64>(s.step()));
        m_message = QString::fromStdString(s.message());
        m_queue = QString::fromStdString(s.queue());
    }
    st.builder.setHealth({s.received(), s.lost(), s.duplicates(), s.out_of_order(), s.rejected(), s.dropped(),
                          m_gaps.load()});
    st.snapshotDirty = true;
    if (static_cast<int>(s.attempt()) > previousAttempt)
        post(RestartNote{static_cast<int>(s.attempt()), QString::fromStdString(s.message())});
    if (state != RunState::Idle)
        setState(state);
    if (!s.final() || !isFinal(state))
        return false;
    refillMissing(st, true); // the supervisor committed everything before it said so
    refillTails(st, static_cast<qint64>(s.step()));
    st.builder.finishExperts(); // every rank's last routing report is in
    postNewSteps(st);
    updateProgress(st);
    publishSnapshot(st, true);
    post(FinishedNote{state, s.exit_code(), QString::fromStdString(s.message())});
    return true;
}

} // namespace trellis::launcher
