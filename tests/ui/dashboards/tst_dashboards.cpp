// Each dashboard panel fed a snapshot of a recorded run shows the expected values: a line per rank
// up to 8 ranks and bands beyond (outliers named), the stacked step-time parts, memory by
// category, one row per collective, every event (choosing one marks its step), the heat map's
// size, telemetry health; per pipeline stage the breakdown and the bubble against the simulator's,
// the step timeline measured beside the predicted one, the model FLOPs achieved.
#include "launcher/report/run_comparison.h"
#include "launcher/metrics/dashboard_snapshot.h"
#include "ui/history/compare_view.h"
#include "ui/dashboards/breakdown_panel.h"
#include "ui/dashboards/communication_panel.h"
#include "ui/dashboards/events_panel.h"
#include "ui/dashboards/health_panel.h"
#include "ui/dashboards/heatmap_panel.h"
#include "ui/dashboards/memory_panel.h"
#include "ui/dashboards/metric_panel.h"
#include "ui/dashboards/stalls_panel.h"
#include "ui/dashboards/ranks_panel.h"
#include "ui/dashboards/timeline_panel.h"
#include "backend/plan/cost/cost_model.h"
#include "backend/plan/plan_json.h"

#include <qcustomplot.h>

#include <QFile>
#include <QLabel>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTest>
#include <QTreeWidget>

using namespace trellis;
using namespace trellis::launcher;
using namespace trellis::launcher::telemetry;
using namespace trellis::ui::dashboards;

namespace {

// A recorded run: `ranks` ranks, `steps` steps; rank r computes 10 + r ms (the last rank 3x).
RunData recordedRun(int ranks, int steps)
{
    RunData run;
    run.run.runId = QStringLiteral("recorded");
    run.run.worldSize = ranks;
    run.run.totalSteps = steps;
    run.run.stepsDone = steps;
    for (int r = 0; r < ranks; ++r) {
        RankRow rank;
        rank.rank = r;
        rank.receivedSeq = 3 * steps + 1;
        rank.goodbyeSeq = 3 * steps;
        run.ranks.append(rank);
    }
    for (int s = 1; s <= steps; ++s)
        for (int r = 0; r < ranks; ++r) {
            StepRow row;
            row.rank = r;
            row.step = s;
            row.loss = 5.0 - 0.01 * s;
            row.computeMs = r == ranks - 1 ? 30.0 + 3 * r : 10.0 + r * 0.01;
            row.commExposedMs = 2;
            row.bubbleMs = 1;
            row.idleMs = 0.5;
            row.stepMs = row.computeMs + 3.5;
            row.tokensPerS = 1000;
            row.memParameters = 100 << 20;
            row.memOptimizer = (200 + r) << 20;
            run.steps.append(row);
        }
    run.events.append(EventRow{-1, 7, QStringLiteral("checkpoint"), QStringLiteral("checkpoint at step 7"), {}});
    run.events.append(EventRow{ranks - 1, 12, QStringLiteral("straggler"), QStringLiteral("rank is a straggler"), {}});
    return run;
}

QList<CollectiveRow> collectives(int ranks)
{
    QList<CollectiveRow> out;
    for (int r = 0; r < ranks; ++r) {
        out.append(CollectiveRow{r, 20, QStringLiteral("dp"), QStringLiteral("all_reduce"), 8 << 20, 4.0, r == 1 ? 1.0 : 2.0, 1});
        out.append(CollectiveRow{r, 20, QStringLiteral("tp"), QStringLiteral("all_gather"), 1 << 20, 1.0, 8.0, 2});
    }
    return out;
}

} // namespace

