// The workbench at scale: a simulated run of RANKS ranks at HZ steps a second (trellis-cli
// simulate, the real supervisor and feed) followed by a real MainWindow (offscreen) for SECONDS.
// Measured in one invocation: each frame — from a snapshot arriving to the end of the replots it
// queued (every panel drawn) — its p50/p99; the event-loop latency p99 (a 10 ms timer probe's
// lateness) while following the run, beside the same probe on an idle window first (the
// baseline); and the resident memory at the start and the end of following.
// BENCH_GUI_WORST=1 lists the slowest frames with their GUI-thread CPU. The window is 1280 × 800 in Run
// mode, its dashboard grid as it comes (the panels on screen draw: two rows of two);
// BENCH_GUI_PANELS=all makes it 1920 × 3000 so that every panel of the grid is on screen and each
// frame draws all of them. BENCH_GUI_SIM_NICE=N runs the simulated ranks N nicer (simulate --nice,
// default 10: they stand for other machines).
// Usage: bench_gui [RANKS=1024] [HZ=20] [SECONDS=60]   (QT_QPA_PLATFORM=offscreen)
#include "ui/run/run_header.h"
#include "ui/workspace/main_window.h"
#include "ui/workspace/dashboard_grid.h"
#include "ui/workspace/panel_frame.h"
#include "ui/dashboards/panel.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <vector>


using namespace trellis;

namespace {

double percentile(std::vector<double> v, double p)
{
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(p * (v.size() - 1) + 0.5))];
}

