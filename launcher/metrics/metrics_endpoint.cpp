// See metrics_endpoint.h.
#include "launcher/metrics/metrics_endpoint.h"

#include <QHostAddress>
#include <QTcpSocket>

#include <cmath>

namespace trellis::launcher {

MetricsEndpoint::MetricsEndpoint(std::function<QByteArray()> render, QObject *parent)
    : QObject(parent), m_render(std::move(render))
{
    connect(&m_server, &QTcpServer::newConnection, this, &MetricsEndpoint::onConnection);
}

QString MetricsEndpoint::listen(quint16 port)
{
    if (!m_server.listen(QHostAddress::LocalHost, port))
        return QStringLiteral("metrics endpoint: cannot listen on 127.0.0.1:%1 (%2)").arg(port).arg(m_server.errorString());
    return {};
}

void MetricsEndpoint::onConnection()
{
    while (QTcpSocket *socket = m_server.nextPendingConnection()) {
        connect(socket, &QTcpSocket::disconnected, socket, &QObject::deleteLater);
        connect(socket, &QTcpSocket::readyRead, socket, [this, socket] {
            // One request a connection; the request line is all we read (bounded).
            const QByteArray head = socket->peek(8192);
            if (!head.contains("\r\n\r\n") && !head.contains("\n\n") && head.size() < 8192)
                return; // wait for the whole header
            const QByteArray line = head.left(head.indexOf('\n')).trimmed();
            QByteArray status = "404 Not Found", body = "not found\n", type = "text/plain";
            if (line.startsWith("GET /metrics ") || line == "GET /metrics") {
                status = "200 OK";
                body = m_render();
                type = "text/plain; version=0.0.4; charset=utf-8";
            }
            socket->write("HTTP/1.1 " + status + "\r\nContent-Type: " + type + "\r\nContent-Length: " +
                          QByteArray::number(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
            socket->disconnectFromHost();
        });
    }
}

void MetricsText::family(const char *name, const char *type, const char *help)
{
    m_text += QByteArray("# HELP ") + name + ' ' + help + "\n# TYPE " + name + ' ' + type + '\n';
}

void MetricsText::sample(const char *name, const QString &labels, double value)
{
    QByteArray v;
    if (std::isnan(value))
        v = "NaN";
    else if (std::isinf(value))
        v = value > 0 ? "+Inf" : "-Inf";
    else
        v = QByteArray::number(value, 'g', 12);
    m_text += QByteArray(name) + (labels.isEmpty() ? QByteArray() : '{' + labels.toUtf8() + '}') + ' ' + v + '\n';
}

QString MetricsText::label(const char *key, const QString &value)
{
    QString escaped = value;
    escaped.replace(QLatin1Char('\\'), QStringLiteral("\\\\")).replace(QLatin1Char('"'), QStringLiteral("\\\"")).replace(QLatin1Char('\n'), QStringLiteral("\\n"));
    return QString::fromLatin1(key) + QStringLiteral("=\"") + escaped + QLatin1Char('"');
}

} // namespace trellis::launcher
