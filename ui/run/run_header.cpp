// See run_header.h.
#include "ui/run/run_header.h"
#include "ui/widgets/run_words.h"

#include "ui/dashboards/panel.h"
#include "ui/estimate/estimate_format.h"

#include <qcustomplot.h>

#include <QLabel>
#include <QProgressBar>
#include <QVBoxLayout>

namespace trellis::ui {
using dashboards::makePlot;

RunHeader::RunHeader(QWidget *parent)
    : QWidget(parent),
      m_state(new QLabel(tr("No run open: launch the plan (Ctrl+R) or open a run from the history."), this)),
      m_stats(new LiveText(this)),
      m_progress(new QProgressBar(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(8, 4, 8, 2);
    layout->setSpacing(2);
    auto *top = new QHBoxLayout;
    m_state->setTextFormat(Qt::RichText);
    m_state->setWordWrap(true); // a failed run's reason wraps instead of widening the window
    top->addWidget(m_state, 3);
    top->addWidget(m_progress, 1);
    m_progress->setMinimumWidth(80);
    layout->addLayout(top);
    layout->addWidget(m_stats);
    m_progress->setRange(0, 1);
    m_progress->setValue(0);
    m_timer.setInterval(100);
    connect(&m_timer, &QTimer::timeout, this, &RunHeader::drain);
}

void RunHeader::attach(launcher::RunFeed *feed)
{
    if (m_feed)
        disconnect(m_feed, nullptr, this, nullptr);
    m_feed = feed;
    clear();
    m_progress->setRange(0, static_cast<int>(std::max<qint64>(1, feed->progress().totalSteps)));
    m_progress->setValue(0);
    // Passed on from the feed's snapshots (built off this thread, at most 4 a second): the work
    // here is bounded by their size, whatever the message rate.
    connect(feed, &launcher::RunFeed::snapshotReady, this, [this] {
        if (m_feed)
            showSnapshot(m_feed->snapshot());
    });
    m_timer.start();
}

void RunHeader::detach()
{
    if (m_feed) {
        if (const auto s = m_feed->snapshot())
            showSnapshot(s);
        disconnect(m_feed, nullptr, this, nullptr);
    }
    m_timer.stop();
    m_feed = nullptr;
}

void RunHeader::setState(const QString &state, const QString &detail)
{
    m_state->setText(detail.isEmpty() ? QStringLiteral("<b>%1</b>").arg(state.toHtmlEscaped())
                                      : QStringLiteral("<b>%1</b> — %2").arg(state.toHtmlEscaped(), detail.toHtmlEscaped()));
}

QString RunHeader::stateText() const { return m_state->text(); }

void RunHeader::clear()
{
    m_stats->setText({});
    emit snapshotShown(nullptr);
}

void RunHeader::drain()
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

void RunHeader::showSnapshot(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot)
{
    if (snapshot)
        emit snapshotShown(snapshot);
}

void RunHeader::showRun(const launcher::RunData &run)
{
    m_timer.stop();
    if (m_feed)
        disconnect(m_feed, nullptr, this, nullptr);
    m_feed = nullptr;
    m_progress->setRange(0, static_cast<int>(std::max<qint64>(1, run.run.totalSteps)));
    m_progress->setValue(static_cast<int>(run.run.stepsDone));
    setState(tr("Run %1: %2").arg(run.run.runId, statusText(run.run.status)), run.run.error.section(QLatin1Char('\n'), 0, 0));
    if (!run.steps.isEmpty())
        m_stats->setText(tr("%1 steps · final loss %2 · %3 ranks").arg(run.run.stepsDone).arg(run.steps.last().loss, 0, 'f', 4).arg(run.run.worldSize));
    else
        clear(); // its snapshot, if any, follows from the history reader
}

} // namespace trellis::ui
