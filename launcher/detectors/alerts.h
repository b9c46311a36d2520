// Where alerts go besides the run's history and the workbench's notification: launch.alerts.command
// is run with the alert in its environment (TRELLIS_ALERT_KIND, TRELLIS_ALERT_MESSAGE,
// TRELLIS_RUN_ID, TRELLIS_ALERT_STEP) — an argument list, never a shell; launch.alerts.webhook gets
// an HTTP POST of {"run", "kind", "step", "message"} as JSON. Delivery never blocks the caller
// (both are asynchronous) and a failure to deliver is reported once per target, not retried.
// Also the loss-divergence detector: the median loss of the last 20 steps more than `factor` (2) times
// the lowest such median so far (a single spike, as warm-up has, is not divergence).
// Threading: the supervisor's thread.
#pragma once

#include "backend/plan/plan.h"

#include <QNetworkAccessManager>
#include <QObject>
#include <QString>

#include <optional>
#include <vector>

namespace trellis::launcher {

class AlertSink : public QObject {
    Q_OBJECT
public:
    explicit AlertSink(QObject *parent = nullptr);
    void configure(const plan::AlertSpec &spec, const QString &runId);
    void deliver(const QString &kind, qint64 step, const QString &message);

signals:
    void deliveryFailed(const QString &why);

private:
    plan::AlertSpec m_spec;
    QString m_runId;
    QNetworkAccessManager m_network;
    bool m_commandFailed = false, m_webhookFailed = false;
};

class DivergenceDetector {
public:
    explicit DivergenceDetector(double factor = 2.0, int window = 20) : m_factor(factor), m_window(window) {}
    // The run's loss at `step`; a message the first time it diverges.
    std::optional<QString> loss(qint64 step, double value);

private:
    double m_factor;
    int m_window;
    std::vector<double> m_recent;
    double m_lowest = 0;
    qint64 m_lowestStep = 0;
    bool m_seen = false, m_fired = false;
};

} // namespace trellis::launcher