class TstDashboards : public QObject {
    Q_OBJECT
private slots:
    void linesUpToEightRanks()
    {
        const auto snapshot = snapshotOf(recordedRun(4, 30), collectives(4));
        MetricPanel panel(QStringLiteral("t"), QStringLiteral("t"), {Metric::Loss}, false);
        panel.show(snapshot);
        QCOMPARE(panel.plot()->graphCount(), 4);
        QCOMPARE(panel.pointCount(), 4 * 30);
        QVERIFY(std::abs(panel.plot()->graph(0)->data()->at(29)->value - (5.0 - 0.3)) < 1e-6); // stored as float
    }

    void bandsBeyondWithOutliersNamed()
    {
        const auto snapshot = snapshotOf(recordedRun(64, 30), collectives(64), Metric::ComputeMs);
        MetricPanel panel(QStringLiteral("t"), QStringLiteral("t"), {Metric::StepMs}, false);
        panel.show(snapshot);
        QStringList names;
        for (int i = 0; i < panel.plot()->graphCount(); ++i)
            names << panel.plot()->graph(i)->name();
        QVERIFY2(names.contains(QStringLiteral("median of 64 ranks")), qPrintable(names.join(QLatin1Char('|'))));
        QVERIFY2(std::any_of(names.begin(), names.end(), [](const QString &n) { return n.startsWith(QStringLiteral("rank 63: +")); }),
                 qPrintable(names.join(QLatin1Char('|'))));
        // The band spans the slowest rank: max = rank 63's step time.
        const QCPGraph *maxGraph = panel.plot()->graph(0);
        QCOMPARE(maxGraph->name(), QStringLiteral("min – max"));
        QVERIFY(std::abs(maxGraph->data()->at(0)->value - (30.0 + 3 * 63 + 3.5)) < 1e-3);
        // The legend: one entry for the band (the min line has none), under the axes rather than
        // over the lines, as many entries side by side as the width holds.
        QCPLegend *legend = panel.plot()->legend;
        QCOMPARE(legend->itemCount(), panel.plot()->graphCount() - 1);
        QCOMPARE(legend->layout(), static_cast<QCPLayout *>(panel.plot()->plotLayout()));
        panel.plot()->resize(900, 300);
        panel.plot()->replot();
        QCOMPARE(legend->wrap(), legend->itemCount()); // one row
        panel.plot()->resize(220, 300);
        panel.plot()->replot();
        QVERIFY2(legend->wrap() < legend->itemCount(), qPrintable(QString::number(legend->wrap())));
        QVERIFY(legend->outerRect().right() <= panel.plot()->width());

        HeatMapPanel heat;
        heat.show(snapshot);
        auto *map = qobject_cast<QCPColorMap *>(heat.plot()->plottable(0));
        QVERIFY(map);
        QCOMPARE(map->data()->keySize(), 30);
        // Ranks are grouped to fit the plot (at least 8 groups, at most one a rank); a group shows
        // its value furthest from the median: the last group, rank 63's compute time.
        const int groups = map->data()->valueSize();
        QVERIFY2(groups >= 8 && groups <= 64, qPrintable(QString::number(groups)));
        QVERIFY(std::abs(map->data()->cell(29, groups - 1) - (30.0 + 3 * 63)) < 1e-3);
        QVERIFY(std::abs(map->data()->cell(29, 0) - 10.0) < 0.1); // an ordinary rank
        QVERIFY(map->dataRange().lower <= 10.0 && map->dataRange().upper >= 30.0 + 3 * 63);

        // Every rank alike: the colour scale spans the one value (an empty range would leave the
        // cells undrawn).
        RunData alike = recordedRun(16, 10);
        for (StepRow &row : alike.steps)
            row.stepMs = row.computeMs = 50;
        HeatMapPanel uniform;
        uniform.show(snapshotOf(alike, {}));
        const QCPRange range = qobject_cast<QCPColorMap *>(uniform.plot()->plottable(0))->dataRange();
        QVERIFY2(range.lower < 50 && range.upper > 50, qPrintable(QStringLiteral("%1..%2").arg(range.lower).arg(range.upper)));
    }

