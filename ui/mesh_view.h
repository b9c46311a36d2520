// The device mesh of a plan as the cluster holds it: one box a node, one cell a slot (rank),
// ranks placed in order (rank = tp + TP·(cp + CP·(dp + DP·pp)), plan/mesh.h, the same order the
// trainer and the cost model use). A cell's colour is its pipeline stage; ranks of one
// tensor-parallel group share an outline, drawn red where the group leaves its node (the
// placement warning). Hovering a cell names its coordinates and its groups.
#pragma once

#include "plan/plan.h"

#include <QWidget>

#include <optional>

namespace trellis::ui {

class MeshView : public QWidget {
    Q_OBJECT
public:
    explicit MeshView(QWidget *parent = nullptr);
    void setPlan(const plan::Plan &plan);
    void clear();

    bool hasHeightForWidth() const override { return true; }
    int heightForWidth(int width) const override;
    QSize sizeHint() const override;

    // For tests and tooltips: the rank drawn at a point (-1: none), and what a rank's tooltip says.
    int rankAt(const QPoint &point) const;
    QString describeRank(int rank) const;
    int rankCount() const;

protected:
    void paintEvent(QPaintEvent *event) override;
    bool event(QEvent *event) override;

private:
    struct Layout {
        int cell = 0, columns = 0, nodeColumns = 0, nodeWidth = 0, nodeHeight = 0, slotColumns = 0;
    };
    Layout layoutFor(int width) const;
    QRect cellRect(const Layout &l, int node, int slot) const;

    std::optional<plan::Plan> m_plan;
};

} // namespace trellis::ui
