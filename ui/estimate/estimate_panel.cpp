// See estimate_panel.h.
#include "ui/estimate/estimate_panel.h"

#include "launcher/document/calibration_file.h"
#include "launcher/document/machine_calibration.h"
#include "launcher/metrics/timeline.h"
#include "ui/estimate/estimate_format.h"
#include "ui/estimate/plan_comparison.h"
#include "ui/widgets/timeline_chart.h"

#include <qcustomplot.h>

#include <QGraphicsOpacityEffect>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QTabWidget>
#include <QTreeWidget>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>
#include <cmath>

namespace trellis::ui {
using estimate::duration;
using estimate::rate;

EstimatePanel::EstimatePanel(const QString &calibrationPath, QWidget *parent)
    : QWidget(parent), m_calibrationPath(calibrationPath), m_headline(new QLabel(this)), m_memory(new QCustomPlot(this)),
      m_collectives(new QTreeWidget(this)), m_allReduce(new QLabel(this)), m_searchButton(new QPushButton(tr("Search plans"), this)),
      m_useButton(new QPushButton(tr("Use selected plan"), this)), m_results(new QTreeWidget(this)), m_tabs(new QTabWidget(this)),
      m_timeline(new TimelineChart(this)), m_comparison(new estimate::PlanComparison(this)),
      m_calibration(new launcher::MachineCalibration(calibrationPath, this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(4, 4, 4, 4);
    m_headline->setWordWrap(true);
    m_headline->setTextFormat(Qt::RichText);
    m_headline->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_headline);

    setUpMemoryChart();
    m_tabs->addTab(m_memory, tr("Memory"));
    m_tabs->addTab(makeTimelinePage(), tr("Timeline"));
    m_tabs->addTab(makeCollectivesPage(), tr("Collectives"));
    m_tabs->addTab(m_comparison, tr("Compare"));
    m_tabs->addTab(makeSearchPage(), tr("Search"));
    layout->addWidget(m_tabs, 1);

    connect(m_comparison, &estimate::PlanComparison::pinRequested, this, [this] {
        if (m_current && m_plan && m_estimate)
            m_comparison->pin(*m_plan, *m_estimate);
    });
    connect(m_comparison, &estimate::PlanComparison::planChosen, this, &EstimatePanel::pinnedPlanChosen);
    connectSearch();
    connect(m_calibration, &launcher::MachineCalibration::finished, this, [this] {
        if (m_plan)
            showPlan(*m_plan); // estimated again, with what was measured (or saying why not)
    });
    connect(&m_estimateWatcher, &QFutureWatcher<Computed>::finished, this, [this] {
        if (const Computed c = m_estimateWatcher.result(); c.generation == m_generation)
            showEstimate(c);
    });
    clear();
}

// Memory a rank by pipeline stage, stacked by kind.
void EstimatePanel::setUpMemoryChart()
{
    m_memory->setMinimumHeight(170);
    m_memory->yAxis->setLabel(tr("GB a rank"));
    m_memory->xAxis->setLabel(tr("pipeline stage"));
    m_memory->xAxis->grid()->setZeroLinePen(Qt::NoPen);
    // The legend in a row of its own right under the bars, its entries three to a line: in a
    // column beside the chart it spread its entries over the chart's whole height, far from the
    // bars they name.
    m_memory->legend->setVisible(true);
    m_memory->legend->setFont(QFont(font().family(), 7));
    m_memory->legend->setBorderPen(Qt::NoPen);
    m_memory->legend->setBrush(Qt::NoBrush);
    m_memory->legend->setIconSize(14, 8);
    m_memory->legend->setRowSpacing(0);
    m_memory->legend->setFillOrder(QCPLayoutGrid::foColumnsFirst);
    m_memory->legend->setWrap(3);
    m_memory->plotLayout()->addElement(1, 0, m_memory->legend);
    m_memory->plotLayout()->setRowStretchFactor(1, 0.001);
}

// The predicted step as a Gantt chart, with its legend.
QWidget *EstimatePanel::makeTimelinePage()
{
    auto *timeline = new QWidget(this);
    auto *timelineLayout = new QVBoxLayout(timeline);
    timelineLayout->setContentsMargins(0, 0, 0, 0);
    timelineLayout->addWidget(m_timeline, 1);
    auto *legend = new QLabel(tr("<span style='color:#1f77b4'>■</span> forward &nbsp; <span style='color:#2ca02c'>■</span> "
                                 "backward &nbsp; <span style='color:#9467bd'>■</span> weight gradients &nbsp; "
                                 "<span style='color:#b0b0b0'>▬</span> send / receive &nbsp; "
                                 "<span style='color:#d04040'>▨</span> idle (bubble) &nbsp; numbers: micro-batches; "
                                 "the wheel zooms, dragging pans, a double click shows the whole step"),
                              timeline);
    legend->setWordWrap(true);
    timelineLayout->addWidget(legend);
    return timeline;
}

// The planner's search: its buttons over the plans it found.
QWidget *EstimatePanel::makeSearchPage()
{
    auto *searchPage = new QWidget(this);
    auto *searchLayout = new QVBoxLayout(searchPage);
    searchLayout->setContentsMargins(0, 4, 0, 0);
    auto *row = new QHBoxLayout;
    row->addWidget(m_searchButton);
    row->addWidget(m_useButton);
    row->addStretch(1);
    searchLayout->addLayout(row);
    m_results->setHeaderLabels({tr("#"), tr("dp"), tr("tp"), tr("pp"), tr("cp"), tr("ep"), tr("ZeRO"), tr("Schedule"), tr("mbs × m"),
                                tr("Recompute"), tr("Tokens/s"), tr("GB"), tr("Why")});
    m_results->setRootIsDecorated(false);
    m_results->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    searchLayout->addWidget(m_results, 1);
    return searchPage;
}

// Search runs off the GUI thread; a plan it found is used by the button or a double click.
void EstimatePanel::connectSearch()
{
    m_searchButton->setEnabled(false);
    m_useButton->setEnabled(false);
    connect(m_searchButton, &QPushButton::clicked, this, &EstimatePanel::search);
    connect(m_results, &QTreeWidget::itemSelectionChanged, this,
            [this] { m_useButton->setEnabled(!m_results->selectedItems().isEmpty()); });
    auto use = [this] {
        const auto items = m_results->selectedItems();
        if (items.isEmpty() || !m_plan)
            return;
        const int index = items.front()->data(0, Qt::UserRole).toInt();
        if (index < 0 || index >= static_cast<int>(m_search.best.size()))
            return;
        plan::Plan chosen = *m_plan;
        chosen.model = m_search.best[static_cast<std::size_t>(index)].plan.model;
        chosen.parallel = m_search.best[static_cast<std::size_t>(index)].plan.parallel;
        emit planChosen(chosen);
    };
    connect(m_useButton, &QPushButton::clicked, this, use);
    connect(m_results, &QTreeWidget::itemDoubleClicked, this, use);
    connect(&m_searchWatcher, &QFutureWatcher<plan::SearchResult>::finished, this, [this] {
        m_search = m_searchWatcher.result();
        showSearch();
    });
}

void EstimatePanel::setCalibrationPath(const QString &path)
{
    m_calibrationPath = path;
    m_calibration->setCalibrationPath(path);
}

bool EstimatePanel::showTab(const QString &id)
{
    const QStringList ids{QStringLiteral("memory"), QStringLiteral("timeline"), QStringLiteral("collectives"), QStringLiteral("compare"),
                          QStringLiteral("search")};
    const int index = static_cast<int>(ids.indexOf(id));
    if (index < 0 || index >= m_tabs->count())
        return false;
    m_tabs->setCurrentIndex(index);
    return true;
}

void EstimatePanel::setCurrent(bool current)
{
    m_current = current;
    for (QWidget *w : {static_cast<QWidget *>(m_memory), static_cast<QWidget *>(m_collectives), static_cast<QWidget *>(m_timeline)}) {
        if (current) {
            w->setGraphicsEffect(nullptr);
        } else if (!w->graphicsEffect()) {
            auto *dim = new QGraphicsOpacityEffect(w);
            dim->setOpacity(0.3);
            w->setGraphicsEffect(dim);
        }
    }
}

void EstimatePanel::markStale()
{
    if (!m_current)
        return;
    setCurrent(false);
    m_headline->setText(tr("<i>Estimating… (what is dimmed below belongs to the plan before this edit)</i>"));
}

void EstimatePanel::clearSearch()
{
    m_search = {};
    m_results->clear();
    m_useButton->setEnabled(false);
}

void EstimatePanel::showInvalid(int errorCount)
{
    m_plan.reset();
    ++m_generation; // an estimate still running is not shown
    setCurrent(false);
    m_searchButton->setEnabled(false);
    m_comparison->showCurrent(std::nullopt, std::nullopt, false);
    m_comparison->setPinnable(false);
    m_headline->setText(tr("<b>No estimate:</b> the plan has %n error(s) (see Problems in the editor). "
                           "<i>What is dimmed below belongs to an earlier plan.</i>",
                           nullptr, errorCount));
}

QString EstimatePanel::headlineText() const { return m_headline->text(); }

void EstimatePanel::showOwnTrainer()
{
    showInvalid(0);
    m_headline->setText(tr("<b>No estimate:</b> this plan runs its own trainer (own_trainer.command) and has no model section, "
                           "so there is nothing to predict memory, communication or step time from. Add a model and a "
                           "parallel section describing what the script trains to get an estimate; the run is watched "
                           "either way."));
}

// The Collectives tab: the table of a step's collectives, the gradient all-reduce's algorithms below.
QWidget *EstimatePanel::makeCollectivesPage()
{
    m_collectives->setHeaderLabels({tr("Group"), tr("Operation"), tr("MiB/step"), tr("Calls"), tr("ms/step"), tr("Link")});
    m_collectives->setRootIsDecorated(false);
    m_collectives->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
    auto *collectivesPage = new QWidget(this);
    auto *collectivesLayout = new QVBoxLayout(collectivesPage);
    collectivesLayout->setContentsMargins(0, 0, 0, 0);
    collectivesLayout->addWidget(m_collectives, 1);
    m_allReduce->setObjectName(QStringLiteral("allReduceChoice"));
    m_allReduce->setWordWrap(true);
    m_allReduce->setTextInteractionFlags(Qt::TextSelectableByMouse);
    collectivesLayout->addWidget(m_allReduce);
    return collectivesPage;
}

void EstimatePanel::clear()
{
    m_plan.reset();
    m_estimate.reset();
    m_current = false;
    m_change.clear();
    m_headline->setText(tr("<i>No plan loaded.</i>"));
    m_memory->clearPlottables();
    m_memory->replot();
    m_collectives->clear();
    m_allReduce->clear();
    m_results->clear();
    m_timeline->setTimeline({});
    m_comparison->unpin();
    m_comparison->showCurrent(std::nullopt, std::nullopt, false);
    m_comparison->setPinnable(false);
    m_searchButton->setEnabled(false);
    m_useButton->setEnabled(false);
}

void EstimatePanel::showPlan(const plan::Plan &p)
{
    m_plan = p;
    m_searchButton->setEnabled(!m_searchWatcher.isRunning());
    setCurrent(false);
    m_comparison->showCurrent(m_plan, m_estimate, false);
    m_comparison->setPinnable(false);
    m_headline->setText(tr("<i>Estimating… (what is dimmed below belongs to the plan before this edit)</i>"));
    // A watcher follows only its newest future: an older plan's estimate, still running, is not shown.
    const QString calibration = m_calibrationPath;
    m_estimateWatcher.setFuture(QtConcurrent::run([planned = p, calibration, generation = ++m_generation] {
        Computed c;
        c.generation = generation;
        plan::Plan q = planned;
        plan::DeviceSpec device = plan::deviceFor(q.cluster);
        bool applied = false;
        const QString error = launcher::applyCalibrationFile(calibration, false, q, device, applied);
        const bool cpu = q.cluster.nodes.empty() || q.cluster.nodes.front().device == plan::DeviceKind::Cpu;
        c.note = !error.isEmpty() ? error
                 : cpu            ? (applied ? tr("calibrated") : tr("not calibrated: run trellis-cli calibrate"))
                                  : QString();
        if (!applied && error.isEmpty() && launcher::wantsAutoCalibration(q, calibration))
            c.calibrateRanks = std::min(q.parallel.worldSize(), 256);
        c.device = QString::fromStdString(device.name);
        c.deviceMemoryGB = device.memoryGB;
        c.estimate = plan::estimatePlan(q, device);
        c.timeline = launcher::telemetry::predictedTimeline(c.estimate);
        if (q.parallel.pp <= 1)
            c.timeline.note = tr("One pipeline stage: no schedule and no bubble. Set pp above 1 to see the pipeline's timeline.");
        return c;
    }));
}

QString EstimatePanel::calibrationNote(const Computed &c) const
{
    if (m_calibration->running())
        return tr("measuring this machine for %n rank(s) (once, a few seconds): default rates until then", nullptr, m_calibration->ranks());
    if (c.calibrateRanks > 0 && !m_calibration->error().isEmpty())
        return tr("not calibrated (the calibration failed: %1); run trellis-cli calibrate").arg(m_calibration->error());
    return c.note;
}

void EstimatePanel::showEstimate(const Computed &c)
{
    if (c.calibrateRanks > 0)
        m_calibration->start(c.calibrateRanks);
    const plan::Estimate &e = c.estimate;
    // The change against what was shown before, as a person editing wants to read it.
    m_change.clear();
    if (m_estimate)
        m_change = changeSince(*m_estimate, e);
    m_estimate = e;
    setCurrent(true);
    m_timeline->setTimeline(c.timeline);
    m_comparison->showCurrent(m_plan, m_estimate, true);
    m_comparison->setPinnable(true);
    showHeadline(c);
    showMemoryChart(c);
    showCollectives(e);
    emit estimateShown();
}

QString EstimatePanel::changeSince(const plan::Estimate &b, const plan::Estimate &e) const
{
    QStringList parts;
    auto percent = [&parts](const QString &what, double before, double after) {
        if (const QString change = estimate::percentChange(before, after); !change.isEmpty())
            parts << what + QLatin1Char(' ') + change;
    };
    percent(tr("tokens/s"), b.tokensPerS, e.tokensPerS);
    percent(tr("step time"), b.stepMs, e.stepMs);
    for (std::size_t i = 0; i < e.memory.size() && i < b.memory.size(); ++i) {
        const double delta = (static_cast<double>(e.memory[i].total()) - static_cast<double>(b.memory[i].total())) / 1e9;
        if (std::abs(delta) >= 0.0005)
            parts << tr("stage %1 memory %2%3 GB").arg(i).arg(delta >= 0 ? QStringLiteral("+") : QStringLiteral("−"))
                         .arg(std::abs(delta), 0, 'f', std::abs(delta) < 1 ? 3 : 2);
    }
    if (e.memory.size() != b.memory.size())
        parts << tr("%1 → %2 pipeline stages").arg(b.memory.size()).arg(e.memory.size());
    return parts.join(QStringLiteral(", "));
}

void EstimatePanel::showHeadline(const Computed &c)
{
    const plan::Estimate &e = c.estimate;
    QString text = tr("<b>%1 tokens/s</b> &nbsp; step %2 = compute %3 + exposed communication %4 + bubble %5 (%6%)<br>"
                      "MFU %7 &nbsp; %8 parameters &nbsp; cost %9 a run &nbsp; <small>%10%11</small>")
                       .arg(rate(e.tokensPerS), duration(e.stepMs), duration(e.computeMs), duration(e.exposedCommMs),
                            duration(e.bubbleMs))
                       .arg(100 * e.bubbleFraction, 0, 'f', 1)
                       .arg(e.mfu > 0 ? QStringLiteral("%1%").arg(100 * e.mfu, 0, 'f', 1) : tr("n/a (CPU)"))
                       .arg(e.parametersTotal >= 1e9 ? tr("%1 B").arg(e.parametersTotal / 1e9, 0, 'f', 2)
                                                      : tr("%1 M").arg(e.parametersTotal / 1e6, 0, 'f', 2))
                       .arg(e.costPerRun, 0, 'f', 2)
                       .arg(c.device.toHtmlEscaped(), calibrationNote(c).isEmpty() ? QString() : QStringLiteral(", ") + calibrationNote(c).toHtmlEscaped());
    if (const plan::CheckpointEstimate &k = e.checkpoint; k.enabled) {
        text += QStringLiteral("<br>") +
                tr("Checkpoints (%1): training waits %2 a save (%3% of the steps between saves); the busiest node writes %4 GB in %5, "
                   "keeping %6 GB of staging buffers")
                    .arg(QString::fromLatin1(plan::toString(k.mode)), duration(k.blockMs))
                    .arg(100 * k.overheadFraction, 0, 'f', 2)
                    .arg(static_cast<double>(k.mostBytesPerNode) / 1e9, 0, 'f', 2)
                    .arg(duration(k.writeMs))
                    .arg(static_cast<double>(k.stagingBytesPerNode) / 1e9, 0, 'f', 2)
                    .toHtmlEscaped();
        if (k.mode == plan::CheckpointMode::Async && k.landsEvery > k.every)
            text += QStringLiteral(" ") + tr("(the write outlasts the steps between saves: one lands every %1 steps)").arg(k.landsEvery).toHtmlEscaped();
    }
    for (const auto &w : e.warnings)
        text += QStringLiteral("<br><span style='color:#b00020'>%1</span>").arg(QString::fromStdString(w.toString()).toHtmlEscaped());
    if (!m_change.isEmpty())
        text += QStringLiteral("<br><span style='color:#1f4e8c'>%1</span>").arg(tr("Since the last estimate: %1").arg(m_change).toHtmlEscaped());
    m_headline->setText(text);
}

// Memory per stage, stacked by category.
void EstimatePanel::showMemoryChart(const Computed &c)
{
    const plan::Estimate &e = c.estimate;
    m_memory->clearPlottables();
    m_memory->clearItems();
    const struct {
        const char *name;
        QColor color;
        std::uint64_t plan::StageMemory::*field;
    } categories[] = {
        {QT_TR_NOOP("parameters"), QColor(0x44, 0x77, 0xaa), &plan::StageMemory::parameters},
        {QT_TR_NOOP("gradients"), QColor(0x66, 0xcc, 0xee), &plan::StageMemory::gradients},
        {QT_TR_NOOP("optimizer"), QColor(0x22, 0x88, 0x33), &plan::StageMemory::optimizer},
        {QT_TR_NOOP("activations"), QColor(0xcc, 0xbb, 0x44), &plan::StageMemory::activations},
        {QT_TR_NOOP("comm buffers"), QColor(0xee, 0x66, 0x77), &plan::StageMemory::commBuffers},
    };
    QCPBars *below = nullptr;
    QVector<double> x;
    for (const auto &m : e.memory)
        x << m.stage;
    const double peak = static_cast<double>(e.peakMemory()) / 1e9;
    for (const auto &cat : categories) {
        auto *bars = new QCPBars(m_memory->xAxis, m_memory->yAxis);
        bars->setName(tr(cat.name));
        bars->setPen(Qt::NoPen);
        bars->setBrush(cat.color);
        bars->setWidth(0.6);
        QVector<double> y;
        for (const auto &m : e.memory)
            y << static_cast<double>(m.*cat.field) / 1e9;
        bars->setData(x, y);
        if (below)
            bars->moveAbove(below);
        below = bars;
    }
    double top = peak;
    if (c.deviceMemoryGB > 0) {
        auto *line = new QCPItemStraightLine(m_memory);
        line->point1->setCoords(-1, c.deviceMemoryGB);
        line->point2->setCoords(1, c.deviceMemoryGB);
        line->setPen(QPen(QColor(0xb0, 0x00, 0x20), 1, Qt::DashLine));
        auto *label = new QCPItemText(m_memory);
        label->position->setCoords(-0.45, c.deviceMemoryGB);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        label->setText(tr("%1 %2 GB").arg(c.device).arg(c.deviceMemoryGB, 0, 'f', 0));
        label->setColor(QColor(0xb0, 0x00, 0x20));
        top = std::max(top, c.deviceMemoryGB);
    }
    m_memory->xAxis->setRange(-0.6, static_cast<double>(e.memory.size()) - 0.4);
    m_memory->yAxis->setRange(0, top > 0 ? top * 1.15 : 1);
    QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
    ticker->setTickStep(std::max(1.0, std::ceil(e.memory.size() / 16.0)));
    m_memory->xAxis->setTicker(ticker);
    m_memory->replot();
}

namespace {
// The gradient all-reduce under each algorithm: a line per algorithm, the plan's marked.
QString allReduceText(const plan::AllReduceChoice &c)
{
    if (c.group.empty())
        return EstimatePanel::tr("No data-parallel gradient all-reduce in this plan (one replica, or ZeRO's reduce-scatters): "
                                 "parallel.allreduce applies to the other all-reduces only.");
    QString text = EstimatePanel::tr("<b>Gradient all-reduce</b> (%1: %2 ranks on %3 node(s), %4 MiB a call, %5 calls a step)")
                       .arg(QString::fromStdString(c.group))
                       .arg(c.ranks)
                       .arg(c.nodes)
                       .arg(c.bytesPerCall / (1024.0 * 1024.0), 0, 'f', 2)
                       .arg(c.callsPerStep, 0, 'f', 0);
    text += QStringLiteral("<br>");
    QStringList parts;
    for (const auto &o : c.options) {
        QString part = QStringLiteral("%1 %2 ms").arg(QString::fromLatin1(plan::toString(o.algorithm))).arg(o.msPerStep, 0, 'f', 2);
        if (o.algorithm == c.chosen)
            part = QStringLiteral("<b>%1</b>").arg(part);
        if (o.algorithm == c.fastest)
            part += QStringLiteral(" ◀");
        parts << part;
    }
    return text + parts.join(QStringLiteral(" · ")) + QStringLiteral("<br>") + QString::fromStdString(c.why).toHtmlEscaped();
}
} // namespace

void EstimatePanel::showCollectives(const plan::Estimate &e)
{
    m_allReduce->setText(allReduceText(e.allReduce));
    m_collectives->clear();
    for (const auto &col : e.collectives) {
        if (col.op == "recv")
            continue; // the sends' mirror
        if (col.stage > 0 && e.memory.size() > 1 && col.stage != static_cast<int>(e.memory.size()) - 1)
            continue; // the first and last stage tell the story; the middle ones repeat them
        auto *item = new QTreeWidgetItem(m_collectives);
        item->setText(0, QString::fromStdString(col.group) + (col.stage >= 0 ? tr(" (stage %1)").arg(col.stage) : QString()));
        item->setText(1, QString::fromStdString(col.op == "send" ? "send/recv" : col.op));
        item->setText(2, QString::number(static_cast<double>(col.bytes) / (1024.0 * 1024.0), 'f', 2));
        item->setText(3, QString::number(col.callsPerStep));
        item->setText(4, QString::number(col.msPerStep, 'f', 2));
        item->setText(5, col.interNode ? tr("inter-node") : tr("intra-node"));
        for (int i = 2; i <= 4; ++i)
            item->setTextAlignment(i, Qt::AlignRight | Qt::AlignVCenter);
    }
}

void EstimatePanel::search()
{
    if (!m_plan || m_searchWatcher.isRunning())
        return;
    plan::SearchRequest request;
    request.model = m_plan->model;
    request.cluster = m_plan->cluster;
    request.globalBatch = m_plan->parallel.globalBatch();
    request.training = m_plan->training;
    request.top = 20;
    m_searchButton->setEnabled(false);
    m_searchButton->setText(tr("Searching…"));
    m_tabs->setCurrentWidget(m_results->parentWidget());
    m_results->clear();
    m_searchWatcher.setFuture(QtConcurrent::run([request] { return plan::searchPlans(request); }));
}

void EstimatePanel::showSearch()
{
    m_searchButton->setText(tr("Search plans"));
    m_searchButton->setEnabled(m_plan.has_value());
    m_results->clear();
    int index = 0;
    for (const auto &c : m_search.best) {
        const auto &p = c.plan.parallel;
        const std::uint64_t peak = c.estimate.peakMemory();
        auto *item = new QTreeWidgetItem(m_results);
        item->setData(0, Qt::UserRole, index);
        item->setText(0, QString::number(++index));
        item->setText(1, QString::number(p.dp));
        item->setText(2, QString::number(p.tp));
        item->setText(3, QString::number(p.pp));
        item->setText(4, QString::number(p.cp));
        item->setText(5, QString::number(p.ep));
        item->setText(6, QString::number(p.zero));
        item->setText(7, p.pp > 1 ? QString::fromStdString(p.schedule) + (p.virtualStages > 1 ? QStringLiteral(" v%1").arg(p.virtualStages) : QString())
                                  : QStringLiteral("-"));
        item->setText(8, QStringLiteral("%1 × %2").arg(p.microBatchSize).arg(p.microBatches));
        item->setText(9, QString::fromLatin1(plan::toString(p.recompute)));
        item->setText(10, rate(c.estimate.tokensPerS));
        item->setText(11, estimate::gigabytes(static_cast<double>(peak)));
        if (c.notLaunchable.empty()) {
            item->setText(12, QString::fromStdString(c.reason));
            item->setToolTip(12, QString::fromStdString(c.reason));
        } else {
            item->setText(12, tr("%1 — not launchable by trellis-trainer yet").arg(QString::fromStdString(c.reason)));
            item->setToolTip(12, tr("%1\ntrellis-trainer cannot launch it yet: %2")
                                     .arg(QString::fromStdString(c.reason), QString::fromStdString(c.notLaunchable)));
        }
    }
    if (m_search.best.empty()) {
        auto *item = new QTreeWidgetItem(m_results);
        item->setText(0, tr("No plan fits: more devices, a smaller micro-batch or a smaller model."));
        item->setFirstColumnSpanned(true);
        item->setData(0, Qt::UserRole, -1);
    } else {
        m_results->headerItem()->setToolTip(0, tr("%1 plans considered, %2 valid, %3 fit")
                                                   .arg(m_search.considered)
                                                   .arg(m_search.valid)
                                                   .arg(m_search.fitting));
    }
    emit searchFinished();
}

} // namespace trellis::ui
