// See telemetry_receiver.h.
#include "launcher/telemetry_receiver.h"

#include "protocol/framing.h"

#include <zmq.hpp>

namespace trellis::launcher {

TelemetryReceiver::TelemetryReceiver() = default;

TelemetryReceiver::~TelemetryReceiver() { stop(); }

QString TelemetryReceiver::start(const std::string &expectedRunId, quint32 worldSize, const std::string &bindEndpoint)
{
    stop();
    m_runId = expectedRunId;
    m_worldSize = worldSize;
    m_stop = false;
    m_nextSeq.clear();
    std::promise<QString> ready;
    auto result = ready.get_future();
    m_thread = std::thread([this, bindEndpoint, &ready] { run(bindEndpoint, &ready); });
    const QString error = result.get();
    if (!error.isEmpty())
        m_thread.join();
    return error;
}

void TelemetryReceiver::stop()
{
    m_stop = true;
    if (m_thread.joinable())
        m_thread.join();
}

std::vector<proto::Envelope> TelemetryReceiver::drain()
{
    std::lock_guard lock(m_mutex);
    std::vector<proto::Envelope> out;
    out.swap(m_inbox);
    return out;
}

ReceiverStats TelemetryReceiver::stats() const
{
    std::lock_guard lock(m_mutex);
    return m_stats;
}

void TelemetryReceiver::run(std::string bindEndpoint, std::promise<QString> *ready)
{
    zmq::context_t context(1);
    zmq::socket_t socket(context, zmq::socket_type::pull);
    socket.set(zmq::sockopt::rcvhwm, 100000);
    socket.set(zmq::sockopt::linger, 0);
    socket.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(proto::kMaxFrameBytes));
    try {
        socket.bind(bindEndpoint);
        m_endpoint = socket.get(zmq::sockopt::last_endpoint);
    } catch (const zmq::error_t &e) {
        ready->set_value(QStringLiteral("telemetry: cannot bind %1 (%2)")
                             .arg(QString::fromStdString(bindEndpoint), QString::fromUtf8(e.what())));
        return;
    }
    ready->set_value(QString());

    zmq::pollitem_t items[] = {{socket.handle(), 0, ZMQ_POLLIN, 0}};
    while (!m_stop.load()) {
        try {
            zmq::poll(items, 1, std::chrono::milliseconds(50));
        } catch (const zmq::error_t &) {
            continue;
        }
        if (!(items[0].revents & ZMQ_POLLIN))
            continue;
        // Take everything available before notifying, so the owner sees one batch.
        for (int i = 0; i < 10000; ++i) {
            zmq::message_t message;
            zmq::recv_result_t got;
            try {
                got = socket.recv(message, zmq::recv_flags::dontwait);
            } catch (const zmq::error_t &) {
                break;
            }
            if (!got)
                break;
            proto::Envelope envelope;
            auto decoded = proto::decodeEnvelope(std::string_view(static_cast<const char *>(message.data()), message.size()),
                                                 envelope, m_worldSize);
            if (decoded.ok && !m_runId.empty() && envelope.run_id() != m_runId)
                decoded = {false, "run_id '" + envelope.run_id() + "' does not belong to this run"};
            if (!decoded.ok) {
                std::lock_guard lock(m_mutex);
                ++m_stats.rejected;
                m_stats.lastRejection = QString::fromStdString(decoded.error);
                continue;
            }
            accept(std::move(envelope));
        }
        bool notify = false;
        {
            std::lock_guard lock(m_mutex);
            notify = !m_inbox.empty();
        }
        if (notify && m_notify)
            m_notify();
    }
    socket.close();
}

void TelemetryReceiver::accept(proto::Envelope &&envelope)
{
    const quint32 rank = envelope.rank();
    const quint64 seq = envelope.seq();
    std::lock_guard lock(m_mutex);
    auto it = m_nextSeq.find(rank);
    const quint64 expected = it == m_nextSeq.end() ? 0 : it->second;
    if (seq < expected) {
        ++m_stats.duplicates;
        return;
    }
    m_stats.lost += seq - expected;
    m_nextSeq[rank] = seq + 1;
    ++m_stats.received;
    m_inbox.push_back(std::move(envelope));
}

} // namespace trellis::launcher
