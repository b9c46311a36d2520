// See timeline_chart.h.
#include "ui/widgets/timeline_chart.h"

#include "ui/widgets/tool_tip.h"

#include <QMouseEvent>
#include <QPainter>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace trellis::ui {

using launcher::telemetry::TimelineBar;
using launcher::telemetry::TimelineLane;
using launcher::telemetry::TimelineView;

namespace {

constexpr int kLabelWidth = 150;
constexpr int kLaneHeight = 22;
constexpr int kSectionGap = 30;
constexpr double kMaxZoom = 200;

} // namespace

TimelineChart::TimelineChart(QWidget *parent) : QWidget(parent)
{
    setMouseTracking(true);
    setMinimumHeight(120);
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
}

void TimelineChart::setTimeline(TimelineView view)
{
    m_view = std::move(view);
    const int lanes = static_cast<int>(m_view.lanes.size());
    setMinimumHeight(std::max(120, lanes * kLaneHeight + 2 * kSectionGap + 50));
    update();
}

void TimelineChart::setZoom(double zoom, double anchorFraction)
{
    zoom = std::clamp(zoom, 1.0, kMaxZoom);
    // The fraction of the section under the anchor stays under it.
    const double at = m_from + anchorFraction / m_zoom;
    m_zoom = zoom;
    m_from = std::clamp(at - anchorFraction / m_zoom, 0.0, 1.0 - 1.0 / m_zoom);
    update();
    emit zoomChanged(m_zoom);
}

void TimelineChart::resetZoom()
{
    m_zoom = 1;
    m_from = 0;
    update();
    emit zoomChanged(m_zoom);
}

std::vector<TimelineChart::Geometry> TimelineChart::layout() const
{
    std::vector<Geometry> g;
    const double width = std::max(10, this->width() - kLabelWidth - 10);
    double y = 4;
    bool inPredicted = false, first = true;
    for (const TimelineLane &lane : m_view.lanes) {
        if (first || lane.predicted != inPredicted) {
            y += first ? 30 : kSectionGap + 14; // the section's title and tick labels
            inPredicted = lane.predicted;
            first = false;
        }
        g.push_back({QRectF(kLabelWidth, y, width, kLaneHeight - 4), lane.predicted ? m_view.predictedMs : m_view.measuredMs});
        y += kLaneHeight;
    }
    return g;
}

double TimelineChart::xOf(const Geometry &g, double ms) const
{
    return g.span > 0 ? g.row.left() + (ms / g.span - m_from) * m_zoom * g.row.width() : g.row.left();
}

QRectF TimelineChart::barRect(int lane, int index) const
{
    const auto geometry = layout();
    if (lane < 0 || lane >= static_cast<int>(m_view.lanes.size()))
        return {};
    const auto &bars = m_view.lanes[static_cast<std::size_t>(lane)].bars;
    if (index < 0 || index >= static_cast<int>(bars.size()))
        return {};
    const Geometry &g = geometry[static_cast<std::size_t>(lane)];
    const TimelineBar &b = bars[static_cast<std::size_t>(index)];
    const double h = b.compute ? g.row.height() : g.row.height() / 3;
    const double x0 = std::max(g.row.left(), xOf(g, b.startMs)), x1 = std::min(g.row.right(), xOf(g, b.endMs));
    if (x1 <= x0 && !(x0 == x1 && x0 >= g.row.left() && x0 <= g.row.right()))
        return {};
    return {x0, g.row.bottom() - h, std::max(1.0, x1 - x0), h};
}

