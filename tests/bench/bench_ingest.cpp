// Ingest: how many telemetry messages a second the supervisor's path takes in — RANKS links
// (protocol/rank_link.h, acknowledged, as the trainer and the generator send) into the
// TelemetryReceiver (validation, sequencing), decoded into rows, into the dashboards' MetricStore
// and committed by the HistoryWriter (SQLite), each message acknowledged after its commit — against
// a bare ZeroMQ PUSH/PULL loop moving the same encoded messages over the same transport (ipc://)
// in the same run.
// Usage: bench_ingest [RANKS=64] [MESSAGES_PER_RANK=20000] [REPS=3]: the two sides alternate REPS times; medians.
#include "launcher/history/history_database.h"
#include "launcher/history/history_writer.h"
#include "launcher/metrics/metric_store.h"
#include "launcher/ingest/telemetry_receiver.h"
#include "launcher/ingest/telemetry_rows.h"
#include "backend/protocol/framing.h"
#include "backend/protocol/rank_link.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QSqlQuery>
#include <QTemporaryDir>

#include <zmq.hpp>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <random>
#include <thread>

using namespace trellis;

namespace {

// A step report as a trainer sends one: measured times jitter from step to step, the loss and the
// gradient norm drift with noise, the learning rate follows a cosine schedule, memory stays put
// but for the peak RSS, which grows now and then. (Constant fields would flatter the history's
// delta encoding of step records.)
std::string stepMessage(const std::string &runId, std::uint32_t rank, std::uint64_t seq, std::uint64_t step)
{
    std::mt19937_64 rng(rank * 1000003ull + step);
    std::normal_distribution<double> noise(0.0, 1.0);
    const double jitter = 1.0 + 0.03 * noise(rng);
    proto::Envelope e;
    e.set_run_id(runId);
    e.set_rank(rank);
    e.set_seq(seq);
    e.set_sent_ns(proto::nowNs());
    e.set_protocol_version(proto::kProtocolVersion);
    auto *s = e.mutable_step();
    s->set_step(step);
    const double compute = 30.0 * jitter, comm = 10.0 * (1.0 + 0.05 * noise(rng)), exposed = 3.0 * (1.0 + 0.1 * noise(rng));
    s->set_compute_ms(compute);
    s->set_comm_ms(comm);
    s->set_comm_exposed_ms(exposed);
    s->set_step_ms(compute + exposed + 2.0 + rank % 7);
    s->set_tokens(8192);
    s->set_tokens_per_s(8192.0 / (s->step_ms() / 1000.0));
    s->set_loss(3.0 * std::exp(-1e-5 * static_cast<double>(step)) + 0.02 * noise(rng));
    s->set_grad_norm(1.0 + 0.1 * std::abs(noise(rng)));
    s->set_lr(3e-4 * 0.5 * (1.0 + std::cos(3.14159265358979 * static_cast<double>(step) / 100000.0)));
    auto *m = s->mutable_memory();
    m->set_parameters(1 << 24);
    m->set_gradients(1 << 24);
    m->set_optimizer(1 << 25);
    m->set_activations(3 << 22);
    m->set_peak_rss((1 << 28) + static_cast<std::int64_t>(step / 1000) * 4096);
    return proto::encodeEnvelope(e);
}

double barePushPull(int ranks, int perRank, const std::string &endpoint)
{
    zmq::context_t context(1);
    zmq::socket_t pull(context, zmq::socket_type::pull);
    pull.set(zmq::sockopt::rcvhwm, 1000000);
    pull.bind(endpoint);
    const long total = static_cast<long>(ranks) * perRank;
    std::vector<std::string> messages;
    for (int r = 0; r < ranks; ++r)
        messages.push_back(stepMessage("bare", static_cast<std::uint32_t>(r), 0, 1));
    QElapsedTimer t;
    t.start();
    std::thread sender([&] {
        zmq::socket_t push(context, zmq::socket_type::push);
        push.set(zmq::sockopt::sndhwm, 1000000);
        push.connect(endpoint);
        for (int i = 0; i < perRank; ++i)
            for (int r = 0; r < ranks; ++r)
                (void)push.send(zmq::buffer(messages[static_cast<std::size_t>(r)]), zmq::send_flags::none);
    });
    long received = 0;
    zmq::message_t m;
    while (received < total && pull.recv(m, zmq::recv_flags::none))
        ++received;
    const double seconds = t.nsecsElapsed() / 1e9;
    sender.join();
    return total / seconds;
}


struct IngestResult {
    double rate = 0, drainedS = 0, ackedS = 0;
    std::uint64_t lost = 0, duplicates = 0;
    qint64 rowsWritten = 0, stepRows = 0, blobBytes = 0;
};

// One ingest run into a fresh history in `dir`.
IngestResult ingestOnce(int ranks, int perRank, const QString &dir)
{
    IngestResult result;
    const long total = static_cast<long>(ranks) * perRank;
    const std::string runId = "ingest";
    const std::string endpoint = "ipc://" + QDir(dir).filePath(QStringLiteral("telemetry")).toStdString();
    const QString historyPath = QDir(dir).filePath(QStringLiteral("history.sqlite"));
    launcher::HistoryWriter writer(historyPath);
    if (!writer.start().isEmpty())
        return result;
    writer.enqueue(launcher::NewRunOp{QString::fromStdString(runId), QStringLiteral("ingest"), QStringLiteral("{}"),
                                      QStringLiteral("local"), ranks, perRank, QDateTime::currentDateTimeUtc()});
    writer.flush();
    auto receiver = std::make_shared<launcher::TelemetryReceiver>();
    receiver->setAutoAck(false);
    if (!receiver->start(runId, static_cast<quint32>(ranks), endpoint).isEmpty())
        return result;
    launcher::telemetry::MetricStore store(ranks);
    // The ranks' messages, encoded before the clock starts, as the bare loop's are: the ranks
    // encode on their own machines; what is measured is moving and ingesting them.
    std::vector<std::string> encoded;
    encoded.reserve(static_cast<std::size_t>(total));
    for (int i = 0; i < perRank; ++i)
        for (int r = 0; r < ranks; ++r)
            encoded.push_back(stepMessage(runId, static_cast<std::uint32_t>(r), static_cast<std::uint64_t>(i),
                                          static_cast<std::uint64_t>(i + 1)));
    std::atomic<long> consumed{0};
    std::atomic<qint64> drainedAtNs{0}; // when the last message left the receiver
    std::atomic<bool> stop{false};
    QElapsedTimer t;
    t.start();
    // The supervisor's drain: decode, rows, store, history, acknowledge after commit.
    const QString run = QString::fromStdString(runId);
    std::thread consumer([&] {
        while (!stop) {
            auto envelopes = receiver->drain();
            if (envelopes.empty()) {
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
                continue;
            }
            launcher::StepOp steps{run, {}};
            steps.rows.reserve(envelopes.size());
            for (const auto &e : envelopes)
                steps.rows.push_back(launcher::stepRowFrom(e));
            store.append(steps.rows);
            writer.enqueue(std::move(steps));
            const auto cursor = receiver->cursor();
            launcher::CursorOp op{run, {}, {}, false, {}};
            for (const auto &[rank, next] : cursor)
                op.nextSeq[static_cast<int>(rank)] = next;
            op.afterCommit = [receiver, generation = receiver->generation(), cursor] { receiver->acknowledge(generation, cursor); };
            writer.enqueue(std::move(op));
            consumed += static_cast<long>(envelopes.size());
            if (consumed == total)
                drainedAtNs = t.nsecsElapsed();
        }
    });
    // The ranks: one link each, all on one thread, as fast as the links take messages.
    {
        zmq::context_t context(1);
        context.set(zmq::ctxopt::max_sockets, ranks + 64);
        std::vector<std::unique_ptr<proto::RankLink>> links;
        for (int r = 0; r < ranks; ++r)
            links.push_back(std::make_unique<proto::RankLink>(
                context, proto::RankLink::Options{endpoint, runId, static_cast<std::uint32_t>(r), 1u << 20, 60000, {}}));
        for (int i = 0; i < perRank; ++i) {
            for (int r = 0; r < ranks; ++r)
                links[static_cast<std::size_t>(r)]->push(static_cast<std::uint64_t>(i),
                                                         std::move(encoded[static_cast<std::size_t>(i) * ranks + r]));
            if (i % 16 == 15)
                for (auto &l : links)
                    l->pump();
        }
        // Until every message is committed and acknowledged.
        for (;;) {
            std::size_t held = 0;
            for (auto &l : links) {
                l->pump();
                held += l->held();
            }
            if (held == 0)
                break;
            std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
    }
    const double seconds = t.nsecsElapsed() / 1e9;
    stop = true;
    consumer.join();
    writer.flush();
    const auto stats = receiver->stats();
    receiver->stop();
    writer.stop();
    result.rate = total / seconds;
    result.drainedS = drainedAtNs.load() / 1e9;
    result.ackedS = seconds;
    result.lost = stats.lost;
    result.duplicates = stats.duplicates;
    result.rowsWritten = writer.rowsWritten();
    {
        launcher::HistoryDatabase db;
        if (db.open(historyPath, false).isEmpty()) {
            QSqlQuery q(db.connection());
            if (q.exec(QStringLiteral("SELECT coalesce(sum(n), 0), coalesce(sum(length(rows)), 0) FROM step_blocks")) && q.next()) {
                result.stepRows = q.value(0).toLongLong();
                result.blobBytes = q.value(1).toLongLong();
            }
        }
    }
    QFile::remove(historyPath);
    QFile::remove(historyPath + QStringLiteral("-wal"));
    QFile::remove(historyPath + QStringLiteral("-shm"));
    return result;
}

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.empty() ? 0 : v[v.size() / 2];
}

} // namespace

