// See metric_panel.h.
#include "ui/dashboards/metric_panel.h"

#include <qcustomplot.h>

#include <QComboBox>
#include <QVBoxLayout>

namespace trellis::ui::dashboards {

using namespace launcher::telemetry;

MetricPanel::MetricPanel(QString title, QString id, std::vector<Metric> metrics, bool total, QWidget *parent)
    : Panel(parent), m_title(std::move(title)), m_id(std::move(id)), m_metrics(std::move(metrics)), m_total(total),
      m_choice(new QComboBox(this)), m_plot(makePlot(QString(), QString(), this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    for (Metric m : m_metrics)
        m_choice->addItem(metricLabel(m));
    if (m_total)
        m_choice->addItem(tr("model FLOPs (MFU)"));
    m_choice->setVisible(m_choice->count() > 1);
    layout->addWidget(m_choice);
    layout->addWidget(m_plot, 1);
    connect(m_choice, &QComboBox::currentIndexChanged, this, [this] {
        if (m_last)
            show(m_last);
    });
}

void MetricPanel::show(const std::shared_ptr<const DashboardSnapshot> &shared)
{
    m_last = shared;
    const DashboardSnapshot &snapshot = *shared;
    const int choice = std::max(0, m_choice->currentIndex());
    m_plot->yAxis2->setVisible(false);
    if (choice >= static_cast<int>(m_metrics.size())) {
        drawFlops(snapshot);
        return;
    }
    const Metric metric = m_metrics[static_cast<std::size_t>(choice)];
    const auto it = snapshot.metrics.find(metric);
    if (it == snapshot.metrics.end())
        return;
    QString label = metricLabel(metric);
    if (metric == Metric::LossScale) // with the overflows it answered; nothing to draw without fp16
        label = snapshot.lossScaled ? tr("loss scale (fp16): %n update(s) skipped for overflow", nullptr,
                                         static_cast<int>(snapshot.skippedUpdates))
                                    : tr("loss scale: none (only fp16 training scales its loss)");
    if (metric == Metric::DpBytes)
        label = tr("dp MB a rank, so far");
    drawMetric(m_plot, it->second, label);
    if (metric == Metric::DpBytes && snapshot.dpTraffic.denseBytes > 0)
        drawEveryStepTraffic(snapshot.dpTraffic);
    if (m_total && metric == Metric::TokensPerS && !snapshot.totalTokensPerS.empty()) {
        // The whole job's tokens/s, on the right axis.
        QCPGraph *g = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis2);
        g->setName(tr("total (right axis)"));
        g->setPen(QPen(Qt::darkGreen, 1.5, Qt::DashLine));
        g->setData(QVector<double>(snapshot.bucketSteps.begin(), snapshot.bucketSteps.end()),
                   QVector<double>(snapshot.totalTokensPerS.begin(), snapshot.totalTokensPerS.end()), true);
        m_plot->yAxis2->setVisible(true);
        m_plot->yAxis2->setLabel(tr("job tokens/s"));
        g->rescaleValueAxis();
        m_plot->replot(QCustomPlot::rpQueuedReplot);
    }
}

// Every-step whole-gradient reduction for comparison: a straight line, the same bytes each step.
void MetricPanel::drawEveryStepTraffic(const DashboardSnapshot::DpTrafficView &t)
{
    QCPGraph *g = m_plot->addGraph();
    const double mb = static_cast<double>(t.bytes) / 1e6, denseMb = static_cast<double>(t.denseBytes) / 1e6;
    g->setName(mb > 0 ? tr("every step would: %1 MB (%2× more)").arg(denseMb, 0, 'f', 1).arg(denseMb / mb, 0, 'f', 1)
                      : tr("every step would: %1 MB").arg(denseMb, 0, 'f', 1));
    g->setPen(QPen(Qt::darkGray, 1.5, Qt::DashLine));
    g->setData({0.0, static_cast<double>(t.step)}, {0.0, static_cast<double>(t.denseBytes) / 1e6}, true);
    m_plot->rescaleAxes();
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

// The model FLOPs the job achieves (tokens/s × the plan's FLOPs per token) and, where the device
// has a datasheet peak, the MFU on the right axis.
void MetricPanel::drawFlops(const DashboardSnapshot &s)
{
    m_plot->clearGraphs();
    const QVector<double> x(s.bucketSteps.begin(), s.bucketSteps.end());
    QCPGraph *g = m_plot->addGraph();
    g->setName(s.achievedTflops.empty() ? tr("no plan to count FLOPs from") : tr("achieved model TFLOP/s (job)"));
    g->setPen(QPen(QColor(0x1f, 0x77, 0xb4), 1.5));
    if (!s.achievedTflops.empty())
        g->setData(x, QVector<double>(s.achievedTflops.begin(), s.achievedTflops.end()), true);
    m_plot->yAxis->setLabel(tr("TFLOP/s"));
    if (!s.mfu.empty()) {
        QCPGraph *m = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis2);
        m->setName(tr("MFU % (right axis)"));
        m->setPen(QPen(Qt::darkGreen, 1.5, Qt::DashLine));
        QVector<double> mfu;
        for (double v : s.mfu)
            mfu << v * 100;
        m->setData(x, mfu, true);
        m_plot->yAxis2->setVisible(true);
        m_plot->yAxis2->setLabel(tr("MFU %"));
    } else if (!s.achievedTflops.empty()) {
        QCPGraph *none = m_plot->addGraph();
        none->setName(tr("MFU: no datasheet peak for this device (CPU)"));
        none->setPen(Qt::NoPen);
    }
    m_plot->rescaleAxes();
    m_plot->yAxis->setRangeLower(0);
    if (m_plot->yAxis2->visible())
        m_plot->yAxis2->setRangeLower(0);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

QString MetricPanel::emptyText(const DashboardSnapshot *snapshot) const
{
    QStringList names;
    for (Metric m : m_metrics)
        if (m != Metric::LossScale && m != Metric::DpBytes)
            names << metricLabel(m);
    const QString what = names.join(QStringLiteral(", "));
    if (!snapshot)
        return tr("Launch the plan (Run › Launch) or open a run from the history to see %1 of every rank here.").arg(what);
    const auto it = snapshot->metrics.find(m_metrics.front());
    if (it == snapshot->metrics.end() || (it->second.lines.empty() && it->second.band.empty()))
        return snapshot->step > 0 ? tr("This run reports no %1.").arg(metricLabel(m_metrics.front()))
                                  : tr("Waiting for the first step: %1 appear as the ranks report.").arg(what);
    return {};
}

void MetricPanel::choose(int index) { m_choice->setCurrentIndex(index); }

bool MetricPanel::chooseView(const QString &key)
{
    if (key == QLatin1String("flops") && m_choice->count() > static_cast<int>(m_metrics.size())) {
        choose(static_cast<int>(m_metrics.size()));
        return true;
    }
    auto slug = [](Metric m) {
        QString name = QString::fromLatin1(launcher::telemetry::metricName(m));
        for (QChar &c : name)
            if (!c.isLetterOrNumber())
                c = QLatin1Char('_');
        return name;
    };
    for (bool exact : {true, false})
        for (std::size_t i = 0; i < m_metrics.size(); ++i)
            if (exact ? slug(m_metrics[i]) == key : slug(m_metrics[i]).startsWith(key)) {
                choose(static_cast<int>(i));
                return true;
            }
    return false;
}

void MetricPanel::markStep(qint64 step) { markStepOn(m_plot, step); }

int MetricPanel::pointCount() const
{
    int n = 0;
    for (int i = 0; i < m_plot->graphCount(); ++i)
        n += m_plot->graph(i)->dataCount();
    return n;
}

} // namespace trellis::ui::dashboards
