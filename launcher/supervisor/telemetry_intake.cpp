// Supervisor's telemetry (see supervisor.h): each batch the receiver hands over becomes
// history rows, detector input, progress and the live feed; acknowledgements follow the commit;
// the feed's RunStatus; trouble with the history file. Split from supervisor.cpp.
#include "launcher/supervisor/supervisor.h"

#include "launcher/feed/feed_publisher.h"
#include "launcher/job/job_process.h"
#include "launcher/ingest/telemetry_receiver.h"
#include "launcher/ingest/telemetry_rows.h"
#include "backend/plan/plan_json.h"

#include <QCoreApplication>

#include <limits>

namespace trellis::launcher {

void Supervisor::drainTelemetry()
{
    m_drainPending = false;
    const auto envelopes = m_receiver->drain();
    int steps = 0;
    StepOp stepRows{m_runId, {}}; // one history entry for the batch's step reports
    for (const auto &e : envelopes) {
        // Followers get every message but heartbeats (nothing a dashboard draws: liveness reaches
        // them as RunStatus and the detectors' alerts), batched per drain.
        if (m_feed && !e.has_heartbeat())
            m_feed->telemetry(e);
        const int rank = static_cast<int>(e.rank());
        m_droppedByRank[rank] = e.dropped();
        m_lastSeenMs[rank] = m_clock.elapsed();
        if (m_hangs)
            m_hangs->seen(rank, m_clock.elapsed());
        switch (e.payload_case()) {
        case proto::Envelope::kHello:
            onHello(rank, e);
            break;
        case proto::Envelope::kStep:
            stepRows.rows.push_back(onStep(rank, e));
            ++steps;
            break;
        case proto::Envelope::kCollective:
            onCollective(rank, e);
            break;
        case proto::Envelope::kSpans:
            onSpans(rank, e);
            break;
        case proto::Envelope::kEvent:
            onRankEvent(rank, e);
            break;
        case proto::Envelope::kHeartbeat:
            onHeartbeat(rank, e);
            break;
        case proto::Envelope::kGoodbye:
            onGoodbye(rank, e);
            break;
        default:
            break;
        }
    }
    if (m_feed)
        m_feed->flush(); // this drain's telemetry, one frame (or a few) to the followers
    if (steps > 0)
        updateProgress();
    if (!stepRows.rows.empty())
        record(std::move(stepRows));
    if (m_writer && !envelopes.empty())
        acknowledgeAfterCommit();
    if (steps > 0)
        emit stepsArrived(steps);
}

void Supervisor::onHello(int rank, const proto::Envelope &e)
{
    const auto &h = e.hello();
    if (m_hangs)
        m_hangs->hello(rank, h.host(), h.relay());
    m_hosts[rank] = QString::fromStdString(h.host());
    if (m_stragglers)
        m_stragglers->hello(rank, h.host());
    m_pids[rank] = h.pid();
    RankRow r = rankRowFrom(e);
    r.rank = rank;
    record(RankOp{m_runId, r});
    if (m_state == RunState::Launching)
        setState(RunState::Running);
    m_sinceProgress.restart();
}

StepRow Supervisor::onStep(int rank, const proto::Envelope &e)
{
    const StepRow row = stepRowFrom(e);
    m_lastMemoryCheckpointStep = std::max<qint64>(m_lastMemoryCheckpointStep, static_cast<qint64>(e.step().memory_checkpoint_step()));
    if (auto experts = expertLoadFrom(e))
        record(ExpertLoadOp{m_runId, std::move(*experts)});
    m_latest[rank] = row;
    m_stalls.learnStep(row.stepMs);
    if (m_hangs)
        m_hangs->stepDone(rank, m_clock.elapsed(), static_cast<std::uint64_t>(row.step));
    if (m_stragglers)
        for (const StragglerReport &report : m_stragglers->step(rank, row.step, row.computeMs))
            raiseEvent(QStringLiteral("straggler"), report.rank, report.step, QString::fromStdString(report.message));
    if (rank == 0)
        if (const auto diverging = m_divergence.loss(row.step, row.loss))
            raiseEvent(QStringLiteral("divergence"), rank, row.step, *diverging);
    if (m_state == RunState::Launching)
        setState(RunState::Running);
    m_progress.loss = row.loss;
    // A job with its own trainer says how many steps it will take (the plan may not know).
    if (m_plan.ownTrainer.external() && e.step().total_steps() > 0)
        m_progress.totalSteps = static_cast<qint64>(e.step().total_steps());
    return row;
}

void Supervisor::onCollective(int rank, const proto::Envelope &e)
{
    const auto &c = e.collective();
    m_busGbps[{rank, QString::fromStdString(c.group()), QString::fromStdString(c.op())}] = c.bus_gbps();
    record(CollectiveOp{m_runId, CollectiveRow{rank, static_cast<qint64>(c.step()), QString::fromStdString(c.group()),
                                               QString::fromStdString(c.op()), static_cast<qint64>(c.bytes()), c.ms(),
                                               c.bus_gbps(), static_cast<int>(c.count())}});
}

void Supervisor::onSpans(int rank, const proto::Envelope &e)
{
    SpansOp op{m_runId, {}};
    for (const auto &sp : e.spans().spans())
        op.rows.append(SpanRow{rank, static_cast<qint64>(e.spans().step()), QString::fromStdString(sp.name()), sp.start_ns(),
                               sp.end_ns(), sp.micro_batch(), sp.stage()});
    record(std::move(op));
}

void Supervisor::onRankEvent(int rank, const proto::Envelope &e)
{
    const auto &ev = e.event();
    if (ev.kind() == proto::Event::CHECKPOINT) {
        if (m_target && m_target->gathersCheckpoints() && !m_plan.ownTrainer.external()) // a script's checkpoints are its own
            gatherCheckpoint(static_cast<qint64>(ev.step())); // counts once it is here
        else
            m_lastCheckpointStep = std::max<qint64>(m_lastCheckpointStep, static_cast<qint64>(ev.step()));
    }
    if (ev.kind() == proto::Event::RESTART)
        m_resumedFrom = static_cast<qint64>(ev.step()); // what the trainer really resumed from
    if (ev.kind() == proto::Event::NON_FINITE && rank == 0)
        raise(QStringLiteral("nan"), static_cast<qint64>(ev.step()), QString::fromStdString(ev.message()));
    record(EventOp{m_runId, EventRow{rank, static_cast<qint64>(ev.step()), eventKind(ev.kind()),
                                     QString::fromStdString(ev.message()), QDateTime::currentDateTimeUtc()}});
}

void Supervisor::onHeartbeat(int rank, const proto::Envelope &e)
{
    const auto &hb = e.heartbeat();
    m_phase[rank] = QString::fromStdString(hb.phase());
    if (!m_hangs)
        return;
    RankPulse pulse;
    pulse.step = hb.step();
    pulse.phase = hb.phase();
    pulse.inCollective = !hb.collective_op().empty();
    pulse.group = hb.collective_group();
    pulse.op = hb.collective_op();
    pulse.call = hb.collective_call();
    pulse.bytes = hb.collective_bytes();
    pulse.sinceNs = hb.collective_since_ns();
    pulse.members.assign(hb.collective_members().begin(), hb.collective_members().end());
    m_hangs->heartbeat(rank, m_clock.elapsed(), pulse);
}

void Supervisor::onGoodbye(int rank, const proto::Envelope &e)
{
    RankRow r;
    r.rank = rank;
    r.goodbyeSeq = static_cast<qint64>(e.seq());
    r.exitCode = e.goodbye().exit_code();
    r.dropped = static_cast<qint64>(e.dropped());
    record(RankOp{m_runId, r});
    if (m_hangs)
        m_hangs->goodbye(rank);
    if (m_watched) {
        watchedGoodbye(rank, r.exitCode);
    } else if (m_goodbyes.emplace(rank, r.exitCode).second &&
               static_cast<int>(m_goodbyes.size()) == m_plan.parallel.worldSize()) {
        m_sinceEveryGoodbye.start(); // the job's processes end next (watchdog.cpp)
    }
}

void Supervisor::updateProgress()
{
    // Once per batch (not per message: the work would grow with ranks × rate): the step every
    // rank has finished; throughput summed over ranks.
    const qint64 previous = m_progress.step;
    qint64 minStep = std::numeric_limits<qint64>::max();
    double tokens = 0, slowest = 0;
    for (const auto &[r, s] : m_latest) {
        minStep = std::min(minStep, s.step);
        tokens += s.tokensPerS;
        slowest = std::max(slowest, s.stepMs);
    }
    m_progress.step = minStep;
    m_progress.tokensPerS = tokens;
    m_progress.stepMs = slowest;
    m_progress.ranksReporting = static_cast<int>(m_latest.size());
    if (m_progress.step != previous)
        m_sinceProgress.restart();
}

void Supervisor::acknowledgeAfterCommit()
{
    // Acknowledged to the ranks once all of the batch is committed (they keep it until then).
    const auto cursor = m_receiver->cursor();
    CursorOp op{m_runId, {}, {}, false, {}};
    for (const auto &[rank, next] : cursor)
        op.nextSeq[static_cast<int>(rank)] = next;
    for (const auto &[rank, lost] : m_receiver->lostByRank())
        op.lost[static_cast<int>(rank)] = lost;
    op.afterCommit = [receiver = std::weak_ptr<TelemetryReceiver>(m_receiver), generation = m_receiver->generation(), cursor] {
        if (const auto r = receiver.lock())
            r->acknowledge(generation, cursor);
    };
    record(std::move(op));
}

void Supervisor::setFeed(FeedPublisher *feed)
{
    m_feed = feed;
    m_statusTimer.setInterval(1000);
    connect(&m_statusTimer, &QTimer::timeout, this, &Supervisor::publishStatus, Qt::UniqueConnection);
}

void Supervisor::publishStatus()
{
    if (!m_feed)
        return;
    if (!m_settled && !m_statusTimer.isActive())
        m_statusTimer.start();
    proto::RunStatus s;
    s.set_run_id(m_runId.toStdString());
    s.set_state(toString(m_state).toStdString());
    s.set_exit_code(m_exitCode);
    s.set_message((m_settled ? m_failure.isEmpty() ? m_statusMessage : m_failure : m_statusMessage).toStdString());
    s.set_step(static_cast<quint64>(std::max<qint64>(0, m_progress.step)));
    s.set_total_steps(static_cast<quint64>(std::max<qint64>(0, m_progress.totalSteps)));
    s.set_world_size(static_cast<quint32>(m_plan.parallel.worldSize()));
    s.set_attempt(static_cast<quint32>(m_attempt));
    s.set_final(m_settled);
    s.set_loss(m_progress.loss);
    s.set_tokens_per_s(m_progress.tokensPerS);
    s.set_step_ms(m_progress.stepMs);
    const ReceiverStats stats = m_receiver->stats();
    s.set_received(stats.received);
    s.set_lost(stats.lost);
    s.set_duplicates(stats.duplicates);
    s.set_out_of_order(stats.outOfOrder);
    s.set_rejected(stats.rejected);
    quint64 dropped = 0;
    for (const auto &[rank, n] : m_droppedByRank)
        dropped += n;
    s.set_dropped(dropped);
    s.set_queue(queueText().toStdString());
    m_feed->status(s);
}

void Supervisor::historyNotice(const QString &kind, const QString &message)
{
    raiseEvent(QStringLiteral("history"), -1, m_progress.step, message);
    Q_UNUSED(kind);
}

} // namespace trellis::launcher