// Usage: bench_ingest [RANKS=64] [MESSAGES_PER_RANK=20000] [REPS=3]; the two sides alternate.
int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    const int ranks = argc > 1 ? std::atoi(argv[1]) : 64;
    const int perRank = argc > 2 ? std::atoi(argv[2]) : 20000;
    const int reps = argc > 3 ? std::max(1, std::atoi(argv[3])) : 3;
    if (ranks < 1 || perRank < 1) {
        std::fprintf(stderr, "usage: bench_ingest [RANKS] [MESSAGES_PER_RANK] [REPS]\n");
        return 2;
    }
    QTemporaryDir dir;
    std::vector<double> oursRates, bareRates;
    bool clean = true;
    for (int rep = 0; rep < reps; ++rep) {
        const IngestResult r = ingestOnce(ranks, perRank, dir.path());
        const double bare = barePushPull(ranks, perRank, "ipc://" + dir.filePath(QStringLiteral("bare")).toStdString());
        oursRates.push_back(r.rate);
        bareRates.push_back(bare);
        clean = clean && r.lost == 0 && r.duplicates == 0 && r.stepRows == static_cast<qint64>(ranks) * perRank;
        std::printf("run %d: ingested %.0f msg/s (the last message drained at %.3f s, its commit acknowledged at %.3f s; "
                    "lost %llu, duplicates %llu, %lld step rows stored in %.1f bytes each); bare %.0f msg/s; ratio %.2f\n",
                    rep + 1, r.rate, r.drainedS, r.ackedS, static_cast<unsigned long long>(r.lost),
                    static_cast<unsigned long long>(r.duplicates), static_cast<long long>(r.stepRows),
                    r.stepRows > 0 ? static_cast<double>(r.blobBytes) / static_cast<double>(r.stepRows) : 0.0, bare, r.rate / bare);
    }
    const double ours = median(oursRates), bare = median(bareRates);
    std::printf("%d ranks x %d step reports (%zu bytes each), median of %d: ingested (received, decoded, stored, committed to "
                "SQLite, acknowledged) at %.0f msg/s; bare ZeroMQ PUSH/PULL of the same messages %.0f msg/s; ratio %.2f "
                "(targets: >= 0.5 and >= 500k msg/s)%s\n",
                ranks, perRank, stepMessage("ingest", 0, 0, 1).size(), reps, ours, bare, ours / bare,
                clean ? "" : "; MESSAGES WERE LOST, DUPLICATED OR NOT STORED");
    return clean ? 0 : 1;
}
