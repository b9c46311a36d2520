// See mesh_view.h.
#include "ui/mesh_view.h"

#include "plan/mesh.h"

#include <QHelpEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>
#include <cmath>
#include <set>

namespace trellis::ui {
namespace {

constexpr int kMargin = 6, kTitle = 16, kPad = 4, kGap = 8;

QColor stageColor(int stage, int stages)
{
    // Evenly spaced hues, light enough for dark text.
    const int hue = stages <= 1 ? 210 : (210 + stage * 300 / stages) % 360;
    return QColor::fromHsl(hue, 120, 200);
}

QString list(const std::vector<int> &ranks)
{
    QStringList out;
    for (int r : ranks)
        out << QString::number(r);
    if (out.size() > 12)
        return out.mid(0, 6).join(QStringLiteral(", ")) + QStringLiteral(", …, ") + out.last();
    return out.join(QStringLiteral(", "));
}

} // namespace

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
    updateGeometry();
    update();
}

void MeshView::clear()
{
    m_plan.reset();
    updateGeometry();
    update();
}

int MeshView::rankCount() const
{
    return m_plan ? std::min(m_plan->parallel.worldSize(), m_plan->cluster.totalSlots()) : 0;
}

MeshView::Layout MeshView::layoutFor(int width) const
{
    Layout l;
    if (!m_plan || m_plan->cluster.nodes.empty())
        return l;
    int maxSlots = 1;
    for (const auto &n : m_plan->cluster.nodes)
        maxSlots = std::max(maxSlots, n.slotCount);
    const int nodes = static_cast<int>(m_plan->cluster.nodes.size());
    // Cells of 34 px with text when a node fits the width, down to 7 px for large clusters.
    l.slotColumns = std::min(maxSlots, 8);
    const int slotRows = (maxSlots + l.slotColumns - 1) / l.slotColumns;
    const int usable = std::max(60, width - 2 * kMargin);
    // The largest cell (34 px, labelled, down to 7 px) at which the whole cluster fits in about
    // 320 px of height; large clusters scroll at 7 px.
    for (l.cell = std::clamp((usable - 2 * kPad) / l.slotColumns - 2, 7, 34);; --l.cell) {
        l.nodeWidth = l.slotColumns * (l.cell + 2) + 2 * kPad;
        l.nodeHeight = slotRows * (l.cell + 2) + 2 * kPad + (l.cell >= 20 ? kTitle : 4);
        l.nodeColumns = std::max(1, (usable + kGap) / (l.nodeWidth + kGap));
        const int rows = (nodes + l.nodeColumns - 1) / l.nodeColumns;
        if (l.cell <= 7 || rows * (l.nodeHeight + kGap) <= 320)
            return l;
    }
}

int MeshView::heightForWidth(int width) const
{
    const Layout l = layoutFor(width);
    if (!m_plan || l.cell == 0)
        return 40;
    const int nodes = static_cast<int>(m_plan->cluster.nodes.size());
    const int rows = (nodes + l.nodeColumns - 1) / l.nodeColumns;
    return 2 * kMargin + rows * (l.nodeHeight + kGap) + 22; // legend line
}

QSize MeshView::sizeHint() const { return {360, heightForWidth(360)}; }

QRect MeshView::cellRect(const Layout &l, int node, int slot) const
{
    const int nx = node % l.nodeColumns, ny = node / l.nodeColumns;
    const int x0 = kMargin + nx * (l.nodeWidth + kGap), y0 = kMargin + 22 + ny * (l.nodeHeight + kGap);
    const int top = y0 + kPad + (l.cell >= 20 ? kTitle : 2);
    return {x0 + kPad + (slot % l.slotColumns) * (l.cell + 2), top + (slot / l.slotColumns) * (l.cell + 2), l.cell, l.cell};
}

