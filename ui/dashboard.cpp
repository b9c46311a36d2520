// See dashboard.h.
#include "ui/dashboard.h"

#include "ui/dashboards/panel.h"
#include "ui/estimate/estimate_format.h"

#include <qcustomplot.h>

#include <QLabel>
#include <QProgressBar>
#include <QVBoxLayout>

namespace trellis::ui {
using dashboards::makePlot;

Dashboard::Dashboard(QWidget *parent)
    : QWidget(parent),
      m_loss(makePlot(tr("Loss"), tr("loss"), this)),
      m_throughput(makePlot(tr("Throughput per rank"), tr("tokens/s"), this)),
      m_state(new QLabel(tr("No run"), this)),
      m_stats(new LiveText(this)),
      m_progress(new QProgressBar(this))
{
    auto *layout = new QVBoxLayout(this);
    auto *top = new QHBoxLayout;
    m_state->setTextFormat(Qt::RichText);
    m_state->setWordWrap(true); // a failed run's reason wraps instead of widening the window
    top->addWidget(m_state, 3);
    top->addWidget(m_progress, 1);
    m_progress->setMinimumWidth(80);
    layout->addLayout(top);
    layout->addWidget(m_stats);
    layout->addWidget(m_loss, 1);
    layout->addWidget(m_throughput, 1);
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    m_timer.setInterval(100);
    connect(&m_timer, &QTimer::timeout, this, &Dashboard::drain);
}

void Dashboard::attach(launcher::RunFeed *feed)
{
    if (m_feed)
        disconnect(m_feed, nullptr, this, nullptr);
    m_feed = feed;
    clearPlots();
    m_progress->setRange(0, static_cast<int>(std::max<qint64>(1, feed->progress().totalSteps)));
    m_progress->setValue(0);
    // Drawn from the feed's snapshots (built off this thread, at most 4 a second): the work here is
    // bounded by their size, whatever the message rate.
    connect(feed, &launcher::RunFeed::snapshotReady, this, [this] {
        if (m_feed)
            showSnapshot(m_feed->snapshot());
    });
    m_timer.start();
}

void Dashboard::detach()
{
    if (m_feed) {
        if (const auto s = m_feed->snapshot())
            showSnapshot(s);
        disconnect(m_feed, nullptr, this, nullptr);
    }
    m_timer.stop();
    m_feed = nullptr;
}

void Dashboard::setState(const QString &state, const QString &detail)
{
    m_state->setText(detail.isEmpty() ? QStringLiteral("<b>%1</b>").arg(state.toHtmlEscaped())
                                      : QStringLiteral("<b>%1</b> — %2").arg(state.toHtmlEscaped(), detail.toHtmlEscaped()));
}

void Dashboard::clearPlots()
{
    m_loss->clearGraphs();
    m_throughput->clearGraphs();
    m_stats->setText({});
    replot();
}

void Dashboard::drain()
{
    // The progress line from the feed's counters (cheap); the charts come with snapshots.
    if (!m_feed)
        return;
    const launcher::RunProgress p = m_feed->progress();
    if (p.totalSteps > 0)
        m_progress->setMaximum(static_cast<int>(p.totalSteps));
    m_progress->setValue(static_cast<int>(p.step));
    if (const QString queue = m_feed->queue(); p.step == 0 && !queue.isEmpty())
        m_stats->setText(queue); // waiting in a batch queue: its state, reason and position
    else if (p.step > 0)
        m_stats->setText(tr("step %1 / %2 · loss %3 · %4 tokens/s · step %5 ms · %6 ranks")
                             .arg(p.step)
                             .arg(p.totalSteps)
                             .arg(p.loss, 0, 'f', 4)
                             .arg(estimate::rate(p.tokensPerS))
                             .arg(p.stepMs, 0, 'f', 1)
                             .arg(p.ranksReporting));
}

void Dashboard::showSnapshot(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot)
{
    if (!snapshot)
        return;
    using launcher::telemetry::Metric;
    if (const auto it = snapshot->metrics.find(Metric::Loss); it != snapshot->metrics.end())
        dashboards::drawMetric(m_loss, it->second, tr("loss"));
    if (const auto it = snapshot->metrics.find(Metric::TokensPerS); it != snapshot->metrics.end())
        dashboards::drawMetric(m_throughput, it->second, tr("tokens/s"));
    emit snapshotShown(snapshot);
}

void Dashboard::showRun(const launcher::RunData &run)
{
    m_timer.stop();
    if (m_feed)
        disconnect(m_feed, nullptr, this, nullptr);
    m_feed = nullptr;
    m_progress->setRange(0, static_cast<int>(std::max<qint64>(1, run.run.totalSteps)));
    m_progress->setValue(static_cast<int>(run.run.stepsDone));
    setState(tr("Run %1: %2").arg(run.run.runId, run.run.status), run.run.error.section(QLatin1Char('\n'), 0, 0));
    if (!run.steps.isEmpty())
        m_stats->setText(tr("%1 steps · final loss %2 · %3 ranks").arg(run.run.stepsDone).arg(run.steps.last().loss, 0, 'f', 4).arg(run.run.worldSize));
    else
        m_stats->setText({});
    if (run.steps.isEmpty())
        clearPlots();
}

void Dashboard::replot()
{
    for (QCustomPlot *plot : {m_loss, m_throughput}) {
        plot->rescaleAxes();
        plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

int Dashboard::lossPointCount() const
{
    int n = 0;
    for (int i = 0; i < m_loss->graphCount(); ++i)
        n += m_loss->graph(i)->dataCount();
    return n;
}

int Dashboard::throughputPointCount() const
{
    int n = 0;
    for (int i = 0; i < m_throughput->graphCount(); ++i)
        n += m_throughput->graph(i)->dataCount();
    return n;
}

} // namespace trellis::ui
