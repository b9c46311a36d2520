// See alerts.h.
#include "launcher/detectors/alerts.h"
#include "launcher/statistics.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QNetworkReply>
#include <QNetworkRequest>
#include <QProcess>
#include <QUrl>

#include <algorithm>
#include <cmath>

namespace trellis::launcher {

AlertSink::AlertSink(QObject *parent) : QObject(parent) {}

void AlertSink::configure(const plan::AlertSpec &spec, const QString &runId)
{
    m_spec = spec;
    m_runId = runId;
    m_commandFailed = m_webhookFailed = false;
}

void AlertSink::deliver(const QString &kind, qint64 step, const QString &message)
{
    if (!m_spec.command.empty()) {
        QProcess process;
        QStringList args;
        for (std::size_t i = 1; i < m_spec.command.size(); ++i)
            args << QString::fromStdString(m_spec.command[i]);
        process.setProgram(QString::fromStdString(m_spec.command.front()));
        process.setArguments(args);
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("TRELLIS_ALERT_KIND"), kind);
        env.insert(QStringLiteral("TRELLIS_ALERT_MESSAGE"), message);
        env.insert(QStringLiteral("TRELLIS_ALERT_STEP"), QString::number(step));
        env.insert(QStringLiteral("TRELLIS_RUN_ID"), m_runId);
        process.setProcessEnvironment(env);
        process.setStandardInputFile(QProcess::nullDevice());
        process.setStandardOutputFile(QProcess::nullDevice());
        process.setStandardErrorFile(QProcess::nullDevice());
        if (!process.startDetached() && !m_commandFailed) {
            m_commandFailed = true;
            emit deliveryFailed(QStringLiteral("launch.alerts.command: cannot start %1").arg(process.program()));
        }
    }
    if (!m_spec.webhook.empty()) {
        QNetworkRequest request(QUrl(QString::fromStdString(m_spec.webhook)));
        request.setHeader(QNetworkRequest::ContentTypeHeader, QStringLiteral("application/json"));
        request.setTransferTimeout(5000);
        const QByteArray body = QJsonDocument(QJsonObject{{QStringLiteral("run"), m_runId},
                                                          {QStringLiteral("kind"), kind},
                                                          {QStringLiteral("step"), step},
                                                          {QStringLiteral("message"), message}})
                                    .toJson(QJsonDocument::Compact);
        QNetworkReply *reply = m_network.post(request, body);
        connect(reply, &QNetworkReply::finished, this, [this, reply] {
            reply->deleteLater();
            if (reply->error() != QNetworkReply::NoError && !m_webhookFailed) {
                m_webhookFailed = true;
                emit deliveryFailed(QStringLiteral("launch.alerts.webhook: %1").arg(reply->errorString()));
            }
        });
    }
}

std::optional<QString> DivergenceDetector::loss(qint64 step, double value)
{
    if (m_fired || !std::isfinite(value))
        return std::nullopt;
    m_recent.push_back(value);
    if (static_cast<int>(m_recent.size()) > m_window)
        m_recent.erase(m_recent.begin());
    if (static_cast<int>(m_recent.size()) < m_window)
        return std::nullopt;
    const double median = launcher::median(m_recent);
    if (!m_seen || median < m_lowest) {
        m_lowest = median;
        m_lowestStep = step;
        m_seen = true;
    }
    if (median <= m_factor * m_lowest)
        return std::nullopt;
    m_fired = true;
    return QStringLiteral("loss diverging: %1 (median of the last %2 steps) at step %3, more than %4x its lowest (%5 at step %6)")
        .arg(median, 0, 'f', 4)
        .arg(m_window)
        .arg(step)
        .arg(m_factor)
        .arg(m_lowest, 0, 'f', 4)
        .arg(m_lowestStep);
}

} // namespace trellis::launcher