    void breakdownMemoryCommunication()
    {
        const auto snapshot = snapshotOf(recordedRun(4, 10), collectives(4));
        BreakdownPanel breakdown;
        breakdown.show(snapshot);
        QCOMPARE(breakdown.findChild<QCustomPlot *>()->plottableCount(), 4); // compute, exposed comm, bubble, idle
        // Stacked areas: each part's graph holds the sum up to it, so a part is its graph less the one below.
        QCustomPlot *parts = breakdown.findChild<QCustomPlot *>();
        QCOMPARE(parts->graph(1)->name(), QStringLiteral("exposed communication"));
        QCOMPARE(parts->graph(1)->data()->at(0)->value - parts->graph(0)->data()->at(0)->value, 2.0);
        QCOMPARE(parts->graph(1)->channelFillGraph(), parts->graph(0));

        MemoryPanel memory;
        memory.show(snapshot);
        auto *plot = memory.findChild<QCustomPlot *>();
        auto *median = qobject_cast<QCPBars *>(plot->plottable(1));
        QCOMPARE(median->name(), QStringLiteral("median rank"));
        QCOMPARE(median->data()->at(0)->value, 100.0);               // parameters, MiB
        auto *largest = qobject_cast<QCPBars *>(plot->plottable(0));
        QCOMPARE(largest->data()->at(2)->value, 203.0);              // optimizer of rank 3, MiB

        CommunicationPanel comm;
        comm.show(snapshot);
        QCOMPARE(comm.table()->rowCount(), 2);
        QCOMPARE(comm.table()->item(0, 0)->text(), QStringLiteral("dp"));
        QCOMPARE(comm.table()->item(0, 2)->text(), QStringLiteral("4"));
        QCOMPARE(comm.table()->item(0, 6)->text(), QStringLiteral("1 (1.00)")); // the slowest link named
        QVERIFY(comm.trafficLabel()->isHidden()); // every-step training: nothing to compare
    }

    // Checkpoints beside the step time: their time at the step boundaries stacked on the step's
    // parts, and a line that says what the saves cost — training's wait a save, the write behind it,
    // the steps beside a write against the others. Async saves begun at steps 3, 6 and 9 (2 ms
    // each), put in place at 4, 7 and 10 (1 ms each, written in 30 ms), steps beside a write 10%
    // slower. Without checkpoints (breakdownMemoryCommunication) neither shows.
    void checkpointCostsBesideTheStepTime()
    {
        RunData run = recordedRun(2, 12);
        for (StepRow &row : run.steps) {
            if (row.step % 3 == 0 && row.step < 12)
                row.checkpointMs = 2;
            if (row.step % 3 == 1 && row.step > 1) {
                row.checkpointMs = 1;
                row.checkpointWriteMs = 30;
                row.checkpointBehind = true;
                row.stepMs *= 1.1;
            }
        }
        const auto snapshot = snapshotOf(run, {});
        const CheckpointCosts &c = snapshot->checkpoints;
        QCOMPARE(c.saves, qint64(3));
        QCOMPARE(c.savingBoundaries, qint64(6));
        QCOMPARE(c.blockedPerSaveMs(), 3.0); // 2 ms begun + 1 ms put in place, a save
        QCOMPARE(c.writePerSaveMs(), 30.0);
        QVERIFY(qAbs(c.slowdown() - 0.1) < 1e-9);
        BreakdownPanel breakdown;
        breakdown.show(snapshot);
        QCustomPlot *parts = breakdown.findChild<QCustomPlot *>();
        QCOMPARE(parts->plottableCount(), 5);
        QCOMPARE(parts->graph(4)->name(), QStringLiteral("checkpoint (between steps)"));
        auto *line = breakdown.findChild<QLabel *>(QStringLiteral("checkpointCosts"));
        QVERIFY(line && !line->isHidden());
        QCOMPARE(line->text(), QStringLiteral("Checkpoints: 3.0 ms a save (22.2% of a step) · written in 30.0 ms · steps beside a write +10.0%"));
        const QString whole = line->toolTip();
        QVERIFY2(whole.startsWith(QStringLiteral("Checkpoints put in place: 3; training waited 3.0 ms a save")), qPrintable(whole));
        QVERIFY2(whole.contains(QStringLiteral("each written in 30.0 ms")), qPrintable(whole));
        QVERIFY2(whole.contains(QStringLiteral("steps beside a background write 10.0% slower (3 of 12 steps)")), qPrintable(whole));
        QCOMPARE(c.summary().left(22), QStringLiteral("3 saves; training wait")); // the reports' words

        BreakdownPanel none;
        none.show(snapshotOf(recordedRun(2, 12), {}));
        QVERIFY(none.findChild<QLabel *>(QStringLiteral("checkpointCosts"))->isHidden());
    }

