// See run_feed.h. The feed thread's reading of the live feed; what it reads from the history (the
// backfill and the refills) is in run_feed_history.cpp.
#include "launcher/feed/run_feed.h"
#include "launcher/feed/run_feed_state.h"

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

StallRow stallRowFrom(const proto::Stall &p)
{
    StallRow s;
    s.number = static_cast<int>(p.number());
    s.attempt = static_cast<int>(p.attempt());
    for (int r : p.holders())
        s.holders.append(r);
    for (int r : p.waiting())
        s.waiting.append(r);
    s.silent = p.silent();
    s.step = static_cast<qint64>(p.step());
    s.startedAt = QDateTime::fromMSecsSinceEpoch(p.started_unix_ms(), Qt::UTC);
    s.durationMs = p.duration_ms();
    s.endedAt = s.startedAt.addMSecs(s.durationMs);
    s.outcome = QString::fromStdString(p.outcome());
    s.what = QString::fromStdString(p.what());
    return s;
}

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


} // namespace

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
    case proto::FeedMessage::kStall: {
        const StallRow s = stallRowFrom(m.stall());
        st.builder.addStall(s);
        st.builder.addEvent(EventRow{s.holders.isEmpty() ? -1 : s.holders.front(), m_progress.step, QStringLiteral("stall_end"),
                                     stallSummary(s), QDateTime::currentDateTimeUtc()});
        st.snapshotDirty = true;
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
        st.builder.setRank(rankRowFrom(e));
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