int MeshView::rankAt(const QPoint &point) const
{
    if (!m_plan)
        return -1;
    const Layout l = layoutFor(width());
    int rank = 0;
    for (int node = 0; node < static_cast<int>(m_plan->cluster.nodes.size()); ++node)
        for (int slot = 0; slot < m_plan->cluster.nodes[static_cast<std::size_t>(node)].slotCount; ++slot, ++rank)
            if (rank < rankCount() && cellRect(l, node, slot).contains(point))
                return rank;
    return -1;
}

QString MeshView::describeRank(int rank) const
{
    if (!m_plan || rank < 0 || rank >= rankCount())
        return {};
    const plan::Mesh mesh(m_plan->parallel);
    const plan::MeshCoordinates c = mesh.coordinatesOf(rank);
    const int node = plan::Mesh::nodeOf(rank, m_plan->cluster);
    QString text = tr("rank %1 on %2\ntp %3 · cp %4 · dp %5 · pp %6")
                       .arg(rank)
                       .arg(QString::fromStdString(m_plan->cluster.nodes[static_cast<std::size_t>(node)].host))
                       .arg(c.tp)
                       .arg(c.cp)
                       .arg(c.dp)
                       .arg(c.pp);
    const struct {
        const char *name;
        plan::GroupKind kind;
        int size;
    } groups[] = {{"tensor-parallel", plan::GroupKind::Tp, m_plan->parallel.tp},
                  {"context-parallel", plan::GroupKind::Cp, m_plan->parallel.cp},
                  {"data-parallel", plan::GroupKind::Dp, m_plan->parallel.dp},
                  {"pipeline", plan::GroupKind::Pp, m_plan->parallel.pp}};
    for (const auto &g : groups)
        if (g.size > 1)
            text += tr("\n%1 group: %2").arg(tr(g.name), list(mesh.groupOf(rank, g.kind)));
    return text;
}

bool MeshView::event(QEvent *e)
{
    if (e->type() == QEvent::ToolTip) {
        auto *help = static_cast<QHelpEvent *>(e);
        const QString text = describeRank(rankAt(help->pos()));
        if (text.isEmpty())
            QToolTip::hideText();
        else
            QToolTip::showText(help->globalPos(), text, this);
        return true;
    }
    return QWidget::event(e);
}

