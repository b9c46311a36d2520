// Time to lay out and paint the mesh view (ui/plan/mesh_view.h) at 4096 ranks against 128 ranks, side by
// side in one run: 512 (16) DGX H100 nodes of the 128-GPU plan with dp filling them. Three cases:
// fitted to a 900 × 700 view (node tiles at 4096), zoomed to 7 px rank cells painting what a
// 900 × 700 viewport shows, and the same zoom painting the whole mesh. Each: setPlan (per-rank
// coordinates, layout) + render into an image, median of 30 repetitions after 3 warm-up ones.
// Then what a user does on a drawn mesh, at 7 px cells in one 900 x 700 viewport: select a rank
// (click: its groups are highlighted, the viewport painted again), hover a rank (the tooltip's
// hit test and text) and zoom one level in and out (layout and the viewport painted again).
// Usage: QT_QPA_PLATFORM=offscreen build/bin/bench_mesh [LARGE_RANKS=4096]   (16384: Llama 3's scale)
#include "backend/plan/plan_json.h"
#include "ui/plan/mesh_view.h"

#include "tests/support/mesh_plans.h"

#include <QApplication>
#include <QElapsedTimer>
#include <QImage>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <cstdio>
#include <vector>

using namespace trellis;

namespace {

// Median milliseconds of setPlan + render of `region` (the whole view when empty).
double measure(const plan::Plan &p, int zoom, bool wholeView, bool *tiles)
{
    ui::MeshView view;
    view.setFitHeight(700);
    view.setZoom(zoom);
    view.setPlan(p);
    view.resize(std::max(900, view.minimumWidth()), std::max(700, view.heightForWidth(900)));
    *tiles = view.showsNodeTiles();
    const QRect region = wholeView ? view.rect() : QRect(0, 0, 900, 700);
    QImage image(region.size(), QImage::Format_ARGB32_Premultiplied);
    std::vector<double> ms;
    for (int i = 0; i < 33; ++i) {
        QElapsedTimer timer;
        timer.start();
        view.setPlan(p);
        view.render(&image, QPoint(), QRegion(region));
        if (i >= 3)
            ms.push_back(static_cast<double>(timer.nsecsElapsed()) / 1e6);
    }
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

// Median milliseconds of one interaction on a view already showing `p` at 7 px cells.
enum class Interaction { Select, Hover, Zoom };

double interact(const plan::Plan &p, Interaction what)
{
    ui::MeshView view;
    view.setFitHeight(700);
    view.setZoom(3);
    view.setPlan(p);
    view.resize(std::max(900, view.minimumWidth()), std::max(700, view.heightForWidth(900)));
    const QRect region(0, 0, 900, 700);
    QImage image(region.size(), QImage::Format_ARGB32_Premultiplied);
    view.render(&image, QPoint(), QRegion(region));
    std::vector<double> ms;
    std::size_t text = 0;
    for (int i = 0; i < 33; ++i) {
        // A rank in the viewport, a different one each time.
        const QPoint at(40 + (i * 97) % 800, 40 + (i * 61) % 600);
        QElapsedTimer timer;
        timer.start();
        if (what == Interaction::Select) {
            view.selectRank(std::max(0, view.rankAt(at)) + (i % 2));
            view.render(&image, QPoint(), QRegion(region));
        } else if (what == Interaction::Hover) {
            const int rank = view.rankAt(at);
            text += static_cast<std::size_t>((rank >= 0 ? view.describeRank(rank) : view.describeNode(view.nodeAt(at))).size());
        } else {
            view.setZoom(i % 2 ? 3 : 4);
            view.render(&image, QPoint(), QRegion(region));
        }
        if (i >= 3)
            ms.push_back(static_cast<double>(timer.nsecsElapsed()) / 1e6);
    }
    if (text == 0 && what == Interaction::Hover)
        std::fprintf(stderr, "bench_mesh: hovering found no rank or node\n");
    std::sort(ms.begin(), ms.end());
    return ms[ms.size() / 2];
}

} // namespace

int main(int argc, char **argv)
{
    qputenv("QT_QPA_PLATFORM", qgetenv("QT_QPA_PLATFORM").isEmpty() ? QByteArray("offscreen") : qgetenv("QT_QPA_PLATFORM"));
    QApplication app(argc, argv);
    const int largeRanks = argc > 1 ? std::max(256, std::atoi(argv[1])) : 4096;
    const plan::Plan small = test::gpuPlanWithRanks(128), large = test::gpuPlanWithRanks(largeRanks);
    struct Case {
        const char *name;
        int zoom;
        bool whole;
    } cases[] = {{"fit 900x700", -1, false}, {"7 px cells, one viewport", 3, false}, {"7 px cells, whole mesh", 3, true}};
    const std::string largeTitle = std::to_string(largeRanks) + " ranks ms";
    std::printf("%-28s %14s %14s %8s\n", "mesh layout + paint", "128 ranks ms", largeTitle.c_str(), "ratio");
    for (const Case &c : cases) {
        bool tilesSmall = false, tilesLarge = false;
        const double a = measure(small, c.zoom, c.whole, &tilesSmall), b = measure(large, c.zoom, c.whole, &tilesLarge);
        std::printf("%-28s %14.2f %14.2f %8.1f%s\n", c.name, a, b, b / a, tilesLarge ? "  (large: node tiles)" : "");
    }
    const struct {
        const char *name;
        Interaction what;
    } interactions[] = {{"select a rank + repaint", Interaction::Select},
                        {"hover a rank (tooltip)", Interaction::Hover},
                        {"zoom a level + repaint", Interaction::Zoom}};
    for (const auto &c : interactions) {
        const double a = interact(small, c.what), b = interact(large, c.what);
        std::printf("%-28s %14.3f %14.3f %8.1f\n", c.name, a, b, b / a);
    }
    return 0;
}