double threadCpuMs()
{
    timespec t {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// Nanoseconds this thread has spent runnable but waiting for a CPU (the second field of
// /proc/thread-self/schedstat): what a frame's wall time owes to other processes on the cores.
double runQueueWaitMs()
{
    QFile f(QStringLiteral("/proc/thread-self/schedstat"));
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    const QList<QByteArray> fields = f.readAll().trimmed().split(' ');
    return fields.size() >= 2 ? fields[1].toDouble() / 1e6 : 0;
}

long rssKiB()
{
    QFile f(QStringLiteral("/proc/self/status"));
    if (!f.open(QIODevice::ReadOnly))
        return 0;
    for (const QByteArray &line : f.readAll().split('\n'))
        if (line.startsWith("VmRSS:"))
            return line.mid(6).trimmed().split(' ').first().toLong();
    return 0;
}

// Lateness of a 10 ms timer over `ms` of event loop.
std::vector<double> probe(int ms)
{
    std::vector<double> late;
    QElapsedTimer clock;
    clock.start();
    qint64 last = 0;
    QTimer timer;
    timer.setTimerType(Qt::PreciseTimer);
    timer.setInterval(10);
    QObject::connect(&timer, &QTimer::timeout, [&] {
        const qint64 now = clock.nsecsElapsed();
        if (last > 0)
            late.push_back(std::max(0.0, (now - last) / 1e6 - 10.0));
        last = now;
    });
    timer.start();
    QEventLoop loop;
    QTimer::singleShot(ms, &loop, &QEventLoop::quit);
    loop.exec();
    return late;
}

} // namespace

int main(int argc, char **argv)
{
    QApplication app(argc, argv);
    QStandardPaths::setTestModeEnabled(true); // the window's saved arrangement is not a person's
    const int ranks = argc > 1 ? std::atoi(argv[1]) : 1024;
    const double hz = argc > 2 ? std::atof(argv[2]) : 20;
    const int seconds = argc > 3 ? std::atoi(argv[3]) : 60;
    QTemporaryDir dir;
    const QString db = dir.filePath(QStringLiteral("history.sqlite"));
    const QString cli = QCoreApplication::applicationDirPath() + QStringLiteral("/trellis-cli");
    qputenv("TRELLIS_CLI", cli.toUtf8());

    ui::MainWindow window(db);
    const bool all = qEnvironmentVariable("BENCH_GUI_PANELS") == QLatin1String("all");
    window.resize(all ? QSize(1920, 3000) : QSize(1280, 800));
    window.show();
    window.setMode(ui::MainWindow::Mode::Run);
    window.grid()->resetLayout();
    // BENCH_GUI_COLLAPSE=steptime,training: those sections collapsed (what each costs a frame).
    for (const QString &section : qEnvironmentVariable("BENCH_GUI_COLLAPSE").split(QLatin1Char(','), Qt::SkipEmptyParts))
        window.grid()->setCollapsed(section, true);
    // BENCH_GUI_MOVE=heatmap:events,...: panels moved into other sections (off screen, say).
    for (const QString &move : qEnvironmentVariable("BENCH_GUI_MOVE").split(QLatin1Char(','), Qt::SkipEmptyParts))
        window.grid()->movePanel(move.section(QLatin1Char(':'), 0, 0), {}, move.section(QLatin1Char(':'), 1));
    const std::vector<double> idle = probe(3000); // the baseline: an idle window

    // Frames: from a snapshot arriving (this slot is connected before the dashboard's) to the end
    // of the replots it queued.
    std::vector<double> frames, frameCpu, frameWait;
    QElapsedTimer frame;
    double cpuAtStart = 0, waitAtStart = 0;
    QObject::connect(window.feed(), &launcher::RunFeed::snapshotReady, &window, [&] {
        frame.start();
        cpuAtStart = threadCpuMs();
        waitAtStart = runQueueWaitMs();
        // Two hops: the replots the panels queue (zero-time timers registered after this slot)
        // run before the second.
        QTimer::singleShot(0, &window, [&] {
            QTimer::singleShot(0, &window, [&] {
                frames.push_back(frame.nsecsElapsed() / 1e6);
                frameCpu.push_back(threadCpuMs() - cpuAtStart);
                frameWait.push_back(runQueueWaitMs() - waitAtStart);
            });
        });
    });
    QProcess sim;
    sim.start(cli, {QStringLiteral("--db"), db, QStringLiteral("simulate"), QStringLiteral("--ranks"), QString::number(ranks),
                    QStringLiteral("--hz"), QString::number(hz), QStringLiteral("--seconds"), QString::number(seconds + 10),
                    QStringLiteral("--slow"), QStringLiteral("%1@100").arg(ranks / 3), QStringLiteral("--detach"),
                    QStringLiteral("--nice"), qEnvironmentVariable("BENCH_GUI_SIM_NICE", QStringLiteral("10"))});
    sim.waitForFinished(30000);
    const QString runId = QString::fromUtf8(sim.readAllStandardOutput()).section(QLatin1Char('\n'), 0, 0).section(QLatin1Char(' '), 1);

    for (int i = 0; i < 100 && window.feed()->runId() != runId; ++i) {
        window.reattachRunning();
        probe(100);
    }
    probe(5000); // settle: backfill, first snapshots
    frames.clear();
    frameCpu.clear();
    frameWait.clear();
    QStringList onScreen; // the dashboards a frame draws: those of the grid on screen
    for (ui::dashboards::Panel *panel : window.panels())
        if (window.grid()->isOnScreen(window.grid()->frame(panel->objectId())))
            onScreen << panel->objectId() + (window.grid()->frame(panel->objectId())->showsPanel() ? QString() : QStringLiteral(" (empty state)"));
    const long rssStart = rssKiB();
    std::vector<double> following;
    QStringList rssSeries; // every 15 s: flat once the dashboards' stores are full?
    for (int done = 0; done < seconds; done += 15) {
        const auto chunk = probe(std::min(15, seconds - done) * 1000);
        following.insert(following.end(), chunk.begin(), chunk.end());
        rssSeries << QString::number(rssKiB() / 1024);
    }
    const long rssEnd = rssKiB();
    QProcess::execute(cli, {QStringLiteral("stop"), runId});

    std::printf("dashboards on screen: %s\n", qPrintable(onScreen.join(QStringLiteral(", "))));
    std::printf("%d ranks x %.0f Hz, followed for %d s: %zu frames, frame p50 %.1f ms, p99 %.1f ms wall (target p99 <= 16 ms);"
                " GUI-thread CPU per frame p50 %.1f ms, p99 %.1f ms\n",
                ranks, hz, seconds, frames.size(), percentile(frames, 0.5), percentile(frames, 0.99), percentile(frameCpu, 0.5),
                percentile(frameCpu, 0.99));
    std::vector<double> own(frames.size()); // wall less the time the GUI thread waited for a CPU
    for (std::size_t i = 0; i < frames.size(); ++i)
        own[i] = frames[i] - frameWait[i];
    std::printf("  of which waiting for a CPU (other processes on the cores): p50 %.1f ms, p99 %.1f ms; wall less that wait p99 %.1f ms\n",
                percentile(frameWait, 0.5), percentile(frameWait, 0.99), percentile(own, 0.99));
    if (qEnvironmentVariable("BENCH_GUI_WORST") == QLatin1String("1")) {
        std::vector<std::size_t> order(frames.size());
        for (std::size_t i = 0; i < order.size(); ++i)
            order[i] = i;
        std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return frames[a] > frames[b]; });
        for (std::size_t i = 0; i < std::min<std::size_t>(6, order.size()); ++i)
            std::printf("  slow frame %zu: %.1f ms wall, %.1f ms GUI-thread CPU, %.1f ms waiting for a CPU\n", order[i], frames[order[i]],
                        frameCpu[order[i]], frameWait[order[i]]);
    }
    std::printf("event-loop latency p99: %.1f ms following the run, %.1f ms idle (target < 50 ms); ratio %.2f\n",
                percentile(following, 0.99), percentile(idle, 0.99),
                percentile(idle, 0.99) > 0 ? percentile(following, 0.99) / percentile(idle, 0.99) : 0.0);
    std::printf("resident memory: %ld MiB at the start of following, %ld MiB after %d s (every 15 s: %s MiB)\n", rssStart / 1024,
                rssEnd / 1024, seconds, qPrintable(rssSeries.join(QStringLiteral(", "))));
    return 0;
}
