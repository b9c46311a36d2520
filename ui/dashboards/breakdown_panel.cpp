// See breakdown_panel.h.
#include "ui/dashboards/breakdown_panel.h"

#include <qcustomplot.h>

#include <algorithm>
#include <cmath>

#include <QComboBox>
#include <QLabel>
#include <QHBoxLayout>
#include <QVBoxLayout>

namespace trellis::ui::dashboards {

namespace {

struct Part {
    const char *name;
    QColor colour;
};
const Part kParts[] = {{QT_TRANSLATE_NOOP("trellis::ui::dashboards::BreakdownPanel", "compute"), QColor(0x1f, 0x77, 0xb4)},
                       {QT_TRANSLATE_NOOP("trellis::ui::dashboards::BreakdownPanel", "exposed communication"), QColor(0xff, 0x7f, 0x0e)},
                       {QT_TRANSLATE_NOOP("trellis::ui::dashboards::BreakdownPanel", "pipeline bubble"), QColor(0xd6, 0x27, 0x28)},
                       {QT_TRANSLATE_NOOP("trellis::ui::dashboards::BreakdownPanel", "idle"), QColor(0xaa, 0xaa, 0xaa)},
                       {QT_TRANSLATE_NOOP("trellis::ui::dashboards::BreakdownPanel", "checkpoint (between steps)"), QColor(0x94, 0x67, 0xbd)}};
constexpr int kStepParts = 4; // the step's own parts; over steps the checkpoint time is stacked on them

// Over steps: stacked areas, one per part, each filled down to the one below (hundreds of steps
// as four polygons; as stacked bars they were four times as many rectangles a frame, the grid's
// most expensive chart). A graph's values are the sums up to its part.
void stackAreas(QCustomPlot *plot, const QVector<double> &x, const QVector<double> (&values)[kStepParts + 1])
{
    QVector<double> sum(x.size(), 0.0);
    QCPGraph *below = nullptr;
    for (int i = 0; i < kStepParts + 1; ++i) {
        if (i == kStepParts && std::all_of(values[i].begin(), values[i].end(), [](double v) { return v <= 0; }))
            break; // no checkpoints: no empty legend entry
        for (int k = 0; k < x.size(); ++k)
            sum[k] += values[i][k];
        QCPGraph *g = plot->addGraph();
        g->setName(BreakdownPanel::tr(kParts[i].name));
        g->setPen(QPen(kParts[i].colour.darker(115), 1));
        g->setBrush(kParts[i].colour);
        g->setLineStyle(QCPGraph::lsStepCenter);
        g->setData(x, sum, true);
        if (below)
            g->setChannelFillGraph(below);
        below = g;
    }
}

// Per stage: stacked bars, one series per part.
void stack(QCustomPlot *plot, const QVector<double> &x, const QVector<double> (&values)[kStepParts], double width)
{
    QCPBars *below = nullptr;
    for (int i = 0; i < kStepParts; ++i) {
        auto *bars = new QCPBars(plot->xAxis, plot->yAxis);
        bars->setName(BreakdownPanel::tr(kParts[i].name));
        bars->setPen(Qt::NoPen);
        bars->setAntialiased(false); // hundreds of axis-aligned bars a frame: antialiasing them doubled the panel's cost
        bars->setAntialiasedFill(false);
        bars->setBrush(kParts[i].colour);
        bars->setWidth(width);
        bars->setData(x, values[i], true);
        if (below)
            bars->moveAbove(below);
        below = bars;
    }
}

} // namespace

QString checkpointCostsLine(const launcher::telemetry::CheckpointCosts &c)
{
    QString text = BreakdownPanel::tr("Checkpoints: %1 ms a save (%2% of a step)")
                       .arg(c.blockedPerSaveMs(), 0, 'f', 1)
                       .arg(c.blockedFractionOfStep() * 100, 0, 'f', 1);
    if (c.saves)
        text += BreakdownPanel::tr(" · written in %1 ms").arg(c.writePerSaveMs(), 0, 'f', 1);
    if (c.besideSteps && c.aloneSteps)
        text += BreakdownPanel::tr(" · steps beside a write %1%2%").arg(c.slowdown() >= 0 ? QStringLiteral("+") : QStringLiteral("−"))
                    .arg(std::abs(c.slowdown()) * 100, 0, 'f', 1);
    return text;
}

QString checkpointCostsText(const launcher::telemetry::CheckpointCosts &c)
{
    QString text = BreakdownPanel::tr("Checkpoints put in place: %4; training waited %1 ms a save (%2% of a step, at most %3 ms)")
                       .arg(c.blockedPerSaveMs(), 0, 'f', 1)
                       .arg(c.blockedFractionOfStep() * 100, 0, 'f', 1)
                       .arg(c.mostBlockedMs, 0, 'f', 1)
                       .arg(c.saves);
    if (c.saves)
        text += BreakdownPanel::tr("; each written in %1 ms").arg(c.writePerSaveMs(), 0, 'f', 1);
    if (c.besideSteps && c.aloneSteps)
        text += (c.slowdown() >= 0 ? BreakdownPanel::tr("; steps beside a background write %1% slower (%2 of %3 steps)")
                                   : BreakdownPanel::tr("; steps beside a background write %1% faster (%2 of %3 steps)"))
                    .arg(std::abs(c.slowdown()) * 100, 0, 'f', 1)
                    .arg(c.besideSteps)
                    .arg(c.besideSteps + c.aloneSteps);
    return text;
}

BreakdownPanel::BreakdownPanel(QWidget *parent)
    : Panel(parent), m_mode(new QComboBox(this)), m_plot(makePlot(QString(), tr("ms"), this)), m_checkpoints(new QLabel(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    m_mode->addItem(tr("over steps (median rank)"));
    m_mode->addItem(tr("per pipeline stage (latest steps)"));
    // The checkpoint line beside the mode, where the row has room, so the chart keeps its height;
    // cut at the panel's edge, whole in its tooltip.
    auto *top = new QHBoxLayout;
    top->addWidget(m_mode);
    m_checkpoints->setObjectName(QStringLiteral("checkpointCosts"));
    m_checkpoints->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
    m_checkpoints->hide();
    top->addWidget(m_checkpoints, 1);
    layout->addLayout(top);
    layout->addWidget(m_plot);
    connect(m_mode, &QComboBox::currentIndexChanged, this, [this] {
        if (m_last)
            show(m_last);
    });
}

void BreakdownPanel::setPerStage(bool perStage) { m_mode->setCurrentIndex(perStage ? 1 : 0); }

void BreakdownPanel::show(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot)
{
    m_last = snapshot;
    m_checkpoints->setVisible(snapshot->checkpoints.any());
    if (snapshot->checkpoints.any()) {
        m_checkpoints->setText(checkpointCostsLine(snapshot->checkpoints));
        m_checkpoints->setToolTip(checkpointCostsText(snapshot->checkpoints));
    }
    m_plot->clearPlottables();
    m_plot->clearItems();
    if (m_mode->currentIndex() == 1)
        drawPerStage(*snapshot);
    else
        drawOverSteps(*snapshot);
    m_plot->replot(QCustomPlot::rpQueuedReplot);
}

void BreakdownPanel::drawOverSteps(const launcher::telemetry::DashboardSnapshot &s)
{
    QVector<double> x, parts[kStepParts + 1];
    for (const auto &p : s.breakdown) {
        x << static_cast<double>(p.step);
        parts[0] << p.computeMs;
        parts[1] << p.exposedCommMs;
        parts[2] << p.bubbleMs;
        parts[3] << p.idleMs;
        parts[4] << p.checkpointMs;
    }
    stackAreas(m_plot, x, parts);
    if (s.prediction.known && !x.isEmpty()) {
        QCPGraph *g = m_plot->addGraph();
        g->setName(s.prediction.calibrated ? tr("predicted step (calibrated)") : tr("predicted step (default rates)"));
        g->setPen(QPen(m_plot->palette().color(QPalette::WindowText), 1.5, Qt::DashLine));
        g->setData({x.first(), x.last()}, {s.prediction.stepMs, s.prediction.stepMs});
    }
    m_plot->xAxis->setLabel(tr("step"));
    m_plot->xAxis->setTicker(QSharedPointer<QCPAxisTicker>(new QCPAxisTicker));
    m_plot->yAxis2->setVisible(false);
    m_plot->rescaleAxes();
    m_plot->yAxis->setRangeLower(0);
}

void BreakdownPanel::drawPerStage(const launcher::telemetry::DashboardSnapshot &s)
{
    QVector<double> x, parts[kStepParts], measured, predicted, predictedX;
    for (const auto &b : s.stages) {
        x << b.stage;
        parts[0] << b.computeMs;
        parts[1] << b.exposedCommMs;
        parts[2] << b.bubbleMs;
        parts[3] << b.idleMs;
        measured << b.bubbleFraction * 100;
        if (b.predictedBubbleFraction >= 0) {
            predictedX << b.stage;
            predicted << b.predictedBubbleFraction * 100;
        }
    }
    stack(m_plot, x, parts, 0.6);
    auto *bubble = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis2);
    bubble->setName(tr("bubble % measured (right axis)"));
    bubble->setLineStyle(QCPGraph::lsNone);
    bubble->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCircle, QColor(0xd6, 0x27, 0x28), Qt::white, 9));
    bubble->setData(x, measured, true);
    if (!predicted.isEmpty()) {
        auto *p = m_plot->addGraph(m_plot->xAxis, m_plot->yAxis2);
        p->setName(tr("bubble % predicted"));
        p->setLineStyle(QCPGraph::lsNone);
        p->setScatterStyle(QCPScatterStyle(QCPScatterStyle::ssCross, QPen(Qt::black, 2), Qt::NoBrush, 11));
        p->setData(predictedX, predicted, true);
    }
    m_plot->xAxis->setLabel(s.stages.empty() ? tr("pipeline stage (no coordinates reported yet)") : tr("pipeline stage"));
    QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
    ticker->setTickStep(1);
    m_plot->xAxis->setTicker(ticker);
    m_plot->yAxis2->setVisible(true);
    m_plot->yAxis2->setLabel(tr("bubble % of the step"));
    m_plot->rescaleAxes();
    m_plot->xAxis->setRange(-0.6, std::max(0.6, x.isEmpty() ? 0.6 : x.last() + 0.6));
    m_plot->yAxis->setRangeLower(0);
    double most = 10;
    for (double v : measured + predicted)
        most = std::max(most, v * 1.15);
    m_plot->yAxis2->setRange(0, most);
}

void BreakdownPanel::markStep(qint64 step) { markStepOn(m_plot, step); }

} // namespace trellis::ui::dashboards

namespace trellis::ui::dashboards {

QString BreakdownPanel::emptyText(const launcher::telemetry::DashboardSnapshot *snapshot) const
{
    if (!snapshot)
        return tr("Launch the plan to see where each step's time goes: compute, exposed communication, pipeline "
                  "bubble and idle time (the median rank, or each pipeline stage).");
    if (snapshot->breakdown.empty() && snapshot->stages.empty())
        return tr("Waiting for the ranks' step-time breakdown (it comes with their step reports).");
    return {};
}

QList<QCustomPlot *> BreakdownPanel::stepPlots() const
{
    return m_mode->currentIndex() == 0 ? QList<QCustomPlot *> {m_plot} : QList<QCustomPlot *> {};
}

} // namespace trellis::ui::dashboards
