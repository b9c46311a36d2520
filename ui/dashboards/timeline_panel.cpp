// See timeline_panel.h.
#include "ui/dashboards/timeline_panel.h"

#include <QHelpEvent>
#include <QLabel>
#include <QPainter>
#include <QToolTip>
#include <QVBoxLayout>

#include <cmath>

namespace trellis::ui::dashboards {

using launcher::telemetry::TimelineBar;
using launcher::telemetry::TimelineLane;
using launcher::telemetry::TimelineView;

namespace {

constexpr int kLabelWidth = 150;
constexpr int kLaneHeight = 22;
constexpr int kSectionGap = 30;

} // namespace

class TimelineCanvas : public QWidget {
public:
    explicit TimelineCanvas(QWidget *parent) : QWidget(parent)
    {
        setMouseTracking(true);
        setMinimumHeight(120);
        setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Expanding);
    }
    void set(TimelineView view)
    {
        m_view = std::move(view);
        int lanes = static_cast<int>(m_view.lanes.size());
        setMinimumHeight(std::max(120, lanes * kLaneHeight + 2 * kSectionGap + 50));
        update();
    }
    const TimelineView &view() const { return m_view; }

protected:
    // Where a lane's bars go: section (measured 0, predicted 1), row rectangle, time scale.
    struct Geometry {
        QRectF row;
        double msToPx = 0;
    };
    std::vector<Geometry> layout() const
    {
        std::vector<Geometry> g;
        const double width = std::max(10, this->width() - kLabelWidth - 10);
        double y = 4;
        bool inPredicted = false;
        bool first = true;
        for (const TimelineLane &lane : m_view.lanes) {
            if (first || lane.predicted != inPredicted) {
                y += first ? 30 : kSectionGap + 14; // the section's title and tick labels
                inPredicted = lane.predicted;
                first = false;
            }
            const double span = lane.predicted ? m_view.predictedMs : m_view.measuredMs;
            g.push_back({QRectF(kLabelWidth, y, width, kLaneHeight - 4), span > 0 ? width / span : 0});
            y += kLaneHeight;
        }
        return g;
    }