void TimelineChart::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    p.fillRect(rect(), palette().base());
    if (m_view.lanes.empty()) {
        p.setPen(palette().color(QPalette::PlaceholderText));
        p.drawText(rect().adjusted(8, 8, -8, -8), Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap,
                   m_view.note.isEmpty() ? tr("No timeline yet.") : m_view.note);
        return;
    }
    const auto geometry = layout();
    QFont small = font();
    small.setPointSizeF(std::max(6.0, small.pointSizeF() - 1.5));
    QFont bold = font();
    bold.setBold(true);
    const QBrush bubble(QColor(0xd0, 0x40, 0x40, 110), Qt::BDiagPattern);
    bool titled[2] = {false, false};
    for (std::size_t i = 0; i < m_view.lanes.size(); ++i) {
        const TimelineLane &lane = m_view.lanes[i];
        const Geometry &g = geometry[i];
        const int section = lane.predicted ? 1 : 0;
        if (!titled[section]) {
            titled[section] = true;
            p.setPen(palette().color(QPalette::Text));
            p.setFont(bold);
            const double bubbleFraction = lane.predicted ? m_view.predictedBubble : m_view.measuredBubble;
            const QString ms = QString::number(g.span, 'f', g.span < 10 ? 2 : 1), pct = QString::number(bubbleFraction * 100, 'f', 1);
            QString title = lane.predicted ? tr("Predicted by the schedule simulator: %1 ms, bubble %2%").arg(ms, pct)
                                           : tr("Measured, step %1: %2 ms, bubble %3%").arg(QString::number(m_view.step), ms, pct);
            if (m_zoom > 1.001)
                title += tr("  (zoom ×%1; double-click for the whole step)").arg(m_zoom, 0, 'f', 1);
            p.drawText(QPointF(4, g.row.top() - 18), title);
            // A time axis: ticks at a round step across the visible part.
            p.setFont(small);
            p.setPen(palette().color(QPalette::Mid));
            if (g.span > 0) {
                const double visible = g.span / m_zoom, start = m_from * g.span;
                const double raw = visible / 8, mag = std::pow(10.0, std::floor(std::log10(raw)));
                const double tick = raw / mag < 2 ? 2 * mag : raw / mag < 5 ? 5 * mag : 10 * mag;
                for (double t = std::ceil(start / tick) * tick; t <= start + visible + 1e-9; t += tick) {
                    const double x = xOf(g, t);
                    p.drawLine(QPointF(x, g.row.top() - 2), QPointF(x, g.row.top()));
                    p.drawText(QPointF(x + 2, g.row.top() - 4), QString::number(t, 'g', 4));
                }
            }
        }
        p.setFont(small);
        p.setPen(palette().color(QPalette::Text));
        p.drawText(QRectF(4, g.row.top(), kLabelWidth - 8, g.row.height()), Qt::AlignVCenter | Qt::AlignLeft,
                   tr("%1 (%2%)").arg(lane.label).arg(lane.bubbleFraction * 100, 0, 'f', 0));
        // The lane's whole step hatched as idle; the compute bars cover what is not bubble.
        p.fillRect(g.row, palette().color(QPalette::AlternateBase));
        const QRectF step(QPointF(std::max(g.row.left(), xOf(g, 0)), g.row.top()), QPointF(std::min(g.row.right(), xOf(g, g.span)), g.row.bottom()));
        p.fillRect(step, bubble);
        p.save();
        p.setClipRect(g.row);
        for (int b = 0; b < static_cast<int>(lane.bars.size()); ++b) {
            const QRectF r = barRect(static_cast<int>(i), b);
            if (r.isEmpty())
                continue;
            const TimelineBar &bar = lane.bars[static_cast<std::size_t>(b)];
            p.fillRect(r, QColor(QLatin1String(launcher::telemetry::timelineColour(bar.kind))));
            if (bar.compute && r.width() > 18 && bar.microBatch >= 0) {
                p.setPen(Qt::white);
                p.drawText(r, Qt::AlignCenter, QString::number(bar.microBatch));
            }
        }
        p.restore();
    }
}

QString TimelineChart::describeAt(const QPoint &point) const
{
    const auto geometry = layout();
    for (std::size_t i = 0; i < m_view.lanes.size(); ++i) {
        const Geometry &g = geometry[i];
        if (!g.row.contains(point) || g.span <= 0)
            continue;
        const double at = (m_from + (point.x() - g.row.left()) / (g.row.width() * m_zoom)) * g.span;
        for (const TimelineBar &b : m_view.lanes[i].bars)
            if (at >= b.startMs && at <= b.endMs)
                return tr("%1 · micro-batch %2 · chunk %3\n%4 – %5 ms")
                    .arg(b.kind)
                    .arg(b.microBatch)
                    .arg(b.chunk)
                    .arg(b.startMs, 0, 'f', 3)
                    .arg(b.endMs, 0, 'f', 3);
        return tr("%1: idle (bubble) at %2 ms").arg(m_view.lanes[i].label).arg(at, 0, 'f', 3);
    }
    return {};
}

bool TimelineChart::event(QEvent *e)
{
    return answerToolTip(e, this, [this](const QPoint &at) { return describeAt(at); }) || QWidget::event(e);
}

void TimelineChart::wheelEvent(QWheelEvent *e)
{
    const double steps = e->angleDelta().y() / 120.0;
    if (steps == 0 || m_view.lanes.empty())
        return QWidget::wheelEvent(e);
    const double width = std::max(10, this->width() - kLabelWidth - 10);
    const double anchor = std::clamp((e->position().x() - kLabelWidth) / width, 0.0, 1.0);
    setZoom(m_zoom * std::pow(1.25, steps), anchor);
    e->accept();
}

void TimelineChart::mousePressEvent(QMouseEvent *e)
{
    if (e->button() == Qt::LeftButton) {
        m_dragX = static_cast<int>(e->position().x());
        m_dragFrom = m_from;
    }
    QWidget::mousePressEvent(e);
}

void TimelineChart::mouseMoveEvent(QMouseEvent *e)
{
    if ((e->buttons() & Qt::LeftButton) && m_dragX >= 0 && m_zoom > 1) {
        const double width = std::max(10, this->width() - kLabelWidth - 10);
        m_from = std::clamp(m_dragFrom - (e->position().x() - m_dragX) / (width * m_zoom), 0.0, 1.0 - 1.0 / m_zoom);
        update();
    }
    QWidget::mouseMoveEvent(e);
}

void TimelineChart::mouseDoubleClickEvent(QMouseEvent *e)
{
    resetZoom();
    QWidget::mouseDoubleClickEvent(e);
}

} // namespace trellis::ui
