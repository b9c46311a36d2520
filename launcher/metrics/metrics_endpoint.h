// The run's metrics in Prometheus' text exposition format (version 0.0.4) over HTTP on a loopback
// port: per-rank step time, tokens/s, bubble, exposed communication, heartbeat age and bus
// bandwidth per (group, operation), and the run's step, loss, restarts and alerts. Prometheus (or
// curl) scrapes GET /metrics; anything else gets 404. Bound to 127.0.0.1 only.
// Threading: lives on the supervisor's thread; a scrape formats a snapshot there (work per
// scrape, never per telemetry message).
#pragma once

#include <QByteArray>
#include <QObject>
#include <QString>
#include <QTcpServer>

#include <functional>

namespace trellis::launcher {

class MetricsEndpoint : public QObject {
    Q_OBJECT
public:
    // `render` returns the exposition text at each scrape.
    explicit MetricsEndpoint(std::function<QByteArray()> render, QObject *parent = nullptr);
    // port 0: an ephemeral port. Returns "" or why it could not listen.
    QString listen(quint16 port);
    quint16 port() const { return m_server.serverPort(); }
    void close() { m_server.close(); }

private:
    void onConnection();

    std::function<QByteArray()> m_render;
    QTcpServer m_server;
};

// Builds exposition text: one HELP/TYPE header per metric family, then its samples.
class MetricsText {
public:
    void family(const char *name, const char *type, const char *help); // type: "gauge" or "counter"
    void sample(const char *name, const QString &labels, double value); // labels: a="1",b="x" (escaped by label())
    static QString label(const char *key, const QString &value);
    QByteArray text() const { return m_text; }

private:
    QByteArray m_text;
};

} // namespace trellis::launcher
