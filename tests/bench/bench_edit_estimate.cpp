// Time from an edit in the workbench to the updated estimate on screen, on the 128-GPU example
// (llama2-70b on 16 DGX H100 nodes), against the cost model alone (plan::estimatePlan and the
// predicted timeline, on this thread) measured side by side in the same run. The workbench waits
// MainWindow::kEstimateDebounceMs after an edit for the next one, then estimates on a worker
// thread; the rest is what the estimate costs the person. 20 edits alternating micro-batches and
// tensor parallelism (dp following); median and worst.
// Usage: QT_QPA_PLATFORM=offscreen build/bin/bench_edit_estimate
#include "launcher/document/plan_document.h"
#include "launcher/metrics/timeline.h"
#include "backend/plan/cost/cost_model.h"
#include "ui/estimate/estimate_panel.h"
#include "ui/workspace/main_window.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QTemporaryDir>

#include <algorithm>
#include <cstdio>
#include <vector>

using namespace trellis;

namespace {

struct Stats {
    double median, worst;
};
Stats stats(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return {v[v.size() / 2], v.back()};
}

} // namespace

int main(int argc, char **argv)
{
    if (qgetenv("QT_QPA_PLATFORM").isEmpty())
        qputenv("QT_QPA_PLATFORM", "offscreen");
    QApplication app(argc, argv);
    QTemporaryDir dir;
    ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
    if (!window.loadPlan(QStringLiteral(TRELLIS_SOURCE_DIR "/resources/plans/gpu/llama2-70b-dgx-h100.json")))
        return 1;
    ui::EstimatePanel *panel = window.estimatePanel();
    QSignalSpy shown(panel, &ui::EstimatePanel::estimateShown);
    if (!panel->isCurrent() && !shown.wait(30000))
        return 1;

    std::vector<double> edit, model;
    for (int i = 0; i < 20; ++i) {
        QElapsedTimer timer;
        timer.start();
        const QString refused = i % 2 == 0 ? window.document()->setField(QStringLiteral("parallel.micro_batches"), i % 4 == 0 ? QStringLiteral("16") : QStringLiteral("32"))
                                           : window.document()->setFields({{QStringLiteral("parallel.tp"), i % 4 == 1 ? QStringLiteral("4") : QStringLiteral("8")},
                                                                           {QStringLiteral("parallel.dp"), i % 4 == 1 ? QStringLiteral("8") : QStringLiteral("4")}},
                                                                          QStringLiteral("bench"));
        if (!refused.isEmpty() || !shown.wait(30000) || !panel->isCurrent()) {
            std::fprintf(stderr, "edit %d: no estimate (%s)\n", i, qPrintable(refused));
            return 1;
        }
        edit.push_back(static_cast<double>(timer.nsecsElapsed()) / 1e6);
        // The cost model alone on the same plan, here.
        const plan::Plan p = window.document()->plan();
        timer.restart();
        const plan::Estimate e = plan::estimatePlan(p, plan::deviceFor(p.cluster));
        const auto timeline = launcher::telemetry::predictedTimeline(e);
        model.push_back(static_cast<double>(timer.nsecsElapsed()) / 1e6);
        if (timeline.lanes.empty())
            return 1;
    }
    const Stats a = stats(edit), b = stats(model);
    const int debounce = ui::MainWindow::kEstimateDebounceMs;
    std::printf("edit -> estimate shown (128-GPU plan, 20 edits): median %.1f ms, worst %.1f ms (%d ms of it the debounce)\n", a.median, a.worst, debounce);
    std::printf("cost model + timeline alone:                     median %.1f ms, worst %.1f ms\n", b.median, b.worst);
    std::printf("past the debounce: median %.1f ms = %.1f x the cost model alone\n", a.median - debounce, (a.median - debounce) / b.median);
    return 0;
}