    void paintEvent(QPaintEvent *) override
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
        bool titled[2] = {false, false};
        for (std::size_t i = 0; i < m_view.lanes.size(); ++i) {
            const TimelineLane &lane = m_view.lanes[i];
            const Geometry &g = geometry[i];
            const int section = lane.predicted ? 1 : 0;
            if (!titled[section]) {
                titled[section] = true;
                p.setPen(palette().color(QPalette::Text));
                QFont bold = font();
                bold.setBold(true);
                p.setFont(bold);
                const double span = lane.predicted ? m_view.predictedMs : m_view.measuredMs;
                const double bubble = lane.predicted ? m_view.predictedBubble : m_view.measuredBubble;
                const QString ms = QString::number(span, 'f', span < 10 ? 2 : 1), pct = QString::number(bubble * 100, 'f', 1);
                const QString title = lane.predicted ? tr("Predicted by the schedule simulator: %1 ms, bubble %2%").arg(ms, pct)
                                                     : tr("Measured, step %1: %2 ms, bubble %3%").arg(QString::number(m_view.step), ms, pct);
                p.drawText(QPointF(4, g.row.top() - 18), title);
                // A time axis: ticks at a round step across the section's length.
                p.setFont(small);
                p.setPen(palette().color(QPalette::Mid));
                if (span > 0) {
                    const double raw = span / 8, mag = std::pow(10.0, std::floor(std::log10(raw)));
                    const double tick = raw / mag < 2 ? 2 * mag : raw / mag < 5 ? 5 * mag : 10 * mag;
                    for (double t = 0; t <= span + 1e-9; t += tick) {
                        const double x = g.row.left() + t * g.msToPx;
                        p.drawLine(QPointF(x, g.row.top() - 2), QPointF(x, g.row.top()));
                        p.drawText(QPointF(x + 2, g.row.top() - 4), QString::number(t, 'g', 4));
                    }
                }
            }
            p.setFont(small);
            p.setPen(palette().color(QPalette::Text));
            p.drawText(QRectF(4, g.row.top(), kLabelWidth - 8, g.row.height()), Qt::AlignVCenter | Qt::AlignLeft,
                       tr("%1 (%2%)").arg(lane.label).arg(lane.bubbleFraction * 100, 0, 'f', 0));
            p.fillRect(g.row, palette().color(QPalette::AlternateBase));
            for (const TimelineBar &b : lane.bars) {
                const double h = b.compute ? g.row.height() : g.row.height() / 3;
                QRectF r(g.row.left() + b.startMs * g.msToPx, g.row.bottom() - h, std::max(1.0, (b.endMs - b.startMs) * g.msToPx), h);
                p.fillRect(r, QColor(QLatin1String(launcher::telemetry::timelineColour(b.kind))));
                if (b.compute && r.width() > 18 && b.microBatch >= 0) {
                    p.setPen(Qt::white);
                    p.drawText(r, Qt::AlignCenter, QString::number(b.microBatch));
                }
            }
        }
    }

    bool event(QEvent *e) override
    {
        if (e->type() == QEvent::ToolTip) {
            const auto *help = static_cast<QHelpEvent *>(e);
            const auto geometry = layout();
            for (std::size_t i = 0; i < m_view.lanes.size(); ++i) {
                const Geometry &g = geometry[i];
                if (!g.row.contains(help->pos()) || g.msToPx <= 0)
                    continue;
                const double at = (help->pos().x() - g.row.left()) / g.msToPx;
                for (const TimelineBar &b : m_view.lanes[i].bars)
                    if (at >= b.startMs && at <= b.endMs) {
                        QToolTip::showText(help->globalPos(), tr("%1 · micro-batch %2 · chunk %3\n%4 – %5 ms")
                                                                  .arg(b.kind)
                                                                  .arg(b.microBatch)
                                                                  .arg(b.chunk)
                                                                  .arg(b.startMs, 0, 'f', 3)
                                                                  .arg(b.endMs, 0, 'f', 3));
                        return true;
                    }
            }
            QToolTip::hideText();
            e->ignore();
            return true;
        }
        return QWidget::event(e);
    }

private:
    TimelineView m_view;
};

TimelinePanel::TimelinePanel(QWidget *parent) : Panel(parent), m_header(new QLabel(this)), m_canvas(new TimelineCanvas(this))
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(2, 2, 2, 2);
    m_header->setWordWrap(true);
    layout->addWidget(m_header);
    layout->addWidget(m_canvas, 1);
    auto *legend = new QLabel(tr("<span style='color:#1f77b4'>■</span> forward &nbsp; <span style='color:#2ca02c'>■</span> "
                                 "backward &nbsp; <span style='color:#9467bd'>■</span> weight gradients &nbsp; "
                                 "<span style='color:#b0b0b0'>▬</span> send / receive (waiting for a peer) &nbsp; "
                                 "numbers: micro-batches; each section is scaled to its own length"),
                              this);
    legend->setWordWrap(true);
    layout->addWidget(legend);
    showTimeline({});
}

void TimelinePanel::showTimeline(const TimelineView &timeline)
{
    m_canvas->set(timeline);
    m_header->setText(summary());
}

const TimelineView &TimelinePanel::timeline() const { return m_canvas->view(); }

QString TimelinePanel::summary() const
{
    const TimelineView &v = m_canvas->view();
    QStringList parts;
    if (v.measuredBubble >= 0)
        parts << tr("measured bubble %1% (step %2, %3 ms)").arg(v.measuredBubble * 100, 0, 'f', 1).arg(v.step).arg(v.measuredMs, 0, 'f', 1);
    if (v.predictedBubble >= 0)
        parts << tr("predicted bubble %1% (%2 ms)").arg(v.predictedBubble * 100, 0, 'f', 1).arg(v.predictedMs, 0, 'f', 1);
    if (!v.note.isEmpty())
        parts << v.note;
    return parts.join(QStringLiteral(" · "));
}

} // namespace trellis::ui::dashboards
