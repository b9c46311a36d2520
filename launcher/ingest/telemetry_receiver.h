// Receives rank telemetry. One thread owns the ZeroMQ ROUTER socket (created, bound, polled and
// closed there); it validates every frame (protocol/framing.h) and accepts each rank's messages
// strictly in sequence: a duplicate is dropped, a gap asks the rank to send again from the first
// missing message (protocol Ack with resend), and a rank's Skip names what it had to give up (lost).
// Accepted envelopes go to a locked inbox; the owner is notified once per batch (when the inbox
// goes from empty to non-empty), never per message, and drains the inbox on its own thread.
// Acknowledgements: with auto-ack (the default) a message is acknowledged once it is in the inbox;
// an owner that stores messages durably turns auto-ack off and calls acknowledge() once they are
// committed, so a rank keeps (and resends) everything a crashed owner never stored. While it is
// behind (reading held back, or a rank's messages received but not yet acknowledged), it tells
// those ranks once a second with a busy Ack, so that they do not take the wait for a lost message
// and send everything again.
// Threading: start/stop/drain/stats/acknowledge from the owner's threads (acknowledge() from any);
// the notify callback runs on the receiver thread and must only schedule work.
#pragma once

#include "launcher/ingest/arena_batch.h"
#include "launcher/run_types.h"
#include "backend/protocol/curve_keys.h"
#include "backend/protocol/telemetry.pb.h"

#include <QString>

#include <atomic>
#include <chrono>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace trellis::launcher {

// Envelopes the receiver accepted, handed over together (launcher/ingest/arena_batch.h).
using EnvelopeBatch = ArenaBatch<proto::Envelope>;

class TelemetryReceiver {
public:
    TelemetryReceiver();
    ~TelemetryReceiver();
    TelemetryReceiver(const TelemetryReceiver &) = delete;
    TelemetryReceiver &operator=(const TelemetryReceiver &) = delete;

    // Binds `bindEndpoint` (default: an ephemeral loopback TCP port) on the receiver thread.
    // `nextSeq`: per rank, the first sequence number not yet stored (a restarted owner resumes
    // there; empty for a new run). Returns "" on success, else the reason. endpoint() then names
    // the bound address.
    QString start(const std::string &expectedRunId, quint32 worldSize,
                  const std::string &bindEndpoint = "tcp://127.0.0.1:*", std::map<quint32, quint64> nextSeq = {});
    void stop();
    std::string endpoint() const { return m_endpoint; }

    // Before start(): accept only CURVE clients holding `keys.clientPublic`, the receiver being the
    // server `keys.serverSecret` (remote hosts). A ZAP handler on the receiver thread refuses any
    // other key (counted in stats().refused and rejected, the address named in lastRejection); a
    // plain (unencrypted) peer fails the handshake. Empty keys: no security (ipc:// in a 0700 folder).
    void setCurve(proto::CurveKeys keys) { m_curve = std::move(keys); }

    void setNotify(std::function<void()> notify) { m_notify = std::move(notify); }
    void setAutoAck(bool on) { m_autoAck = on; }
    // Backpressure: while `overloaded` says so (the owner's history writer is behind), or the
    // inbox holds more than kMaxInbox envelopes, nothing more is read from the socket: the ranks
    // keep what is not acknowledged (their links hold it), so memory here stays bounded and
    // nothing is lost. Called on the receiver's thread.
    static constexpr std::size_t kMaxInbox = 200000;
    // How long a burst that follows a quiet socket is given to arrive before it is read.
    static constexpr std::chrono::milliseconds kGather{20};
    void setOverloaded(std::function<bool()> overloaded) { m_overloaded = std::move(overloaded); }
    // Milliseconds since reading was last held back (-1: never), for judges that must not take a
    // backlog of their own for silence of the ranks (the hang detector).
    qint64 msSinceThrottled() const;
    // Everything below nextSeq[rank] is stored: tell the ranks (sent from the receiver thread).
    // `generation` is generation() when the messages were drained: acknowledgements meant for an
    // earlier start (an earlier attempt's ranks) are ignored.
    void acknowledge(quint64 generation, const std::map<quint32, quint64> &nextSeq);
    quint64 generation() const { return m_generation.load(); }
    EnvelopeBatch drain();
    ReceiverStats stats() const;
    // Per rank, the sequence number the receiver expects next (all below arrived in order).
    std::map<quint32, quint64> cursor() const;
    // Per rank, messages it gave up before they were stored (counted from its Skips).
    std::map<quint32, quint64> lostByRank() const;

private:
    // The receiver thread's work, in steps sharing its sockets (telemetry_receiver.cpp).
    struct RouterState;
    void run(std::string bindEndpoint, std::promise<QString> *ready);
    QString openSockets(RouterState &st, const std::string &bindEndpoint);
    bool waitForWork(RouterState &st);
    void answerZap(RouterState &st);
    void readRound(RouterState &st);
    void decodeFrame(RouterState &st, std::string_view identity, std::string_view frame);
    std::map<quint32, quint64> acceptRound(RouterState &st);
    void askForResends(RouterState &st, const std::map<quint32, quint64> &resends);
    bool sendDueAcks(RouterState &st);
    void sendAck(RouterState &st, quint32 rank, quint64 next, bool resend, quint64 resendFrom, bool busy = false);
    void sendBusyAcks(RouterState &st);
    // Returns true when the envelope is next in its rank's sequence (it goes to the inbox); may ask
    // for a resend through `resendFrom`. Called with m_mutex held.
    bool acceptLocked(const proto::Envelope &envelope, quint64 *resendFrom);

    std::string m_runId;
    proto::CurveKeys m_curve;
    quint32 m_worldSize = 0;
    std::string m_endpoint;
    std::function<void()> m_notify;
    std::atomic<bool> m_autoAck{true};
    std::atomic<quint64> m_generation{0};
    std::atomic<bool> m_stop{false};
    std::function<bool()> m_overloaded;
    std::atomic<qint64> m_throttledAtMs{-1}; // steady clock ms
    std::thread m_thread;
    int m_wake = -1; // eventfd: acknowledge() wakes the receiver thread's poll
    mutable std::mutex m_mutex;
    EnvelopeBatch m_inbox;                    // guarded by m_mutex
    ReceiverStats m_stats;                    // guarded by m_mutex
    std::map<quint32, quint64> m_nextSeq;     // guarded by m_mutex
    std::map<quint32, quint64> m_pendingAcks; // guarded by m_mutex: to send
    std::map<quint32, quint64> m_lost;        // guarded by m_mutex
};

} // namespace trellis::launcher
