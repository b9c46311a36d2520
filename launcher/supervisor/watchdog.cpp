// Supervisor's watchdog (see supervisor.h, launcher/detectors/stall_tracker.h, docs/failures.md):
// every tick it asks the hang detector who holds the others up. A holder is a *stall* at once —
// an event, an alert, the feed, the workbench's status line — and the run goes on; a stall that
// clears is recorded with its start, end, holders and waiters. The job is ended (or restarted, as
// launch.restart says) only for a certain *hang*: a holder's process gone, stopped or (remote)
// silent past launch.hang_confirm_s, or a holder that has not moved for the learned timeout; and
// when no step finished for the learned timeout at all.
#include "launcher/supervisor/supervisor.h"

#include "launcher/feed/feed_publisher.h"
#include "launcher/history/history_writer.h"
#include "launcher/ingest/telemetry_receiver.h"

#include <QDateTime>
#include <QFile>

#include <algorithm>
#include <map>

namespace trellis::launcher {
namespace {

// How long every rank behind a node relay may be silent together and still be a telemetry gap,
// no stall: its ranks start a dead relay again after 2 resend intervals (4 s) without
// acknowledgements, and after three failed starts send to the supervisor directly
// (backend/trainer/telemetry/node_relay.h).
constexpr std::int64_t kRelayRecoveryMs = 12000;

// Linux /proc: whether a local pid is gone, or stopped (SIGSTOP, state T). Remote ranks' pids
// mean nothing here: only the local launcher's ranks are looked at.
bool localProcessGone(qint64 pid)
{
    return pid > 0 && !QFile::exists(QStringLiteral("/proc/%1").arg(pid));
}

bool localProcessStopped(qint64 pid)
{
    QFile stat(QStringLiteral("/proc/%1/stat").arg(pid));
    if (pid <= 0 || !stat.open(QIODevice::ReadOnly))
        return false;
    const QByteArray text = stat.readAll();
    const int close = text.lastIndexOf(')');
    return close > 0 && close + 2 < text.size() && (text[close + 2] == 'T' || text[close + 2] == 't');
}

QList<int> listOf(const std::vector<int> &ranks) { return QList<int>(ranks.begin(), ranks.end()); }

} // namespace

void Supervisor::checkWatchdog()
{
    if (m_settled || m_state == RunState::Idle)
        return;
    const bool behind = noteBacklog();
    if (batchJobWaiting()) { // queued in Slurm: nothing runs that could hang
        m_sinceProgress.restart();
        return;
    }
    if (m_hangs && m_state == RunState::Running && !behind && watchStalls())
        return; // a hang was decided: the job is ending
    if (!m_watched && static_cast<int>(m_goodbyes.size()) >= m_plan.parallel.worldSize()) {
        endJobThatSaidGoodbye(); // (after the stalls: one open until the last steps clears there)
        return;
    }
    const qint64 timeoutMs = m_stalls.learnedTimeoutMs();
    if (m_sinceProgress.elapsed() < timeoutMs)
        return;
    QString where;
    for (const auto &[rank, phase] : m_phase)
        if (!m_latest.count(rank) || m_latest[rank].step <= m_progress.step)
            where += QStringLiteral(" rank %1 in '%2';").arg(rank).arg(phase);
    const QString timeout = m_stalls.longestStepMs() > 0
                                ? QStringLiteral("%1 s (the learned timeout: %2 × the longest step, %3 s; at least launch.hang_timeout_s)")
                                      .arg(timeoutMs / 1000.0, 0, 'f', 1)
                                      .arg(m_plan.launch.hangStepFactor)
                                      .arg(m_stalls.longestStepMs() / 1000.0, 0, 'f', 1)
                                : QStringLiteral("%1 s (launch.hang_timeout_s)").arg(timeoutMs / 1000.0, 0, 'f', 1);
    const QString message = m_state == RunState::Launching
                                ? QStringLiteral("hang: no rank reported within %1 of launch").arg(timeout)
                                : QStringLiteral("hang: no step finished for %1 after step %2;%3").arg(timeout).arg(m_progress.step).arg(where);
    closeStall(QStringLiteral("hang"));
    terminateJob(message);
}

// Every rank of a launched job said Goodbye: training is over and no step will finish again, so
// the learned timeout says nothing; the ranks deliver their last telemetry (a history that cannot
// take it keeps them waiting for its acknowledgements: trellis-trainer up to 3 s, the simulator's
// ranks 120 s) and exit. A job still there kGoodbyeExitMs later is ended, said so.
void Supervisor::endJobThatSaidGoodbye()
{
    constexpr qint64 kGoodbyeExitMs = 180000;
    if (!m_sinceEveryGoodbye.isValid() || m_sinceEveryGoodbye.elapsed() < kGoodbyeExitMs)
        return;
    m_sinceEveryGoodbye.invalidate();
    const QString late = QStringLiteral("every rank said goodbye after step %1, but the job had not exited %2 s later")
                             .arg(m_progress.step)
                             .arg(kGoodbyeExitMs / 1000);
    const bool allWell = std::all_of(m_goodbyes.begin(), m_goodbyes.end(), [](const auto &g) { return g.second == 0; });
    if (!allWell) {
        terminateJob(late);
        return;
    }
    // Training completed on every rank: the run is complete; what is left of the job is ended.
    raiseEvent(QStringLiteral("warning"), -1, m_progress.step, late + QStringLiteral("; it is ended"));
    terminateProcess();
    settle(RunState::Completed, 0, QStringLiteral("completed %1 steps").arg(m_progress.step));
}

// While this supervisor holds telemetry back (its history writer is behind), heartbeats wait in
// the ranks' links: silence then says nothing about the ranks, so stalls are not judged. Behind
// also while more rows wait than half a second of 1024 ranks' at 20 Hz, or two steps of every
// rank's (a step report, a collective and a heartbeat each: at 16,384 ranks one step is 16,384
// step rows, which a fixed 20,000 would call behind all the time): after holding back, the
// backlog drains for a while, and the ranks' heartbeats wait in it.
bool Supervisor::noteBacklog()
{
    const qint64 throttled = m_receiver->msSinceThrottled();
    const std::size_t backlogLimit = std::max<std::size_t>(20000, 6 * static_cast<std::size_t>(std::max(1, m_plan.parallel.worldSize())));
    const bool behind = (throttled >= 0 && throttled < 15000) || (m_writer && m_writer->backlog() > backlogLimit);
    if (behind && !m_behindNoted) {
        m_behindNoted = true;
        raiseEvent(QStringLiteral("backlog"), -1, m_progress.step,
                   QStringLiteral("the supervisor is behind: its history writer has %1 rows waiting, so the ranks hold their "
                                  "telemetry until it catches up (nothing is lost; hang detection waits meanwhile)")
                       .arg(m_writer ? m_writer->backlog() : 0));
    } else if (!behind && m_behindNoted) {
        m_behindNoted = false;
    }
    return behind;
}

bool Supervisor::watchStalls()
{
    drainTelemetry(); // judge on everything that has arrived
    const qint64 now = m_clock.elapsed();
    const std::int64_t wallNs = QDateTime::currentMSecsSinceEpoch() * 1000000;
    std::optional<HangReport> report = m_hangs->check(now, wallNs);
    // Every rank behind a node relay silent together, for less than a relay takes to start again:
    // the telemetry's path is down, not the training.
    if (report && report->silent && !report->relays.empty() && report->silentMs < kRelayRecoveryMs)
        report.reset();
    const StallTracker::Update u = m_stalls.observe(report, now, static_cast<std::uint64_t>(m_progress.step));
    if (u.cleared) {
        recordStall(*u.cleared, u.grew ? QStringLiteral("grew") : QStringLiteral("cleared"), !u.grew);
        m_watchedHangRaised = false; // a watched job that moves again may hang again, and is told so
    }
    // A watched job's hang was told and the job left as it is: the same holders are not named
    // again at every round (the stall is still tracked and recorded).
    if (u.started && !(m_watched && m_watchedHangRaised))
        announceStall(*u.started);
    if (!m_stalls.current())
        return false;
    std::map<int, HolderState> holders;
    std::map<int, std::int64_t> sinceMoved;
    const bool remote = m_watched ? !m_watchedLocal : m_plan.launch.target != plan::LaunchTarget::Local;
    for (int rank : m_stalls.current()->holders) {
        HolderState h;
        h.local = !remote;
        const auto pid = m_pids.find(rank);
        if (!remote && pid != m_pids.end()) {
            h.gone = localProcessGone(pid->second);
            h.stopped = !h.gone && localProcessStopped(pid->second);
        }
        holders[rank] = h;
        sinceMoved[rank] = m_hangs->msSinceMoved(rank, now);
    }
    const std::optional<HangVerdict> verdict = m_stalls.decide(now, holders, sinceMoved);
    if (!verdict)
        return false;
    decideHang(report ? report->message : m_stalls.current()->what, *verdict);
    return true;
}

// The stall's first words: the event, the alert (a desktop notification, the status line, the
// alert hooks) and the feed. The run goes on.
void Supervisor::announceStall(const StallRecord &s)
{
    QString message = QStringLiteral("stall: ") + QString::fromStdString(s.what);
    if (m_plan.launch.target == plan::LaunchTarget::Local)
        for (int rank : s.holders)
            if (m_pids.count(rank) && localProcessStopped(m_pids[rank]))
                message += QStringLiteral(" [rank %1's process is stopped]").arg(rank);
    message += QStringLiteral(" — the run goes on; a hang is decided only if it stays stopped or silent for %1 s, or does not "
                              "move for %2 s")
                   .arg(m_hangConfirmS)
                   .arg(m_stalls.learnedTimeoutMs() / 1000.0, 0, 'f', 0);
    raiseEvent(QStringLiteral("stall"), s.holders.empty() ? -1 : s.holders.front(), static_cast<qint64>(s.step), message);
}

// A stall that ended: its record in the history (and the feed), an event saying how long it lasted.
void Supervisor::recordStall(const StallRecord &s, const QString &outcome, bool said)
{
    StallRow row;
    row.number = s.number;
    row.attempt = m_attempt;
    row.holders = listOf(s.holders);
    row.waiting = listOf(s.waiting);
    row.silent = s.silent;
    row.step = static_cast<qint64>(s.step);
    row.durationMs = s.durationMs();
    row.endedAt = QDateTime::currentDateTimeUtc();
    row.startedAt = row.endedAt.addMSecs(-row.durationMs);
    row.outcome = outcome;
    row.what = QString::fromStdString(s.what);
    record(StallOp{m_runId, row});
    if (m_feed)
        m_feed->stall(row);
    if (!said)
        return;
    record(EventOp{m_runId, EventRow{row.holders.isEmpty() ? -1 : row.holders.front(), m_progress.step, QStringLiteral("stall_end"),
                                     stallSummary(row), QDateTime::currentDateTimeUtc()}});
    emit stallEnded(stallSummary(row));
}

// The job ended (a crash, a stop, the end of the run) or a hang was decided: the stall in
// progress ends with it.
void Supervisor::closeStall(const QString &outcome)
{
    if (const std::optional<StallRecord> s = m_stalls.close(m_clock.isValid() ? m_clock.elapsed() : 0))
        recordStall(*s, outcome);
}

void Supervisor::decideHang(const std::string &detectorMessage, const HangVerdict &verdict)
{
    const bool remote = m_watched ? !m_watchedLocal : m_plan.launch.target != plan::LaunchTarget::Local;
    QString message = QStringLiteral("hang: ") + QString::fromStdString(detectorMessage);
    QString cause = QStringLiteral("hang");
    const StallRecord stall = *m_stalls.current();
    if (!remote) {
        for (int rank : stall.holders)
            if (m_pids.count(rank) && localProcessStopped(m_pids[rank]))
                message += QStringLiteral(" [rank %1's process is stopped]").arg(rank);
    } else if (verdict.silent) {
        // Every rank of a host silent while other hosts' ranks still answer: the host is gone
        // (down, or off the network) — a node loss, which restarts can leave out.
        std::map<QString, std::pair<int, int>> perHost; // host -> (ranks, silent ranks)
        for (const auto &[rank, host] : m_hosts)
            ++perHost[host].first;
        for (int rank : stall.holders)
            if (m_hosts.count(rank))
                ++perHost[m_hosts[rank]].second;
        QStringList lost;
        for (const auto &[host, count] : perHost)
            if (count.first > 0 && count.first == count.second)
                lost << host;
        if (!lost.isEmpty() && lost.size() < static_cast<int>(perHost.size())) {
            cause = QStringLiteral("node loss");
            message = QStringLiteral("node loss: %1 stopped answering (every rank there silent, the others alive): %2")
                          .arg(lost.join(QStringLiteral(", ")), QString::fromStdString(detectorMessage));
        }
    }
    message += QStringLiteral("; ") + QString::fromStdString(verdict.reason);
    if (m_watched)
        message += QStringLiteral(" — this job was not launched by Trellis, so it is left running: stop or restart it with its own "
                                  "launcher (scancel, kill, torchrun)");
    closeStall(QStringLiteral("hang"));
    if (m_watched && m_watchedHangRaised && !everyRankSilent(static_cast<qint64>(m_hangConfirmS) * 1000)) {
        m_sinceProgress.restart(); // the same hang, told already
        return;
    }
    raiseEvent(QStringLiteral("hang"), verdict.holder, m_progress.step, message);
    m_watchedHangRaised = m_watched;
    failOrRestart(cause, -1, message, verdict.holder);
}

} // namespace trellis::launcher