void MeshView::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(rect(), palette().base());
    if (!m_plan || m_plan->cluster.nodes.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("No plan loaded"));
        return;
    }
    const plan::ParallelSpec &ps = m_plan->parallel;
    const plan::Mesh mesh(ps);
    const Layout l = layoutFor(width());
    const int world = rankCount();

    // Legend: the pipeline stages' colours and the TP outline.
    QFont small = font();
    small.setPointSizeF(std::max(6.0, small.pointSizeF() - 1.5));
    p.setFont(small);
    int x = kMargin;
    const int stages = ps.pp;
    for (int s = 0; s < std::min(stages, 8); ++s) {
        p.setPen(Qt::NoPen);
        p.setBrush(stageColor(s, stages));
        p.drawRect(x, kMargin + 3, 10, 10);
        p.setPen(palette().color(QPalette::Text));
        const QString label = stages > 1 ? tr("stage %1").arg(s) : tr("all layers");
        p.drawText(x + 13, kMargin + 12, label);
        x += 18 + p.fontMetrics().horizontalAdvance(label);
    }
    if (stages > 8)
        p.drawText(x, kMargin + 12, tr("… %1 stages").arg(stages)), x += 60;
    if (ps.tp > 1) {
        p.setPen(QPen(palette().color(QPalette::Text), 2));
        p.setBrush(Qt::NoBrush);
        p.drawRoundedRect(x, kMargin + 3, 18, 10, 3, 3);
        p.drawText(x + 22, kMargin + 12, tr("tensor-parallel group (red: spans nodes)"));
    }

    // Nodes and their ranks.
    std::vector<QRect> cells(static_cast<std::size_t>(world));
    std::vector<int> nodeOfRank(static_cast<std::size_t>(world));
    int rank = 0;
    for (int node = 0; node < static_cast<int>(m_plan->cluster.nodes.size()); ++node) {
        const auto &n = m_plan->cluster.nodes[static_cast<std::size_t>(node)];
        const QRect first = cellRect(l, node, 0);
        const QRect box(first.left() - kPad, first.top() - kPad - (l.cell >= 20 ? kTitle : 2), l.nodeWidth, l.nodeHeight);
        p.setPen(QPen(palette().color(QPalette::Mid), 1));
        p.setBrush(palette().color(QPalette::AlternateBase));
        p.drawRoundedRect(box, 4, 4);
        if (l.cell >= 20) {
            p.setPen(palette().color(QPalette::Text));
            p.drawText(box.adjusted(kPad, 1, -kPad, 0), Qt::AlignLeft | Qt::AlignTop,
                       p.fontMetrics().elidedText(QStringLiteral("%1 · %2%3")
                                                      .arg(QString::fromStdString(n.host), QString::fromUtf8(plan::toString(n.device)),
                                                           n.gpuModel.empty() ? QString() : QStringLiteral(" ") + QString::fromStdString(n.gpuModel)),
                                                  Qt::ElideRight, box.width() - 2 * kPad));
        }
        for (int slot = 0; slot < n.slotCount; ++slot, ++rank) {
            const QRect cell = cellRect(l, node, slot);
            if (rank >= world) { // a slot the plan leaves idle
                p.setPen(QPen(palette().color(QPalette::Mid), 1, Qt::DotLine));
                p.setBrush(Qt::NoBrush);
                p.drawRect(cell);
                continue;
            }
            cells[static_cast<std::size_t>(rank)] = cell;
            nodeOfRank[static_cast<std::size_t>(rank)] = node;
            const plan::MeshCoordinates c = mesh.coordinatesOf(rank);
            p.setPen(Qt::NoPen);
            p.setBrush(stageColor(c.pp, stages));
            p.drawRect(cell);
            if (l.cell >= 28) {
                p.setPen(QColor(0x20, 0x20, 0x20));
                p.drawText(cell.adjusted(0, 1, 0, -cell.height() / 2), Qt::AlignCenter, QString::number(rank));
                p.drawText(cell.adjusted(0, cell.height() / 2 - 1, 0, 0), Qt::AlignCenter,
                           QStringLiteral("d%1").arg(c.dp) + (ps.tp > 1 ? QStringLiteral("t%1").arg(c.tp) : QString()));
            } else if (l.cell >= 16) {
                p.setPen(QColor(0x20, 0x20, 0x20));
                p.drawText(cell, Qt::AlignCenter, QString::number(rank));
            }
        }
    }
    // Tensor-parallel groups: one outline around the cells of each (consecutive ranks), red when
    // it leaves its node.
    if (ps.tp > 1) {
        for (int first = 0; first + ps.tp <= world; first += ps.tp) {
            std::set<int> nodes;
            QRect bound;
            for (int r = first; r < first + ps.tp; ++r) {
                nodes.insert(nodeOfRank[static_cast<std::size_t>(r)]);
                bound = bound.united(cells[static_cast<std::size_t>(r)]);
            }
            const bool spans = nodes.size() > 1;
            p.setPen(QPen(spans ? QColor(0xc0, 0x10, 0x20) : palette().color(QPalette::Text), spans ? 2.5 : 1.5));
            p.setBrush(Qt::NoBrush);
            if (!spans) {
                p.drawRoundedRect(bound.adjusted(-1, -1, 1, 1), 3, 3);
            } else { // outline each piece on its node
                for (int node : nodes) {
                    QRect piece;
                    for (int r = first; r < first + ps.tp; ++r)
                        if (nodeOfRank[static_cast<std::size_t>(r)] == node)
                            piece = piece.united(cells[static_cast<std::size_t>(r)]);
                    p.drawRoundedRect(piece.adjusted(-1, -1, 1, 1), 3, 3);
                }
            }
        }
    }
}

} // namespace trellis::ui
