// See mesh_view.h.
#include "ui/plan/mesh_view.h"

#include "backend/plan/mesh.h"
#include "ui/plan/mesh_view_style.h"
#include "ui/widgets/tool_tip.h"

#include <QMouseEvent>
#include <QWheelEvent>

#include <algorithm>

namespace trellis::ui {

using namespace mesh_style;

namespace {

// Zoom levels: negative values are node tiles of that side, positive ones rank cells.
constexpr int kLevels[] = {-8, -12, -18, 7, 10, 14, 20, 28, 34, 48};
constexpr int kLevelCount = static_cast<int>(sizeof kLevels / sizeof kLevels[0]);

QString list(const std::vector<int> &ranks)
{
    QStringList out;
    for (int r : ranks)
        out << QString::number(r);
    if (out.size() > 12)
        return out.mid(0, 6).join(QStringLiteral(", ")) + QStringLiteral(", …, ") + out.last();
    return out.join(QStringLiteral(", "));
}

QString range(int low, int high)
{
    return low == high ? QString::number(low) : QStringLiteral("%1–%2").arg(low).arg(high);
}

} // namespace

QString MeshView::axisName(Axis axis)
{
    switch (axis) {
    case Axis::Stage: return tr("pipeline stage");
    case Axis::Tp: return tr("tensor-parallel rank");
    case Axis::Cp: return tr("context-parallel rank");
    case Axis::Dp: return tr("data-parallel replica");
    case Axis::Ep: return tr("expert-parallel rank");
    case Axis::Node: return tr("node");
    }
    return {};
}

MeshView::MeshView(QWidget *parent) : QWidget(parent)
{
    setMouseTracking(true);
    QSizePolicy policy(QSizePolicy::Preferred, QSizePolicy::Preferred);
    policy.setHeightForWidth(true);
    setSizePolicy(policy);
}

void MeshView::setPlan(const plan::Plan &plan)
{
    m_plan = plan;
    const plan::Mesh mesh(plan.parallel);
    const int world = std::max(0, std::min(plan.parallel.worldSize(), plan.cluster.totalSlots()));
    m_ranks.assign(static_cast<std::size_t>(world), {});
    m_firstRankOfNode.assign(plan.cluster.nodes.size() + 1, 0);
    int rank = 0;
    for (std::size_t node = 0; node < plan.cluster.nodes.size(); ++node) {
        m_firstRankOfNode[node] = rank;
        for (int slot = 0; slot < plan.cluster.nodes[node].slotCount; ++slot, ++rank)
            if (rank < world) {
                const plan::MeshCoordinates c = mesh.coordinatesOf(rank);
                m_ranks[static_cast<std::size_t>(rank)] = {c.tp, c.cp, c.dp, c.pp, static_cast<int>(node), slot};
            }
    }
    m_firstRankOfNode.back() = rank;
    if (m_selected >= world)
        m_selected = -1;
    relayout();
}

void MeshView::clear()
{
    m_plan.reset();
    m_ranks.clear();
    m_firstRankOfNode.clear();
    m_selected = -1;
    relayout();
}

void MeshView::setColorAxis(Axis axis)
{
    m_axis = axis;
    update();
}

int MeshView::zoomLevels() { return kLevelCount; }

void MeshView::setZoom(int level)
{
    level = std::clamp(level, -1, kLevelCount - 1);
    if (level == m_zoom)
        return;
    m_zoom = level;
    relayout();
    emit zoomChanged(level);
}

void MeshView::zoomIn()
{
    const Layout &l = currentLayout();
    const int now = l.tiles ? -l.cell : l.cell;
    for (int i = 0; i < kLevelCount; ++i)
        if ((kLevels[i] < 0 && now < 0 && -kLevels[i] > -now) || (kLevels[i] > 0 && (now < 0 || kLevels[i] > now)))
            return setZoom(i);
}

void MeshView::zoomOut()
{
    const Layout &l = currentLayout();
    const int now = l.tiles ? -l.cell : l.cell;
    for (int i = kLevelCount - 1; i >= 0; --i)
        if ((kLevels[i] > 0 && now > 0 && kLevels[i] < now) || (kLevels[i] < 0 && (now > 0 || -kLevels[i] < -now)))
            return setZoom(i);
}

void MeshView::setFitHeight(int height)
{
    height = std::max(120, height);
    if (height == m_fitHeight)
        return;
    m_fitHeight = height;
    if (m_zoom < 0)
        relayout();
}

bool MeshView::showsNodeTiles() const { return currentLayout().tiles; }

int MeshView::cellSize() const
{
    const Layout &l = currentLayout();
    return l.tiles ? 0 : l.cell;
}

int MeshView::rankCount() const { return static_cast<int>(m_ranks.size()); }

int MeshView::nodeCount() const { return m_plan ? static_cast<int>(m_plan->cluster.nodes.size()) : 0; }

void MeshView::relayout()
{
    m_layoutWidth = -1;
    // The minimum is the smallest cells' (fitting grows them with the view, never the reverse).
    const Layout l = m_zoom < 0 ? layoutAtLevel(std::max(width(), 200), 3) : layoutFor(std::max(width(), 200));
    setMinimumWidth(l.tiles ? 0 : l.nodeWidth + 2 * kMargin);
    updateGeometry();
    update();
}

MeshView::Layout MeshView::layoutAtLevel(int width, int level) const
{
    Layout l;
    l.left = kMargin;
    if (!m_plan || m_plan->cluster.nodes.empty())
        return l;
    const int nodes = nodeCount();
    const int usable = std::max(60, width - 2 * kMargin);
    const int size = kLevels[std::clamp(level, 0, kLevelCount - 1)];
    if (size < 0) {
        l.tiles = true;
        l.cell = -size;
        l.nodeWidth = l.nodeHeight = l.cell;
        l.nodeColumns = std::max(1, (usable + kTileGap) / (l.cell + kTileGap));
        l.rows = (nodes + l.nodeColumns - 1) / l.nodeColumns;
        l.height = 2 * kMargin + kLegend + l.rows * (l.cell + kTileGap);
        return l;
    }
    int maxSlots = 1;
    for (const auto &n : m_plan->cluster.nodes)
        maxSlots = std::max(maxSlots, n.slotCount);
    l.cell = size;
    l.slotColumns = std::min(maxSlots, 8);
    const int slotRows = (maxSlots + l.slotColumns - 1) / l.slotColumns;
    l.nodeWidth = l.slotColumns * (l.cell + 2) + 2 * kPad;
    l.nodeHeight = slotRows * (l.cell + 2) + 2 * kPad + (l.cell >= 20 ? kTitle : 4);
    l.nodeColumns = std::max(1, (usable + kGap) / (l.nodeWidth + kGap));
    l.rows = (nodes + l.nodeColumns - 1) / l.nodeColumns;
    l.height = 2 * kMargin + kLegend + l.rows * (l.nodeHeight + kGap);
    return l;
}

MeshView::Layout MeshView::layoutFor(int width) const
{
    if (!m_plan || m_plan->cluster.nodes.empty())
        return {};
    if (m_zoom >= 0)
        return layoutAtLevel(width, m_zoom);
    // Fit: the largest rank cell (180 px down to 7) at which the cluster fits the height, else the
    // largest node tile (40 px down to 6), else 6 px tiles and a scroll bar. A small mesh fills
    // the canvas: 2 ranks are two large cells in the middle, not two boxes in a corner.
    Layout l = layoutAtLevel(width, 3); // 7 px cells: the shape at any cell size
    const int usable = std::max(60, width - 2 * kMargin);
    const int largest = std::clamp((usable - 2 * kPad) / l.slotColumns - 2, 7, 180);
    for (int cell = largest; cell >= 7; --cell) {
        const int nodeWidth = l.slotColumns * (cell + 2) + 2 * kPad;
        const int slotRows = (l.nodeHeight - 2 * kPad - 4) / (7 + 2);
        const int nodeHeight = slotRows * (cell + 2) + 2 * kPad + (cell >= 20 ? kTitle : 4);
        const int columns = std::max(1, (usable + kGap) / (nodeWidth + kGap));
        const int rows = (nodeCount() + columns - 1) / columns;
        const int height = 2 * kMargin + kLegend + rows * (nodeHeight + kGap);
        if (height <= m_fitHeight || (cell == 7 && nodeCount() == 1)) {
            l.cell = cell;
            l.nodeWidth = nodeWidth;
            l.nodeHeight = nodeHeight;
            l.nodeColumns = columns;
            l.rows = rows;
            l.height = height;
            const int used = std::min(columns, nodeCount()) * (nodeWidth + kGap) - kGap;
            l.left = kMargin + std::max(0, (usable - used) / 2);
            return l;
        }
    }
    l = layoutAtLevel(width, 0);
    for (int tile = 40; tile >= 6; --tile) {
        const int columns = std::max(1, (usable + kTileGap) / (tile + kTileGap));
        const int rows = (nodeCount() + columns - 1) / columns;
        const int height = 2 * kMargin + kLegend + rows * (tile + kTileGap);
        if (height <= m_fitHeight || tile == 6) {
            l.cell = l.nodeWidth = l.nodeHeight = tile;
            l.nodeColumns = columns;
            l.rows = rows;
            l.height = height;
            return l;
        }
    }
    return l;
}

const MeshView::Layout &MeshView::currentLayout() const
{
    const int w = std::max(width(), 200);
    if (w != m_layoutWidth) {
        m_layout = layoutFor(w);
        m_layoutWidth = w;
    }
    return m_layout;
}

int MeshView::heightForWidth(int width) const
{
    const Layout l = layoutFor(width);
    return l.height > 0 ? l.height : 40;
}

QSize MeshView::sizeHint() const { return {360, heightForWidth(360)}; }

QSize MeshView::minimumSizeHint() const { return {minimumWidth(), 40}; }

QRect MeshView::nodeBox(const Layout &l, int node) const
{
    const int gap = l.tiles ? kTileGap : kGap;
    const int nx = node % l.nodeColumns, ny = node / l.nodeColumns;
    return {l.left + nx * (l.nodeWidth + gap), kMargin + kLegend + ny * (l.nodeHeight + gap), l.nodeWidth, l.nodeHeight};
}

QRect MeshView::cellRect(const Layout &l, int node, int slot) const
{
    const QRect box = nodeBox(l, node);
    const int top = box.top() + kPad + (l.cell >= 20 ? kTitle : 2);
    return {box.left() + kPad + (slot % l.slotColumns) * (l.cell + 2), top + (slot / l.slotColumns) * (l.cell + 2), l.cell, l.cell};
}

int MeshView::nodeAt(const QPoint &point) const
{
    const Layout &l = currentLayout();
    if (l.cell == 0 || point.x() < l.left || point.y() < kMargin + kLegend)
        return -1;
    const int gap = l.tiles ? kTileGap : kGap;
    const int nx = (point.x() - l.left) / (l.nodeWidth + gap), ny = (point.y() - kMargin - kLegend) / (l.nodeHeight + gap);
    if (nx >= l.nodeColumns)
        return -1;
    const int node = ny * l.nodeColumns + nx;
    return node < nodeCount() && nodeBox(l, node).contains(point) ? node : -1;
}

int MeshView::rankAt(const QPoint &point) const
{
    const Layout &l = currentLayout();
    const int node = nodeAt(point);
    if (l.tiles || node < 0)
        return -1;
    const QRect first = cellRect(l, node, 0);
    const int dx = point.x() - first.left(), dy = point.y() - first.top();
    if (dx < 0 || dy < 0 || dx % (l.cell + 2) >= l.cell || dy % (l.cell + 2) >= l.cell)
        return -1;
    const int column = dx / (l.cell + 2);
    if (column >= l.slotColumns)
        return -1;
    const int slot = dy / (l.cell + 2) * l.slotColumns + column;
    if (slot >= m_plan->cluster.nodes[static_cast<std::size_t>(node)].slotCount)
        return -1;
    const int rank = m_firstRankOfNode[static_cast<std::size_t>(node)] + slot;
    return rank < rankCount() ? rank : -1;
}

QRect MeshView::rankRect(int rank) const
{
    const Layout &l = currentLayout();
    if (rank < 0 || rank >= rankCount() || l.tiles)
        return {};
    const RankPlace &r = m_ranks[static_cast<std::size_t>(rank)];
    return cellRect(l, r.node, r.slot);
}

QRect MeshView::nodeRect(int node) const
{
    const Layout &l = currentLayout();
    return node >= 0 && node < nodeCount() && l.cell > 0 ? nodeBox(l, node) : QRect();
}

int MeshView::axisValue(int rank, Axis axis) const
{
    const RankPlace &r = m_ranks[static_cast<std::size_t>(rank)];
    switch (axis) {
    case Axis::Stage: return r.pp;
    case Axis::Tp: return r.tp;
    case Axis::Cp: return r.cp;
    case Axis::Dp: return r.dp;
    case Axis::Ep: return r.dp % std::max(1, m_plan->parallel.ep);
    case Axis::Node: return r.node;
    }
    return 0;
}

int MeshView::axisSize(Axis axis) const
{
    if (!m_plan)
        return 1;
    const plan::ParallelSpec &ps = m_plan->parallel;
    switch (axis) {
    case Axis::Stage: return ps.pp;
    case Axis::Tp: return ps.tp;
    case Axis::Cp: return ps.cp;
    case Axis::Dp: return ps.dp;
    case Axis::Ep: return std::max(1, ps.ep);
    case Axis::Node: return nodeCount();
    }
    return 1;
}

QColor MeshView::colorOf(int rank) const
{
    if (rank < 0 || rank >= rankCount())
        return {};
    return hueColor(axisValue(rank, m_axis), axisSize(m_axis));
}

std::vector<int> MeshView::groupKindsOf(int selected) const
{
    std::vector<int> out(m_ranks.size(), None);
    if (selected < 0 || selected >= rankCount())
        return out;
    const RankPlace &s = m_ranks[static_cast<std::size_t>(selected)];
    const int ep = std::max(1, m_plan->parallel.ep);
    for (std::size_t i = 0; i < m_ranks.size(); ++i) {
        const RankPlace &r = m_ranks[i];
        const int differ = (r.tp != s.tp) + (r.cp != s.cp) + (r.dp != s.dp) + (r.pp != s.pp);
        if (differ == 0)
            out[i] = Selected;
        else if (differ == 1)
            out[i] = r.tp != s.tp   ? InTp
                     : r.cp != s.cp ? InCp
                     : r.pp != s.pp ? InPp
                     : ep > 1 && r.dp / ep == s.dp / ep ? InEp
                                                        : InDp;
    }
    return out;
}

QString MeshView::describeRank(int rank, bool html) const
{
    if (!m_plan || rank < 0 || rank >= rankCount())
        return {};
    const plan::Mesh mesh(m_plan->parallel);
    const RankPlace &c = m_ranks[static_cast<std::size_t>(rank)];
    const plan::ParallelSpec &ps = m_plan->parallel;
    QStringList lines{tr("rank %1 on %2").arg(rank).arg(QString::fromStdString(m_plan->cluster.nodes[static_cast<std::size_t>(c.node)].host)),
                      tr("tp %1 · cp %2 · dp %3 · pp %4").arg(c.tp).arg(c.cp).arg(c.dp).arg(c.pp)};
    auto group = [&](Group g, plan::GroupKind kind, const QString &line) {
        const QString text = line.arg(list(mesh.groupOf(rank, kind)));
        lines << (html ? QStringLiteral("<span style='color:%1'>■</span> %2").arg(groupColor(g).name(), text.toHtmlEscaped()) : text);
    };
    if (ps.tp > 1)
        group(Group::Tp, plan::GroupKind::Tp, tr("tensor-parallel group: %1"));
    if (ps.cp > 1)
        group(Group::Cp, plan::GroupKind::Cp, tr("context-parallel group: %1"));
    if (ps.dp > 1)
        group(Group::Dp, plan::GroupKind::Dp, tr("data-parallel group: %1"));
    if (ps.ep > 1)
        group(Group::Ep, plan::GroupKind::Ep, tr("expert-parallel group: %1"));
    if (ps.pp > 1)
        group(Group::Pp, plan::GroupKind::Pp, tr("pipeline group: %1"));
    if (html) {
        lines[0] = QStringLiteral("<b>%1</b>").arg(lines[0].toHtmlEscaped());
        lines[1] = lines[1].toHtmlEscaped();
    }
    return lines.join(html ? QStringLiteral("<br>") : QStringLiteral("\n"));
}

QString MeshView::describeNode(int node) const
{
    if (!m_plan || node < 0 || node >= nodeCount())
        return {};
    const auto &n = m_plan->cluster.nodes[static_cast<std::size_t>(node)];
    const int first = m_firstRankOfNode[static_cast<std::size_t>(node)];
    const int last = std::min(m_firstRankOfNode[static_cast<std::size_t>(node) + 1], rankCount()) - 1;
    QString text = tr("%1 · %2 slots · %3").arg(QString::fromStdString(n.host)).arg(n.slotCount).arg(QString::fromUtf8(plan::toString(n.device)));
    if (last < first)
        return text + tr("\nno ranks (idle)");
    text += tr("\nranks %1").arg(range(first, last));
    if (last - first + 1 < n.slotCount)
        text += tr(" (%n slot(s) idle)", nullptr, n.slotCount - (last - first + 1));
    auto spread = [&](Axis axis) {
        int low = axisValue(first, axis), high = low;
        for (int r = first; r <= last; ++r) {
            low = std::min(low, axisValue(r, axis));
            high = std::max(high, axisValue(r, axis));
        }
        return range(low, high);
    };
    text += tr("\nstage %1 · tp %2 · cp %3 · dp %4").arg(spread(Axis::Stage), spread(Axis::Tp), spread(Axis::Cp), spread(Axis::Dp));
    return text;
}

void MeshView::selectRank(int rank)
{
    if (rank < -1 || rank >= rankCount())
        rank = -1;
    if (rank == m_selected)
        return;
    m_selected = rank;
    update();
    emit rankSelected(rank);
}

bool MeshView::event(QEvent *e)
{
    const auto describeAt = [this](const QPoint &at) {
        const int rank = rankAt(at);
        return rank >= 0 ? describeRank(rank) : describeNode(nodeAt(at));
    };
    return answerToolTip(e, this, describeAt) || QWidget::event(e);
}

void MeshView::mousePressEvent(QMouseEvent *e)
{
    if (e->button() != Qt::LeftButton)
        return QWidget::mousePressEvent(e);
    int rank = rankAt(e->position().toPoint());
    if (rank < 0 && showsNodeTiles()) {
        const int node = nodeAt(e->position().toPoint());
        if (node >= 0 && m_firstRankOfNode[static_cast<std::size_t>(node)] < rankCount())
            rank = m_firstRankOfNode[static_cast<std::size_t>(node)];
    }
    selectRank(rank);
}
} // namespace trellis::ui