    // Local updates: the outer steps and the dp bytes against every step's whole gradients, on the
    // communication panel and as the training panel's dp chart (each rank's bytes so far, and the
    // every-step line). DiLoCo at inner_steps 4 over 30 steps: 7 outer steps of 8 MB a rank.
    void dpTrafficOfLocalUpdates()
    {
        RunData run = recordedRun(4, 30);
        for (StepRow &row : run.steps) {
            row.outerSteps = row.step / 4;
            row.dpBytes = row.outerSteps * 8'000'000;
            row.dpDenseBytes = row.step * 8'000'000;
        }
        const auto snapshot = snapshotOf(run, collectives(4));
        QCOMPARE(snapshot->dpTraffic.outerSteps, 7);
        QCOMPARE(snapshot->dpTraffic.bytes, 56'000'000);
        QCOMPARE(snapshot->dpTraffic.denseBytes, 240'000'000);
        CommunicationPanel comm;
        comm.show(snapshot);
        QVERIFY(!comm.trafficLabel()->isHidden());
        QCOMPARE(comm.trafficLabel()->text(),
                 QStringLiteral("dp traffic: 7 outer step(s); 56.0 MB all-reduced a rank instead of 240.0 MB every step would (4.3× fewer)"));
        MetricPanel training(QStringLiteral("t"), QStringLiteral("t"), {Metric::DpBytes}, false);
        training.show(snapshot);
        QCustomPlot *plot = training.plot();
        QCOMPARE(plot->graphCount(), 5); // a line per rank, and every step's
        QCOMPARE(plot->graph(0)->data()->at(29)->value, 56.0); // MB
        QCOMPARE(plot->graph(0)->data()->at(3)->value, 8.0);   // the first outer step, at step 4
        QCOMPARE(plot->graph(4)->name(), QStringLiteral("every step would: 240.0 MB (4.3× more)"));
        QCOMPARE(plot->graph(4)->data()->at(1)->value, 240.0);
        // trellis --panel training.dp picks the chart by name (exact first, else the first prefix).
        MetricPanel choices(QStringLiteral("t"), QStringLiteral("t"), {Metric::Loss, Metric::LossScale, Metric::DpBytes}, false);
        choices.show(snapshot);
        QVERIFY(choices.chooseView(QStringLiteral("dp")));
        QCOMPARE(choices.plot()->graphCount(), 5);
        QCOMPARE(choices.plot()->graph(4)->name(), QStringLiteral("every step would: 240.0 MB (4.3× more)"));
        QVERIFY(choices.chooseView(QStringLiteral("loss")));
        QCOMPARE(choices.plot()->yAxis->label(), QStringLiteral("loss"));
        QVERIFY(choices.chooseView(QStringLiteral("loss_scale")));
        QVERIFY(!choices.chooseView(QStringLiteral("flops")));
        QVERIFY(!choices.chooseView(QStringLiteral("bytes")));
    }

