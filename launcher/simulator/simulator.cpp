// See simulator.h.
#include "launcher/simulator/simulator.h"

#include "backend/plan/schedule.h"
#include "backend/protocol/framing.h"
#include "backend/protocol/rank_link.h"
#include "backend/protocol/relay.h"

#include <QCoreApplication>
#include <QProcess>

#include <QMap>
#include <QRegularExpression>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <random>
#include <thread>
#include <utility>
#include <csignal>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace trellis::launcher::simulator {
namespace {

// "R@X" -> (R, X); "R" -> (R, fallback).
bool rankAt(const QString &text, int &rank, double &at, double fallback)
{
    static const QRegularExpression pattern(QStringLiteral("^(\\d+)(?:@(\\d+(?:\\.\\d+)?))?$"));
    const auto m = pattern.match(text);
    if (!m.hasMatch())
        return false;
    rank = m.captured(1).toInt();
    at = m.captured(2).isEmpty() ? fallback : m.captured(2).toDouble();
    return true;
}

using Clock = std::chrono::steady_clock;
constexpr int kRanksPerNode = 8; // the simulated plan's nodes (simulatedPlan) and connections

std::string simulatedHost(int rank)
{
    char h[32];
    std::snprintf(h, sizeof h, "sim-node-%03d", rank / kRanksPerNode);
    return std::string(h);
}

// How long acknowledgements take: each rank has one message at a time under watch (the first
// sent after the last one watched was acknowledged); every 100 ms the watched messages that have
// been acknowledged since give their wait (to within those 100 ms).
class AckWatch {
public:
    explicit AckWatch(int ranks) : m_probes(static_cast<std::size_t>(ranks)) {}
    void sent(int rank, std::uint64_t seq)
    {
        Probe &probe = m_probes[static_cast<std::size_t>(rank)];
        if (!probe.active)
            probe = {seq, Clock::now(), true};
    }
    // `unacknowledgedFrom(rank)`: the rank's oldest sequence number not acknowledged yet.
    template <class UnacknowledgedFrom>
    void check(UnacknowledgedFrom unacknowledgedFrom)
    {
        const auto now = Clock::now();
        if (now < m_nextCheck)
            return;
        m_nextCheck = now + std::chrono::milliseconds(100);
        for (std::size_t r = 0; r < m_probes.size(); ++r) {
            Probe &probe = m_probes[r];
            if (!probe.active || unacknowledgedFrom(static_cast<int>(r)) <= probe.seq)
                continue;
            const double waited = std::chrono::duration<double>(now - probe.sent).count();
            m_longestS = std::max(m_longestS, waited);
            ++m_waits;
            m_over2s += waited > 2.0;
            probe.active = false;
        }
    }
    std::string summary() const
    {
        char text[200];
        std::snprintf(text, sizeof text,
                      "simulated ranks: acknowledgements came within %.2f s (the longest of %llu watched messages; %llu waited over 2 s)",
                      m_longestS, static_cast<unsigned long long>(m_waits), static_cast<unsigned long long>(m_over2s));
        return text;
    }

private:
    struct Probe {
        std::uint64_t seq = 0;
        Clock::time_point sent;
        bool active = false;
    };
    std::vector<Probe> m_probes;
    double m_longestS = 0;
    std::uint64_t m_waits = 0, m_over2s = 0;
    Clock::time_point m_nextCheck;
};

// The simulated ranks of simulateRanks(): their links to the receiver and what their reports
// are made from.
struct SimulatedRanks {
    SimulatedRanks(const SimulationOptions &options, std::string id)
        : s(options), runId(std::move(id)), seq(static_cast<std::size_t>(options.ranks), 0),
          sentSinceBeat(static_cast<std::size_t>(options.ranks), 0), acks(options.ranks),
          perStage(options.ranks / std::max(1, options.pp)), stepMs(1000.0 / options.hz)
    {
        context.set(zmq::ctxopt::max_sockets, s.ranks / kRanksPerNode + s.relays * kRanksPerNode + 64); // ZeroMQ's default is 1023 per context
    }

