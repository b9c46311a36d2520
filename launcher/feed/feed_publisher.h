// The supervisor's side of the live feed (protocol/feed.proto): a ZeroMQ PUB socket on the run's
// ipc:// endpoint in the private run directory. Every send is non-blocking; a subscriber too slow
// to keep up loses messages (it sees the gap in FeedMessage.seq), never the run.
// Threading: one thread (the supervisor's main thread) uses it.
#pragma once

#include "backend/protocol/feed.pb.h"
#include "launcher/run_types.h"

#include <QString>

#include <memory>
#include <string>

namespace zmq {
class context_t;
class socket_t;
} // namespace zmq

namespace trellis::launcher {

class FeedPublisher {
public:
    FeedPublisher();
    ~FeedPublisher();
    FeedPublisher(const FeedPublisher &) = delete;
    FeedPublisher &operator=(const FeedPublisher &) = delete;

    QString bind(const std::string &endpoint); // "" or why not
    // A rank's message, sent with the others of its batch by flush() (or sooner, when the batch
    // reaches kBatchBytes or another kind of message follows).
    void telemetry(const proto::Envelope &envelope);
    void flush();
    void status(const proto::RunStatus &status);
    void alert(const QString &kind, const QString &message);
    void stall(const StallRow &stall);
    void output(int rank, bool isStderr, const QString &text);
    quint64 sent() const { return m_seq; }

    // A telemetry batch is sent once it holds this much; a slow subscriber's queue holds
    // kQueuedFrames frames of at most about this size.
    static constexpr std::size_t kBatchBytes = 64 * 1024;
    static constexpr int kQueuedFrames = 512;

private:
    void send(proto::FeedMessage &message);
    void sendFrame(const std::string &bytes);

    std::unique_ptr<zmq::context_t> m_context;
    std::unique_ptr<zmq::socket_t> m_socket;
    quint64 m_seq = 0;
    std::string m_batch; // the parts of the TelemetryBatch being gathered
    // Fault injection for tests, as a subscriber too slow for the publisher's queue sees it (the
    // report not sent, its sequence number skipped): TRELLIS_FEED_DROP_EVERY=N drops every N-th
    // step report, TRELLIS_FEED_DROP_FROM_STEP=S every report of step S or later (a lost tail).
    quint64 m_dropEvery = 0, m_steps = 0;
    qint64 m_dropFromStep = 0;
};

} // namespace trellis::launcher