    // The run's plan gives the cost model's prediction, drawn beside the measurement: the
    // predicted step time in the breakdown, the predicted memory of the busiest stage by category.
    void predictionBesideMeasurement()
    {
        RunData run = recordedRun(4, 10);
        QFile plan(QStringLiteral(TRELLIS_SOURCE_DIR "/tests/data/plans/dp4_short.json"));
        QVERIFY(plan.open(QIODevice::ReadOnly));
        run.planJson = QString::fromUtf8(plan.readAll());
        const auto snapshot = snapshotOf(run, collectives(4));
        QVERIFY(snapshot->prediction.known);
        QVERIFY(!snapshot->prediction.calibrated);
        QVERIFY(snapshot->prediction.stepMs > 0);
        QVERIFY(snapshot->prediction.memoryBytes.at(QStringLiteral("parameters")) > 0);
        BreakdownPanel breakdown;
        breakdown.show(snapshot);
        QCOMPARE(breakdown.plot()->graphCount(), 4 + 1); // the four stacked parts, then the prediction
        QCOMPARE(breakdown.plot()->graph(4)->name(), QStringLiteral("predicted step (default rates)"));
        QCOMPARE(breakdown.plot()->graph(4)->data()->at(0)->value, snapshot->prediction.stepMs);
        MemoryPanel memory;
        memory.show(snapshot);
        auto *plot = memory.findChild<QCustomPlot *>();
        QCOMPARE(plot->graphCount(), 1);
        QCOMPARE(plot->graph(0)->data()->at(0)->value, snapshot->prediction.memoryBytes.at(QStringLiteral("parameters")) / (1 << 20));
        // Without a plan there is no prediction, and nothing is drawn for it.
        const auto bare = snapshotOf(recordedRun(4, 10), collectives(4));
        QVERIFY(!bare->prediction.known);
        breakdown.show(bare);
        QCOMPARE(breakdown.plot()->graphCount(), 4); // the parts alone
    }

    // Two recorded runs compared: both curves overlaid, each run's figures, the plan fields that differ.
    void compareViewOverlaysAndTabulates()
    {
        RunData a = recordedRun(4, 10), b = recordedRun(8, 12);
        a.run.runId = QStringLiteral("run-a");
        b.run.runId = QStringLiteral("run-b");
        a.planJson = QStringLiteral(R"({"parallel": {"dp": 4, "tp": 1}, "model": {"layers": 2}})");
        b.planJson = QStringLiteral(R"({"parallel": {"dp": 4, "tp": 2}, "model": {"layers": 2}})");
        const Comparison c = compareRuns({a, b}, {collectives(4), collectives(8)});
        QCOMPARE(c.differences.size(), 1);
        QCOMPARE(c.differences[0].field, QStringLiteral("parallel.tp"));
        QCOMPARE(c.differences[0].values, (QStringList{QStringLiteral("1"), QStringLiteral("2")}));
        trellis::ui::CompareView view;
        view.show(c);
        QCOMPARE(view.lossPlot()->graphCount(), 2);
        QCOMPARE(view.lossPlot()->graph(1)->name(), QStringLiteral("run-b"));
        QCOMPARE(view.lossPlot()->graph(1)->dataCount(), 12);
        QCOMPARE(view.table()->columnCount(), 3);
        QCOMPARE(view.table()->rowCount(), 13 + 1 + 1);
        QCOMPARE(view.table()->item(2, 2)->text(), QStringLiteral("8")); // ranks of run-b
        QCOMPARE(view.table()->item(14, 0)->text(), QStringLiteral("parallel.tp"));
    }