    double elapsed() const { return std::chrono::duration<double>(Clock::now() - start).count(); }
    bool silent(int r) const { return r == s.silentRank && elapsed() >= s.silentAfterS; }
    // A silent rank is a stopped process, as after SIGSTOP: a stand-in child process (its pid in
    // the rank's Hello, so the supervisor sees a stopped process there) is stopped when the rank
    // falls silent. From then on the job hangs as a real one does: every other rank waits in the
    // dp all-reduce of the step it was on (the only thing it sends is heartbeats naming the call).
    pid_t standIn = -1;
    bool hung = false;
    qint64 hungStep = 0;
    std::int64_t hungSinceNs = 0;
    void pumpAll()
    {
        for (auto &n : nodes)
            n->pump();
        for (auto &l : relayed)
            l->pump();
        acks.check([this](int r) { return linkOf(r).unacknowledgedFrom(); });
    }
    std::size_t held() const
    {
        std::size_t n = 0;
        for (const auto &node : nodes)
            n += node->held();
        for (const auto &l : relayed)
            n += l->held();
        return n;
    }
    void send(int r, proto::Envelope &e)
    {
        e.set_run_id(runId);
        e.set_rank(static_cast<std::uint32_t>(r));
        e.set_seq(seq[r]++);
        e.set_sent_ns(proto::nowNs());
        e.set_protocol_version(proto::kProtocolVersion);
        proto::RankLink &link = linkOf(r);
        e.set_dropped(link.dropped());
        link.push(e.seq(), proto::encodeEnvelope(e));
        sentSinceBeat[static_cast<std::size_t>(r)] = 1;
        acks.sent(r, e.seq());
    }

