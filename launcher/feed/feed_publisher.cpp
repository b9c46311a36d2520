// See feed_publisher.h.
#include "launcher/feed/feed_publisher.h"

#include "backend/protocol/framing.h"

#include <QtGlobal>

#include <algorithm>

#include <zmq.hpp>

namespace trellis::launcher {

FeedPublisher::FeedPublisher()
    : m_dropEvery(static_cast<quint64>(std::max(0, qEnvironmentVariableIntValue("TRELLIS_FEED_DROP_EVERY")))),
      m_dropFromStep(std::max(0, qEnvironmentVariableIntValue("TRELLIS_FEED_DROP_FROM_STEP")))
{
}

FeedPublisher::~FeedPublisher()
{
    if (m_socket)
        m_socket->close();
}

QString FeedPublisher::bind(const std::string &endpoint)
{
    try {
        m_context = std::make_unique<zmq::context_t>(1);
        m_socket = std::make_unique<zmq::socket_t>(*m_context, zmq::socket_type::pub);
        m_socket->set(zmq::sockopt::sndhwm, kQueuedFrames);
        m_socket->set(zmq::sockopt::linger, 500);
        m_socket->bind(endpoint);
    } catch (const zmq::error_t &e) {
        m_socket.reset();
        return QStringLiteral("live feed: cannot bind %1 (%2)").arg(QString::fromStdString(endpoint), QString::fromUtf8(e.what()));
    }
    return {};
}

void FeedPublisher::sendFrame(const std::string &bytes)
{
    try {
        (void)m_socket->send(zmq::buffer(bytes), zmq::send_flags::dontwait);
    } catch (const zmq::error_t &) {
    }
}

void FeedPublisher::send(proto::FeedMessage &message)
{
    if (!m_socket)
        return;
    flush(); // what came before it goes first
    message.set_seq(m_seq++);
    sendFrame(message.SerializeAsString());
}

void FeedPublisher::telemetry(const proto::Envelope &envelope)
{
    if (!m_socket)
        return;
    const bool dropped = envelope.has_step() && ((m_dropEvery > 0 && ++m_steps % m_dropEvery == 0) ||
                                                 (m_dropFromStep > 0 && static_cast<qint64>(envelope.step().step()) >= m_dropFromStep));
    if (dropped) {
        flush();
        ++m_seq; // lost on the way, as far as a subscriber can tell
        return;
    }
    // Serialized straight into the batch: a part's tag and length, then the envelope.
    const std::size_t size = envelope.ByteSizeLong();
    proto::appendBatchPartHeader(m_batch, size);
    const std::size_t at = m_batch.size();
    m_batch.resize(at + size);
    envelope.SerializeWithCachedSizesToArray(reinterpret_cast<std::uint8_t *>(m_batch.data() + at));
    if (m_batch.size() >= kBatchBytes)
        flush();
}

void FeedPublisher::flush()
{
    if (m_batch.empty() || !m_socket)
        return;
    // FeedMessage{seq, telemetry_batch}, written by hand around the gathered parts.
    proto::FeedMessage head;
    head.set_seq(m_seq++);
    std::string bytes = head.SerializeAsString();
    bytes.reserve(bytes.size() + 8 + m_batch.size());
    static_assert(proto::FeedMessage::kTelemetryBatchFieldNumber == 14, "the tag below is field 14's");
    bytes.push_back(static_cast<char>((14 << 3) | 2)); // field 14, length-delimited
    proto::appendVarint(bytes, m_batch.size());
    bytes += m_batch;
    m_batch.clear();
    sendFrame(bytes);
}

void FeedPublisher::status(const proto::RunStatus &status)
{
    proto::FeedMessage m;
    *m.mutable_status() = status;
    send(m);
}

void FeedPublisher::alert(const QString &kind, const QString &message)
{
    proto::FeedMessage m;
    m.mutable_alert()->set_kind(kind.toStdString());
    m.mutable_alert()->set_message(message.toStdString());
    send(m);
}

void FeedPublisher::stall(const StallRow &s)
{
    proto::FeedMessage m;
    proto::Stall *p = m.mutable_stall();
    p->set_number(static_cast<std::uint32_t>(s.number));
    p->set_attempt(static_cast<std::uint32_t>(s.attempt));
    for (int r : s.holders)
        p->add_holders(r);
    for (int r : s.waiting)
        p->add_waiting(r);
    p->set_silent(s.silent);
    p->set_step(static_cast<std::uint64_t>(std::max<qint64>(0, s.step)));
    p->set_started_unix_ms(s.startedAt.toMSecsSinceEpoch());
    p->set_duration_ms(s.durationMs);
    p->set_outcome(s.outcome.toStdString());
    p->set_what(s.what.toStdString());
    send(m);
}

void FeedPublisher::output(int rank, bool isStderr, const QString &text)
{
    proto::FeedMessage m;
    m.mutable_output()->set_rank(rank);
    m.mutable_output()->set_is_stderr(isStderr);
    m.mutable_output()->set_text(text.toStdString());
    send(m);
}

} // namespace trellis::launcher
