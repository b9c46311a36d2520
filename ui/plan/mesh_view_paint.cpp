// MeshView's painting (see mesh_view.h): the legend, rank cells with their labels, node tiles.
#include "ui/plan/mesh_view.h"

#include "ui/plan/mesh_view_style.h"

#include <QPaintEvent>
#include <QPainter>

#include <algorithm>
#include <set>

namespace trellis::ui {

using namespace mesh_style;


void MeshView::wheelEvent(QWheelEvent *e)
{
    if (!(e->modifiers() & Qt::ControlModifier))
        return QWidget::wheelEvent(e); // the scroll area scrolls
    if (e->angleDelta().y() > 0)
        zoomIn();
    else if (e->angleDelta().y() < 0)
        zoomOut();
    e->accept();
}

void MeshView::paintLegend(QPainter &p)
{
    const Layout &l = currentLayout();
    const QColor text = palette().color(QPalette::Text);
    int x = kMargin;
    const int y = kMargin + 12;
    p.setPen(text);
    const QString title = tr("colour: %1").arg(axisName(m_axis));
    p.drawText(x, y, title);
    x += p.fontMetrics().horizontalAdvance(title) + 8;
    const int n = axisSize(m_axis);
    if (n <= 8) {
        for (int v = 0; v < n; ++v) {
            p.setPen(Qt::NoPen);
            p.setBrush(hueColor(v, n));
            p.drawRect(x, y - 9, 10, 10);
            p.setPen(text);
            p.drawText(x + 12, y, QString::number(v));
            x += 18 + p.fontMetrics().horizontalAdvance(QString::number(v));
        }
    } else { // a gradient bar from the first value to the last
        p.drawText(x, y, QStringLiteral("0"));
        x += p.fontMetrics().horizontalAdvance(QStringLiteral("0")) + 3;
        for (int i = 0; i < 60; ++i)
            p.fillRect(x + i, y - 9, 1, 10, hueColor(i * n / 60, n));
        x += 63;
        p.drawText(x, y, QString::number(n - 1));
        x += p.fontMetrics().horizontalAdvance(QString::number(n - 1)) + 10;
    }
    p.setPen(palette().color(QPalette::PlaceholderText));
    if (l.tiles)
        p.drawText(x, y, tr("one tile a node, one stripe a rank (zoom in for ranks)"));
    else if (m_plan->parallel.tp > 1 && m_selected < 0)
        p.drawText(x, y, tr("outlines: tensor-parallel groups (red: spans nodes)"));
}

void MeshView::paintRankLabel(QPainter &p, const QRect &cell, int rank, int cellSize) const
{
    // Its number, and from 56 px its coordinates too: a small mesh reads at a glance.
    if (cellSize >= 56) {
        const RankPlace &c = m_ranks[static_cast<std::size_t>(rank)];
        QStringList coordinates{QStringLiteral("dp %1").arg(c.dp)};
        if (m_plan->parallel.tp > 1)
            coordinates << QStringLiteral("tp %1").arg(c.tp);
        if (m_plan->parallel.pp > 1)
            coordinates << QStringLiteral("pp %1").arg(c.pp);
        if (m_plan->parallel.cp > 1)
            coordinates << QStringLiteral("cp %1").arg(c.cp);
        p.setPen(QColor(0x20, 0x20, 0x20));
        QFont big = p.font();
        big.setBold(true);
        big.setPointSizeF(big.pointSizeF() * 1.3);
        const QFont normal = p.font();
        p.setFont(big);
        p.drawText(cell.adjusted(2, 4, -2, -cell.height() / 2), Qt::AlignHCenter | Qt::AlignBottom, QString::number(rank));
        p.setFont(normal);
        p.drawText(cell.adjusted(2, cell.height() / 2 + 2, -2, -2), Qt::AlignHCenter | Qt::AlignTop | Qt::TextWordWrap,
                   coordinates.join(QLatin1Char('\n')));
    } else if (cellSize >= 28) {
        const RankPlace &c = m_ranks[static_cast<std::size_t>(rank)];
        p.setPen(QColor(0x20, 0x20, 0x20));
        p.drawText(cell.adjusted(0, 1, 0, -cell.height() / 2), Qt::AlignCenter, QString::number(rank));
        p.drawText(cell.adjusted(0, cell.height() / 2 - 1, 0, 0), Qt::AlignCenter,
                   QStringLiteral("d%1").arg(c.dp) + (m_plan->parallel.tp > 1 ? QStringLiteral("t%1").arg(c.tp) : QString()));
    } else if (cellSize >= 16) {
        p.setPen(QColor(0x20, 0x20, 0x20));
        p.drawText(cell, Qt::AlignCenter, QString::number(rank));
    }
}

void MeshView::paintRanks(QPainter &p, const Layout &l, const QRect &exposed, const std::vector<int> &membership)
{
    const QColor base = palette().color(QPalette::Base);
    const bool selecting = m_selected >= 0;
    for (int node = 0; node < nodeCount(); ++node) {
        const QRect box = nodeBox(l, node);
        if (!box.intersects(exposed))
            continue;
        const auto &n = m_plan->cluster.nodes[static_cast<std::size_t>(node)];
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
        const int first = m_firstRankOfNode[static_cast<std::size_t>(node)];
        for (int slot = 0; slot < n.slotCount; ++slot) {
            const int rank = first + slot;
            const QRect cell = cellRect(l, node, slot);
            if (rank >= rankCount()) { // a slot the plan leaves idle
                p.setPen(QPen(palette().color(QPalette::Mid), 1, Qt::DotLine));
                p.setBrush(Qt::NoBrush);
                p.drawRect(cell);
                continue;
            }
            const int member = selecting ? membership[static_cast<std::size_t>(rank)] : None;
            const QColor fill = colorOf(rank);
            p.setPen(Qt::NoPen);
            p.setBrush(selecting && member == None ? dimmed(fill, base) : fill);
            p.drawRect(cell);
            if (member == Selected) {
                p.setPen(QPen(palette().color(QPalette::Text), 3));
                p.setBrush(Qt::NoBrush);
                p.drawRect(cell.adjusted(1, 1, -1, -1));
            } else if (member != None) {
                p.setPen(QPen(kGroupColours[member], 2));
                p.setBrush(Qt::NoBrush);
                p.drawRect(cell.adjusted(1, 1, -1, -1));
            }
            paintRankLabel(p, cell, rank, l.cell);
        }
    }
    // Tensor-parallel groups (consecutive ranks): one outline each, red when it leaves its node.
    const int tp = m_plan->parallel.tp;
    if (tp <= 1 || selecting)
        return;
    for (int first = 0; first + tp <= rankCount(); first += tp) {
        const int firstNode = m_ranks[static_cast<std::size_t>(first)].node;
        if (firstNode == m_ranks[static_cast<std::size_t>(first + tp - 1)].node && !nodeBox(l, firstNode).intersects(exposed))
            continue; // inside one node that is not being painted
        std::set<int> nodes;
        QRect bound;
        for (int r = first; r < first + tp; ++r) {
            const RankPlace &c = m_ranks[static_cast<std::size_t>(r)];
            nodes.insert(c.node);
            bound = bound.united(cellRect(l, c.node, c.slot));
        }
        const bool spans = nodes.size() > 1;
        p.setPen(QPen(spans ? QColor(0xc0, 0x10, 0x20) : palette().color(QPalette::Text), spans ? 2.5 : 1.5));
        p.setBrush(Qt::NoBrush);
        for (int node : nodes) { // one outline per node the group touches
            QRect piece;
            for (int r = first; r < first + tp; ++r)
                if (m_ranks[static_cast<std::size_t>(r)].node == node)
                    piece = piece.united(cellRect(l, node, m_ranks[static_cast<std::size_t>(r)].slot));
            p.drawRoundedRect(piece.adjusted(-1, -1, 1, 1), 3, 3);
        }
    }
}

void MeshView::paintTiles(QPainter &p, const Layout &l, const QRect &exposed, const std::vector<int> &membership)
{
    const QColor base = palette().color(QPalette::Base), idle = palette().color(QPalette::Mid);
    const bool selecting = m_selected >= 0;
    p.setRenderHint(QPainter::Antialiasing, false);
    for (int node = 0; node < nodeCount(); ++node) {
        const QRect box = nodeBox(l, node);
        if (!box.intersects(exposed))
            continue;
        const int slotCount = std::max(1, m_plan->cluster.nodes[static_cast<std::size_t>(node)].slotCount);
        const int first = m_firstRankOfNode[static_cast<std::size_t>(node)];
        const double stripe = static_cast<double>(box.width()) / slotCount;
        int strongest = None; // the selection's closest group on this node
        for (int slot = 0; slot < slotCount; ++slot) {
            const int rank = first + slot;
            const QRectF r(box.left() + slot * stripe, box.top(), stripe + 0.5, box.height());
            if (rank >= rankCount()) {
                p.fillRect(r, idle);
                continue;
            }
            const int member = selecting ? membership[static_cast<std::size_t>(rank)] : None;
            if (member != None && (strongest == None || member == Selected || (strongest != Selected && member < strongest)))
                strongest = member;
            p.fillRect(r, selecting && member == None ? dimmed(colorOf(rank), base) : colorOf(rank));
        }
        if (strongest == Selected) {
            p.setPen(QPen(palette().color(QPalette::Text), 2));
            p.drawRect(box.adjusted(0, 0, -1, -1));
        } else if (strongest != None) {
            p.setPen(QPen(kGroupColours[strongest], 2));
            p.drawRect(box.adjusted(0, 0, -1, -1));
        }
    }
}

void MeshView::paintEvent(QPaintEvent *event)
{
    QPainter p(this);
    p.setRenderHint(QPainter::Antialiasing);
    p.fillRect(event->rect(), palette().base());
    if (!m_plan || m_plan->cluster.nodes.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect(), Qt::AlignCenter, tr("No plan loaded"));
        return;
    }
    QFont small = font();
    small.setPointSizeF(std::max(6.0, small.pointSizeF() - 1.5));
    p.setFont(small);
    paintLegend(p);
    const Layout &l = currentLayout();
    const std::vector<int> membership = groupKindsOf(m_selected);
    if (l.tiles)
        paintTiles(p, l, event->rect(), membership);
    else
        paintRanks(p, l, event->rect(), membership);
}

QColor MeshView::groupColor(Group group) { return kGroupColours[static_cast<int>(group)]; }

} // namespace trellis::ui
