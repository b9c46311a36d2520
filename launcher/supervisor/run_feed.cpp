// See run_feed.h.
#include "launcher/supervisor/run_feed.h"

#include "launcher/ingest/arena_batch.h"
#include "launcher/document/calibration_file.h"
#include "launcher/history/history_database.h"
#include "launcher/supervisor/run_registry.h"
#include "launcher/ingest/telemetry_rows.h"
#include "protocol/feed.pb.h"

#include <QElapsedTimer>
#include <QMetaObject>

#include <zmq.hpp>

#include <pthread.h>

#include <map>
#include <set>

namespace trellis::launcher {
namespace {

bool isFinal(RunState s) { return s == RunState::Completed || s == RunState::Failed || s == RunState::Stopped; }

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
    zmq::context_t context(1);
    std::unique_ptr<zmq::socket_t> socket;
    if (!endpoint.empty()) {
        try {
            socket = std::make_unique<zmq::socket_t>(context, zmq::socket_type::sub);
            socket->set(zmq::sockopt::rcvhwm, 100000);
            socket->set(zmq::sockopt::linger, 0);
            socket->set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(8 * 1024 * 1024));
            socket->set(zmq::sockopt::subscribe, "");
            socket->connect(endpoint);
        } catch (const zmq::error_t &) {
            socket.reset();
        }
    }
    auto receive = [&](int timeoutMs, ArenaBatch<proto::FeedMessage> &into) {
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
        for (int i = 0; (items[0].revents & ZMQ_POLLIN) && i < 20000; ++i) {
            zmq::message_t message;
            zmq::recv_result_t got;
            try {
                got = socket->recv(message, zmq::recv_flags::dontwait);
            } catch (const zmq::error_t &) {
                break;
            }
            if (!got)
                break;
            proto::FeedMessage *m = into.add();
            if (!m->ParseFromArray(message.data(), static_cast<int>(message.size())))
                into.removeLast();
        }
    };

    // Subscribed first; the history is read once everything the supervisor sent before the
    // subscription took hold has had time to be committed (its writer flushes every 200 ms).
    ArenaBatch<proto::FeedMessage> pending;
    QElapsedTimer waited;
    waited.start();
    while (socket && waited.elapsed() < 500 && !m_stop)
        receive(50, pending);