    const SimulationOptions &s;
    std::string runId;
    zmq::context_t context{2};
    // A connection per simulated node of kRanksPerNode ranks (sim-node-NNN), as a node's relay
    // presents its ranks to the supervisor: 16,384 ranks are 2048 connections, not 16,384.
    // The first s.relays nodes' ranks: a connection each to their node's real relay process.
    std::vector<std::unique_ptr<proto::NodeLink>> nodes;
    std::vector<std::unique_ptr<proto::RankLink>> relayed;
    std::vector<std::unique_ptr<QProcess>> relayProcesses;
    proto::RankLink &linkOf(int r)
    {
        if (static_cast<std::size_t>(r) < relayed.size())
            return *relayed[static_cast<std::size_t>(r)];
        return nodes[static_cast<std::size_t>(r / kRanksPerNode - s.relays)]->link(static_cast<std::uint32_t>(r));
    }
    std::vector<std::uint64_t> seq;
    std::vector<char> sentSinceBeat; // per rank: sent anything since the last heartbeat tick
    AckWatch acks;
    int perStage;
    plan::Simulation pipeline;
    double bubbleShare = 0;
    double stepMs;
    Clock::time_point start;
    Clock::time_point nextHeartbeat;
    std::mt19937 rng{7};
    std::normal_distribution<double> noise{0.0, 1.0};
};

void sendHellos(SimulatedRanks &sim)
{
    const SimulationOptions &s = sim.s;
    for (int r = 0; r < s.ranks; ++r) {
        proto::Envelope e;
        auto *h = e.mutable_hello();
        h->set_host(simulatedHost(r));
        h->set_relay("node" + std::to_string(r / kRanksPerNode * kRanksPerNode)); // its node's connection stands for a relay
        h->set_pid(static_cast<std::uint32_t>(r == s.silentRank && sim.standIn > 0 ? sim.standIn : ::getpid()));
        h->set_device("cpu (simulated)");
        h->set_world_size(static_cast<std::uint32_t>(s.ranks));
        h->mutable_coords()->set_dp(static_cast<std::uint32_t>(r % sim.perStage));
        h->mutable_coords()->set_pp(static_cast<std::uint32_t>(r / sim.perStage));
        h->set_trainer_version("simulated");
        h->set_parameters(1'000'000);
        sim.send(r, e);
    }
}

// Pump while waiting, so acknowledgements are read and resends go out on time; a heartbeat tick
// every 500 ms, at which the ranks that are not silent and sent nothing since the last tick send
// one (as trellis-trainer's ranks do).
void pumpUntil(SimulatedRanks &sim, Clock::time_point due, qint64 step)
{
    while (Clock::now() < due) {
        sim.pumpAll();
        if (Clock::now() >= sim.nextHeartbeat) {
            for (int r = 0; r < sim.s.ranks; ++r) {
                char &sent = sim.sentSinceBeat[static_cast<std::size_t>(r)];
                if (std::exchange(sent, 0) || sim.silent(r))
                    continue;
                proto::Envelope hb;
                auto *h = hb.mutable_heartbeat();
                h->set_step(static_cast<std::uint64_t>(sim.hung ? sim.hungStep : step - 1));
                h->set_phase(sim.hung ? "comm" : "forward");
                if (sim.hung) {
                    h->set_collective("dp all_reduce");
                    h->set_collective_group("dp");
                    h->set_collective_op("all_reduce");
                    h->set_collective_call(static_cast<std::uint64_t>(sim.hungStep));
                    h->set_collective_since_ns(sim.hungSinceNs);
                    h->set_collective_bytes(4'000'000);
                }
                sim.send(r, hb);
                sent = 0;
            }
            sim.nextHeartbeat += std::chrono::milliseconds(500);
        }
        std::this_thread::sleep_until(std::min(due, Clock::now() + std::chrono::milliseconds(5)));
    }
}

// A traced step: the first rank of each stage sends its actions' spans, the simulated
// schedule scaled to this step's compute window.
void sendSpans(SimulatedRanks &sim, int r, qint64 step, double slow, std::int64_t stepOrigin)
{
    const int stage = r / sim.perStage;
    if (!sim.pipeline.completed || r % sim.perStage != 0 || step % sim.s.traceEvery != 0 ||
        static_cast<std::size_t>(stage) >= sim.pipeline.timeline.size())
        return;
    const double scale = sim.stepMs * 0.6 * slow / std::max(1e-9, sim.pipeline.makespan) * 1e6; // ns per unit
    proto::Envelope t;
    auto *batch = t.mutable_spans();
    batch->set_step(static_cast<std::uint64_t>(step));
    for (const plan::TimedAction &a : sim.pipeline.timeline[static_cast<std::size_t>(stage)]) {
        if (a.action.kind == plan::ActionKind::OptimizerStep)
            continue;
        auto *span = batch->add_spans();
        span->set_name(plan::toString(a.action.kind));
        span->set_micro_batch(a.action.microBatch);
        span->set_stage(a.action.chunk);
        span->set_start_ns(stepOrigin + static_cast<std::int64_t>(a.start * scale));
        span->set_end_ns(stepOrigin + static_cast<std::int64_t>(a.end * scale));
    }
    sim.send(r, t);
}

// One rank's reports for a step: the step, its all-reduce, and on a traced step its spans.
void sendStepReports(SimulatedRanks &sim, int r, qint64 step, double loss, std::int64_t stepOrigin)
{
    const SimulationOptions &s = sim.s;
    const double stepMs = sim.stepMs;
    const qint64 steps = s.steps();
    const double slow = r == s.slowRank && step >= s.slowFromStep ? 2.0 : 1.0;
    const double jitter = 1.0 + 0.03 * sim.noise(sim.rng);
    // A pipeline's bubble takes its share of the step; compute fills the rest of 60 %.
    const double bubble = stepMs * 0.6 * sim.bubbleShare;
    const double compute = (stepMs * 0.6 - bubble) * jitter * slow;
    const double comm = stepMs * 0.25;
    proto::Envelope e;
    auto *st = e.mutable_step();
    st->set_step(static_cast<std::uint64_t>(step));
    st->set_step_ms(std::max(stepMs, compute + bubble + comm * 0.3));
    st->set_compute_ms(compute);
    st->set_comm_ms(comm);
    st->set_comm_exposed_ms(comm * 0.3);
    st->set_bubble_ms(bubble);
    st->set_idle_ms(std::max(0.0, stepMs - compute - bubble - comm * 0.3));
    st->set_tokens(8192);
    st->set_tokens_per_s(8192 / (st->step_ms() / 1000.0));
    st->set_loss(loss);
    st->set_grad_norm(1.0 + 0.5 * std::exp(-static_cast<double>(step) / 50.0));
    st->set_lr(3e-4);
    st->set_total_steps(static_cast<std::uint64_t>(steps));
    auto *m = st->mutable_memory();
    m->set_parameters(4'000'000);
    m->set_gradients(4'000'000);
    m->set_optimizer(8'000'000);
    m->set_activations(12'000'000);
    m->set_comm_buffers(1'000'000);
    m->set_peak_rss(64'000'000);
    sim.send(r, e);
    proto::Envelope c;
    auto *cs = c.mutable_collective();
    cs->set_step(static_cast<std::uint64_t>(step));
    cs->set_group("dp");
    cs->set_op("all_reduce");
    cs->set_bytes(16'000'000);
    cs->set_ms(comm);
    cs->set_bus_gbps(2.0 * (s.ranks - 1) / s.ranks * 16e6 / (comm / 1000.0) / 1e9);
    cs->set_count(1);
    sim.send(r, c);
    sendSpans(sim, r, step, slow, stepOrigin);
}

void sendGoodbyes(SimulatedRanks &sim)
{
    for (int r = 0; r < sim.s.ranks; ++r) {
        if (sim.silent(r))
            continue;
        proto::Envelope e;
        e.mutable_goodbye()->set_exit_code(0);
        e.mutable_goodbye()->set_reason("completed");
        e.mutable_goodbye()->set_steps_done(static_cast<std::uint64_t>(sim.s.steps()));
        sim.send(r, e);
    }
}

// Everything acknowledged, or 120 s: a supervisor behind by a backlog (it holds the ranks back
// while its history catches up) takes a while to take the last of it.
void waitForAcknowledgements(SimulatedRanks &sim)
{
    const auto deadline = Clock::now() + std::chrono::seconds(120);
    for (;;) {
        sim.pumpAll();
        if (sim.held() == 0 || Clock::now() >= deadline)
            break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    // Each ends once its ranks' Goodbyes are acknowledged; a node with a silent rank never has all.
    for (std::size_t node = 0; node < sim.relayProcesses.size(); ++node) {
        QProcess &relay = *sim.relayProcesses[node];
        const bool silentHere = sim.s.silentRank >= 0 && static_cast<std::size_t>(sim.s.silentRank / kRanksPerNode) == node;
        if (silentHere || !relay.waitForFinished(10000))
            relay.kill();
        relay.waitForFinished(1000);
    }
}

// The silent rank's process: a child that only waits (and dies with this process, stopped or
// not), stopped with SIGSTOP when the rank falls silent; killed and reaped when done.
struct StandIn {
    explicit StandIn(bool wanted)
    {
        if (!wanted)
            return;
        const pid_t parent = ::getpid();
        pid = ::fork();
        if (pid == 0) { // only async-signal-safe calls here
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (::getppid() != parent)
                ::_exit(0);
            for (;;)
                ::pause();
        }
    }
    ~StandIn()
    {
        if (pid > 0) {
            ::kill(pid, SIGKILL);
            ::waitpid(pid, nullptr, 0);
        }
    }
    StandIn(const StandIn &) = delete;
    StandIn &operator=(const StandIn &) = delete;
    pid_t pid = -1;
};

// The first s.relays nodes: a relay process each (trellis-trainer --relay, in the node's relay
// folder) and a connection per rank to it. "" or why not.
QString startRelays(SimulatedRanks &sim, const std::string &endpoint)
{
    const QString program = QCoreApplication::applicationDirPath() + QStringLiteral("/trellis-trainer");
    for (int node = 0; node < sim.s.relays; ++node) {
        std::string error;
        const std::string folder = proto::relayFolder(sim.runId, "node" + std::to_string(node * kRanksPerNode), error);
        if (folder.empty())
            return QString::fromStdString(error);
        QStringList ranks;
        for (int r = node * kRanksPerNode; r < (node + 1) * kRanksPerNode; ++r)
            ranks << QString::number(r);
        auto relay = std::make_unique<QProcess>();
        relay->setProcessChannelMode(QProcess::MergedChannels); // its log where a trainer's relay keeps it
        relay->setStandardOutputFile(QString::fromStdString(folder) + QStringLiteral("/relay.log"), QIODevice::Append);
        relay->setStandardInputFile(QProcess::nullDevice());
        relay->start(program, {QStringLiteral("--relay"), QStringLiteral("--run-id"), QString::fromStdString(sim.runId),
                               QStringLiteral("--folder"), QString::fromStdString(folder), QStringLiteral("--endpoint"),
                               QString::fromStdString(endpoint), QStringLiteral("--ranks"), ranks.join(QLatin1Char(',')),
                               QStringLiteral("--idle-exit-s"), QStringLiteral("10")});
        if (!relay->waitForStarted(10000))
            return QStringLiteral("cannot start the relay %1: %2").arg(program, relay->errorString());
        sim.relayProcesses.push_back(std::move(relay));
        for (int r = node * kRanksPerNode; r < (node + 1) * kRanksPerNode; ++r)
            sim.relayed.push_back(std::make_unique<proto::RankLink>(
                sim.context, proto::RankLink::Options{proto::relayEndpoint(folder), sim.runId, static_cast<std::uint32_t>(r), 65536, 2000, {}}));
    }
    return {};
}

} // namespace

QString parseSimulation(const QMap<QString, QString> &o, SimulationOptions &out)
{
    bool ok = true;
    if (o.contains(QStringLiteral("--ranks"))) {
        out.ranks = o[QStringLiteral("--ranks")].toInt(&ok);
        if (!ok || out.ranks < 1 || out.ranks > 65536)
            return QStringLiteral("--ranks expects 1 to 65536, got '%1'").arg(o[QStringLiteral("--ranks")]);
    }
    if (o.contains(QStringLiteral("--hz"))) {
        out.hz = o[QStringLiteral("--hz")].toDouble(&ok);
        if (!ok || !(out.hz > 0) || out.hz > 1000)
            return QStringLiteral("--hz expects steps per second in (0, 1000], got '%1'").arg(o[QStringLiteral("--hz")]);
    }
    if (o.contains(QStringLiteral("--seconds"))) {
        out.seconds = o[QStringLiteral("--seconds")].toDouble(&ok);
        if (!ok || !(out.seconds > 0) || out.seconds > 7 * 86400)
            return QStringLiteral("--seconds expects a duration in (0, 604800], got '%1'").arg(o[QStringLiteral("--seconds")]);
    }
    if (o.contains(QStringLiteral("--pp"))) {
        out.pp = o[QStringLiteral("--pp")].toInt(&ok);
        if (!ok || out.pp < 1 || out.pp > 64 || out.ranks % out.pp != 0)
            return QStringLiteral("--pp expects 1 to 64 pipeline stages dividing --ranks (%1), got '%2'")
                .arg(out.ranks)
                .arg(o[QStringLiteral("--pp")]);
    }
    auto rankOption = [&](const char *name, int &rank, double &at, double fallback) -> QString {
        const QString key = QString::fromLatin1(name);
        if (!o.contains(key))
            return {};
        if (!rankAt(o[key], rank, at, fallback) || rank >= out.ranks)
            return QStringLiteral("%1 expects RANK or RANK@VALUE with a rank below %2, got '%3'").arg(key).arg(out.ranks).arg(o[key]);
        return {};
    };
    double slowFrom = 5;
    if (QString e = rankOption("--slow", out.slowRank, slowFrom, 5); !e.isEmpty())
        return e;
    out.slowFromStep = static_cast<qint64>(slowFrom);
    if (QString e = rankOption("--silent", out.silentRank, out.silentAfterS, 1); !e.isEmpty())
        return e;
    if (QString e = rankOption("--crash", out.crashRank, out.crashAfterS, 1); !e.isEmpty())
        return e;
    if (o.contains(QStringLiteral("--relays"))) {
        out.relays = o[QStringLiteral("--relays")].toInt(&ok);
        if (!ok || out.relays < 0 || out.relays > out.ranks / kRanksPerNode || out.relays > 64)
            return QStringLiteral("--relays expects 0 to %1 nodes of %2 ranks (at most 64), got '%3'")
                .arg(std::min(64, out.ranks / kRanksPerNode))
                .arg(kRanksPerNode)
                .arg(o[QStringLiteral("--relays")]);
    }
    if (o.contains(QStringLiteral("--nice"))) {
        out.nice = o[QStringLiteral("--nice")].toInt(&ok);
        if (!ok || out.nice < 0 || out.nice > 19)
            return QStringLiteral("--nice expects 0 to 19, got '%1'").arg(o[QStringLiteral("--nice")]);
    }
    return {};
}

QStringList simulationArguments(const SimulationOptions &s)
{
    QStringList a{QStringLiteral("--ranks"), QString::number(s.ranks), QStringLiteral("--hz"), QString::number(s.hz),
                  QStringLiteral("--seconds"), QString::number(s.seconds)};
    if (s.pp > 1)
        a << QStringLiteral("--pp") << QString::number(s.pp);
    if (s.slowRank >= 0)
        a << QStringLiteral("--slow") << QStringLiteral("%1@%2").arg(s.slowRank).arg(s.slowFromStep);
    if (s.silentRank >= 0)
        a << QStringLiteral("--silent") << QStringLiteral("%1@%2").arg(s.silentRank).arg(s.silentAfterS);
    if (s.crashRank >= 0)
        a << QStringLiteral("--crash") << QStringLiteral("%1@%2").arg(s.crashRank).arg(s.crashAfterS);
    if (s.relays > 0)
        a << QStringLiteral("--relays") << QString::number(s.relays);
    a << QStringLiteral("--nice") << QString::number(s.nice);
    return a;
}

plan::Plan simulatedPlan(const SimulationOptions &s)
{
    plan::Plan p;
    p.name = "simulated-" + std::to_string(s.ranks);
    p.model.preset = "tiny";
    p.model.layers = std::max(2, s.pp);
    p.model.hidden = 64;
    p.model.heads = 4;
    p.model.kvHeads = 4;
    p.model.ffn = 256;
    p.model.seqLen = 64;
    p.model.vocab = 256;
    for (int first = 0, node = 0; first < s.ranks; first += 8, ++node) {
        char host[32];
        std::snprintf(host, sizeof host, "sim-node-%03d", node);
        p.cluster.nodes.push_back({host, std::min(8, s.ranks - first), plan::DeviceKind::Cpu, {}, {}, 0, {}, {}});
    }
    p.parallel.dp = s.ranks / std::max(1, s.pp);
    p.parallel.pp = s.pp;
    p.parallel.microBatches = s.pp > 1 ? s.microBatches : 1;
    if (s.pp > 1)
        p.telemetry.traceEvery = s.traceEvery;
    p.training.steps = static_cast<int>(s.steps());
    p.training.data.source = "synthetic";
    p.telemetry.heartbeatMs = 500;
    return p;
}

void raiseOpenFileLimit()
{
    rlimit limit {};
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &limit);
    }
}

