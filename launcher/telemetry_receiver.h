// Receives rank telemetry. One thread owns the ZeroMQ PULL socket (created, bound, polled and
// closed there); it validates every frame (protocol/framing.h), tracks per-rank sequence numbers
// to count lost and duplicated messages, and appends good envelopes to a locked inbox. The owner
// is notified once per batch (when the inbox goes from empty to non-empty), never per message,
// and drains the inbox on its own thread. Threading: start/stop/drain/stats from the owner thread;
// the notify callback runs on the receiver thread and must only schedule work.
#pragma once

#include "launcher/run_types.h"
#include "protocol/telemetry.pb.h"

#include <QString>

#include <atomic>
#include <functional>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace trellis::launcher {

class TelemetryReceiver {
public:
    TelemetryReceiver();
    ~TelemetryReceiver();
    TelemetryReceiver(const TelemetryReceiver &) = delete;
    TelemetryReceiver &operator=(const TelemetryReceiver &) = delete;

    // Binds `bindEndpoint` (default: an ephemeral loopback TCP port) on the receiver thread.
    // Returns "" on success, else the reason. endpoint() then names the bound address.
    QString start(const std::string &expectedRunId, quint32 worldSize,
                  const std::string &bindEndpoint = "tcp://127.0.0.1:*");
    void stop();
    std::string endpoint() const { return m_endpoint; }

    void setNotify(std::function<void()> notify) { m_notify = std::move(notify); }
    std::vector<proto::Envelope> drain();
    ReceiverStats stats() const;

private:
    void run(std::string bindEndpoint, std::promise<QString> *ready);
    void accept(proto::Envelope &&envelope);

    std::string m_runId;
    quint32 m_worldSize = 0;
    std::string m_endpoint;
    std::function<void()> m_notify;
    std::atomic<bool> m_stop{false};
    std::thread m_thread;
    mutable std::mutex m_mutex;
    std::vector<proto::Envelope> m_inbox; // guarded by m_mutex
    ReceiverStats m_stats;                // guarded by m_mutex
    std::map<quint32, quint64> m_nextSeq; // receiver thread only
};

} // namespace trellis::launcher