    telemetry::SnapshotBuilder builder(64); // sized for the real world once it is known
    quint64 feedGapsSeen = 0;
    QElapsedTimer sinceSnapshot;
    quint64 snapshotVersion = ~0ull;
    int snapshotHeat = -1;
    bool snapshotDirty = true;
    // At most 4 snapshots a second, and only when something changed (or `force`).
    auto publishSnapshot = [&](bool force) {
        if (!force && sinceSnapshot.isValid() && sinceSnapshot.elapsed() < 250)
            return;
        const int heat = m_heatMetric.load();
        if (!force && !snapshotDirty && builder.store().version() == snapshotVersion && heat == snapshotHeat)
            return;
        {
            std::lock_guard lock(m_mutex);
            builder.setProgress(m_progress.step, m_progress.totalSteps, m_worldSize);
        }
        auto snapshot = builder.build(static_cast<telemetry::Metric>(heat));
        snapshotVersion = builder.store().version();
        snapshotHeat = heat;
        snapshotDirty = false;
        sinceSnapshot.restart();
        {
            std::lock_guard lock(m_mutex);
            m_snapshot = std::move(snapshot);
        }
        post(SnapshotNote{});
    };
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
    auto addRow = [&](const StepRow &row) {
        auto it = maxStep.find(row.rank);
        if (it != maxStep.end() && row.step <= it->second)
            return; // backfilled already (or repeated after a restart)
        if (live && it != maxStep.end() && row.step > it->second + 1 && missingCount < 200000) {
            for (qint64 step = it->second + 1; step < row.step; ++step)
                missingCount += missing[row.rank].insert(step).second ? 1 : 0;
            if (!missingProgress.isValid())
                missingProgress.start();
        }
        maxStep[row.rank] = row.step;
        if (m_keepRows)
            m_series.append(row);
        builder.addStep(row);
        latest[row.rank] = row;
        ++newSteps;
    };
    auto updateProgress = [&] {
        if (latest.empty())
            return;
        qint64 minStep = std::numeric_limits<qint64>::max();
        double tokens = 0, slowest = 0, loss = 0;
        for (const auto &[r, s] : latest) {
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
        m_progress.ranksReporting = static_cast<int>(latest.size());
    };
    auto setState = [&](RunState s) {
        bool changed = false;
        {
            std::lock_guard lock(m_mutex);
            changed = m_state != s;
            m_state = s;
        }
        if (changed)
            post(StateNote{s});
    };

    // Backfill from the history.
    auto fromHistory = [&](bool final) -> bool {
        HistoryDatabase db;
        if (!db.open(database, false).isEmpty())
            return false;
        const auto summary = db.findRun(runId);
        if (!summary)
            return false;
        const auto data = db.loadRun(summary->id);
        if (!data)
            return false;
        builder.setWorldSize(data->run.worldSize);
        if (!predicted) {
            builder.setPrediction(telemetry::predictionFor(data->planJson, defaultCalibrationPath(database)));
            predicted = true;
        }
        for (const RankRow &r : data->ranks)
            builder.setRankStage(r.rank, r.pp);
        for (const CollectiveRow &c : db.collectivesOf(summary->id))
            builder.addCollective(c);
        for (const EventRow &e : data->events)
            builder.addEvent(e);
        for (const StepRow &row : data->steps)
            addRow(row);
        {
            std::lock_guard lock(m_mutex);
            m_worldSize = data->run.worldSize;
            m_progress.totalSteps = data->run.totalSteps;
        }
        updateProgress();
        if (!final)
            for (const EventRow &e : data->events)
                post(EventNote{e});
        const RunState s = runStateFromString(data->run.status);
        if (final || isFinal(s)) {
            if (newSteps > 0)
                post(StepsNote{std::exchange(newSteps, 0)});
            const RunState end = isFinal(s) ? s : RunState::Failed;
            const QString why = isFinal(s) ? data->run.error
                                           : QStringLiteral("its supervisor ended without saying how the run ended");
            {
                std::lock_guard lock(m_mutex);
                m_message = why;
            }
            setState(end);
            publishSnapshot(true);
            post(FinishedNote{end, data->run.exitCode, why});
            return true;
        }
        setState(s == RunState::Idle ? RunState::Launching : s);
        return false;
    };
    if (fromHistory(!socket))
        return;
    if (!socket) {
        setState(RunState::Failed);
        post(FinishedNote{RunState::Failed, -1, QStringLiteral("run %1 is not in %2").arg(runId, database)});
        return;
    }
    // The history may not hold yet what the supervisor published before this subscription took
    // hold (its writer is late on a busy machine): while a rank's first live step leaves a gap
    // after what the history gave, read the history's steps again (live messages keep queueing).
    auto firstLiveStep = [&] {
        std::map<int, qint64> first;
        for (const proto::FeedMessage &m : pending)
            if (m.has_telemetry() && m.telemetry().has_step())
                first.emplace(static_cast<int>(m.telemetry().rank()), static_cast<qint64>(m.telemetry().step().step()));
        return first;
    };
    auto gapLeft = [&] {
        for (const auto &[rank, step] : firstLiveStep()) {
            const auto shown = maxStep.find(rank);
            if (step > (shown == maxStep.end() ? 0 : shown->second) + 1)
                return true;
        }
        return false;
    };
    for (int tries = 0; tries < 40 && gapLeft() && !m_stop; ++tries) {
        receive(250, pending);
        HistoryDatabase db;
        if (!db.open(database, false).isEmpty())
            continue;
        if (const auto summary = db.findRun(runId))
            if (const auto data = db.loadRun(summary->id))
                for (const StepRow &row : data->steps)
                    addRow(row);
    }
    updateProgress();
    if (newSteps > 0)
        post(StepsNote{std::exchange(newSteps, 0)});

    std::unique_ptr<HistoryDatabase> refillDb;
    qint64 refillRunId = -1;
    auto refill = [&](bool force) {
        if (missing.empty() || (!force && sinceRefill.isValid() && sinceRefill.elapsed() < 1000))
            return;
        sinceRefill.restart();
        if (!refillDb) {
            refillDb = std::make_unique<HistoryDatabase>();
            if (!refillDb->open(database, false).isEmpty()) {
                refillDb.reset();
                return;
            }
        }
        if (refillRunId < 0)
            if (const auto summary = refillDb->findRun(runId))
                refillRunId = summary->id;
        if (refillRunId < 0)
            return;
        bool progress = false;
        for (auto it = missing.begin(); it != missing.end();) {
            auto &steps = it->second;
            for (const StepRow &row : refillDb->stepsBetween(refillRunId, it->first, *steps.begin(), *steps.rbegin()))
                if (steps.erase(row.step)) {
                    --missingCount;
                    progress = true;
                    if (m_keepRows)
                        m_series.append(row);
                    builder.addStep(row);
                }
            it = steps.empty() ? missing.erase(it) : std::next(it);
        }
        if (progress) {
            snapshotDirty = true;
            missingProgress.restart();
        }
        // What the history does not have after 30 s without progress, it will not get.
        if (missing.empty() || missingProgress.elapsed() > 30000) {
            missing.clear();
            missingCount = 0;
            missingProgress.invalidate();
        }
    };

    quint64 lastSeq = 0;
    bool haveSeq = false;
    live = true;
    QElapsedTimer quiet;
    quiet.start();
    ArenaBatch<proto::FeedMessage> batch = std::move(pending);
    while (!m_stop) {
        if (batch.empty())
            receive(100, batch);
        if (!batch.empty())
            quiet.restart();
        bool ended = false;
        for (const proto::FeedMessage &m : batch) {
            if (haveSeq && m.seq() > lastSeq + 1)
                m_gaps += m.seq() - lastSeq - 1;
            lastSeq = m.seq();
            haveSeq = true;
            switch (m.payload_case()) {
            case proto::FeedMessage::kTelemetry: {
                const proto::Envelope &e = m.telemetry();
                if (e.has_step()) {
                    addRow(stepRowFrom(e));
                    if (auto experts = expertLoadFrom(e)) {
                        builder.addExpertLoad(*experts);
                        snapshotDirty = true;
                    }
                } else if (e.has_hello()) {
                    builder.setRankStage(static_cast<int>(e.rank()), static_cast<int>(e.hello().coords().pp()));
                    snapshotDirty = true;
                } else if (e.has_collective()) {
                    const auto &c = e.collective();
                    builder.addCollective(CollectiveRow{static_cast<int>(e.rank()), static_cast<qint64>(c.step()),
                                                        QString::fromStdString(c.group()), QString::fromStdString(c.op()),
                                                        static_cast<qint64>(c.bytes()), c.ms(), c.bus_gbps(), static_cast<int>(c.count())});
                    snapshotDirty = true;
                } else if (e.has_event()) {
                    const EventRow row{static_cast<int>(e.rank()), static_cast<qint64>(e.event().step()),
                                       eventKind(e.event().kind()), QString::fromStdString(e.event().message()),
                                       QDateTime::currentDateTimeUtc()};
                    builder.addEvent(row);
                    snapshotDirty = true;
                    post(EventNote{row});
                }
                break;
            }
            case proto::FeedMessage::kStatus: {
                const proto::RunStatus &s = m.status();
                const RunState state = runStateFromString(QString::fromStdString(s.state()));
                int previousAttempt = 0;
                {
                    std::lock_guard lock(m_mutex);
                    previousAttempt = m_attempt;
                    m_attempt = static_cast<int>(s.attempt());
                    m_worldSize = static_cast<int>(s.world_size());
                    builder.setWorldSize(m_worldSize);
                    m_progress.totalSteps = static_cast<qint64>(s.total_steps());
                    m_progress.step = std::max<qint64>(m_progress.step, static_cast<qint64>(s.step()));
                    m_message = QString::fromStdString(s.message());
                    m_queue = QString::fromStdString(s.queue());
                }
                builder.setHealth({s.received(), s.lost(), s.duplicates(), s.out_of_order(), s.rejected(), s.dropped(),
                                   m_gaps.load()});
                snapshotDirty = true;
                if (static_cast<int>(s.attempt()) > previousAttempt)
                    post(RestartNote{static_cast<int>(s.attempt()), QString::fromStdString(s.message())});
                if (state != RunState::Idle)
                    setState(state);
                if (s.final() && isFinal(state)) {
                    refill(true); // the supervisor committed everything before it said so
                    builder.finishExperts(); // every rank's last routing report is in
                    if (newSteps > 0)
                        post(StepsNote{std::exchange(newSteps, 0)});
                    updateProgress();
                    publishSnapshot(true);
                    post(FinishedNote{state, s.exit_code(), QString::fromStdString(s.message())});
                    ended = true;
                }
                break;
            }
            case proto::FeedMessage::kAlert: {
                const QString kind = QString::fromStdString(m.alert().kind());
                // Supervisor events (hang, restart, straggler, …) for the events timeline; the
                // ranks' own events arrive as telemetry.
                builder.addEvent(EventRow{-1, m_progress.step, kind, QString::fromStdString(m.alert().message()),
                                          QDateTime::currentDateTimeUtc()});
                snapshotDirty = true;
                post(AlertNote{kind, QString::fromStdString(m.alert().message())});
                break;
            }
            case proto::FeedMessage::kOutput:
                post(OutputNote{m.output().rank(), m.output().is_stderr(), QString::fromStdString(m.output().text())});
                break;
            default:
                break;
            }
            if (ended)
                break;
        }
        batch.clear();
        updateProgress();
        if (newSteps > 0)
            post(StepsNote{std::exchange(newSteps, 0)});
        if (m_gaps.load() != feedGapsSeen) {
            feedGapsSeen = m_gaps.load();
            snapshotDirty = true;
        }
        refill(false);
        publishSnapshot(false);
        if (ended)
            return;
        // The supervisor says something every second; silent for 5 s and no longer registered
        // means it is gone: what the history says is the last word.
        if (quiet.elapsed() > 5000) {
            quiet.restart();
            if (!RunRegistry::find(runId)) {
                if (!fromHistory(true)) {
                    setState(RunState::Failed);
                    post(FinishedNote{RunState::Failed, -1,
                                      QStringLiteral("its supervisor ended before recording run %1 in %2").arg(runId, database)});
                }
                return;
            }
        }
    }
}

} // namespace trellis::launcher