int simulateRanks(const QStringList &args)
{
    raiseOpenFileLimit();
    QMap<QString, QString> o;
    for (int i = 0; i + 1 < args.size(); i += 2)
        o[args[i]] = args[i + 1];
    SimulationOptions s;
    if (const QString e = parseSimulation(o, s); !e.isEmpty() || !o.contains(QStringLiteral("--endpoint")) ||
                                                  !o.contains(QStringLiteral("--run-id"))) {
        std::fprintf(stderr, "usage: trellis-cli simulate-ranks --endpoint E --run-id ID [--ranks N] [--hz H] [--seconds S]\n"
                             "       [--slow R@STEP] [--silent R@SEC] [--crash R@SEC] [--relays K] [--nice N]\n(started by trellis-cli simulate)%s%s\n",
                     e.isEmpty() ? "" : "\n", qPrintable(e));
        return 2;
    }
    const std::string endpoint = o[QStringLiteral("--endpoint")].toStdString();
    const qint64 steps = s.steps();
    if (s.nice > 0) // lowering one's own priority needs no privilege; a failure leaves it as it was
        (void)::setpriority(PRIO_PROCESS, 0, std::min(19, ::getpriority(PRIO_PROCESS, 0) + s.nice));
    const StandIn standIn(s.silentRank >= 0); // before any thread is started
    SimulatedRanks sim(s, o[QStringLiteral("--run-id")].toStdString());
    sim.standIn = standIn.pid;
    if (const QString e = startRelays(sim, endpoint); !e.isEmpty()) {
        std::fprintf(stderr, "trellis-cli simulate-ranks: %s\n", qPrintable(e));
        return 2;
    }
    for (int first = s.relays * kRanksPerNode; first < s.ranks; first += kRanksPerNode) {
        std::vector<std::uint32_t> ranks;
        for (int r = first; r < std::min(s.ranks, first + kRanksPerNode); ++r)
            ranks.push_back(static_cast<std::uint32_t>(r));
        sim.nodes.push_back(std::make_unique<proto::NodeLink>(sim.context, proto::RankLink::Options{endpoint, sim.runId, 0, 65536, 2000, {}},
                                                              ranks));
    }
    // The pipeline: the 1f1b schedule simulated with equal costs gives each stage's actions (as
    // fractions of the compute window) and the bubble every stage reports.
    if (s.pp > 1)
        if (auto schedule = plan::generateSchedule("1f1b", s.pp, s.microBatches, 1))
            sim.pipeline = plan::simulateSchedule(schedule.value(), plan::ScheduleCosts::uniform(schedule.value(), 1, 2, 0));
    sim.bubbleShare = sim.pipeline.completed ? sim.pipeline.bubbleFraction : 0.0;
    sendHellos(sim);
    sim.start = Clock::now();
    sim.nextHeartbeat = sim.start;
    const auto period = std::chrono::duration<double>(1.0 / s.hz);

    for (qint64 step = 1; step <= steps; ++step) {
        const auto due = sim.start + std::chrono::duration_cast<Clock::duration>(period * static_cast<double>(step));
        pumpUntil(sim, due, step);
        if (s.crashRank >= 0 && sim.elapsed() >= s.crashAfterS) {
            std::fprintf(stderr, "prterun noticed that process rank %d with PID 0 on node %s exited on signal 9 (Killed).\n",
                         s.crashRank, simulatedHost(s.crashRank).c_str());
            sim.pumpAll();
            return 137;
        }
        if (!sim.hung && s.silentRank >= 0 && sim.silent(s.silentRank)) {
            if (standIn.pid > 0)
                ::kill(standIn.pid, SIGSTOP);
            sim.hung = true;
            sim.hungStep = step;
            sim.hungSinceNs = proto::nowNs();
        }
        if (sim.hung)
            continue; // every rank waits in this step's all-reduce for the stopped one
        const std::int64_t stepOrigin = proto::nowNs(); // the traced step's start, shared by its stages
        const double loss = 2.0 + 3.5 * std::exp(-3.0 * static_cast<double>(step) / static_cast<double>(steps)) + 0.02 * sim.noise(sim.rng);
        for (int r = 0; r < s.ranks; ++r)
            if (!sim.silent(r))
                sendStepReports(sim, r, step, loss, stepOrigin);
        sim.pumpAll();
    }
    // What the acknowledgements took, as rank 0's last event (the history keeps it with the run).
    const std::string note = sim.acks.summary();
    std::fprintf(stderr, "%s\n", note.c_str());
    if (!sim.silent(0)) {
        proto::Envelope e;
        e.mutable_event()->set_kind(proto::Event::INFO);
        e.mutable_event()->set_step(static_cast<std::uint64_t>(steps));
        e.mutable_event()->set_message(note);
        sim.send(0, e);
    }
    sendGoodbyes(sim);
    waitForAcknowledgements(sim);
    std::uint64_t sent = 0, resent = 0;
    for (int r = 0; r < s.ranks; ++r) {
        sent += sim.linkOf(r).sent();
        resent += sim.linkOf(r).resent();
    }
    std::fprintf(stderr, "simulate-ranks: %llu messages sent, %llu of them again (resent), %zu not acknowledged\n",
                 static_cast<unsigned long long>(sent), static_cast<unsigned long long>(resent), sim.held());
    return 0;
}

} // namespace trellis::launcher::simulator
