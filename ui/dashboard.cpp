// See dashboard.h.
#include "ui/dashboard.h"

#include <qcustomplot.h>

#include <QLabel>
#include <QProgressBar>
#include <QVBoxLayout>

namespace trellis::ui {
namespace {

QColor rankColour(int rank)
{
    static const QColor palette[] = {QColor(0x1f, 0x77, 0xb4), QColor(0xff, 0x7f, 0x0e), QColor(0x2c, 0xa0, 0x2c),
                                     QColor(0xd6, 0x27, 0x28), QColor(0x94, 0x67, 0xbd), QColor(0x8c, 0x56, 0x4b),
                                     QColor(0xe3, 0x77, 0xc2), QColor(0x7f, 0x7f, 0x7f)};
    return palette[rank % 8];
}

QCustomPlot *makePlot(const QString &title, const QString &yLabel, QWidget *parent)
{
    auto *plot = new QCustomPlot(parent);
    plot->plotLayout()->insertRow(0);
    plot->plotLayout()->addElement(0, 0, new QCPTextElement(plot, title, QFont(QStringLiteral("sans"), 10, QFont::Bold)));
    plot->xAxis->setLabel(QObject::tr("step"));
    plot->yAxis->setLabel(yLabel);
    plot->legend->setVisible(true);
    plot->legend->setFont(QFont(QStringLiteral("sans"), 8));
    plot->axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);
    plot->setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    plot->setMinimumHeight(180);
    plot->setNoAntialiasingOnDrag(true);
    return plot;
}

} // namespace

Dashboard::Dashboard(QWidget *parent)
    : QWidget(parent),
      m_loss(makePlot(tr("Loss"), tr("loss"), this)),
      m_throughput(makePlot(tr("Throughput per rank"), tr("tokens/s"), this)),
      m_state(new QLabel(tr("No run"), this)),
      m_stats(new QLabel(this)),
      m_progress(new QProgressBar(this))
{
    auto *layout = new QVBoxLayout(this);
    auto *top = new QHBoxLayout;
    m_state->setTextFormat(Qt::RichText);
    top->addWidget(m_state, 1);
    top->addWidget(m_progress, 1);
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
    m_feed = feed;
    m_version = 0;
    clearPlots();
    m_progress->setRange(0, static_cast<int>(std::max<qint64>(1, feed->progress().totalSteps)));
    m_progress->setValue(0);
    m_timer.start();
}

void Dashboard::detach()
{
    drain();
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
    m_stats->clear();
    replot();
}

void Dashboard::ensureGraph(int rank)
{
    while (m_loss->graphCount() <= rank) {
        const int r = m_loss->graphCount();
        for (QCustomPlot *plot : {m_loss, m_throughput}) {
            QCPGraph *g = plot->addGraph();
            g->setName(tr("rank %1").arg(r));
            g->setPen(QPen(rankColour(r), 1.5));
        }
    }
}

void Dashboard::addRow(const launcher::StepRow &row)
{
    ensureGraph(row.rank);
    m_loss->graph(row.rank)->addData(static_cast<double>(row.step), row.loss);
    m_throughput->graph(row.rank)->addData(static_cast<double>(row.step), row.tokensPerS);
}

void Dashboard::drain()
{
    if (!m_feed)
        return;
    const auto rows = m_feed->series().rowsSince(m_version, &m_version);
    if (rows.isEmpty())
        return;
    for (const auto &row : rows)
        addRow(row);
    const launcher::RunProgress p = m_feed->progress();
    if (p.totalSteps > 0)
        m_progress->setMaximum(static_cast<int>(p.totalSteps));
    m_progress->setValue(static_cast<int>(p.step));
    m_stats->setText(tr("step %1 / %2 · loss %3 · %4 tokens/s · step %5 ms")
                         .arg(p.step)
                         .arg(p.totalSteps)
                         .arg(p.loss, 0, 'f', 4)
                         .arg(p.tokensPerS, 0, 'f', 0)
                         .arg(p.stepMs, 0, 'f', 1));
    replot();
}

void Dashboard::showRun(const launcher::RunData &run)
{
    m_timer.stop();
    m_feed = nullptr;
    clearPlots();
    for (const auto &row : run.steps)
        addRow(row);
    m_progress->setRange(0, static_cast<int>(std::max<qint64>(1, run.run.totalSteps)));
    m_progress->setValue(static_cast<int>(run.run.stepsDone));
    setState(tr("Run %1: %2").arg(run.run.runId, run.run.status), run.run.error.section(QLatin1Char('\n'), 0, 0));
    if (!run.steps.isEmpty())
        m_stats->setText(tr("%1 steps · final loss %2").arg(run.run.stepsDone).arg(run.steps.last().loss, 0, 'f', 4));
    replot();
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