    // A recorded pipeline run of the pipeline-cpu plan (pp 2, 1f1b, 16 micro-batches): stage s's
    // ranks report a bubble of 2 + s ms in a 20 ms step; a traced step's spans on both stages.
    void pipelineStagesTimelineAndFlops()
    {
        QFile planFile(QStringLiteral(TRELLIS_SOURCE_DIR "/resources/plans/pipeline-cpu.json"));
        QVERIFY(planFile.open(QIODevice::ReadOnly));
        RunData run = recordedRun(4, 10);
        run.planJson = QString::fromUtf8(planFile.readAll());
        for (RankRow &r : run.ranks)
            r.pp = r.rank / 2; // ranks 0, 1 on stage 0; 2, 3 on stage 1
        for (StepRow &row : run.steps) {
            row.stepMs = 20;
            row.bubbleMs = 2 + row.rank / 2;
            row.tokensPerS = 1000;
        }
        const auto snapshot = snapshotOf(run, collectives(4));
        QCOMPARE(snapshot->stages.size(), std::size_t(2));
        QCOMPARE(snapshot->stages[1].stage, 1);
        QCOMPARE(snapshot->stages[1].ranks, 2);
        QCOMPARE(snapshot->stages[1].bubbleMs, 3.0);
        QCOMPARE(snapshot->stages[1].bubbleFraction, 3.0 / 20);
        // The simulator's bubble for each stage, as the cost model gives it.
        auto plan = plan::parsePlan(run.planJson.toStdString());
        QVERIFY(plan);
        const plan::Estimate e = plan::estimatePlan(plan.value(), plan::deviceFor(plan.value().cluster));
        QCOMPARE(e.stageBubbleFraction.size(), std::size_t(2));
        QCOMPARE(snapshot->stages[0].predictedBubbleFraction, e.stageBubbleFraction[0]);
        QCOMPARE(snapshot->prediction.bubbleFraction, e.bubbleFraction);

        BreakdownPanel breakdown;
        breakdown.setPerStage(true);
        breakdown.show(snapshot);
        auto *bubbleBars = qobject_cast<QCPBars *>(breakdown.plot()->plottable(2));
        QCOMPARE(bubbleBars->name(), QStringLiteral("pipeline bubble"));
        QCOMPARE(bubbleBars->data()->size(), 2);
        QCOMPARE(bubbleBars->data()->at(1)->value, 3.0);
        QCOMPARE(breakdown.plot()->graph(0)->data()->at(1)->value, 15.0);                       // measured %
        QCOMPARE(breakdown.plot()->graph(1)->data()->at(0)->value, e.stageBubbleFraction[0] * 100); // predicted %

        // Model FLOPs: the job's tokens/s (4 ranks × 1000) × the plan's FLOPs per token; no MFU on a CPU.
        QVERIFY(!snapshot->achievedTflops.empty());
        QVERIFY(std::abs(snapshot->achievedTflops.back() - 4000 * e.modelFlopsPerStep / e.tokensPerStep / 1e12) < 1e-9);
        QVERIFY(snapshot->mfu.empty());
        MetricPanel throughput(QStringLiteral("t"), QStringLiteral("t"), {Metric::TokensPerS, Metric::StepMs}, true);
        throughput.choose(2);
        throughput.show(snapshot);
        QCOMPARE(throughput.plot()->graph(0)->name(), QStringLiteral("achieved model TFLOP/s (job)"));
        QCOMPARE(throughput.plot()->graph(0)->dataCount(), 10);

        // The timeline: stage 0 (rank 0) runs F0 F1 B0 B1, stage 1 (rank 2) F0 B0 F1 B1, each 1 ms
        // (B 2 ms); ranks 1 and 3 trace too but one rank stands for each stage.
        QList<SpanRow> spans;
        auto span = [&](int rank, const char *name, int micro, double from, double to) {
            spans.append(SpanRow{rank, 10, QString::fromLatin1(name), 1'000'000'000 + static_cast<qint64>(from * 1e6),
                                 1'000'000'000 + static_cast<qint64>(to * 1e6), micro, rank / 2});
        };
        for (int r : {0, 1}) {
            span(r, "F", 0, 0, 1);
            span(r, "F", 1, 1, 2);
            span(r, "send_act", 1, 2, 2.1);
            span(r, "B", 0, 4, 6);
            span(r, "B", 1, 7, 9);
        }
        for (int r : {2, 3}) {
            span(r, "F", 0, 1, 2);
            span(r, "B", 0, 2, 4);
            span(r, "F", 1, 4, 5);
            span(r, "B", 1, 5, 7);
        }
        const Prediction p = predictionFor(run.planJson, {});
        const TimelineView view = timelineOf(run.ranks, spans, p.timeline, p.bubbleFraction);
        QCOMPARE(view.step, qint64(10));
        QCOMPARE(view.measuredMs, 9.0);
        QCOMPARE(view.lanes.size(), std::size_t(4)); // 2 measured, 2 predicted
        QCOMPARE(view.lanes[0].rank, 0);
        QCOMPARE(view.lanes[1].rank, 2);
        QCOMPARE(view.lanes[0].bars.size(), std::size_t(5));
        QCOMPARE(view.lanes[0].busyMs, 6.0);                      // the send is not compute
        QCOMPARE(view.measuredBubble, 1.0 - (6.0 + 6.0) / (2 * 9.0));
        QVERIFY(view.lanes[2].predicted);
        QCOMPARE(view.lanes[2].bars.front().kind, QStringLiteral("F"));
        QVERIFY(std::abs(view.predictedBubble - e.bubbleFraction) < 1e-12);
        TimelinePanel panel;
        panel.showTimeline(view);
        QVERIFY2(panel.summary().contains(QStringLiteral("measured bubble 33.3% (step 10, 9.0 ms)")), qPrintable(panel.summary()));
        QVERIFY2(panel.summary().contains(QStringLiteral("predicted bubble %1%").arg(e.bubbleFraction * 100, 0, 'f', 1)),
                 qPrintable(panel.summary()));
        // No spans: the prediction alone, and why the measurement is missing.
        const TimelineView none = timelineOf(run.ranks, {}, p.timeline, p.bubbleFraction);
        QCOMPARE(none.lanes.size(), std::size_t(2));
        QVERIFY(none.note.contains(QStringLiteral("trace_every")));
    }

    void eventsMarkTheirStepAndHealthCounts()
    {
        const auto snapshot = snapshotOf(recordedRun(4, 20), collectives(4));
        EventsPanel events;
        events.show(snapshot);
        QCOMPARE(events.list()->topLevelItemCount(), 2);
        QSignalSpy chosen(&events, &Panel::stepChosen);
        emit events.list()->itemClicked(events.list()->topLevelItem(1), 0);
        QCOMPARE(chosen.size(), 1);
        QCOMPARE(chosen.first().first().toLongLong(), 12);
        events.show(snapshot); // the same events again: nothing doubles
        QCOMPARE(events.list()->topLevelItemCount(), 2);

        HealthPanel health;
        health.show(snapshot);
        QVERIFY2(health.text().contains(QStringLiteral("messages received: %1").arg(4 * 61)), qPrintable(health.text()));
        QVERIFY(health.text().contains(QStringLiteral("lost (given up by ranks): 0")));
        QVERIFY(health.text().contains(QStringLiteral("ranks reporting: 4 / 4")));
    }

    // Stalls over the run: a bar per stall at its step, the line says how many, how long and who
    // held them; a stall seen again (backfilled, then on the feed) counts once; none says so.
    void stallsAreBarsAndASummary()
    {
        RunData run = recordedRun(4, 20);
        StallsPanel none;
        none.show(snapshotOf(run, collectives(4)));
        QCOMPARE(none.barsShown(), 0);
        QVERIFY2(none.summary().startsWith(QStringLiteral("No stalls")), qPrintable(none.summary()));
        auto stall = [](int number, int holder, qint64 step, qint64 ms, const char *outcome) {
            StallRow s;
            s.number = number;
            s.holders = {holder};
            s.waiting = {0, 1, 2};
            s.step = step;
            s.durationMs = ms;
            s.outcome = QString::fromLatin1(outcome);
            return s;
        };
        run.stalls = {stall(1, 3, 5, 2600, "cleared"), stall(2, 3, 9, 2700, "cleared"), stall(3, 1, 14, 31000, "hang")};
        run.stalls.append(run.stalls.first()); // the same stall twice
        StallsPanel panel;
        panel.show(snapshotOf(run, collectives(4)));
        QCOMPARE(panel.barsShown(), 3);
        QVERIFY2(panel.summary().contains(QStringLiteral("3 stall(s), 36.3 s in all, the longest 31.0 s; held by rank 1: 1, rank 3: 2")),
                 qPrintable(panel.summary()));
        QCOMPARE(panel.stepPlots().size(), 1);
    }

    // Ranks alike in device, precision, kernels and threads are one row: 4096 ranks of one kind
    // and a node whose CPU lacks native bf16 (ranks 8-11 on GEMMs of converted operands) are two
    // rows, the larger first, GPUs of one model one kind whatever their index.
    void ranksAreGroupedByKernels()
    {
        RunData run = recordedRun(2, 4);
        run.ranks.clear();
        for (int r = 0; r < 4096; ++r) {
            RankRow k;
            k.rank = r;
            k.host = QStringLiteral("node%1").arg(r / 4);
            k.device = QStringLiteral("cpu");
            k.precision = QStringLiteral("bf16");
            k.threads = 1;
            k.kernels = r >= 8 && r < 12 ? QStringLiteral("bf16 GEMMs: fp32 (converted operands)") : QStringLiteral("bf16 GEMMs: onednn (native bf16)");
            run.ranks.append(k);
        }
        const auto snapshot = snapshotOf(run, {});
        QCOMPARE(snapshot->rankKinds.size(), std::size_t(2));
        const auto &native = snapshot->rankKinds[0], &converted = snapshot->rankKinds[1];
        QCOMPARE(native.count, 4092);
        QCOMPARE(native.hosts, 1023);
        QVERIFY2(native.ranks.startsWith(QStringLiteral("0-7, 12-4095")), qPrintable(native.ranks));
        QCOMPARE(converted.ranks, QStringLiteral("8-11"));
        QCOMPARE(converted.hosts, 1);
        QCOMPARE(converted.kernels, QStringLiteral("bf16 GEMMs: fp32 (converted operands)"));
        RanksPanel panel;
        panel.show(snapshot);
        QCOMPARE(panel.table()->rowCount(), 2);
        QCOMPARE(panel.table()->item(1, 0)->text(), QStringLiteral("8-11 (4 ranks)"));
        QCOMPARE(panel.table()->item(0, 4)->text(), QStringLiteral("bf16 GEMMs: onednn (native bf16)"));
        QCOMPARE(panel.table()->item(0, 5)->text(), QStringLiteral("1"));

        RunData gpus = recordedRun(2, 4);
        gpus.ranks.clear();
        for (int r = 0; r < 8; ++r) {
            RankRow k;
            k.rank = r;
            k.host = QStringLiteral("dgx");
            k.device = QStringLiteral("cuda:%1 (NVIDIA H100 80GB HBM3, 132 SMs)").arg(r);
            k.precision = QStringLiteral("bf16");
            gpus.ranks.append(k);
        }
        const auto gpuSnapshot = snapshotOf(gpus, {});
        QCOMPARE(gpuSnapshot->rankKinds.size(), std::size_t(1));
        QCOMPARE(gpuSnapshot->rankKinds[0].device, QStringLiteral("cuda (NVIDIA H100 80GB HBM3, 132 SMs)"));
        QCOMPARE(gpuSnapshot->rankKinds[0].ranks, QStringLiteral("0-7"));
    }
};

QTEST_MAIN(TstDashboards)
#include "tst_dashboards.moc"
