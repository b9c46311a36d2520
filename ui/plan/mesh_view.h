// The device mesh of a plan as the cluster holds it: one box a node, one cell a slot (rank),
// ranks placed in order (rank = tp + TP·(cp + CP·(dp + DP·pp)), plan/mesh.h, the same order the
// trainer and the cost model use). Cells are coloured by one axis the person picks (pipeline stage,
// tensor-, context-, data- or expert-parallel coordinate, node). Clicking a rank selects it: every
// group it belongs to is outlined in its group's colour and the rest of the mesh is dimmed. Ranks of
// one tensor-parallel group share an outline, drawn red where the group leaves its node (the
// placement warning). Zoomed out (or too many ranks to fit), each node becomes one tile summarising
// its ranks as stripes of their colours. Everything painted is bounded by the ranks on screen;
// per-rank coordinates are computed once per plan.
#pragma once

#include "backend/plan/plan.h"

#include <QWidget>

#include <optional>
#include <vector>

namespace trellis::ui {

class MeshView : public QWidget {
    Q_OBJECT
public:
    enum class Axis { Stage, Tp, Cp, Dp, Ep, Node };
    static QString axisName(Axis axis);
    // The outline colour of the selected rank's groups.
    enum class Group { Tp, Cp, Dp, Pp, Ep };
    static QColor groupColor(Group group);

    explicit MeshView(QWidget *parent = nullptr);
    // Keeps the selection while that rank still exists.
    void setPlan(const plan::Plan &plan);
    void clear();

    void setColorAxis(Axis axis);
    Axis colorAxis() const { return m_axis; }

    // Zoom: a level of kZoomLevels (node tiles first, then rank cells of growing size), or -1 to
    // fit the whole cluster into fitHeight() (node tiles when ranks would be smaller than 7 px).
    void setZoom(int level);
    int zoom() const { return m_zoom; }
    static int zoomLevels();
    void zoomIn();
    void zoomOut();
    // The height the fit zoom fills (the scroll area's viewport); 320 until told.
    void setFitHeight(int height);
    int fitHeight() const { return m_fitHeight; }
    // Whether nodes are drawn as summary tiles (no rank cells) at the current size.
    bool showsNodeTiles() const;
    // The rank cell's side in pixels (0 when nodes are tiles).
    int cellSize() const;

    void selectRank(int rank); // -1: none
    int selectedRank() const { return m_selected; }

    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

    // For tests and tooltips: what is drawn where, and what it says.
    int rankAt(const QPoint &point) const;  // -1: none (or nodes drawn as tiles)
    int nodeAt(const QPoint &point) const;  // -1: none
    QRect rankRect(int rank) const;         // empty when not drawn as a cell
    QRect nodeRect(int node) const;
    QColor colorOf(int rank) const;         // its fill for the current axis
    // Coordinates and groups, plain text (or HTML with each group's colour).
    QString describeRank(int rank, bool html = false) const;
    QString describeNode(int node) const;
    int rankCount() const;
    int nodeCount() const;

signals:
    void rankSelected(int rank);
    void zoomChanged(int level);

protected:
    void paintEvent(QPaintEvent *event) override;
    bool event(QEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;

private:
    struct Layout {
        bool tiles = false; // nodes as summary tiles
        int cell = 0;       // rank cell or node tile side
        int slotColumns = 1, nodeWidth = 0, nodeHeight = 0, nodeColumns = 1, rows = 0;
        int height = 0;
        int left = 0;       // the nodes' left edge: centred in the width when they fit it
    };
    Layout layoutFor(int width) const;
    Layout layoutAtLevel(int width, int level) const;
    const Layout &currentLayout() const;
    QRect nodeBox(const Layout &l, int node) const;
    QRect cellRect(const Layout &l, int node, int slot) const;
    int axisValue(int rank, Axis axis) const;
    int axisSize(Axis axis) const;
    std::vector<int> groupKindsOf(int rank) const; // per rank: which group of the selection it is in (-1 none)
    void paintLegend(QPainter &p);
    void paintRankLabel(QPainter &p, const QRect &cell, int rank, int cellSize) const;
    void paintRanks(QPainter &p, const Layout &l, const QRect &exposed, const std::vector<int> &membership);
    void paintTiles(QPainter &p, const Layout &l, const QRect &exposed, const std::vector<int> &membership);
    void relayout();

    std::optional<plan::Plan> m_plan;
    // Per rank, computed once per plan: coordinates (tp, cp, dp, pp) and where it sits.
    struct RankPlace {
        int tp, cp, dp, pp, node, slot;
    };
    std::vector<RankPlace> m_ranks;
    std::vector<int> m_firstRankOfNode; // size nodes + 1
    Axis m_axis = Axis::Stage;
    int m_zoom = -1;
    int m_fitHeight = 320;
    int m_selected = -1;
    mutable int m_layoutWidth = -1;
    mutable Layout m_layout;
};

} // namespace trellis::ui
