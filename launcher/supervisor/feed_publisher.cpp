// See feed_publisher.h.
#include "launcher/supervisor/feed_publisher.h"

#include <QScopeGuard>
#include <QtGlobal>

#include <algorithm>

#include <zmq.hpp>

namespace trellis::launcher {

FeedPublisher::FeedPublisher()
    : m_dropEvery(static_cast<quint64>(std::max(0, qEnvironmentVariableIntValue("TRELLIS_FEED_DROP_EVERY"))))
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
        m_socket->set(zmq::sockopt::sndhwm, 100000);
        m_socket->set(zmq::sockopt::linger, 500);
        m_socket->bind(endpoint);
    } catch (const zmq::error_t &e) {
        m_socket.reset();
        return QStringLiteral("live feed: cannot bind %1 (%2)").arg(QString::fromStdString(endpoint), QString::fromUtf8(e.what()));
    }
    return {};
}

void FeedPublisher::send(proto::FeedMessage &message)
{
    if (!m_socket)
        return;
    message.set_seq(m_seq++);
    const std::string bytes = message.SerializeAsString();
    try {
        (void)m_socket->send(zmq::buffer(bytes), zmq::send_flags::dontwait);
    } catch (const zmq::error_t &) {
    }
}

void FeedPublisher::telemetry(const proto::Envelope &envelope)
{
    if (m_dropEvery > 0 && envelope.has_step() && ++m_steps % m_dropEvery == 0) {
        ++m_seq; // lost on the way, as far as a subscriber can tell
        return;
    }
    // Borrowed, not copied (one deep copy per message at 40,000 a second): the envelope is lent to
    // the message for the send and taken back before the message goes.
    proto::FeedMessage m;
    m.unsafe_arena_set_allocated_telemetry(const_cast<proto::Envelope *>(&envelope));
    const auto giveBack = qScopeGuard([&m] { (void)m.unsafe_arena_release_telemetry(); });
    send(m);
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

void FeedPublisher::output(int rank, bool isStderr, const QString &text)
{
    proto::FeedMessage m;
    m.mutable_output()->set_rank(rank);
    m.mutable_output()->set_is_stderr(isStderr);
    m.mutable_output()->set_text(text.toStdString());
    send(m);
}

} // namespace trellis::launcher
