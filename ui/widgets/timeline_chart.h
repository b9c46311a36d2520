// The Gantt chart of a pipeline step (launcher/metrics/timeline.h): one lane per stage, forward /
// backward / weight-gradient / send-receive bars in their colours, each lane's idle time hatched as
// bubble, its bubble fraction beside it, and a section title with the step's length and overall
// bubble. It takes either timeline — the trainer's measured step (Watch) or the schedule
// simulator's prediction (Estimate) — or both, one section each, each scaled to its own length.
// The wheel zooms the time axis around the pointer, dragging pans, a double click shows the whole
// step; hovering a bar names the action. Painting is bounded by lanes × bars of one step.
#pragma once

#include "launcher/metrics/timeline.h"

#include <QWidget>

namespace trellis::ui {

class TimelineChart : public QWidget {
    Q_OBJECT
public:
    explicit TimelineChart(QWidget *parent = nullptr);
    void setTimeline(launcher::telemetry::TimelineView view);
    const launcher::telemetry::TimelineView &timeline() const { return m_view; }

    // The visible part of each section, as fractions of its length: [from, from + 1/zoom].
    double zoom() const { return m_zoom; }
    double from() const { return m_from; }
    void setZoom(double zoom, double anchorFraction = 0.5); // keeps the anchor where it is
    void resetZoom();

    // What the bar at a point is ("F · micro-batch 3 · chunk 0 …"), empty for none.
    QString describeAt(const QPoint &point) const;
    // Where the bar `index` of lane `lane` is drawn (empty when out of view).
    QRectF barRect(int lane, int index) const;

signals:
    void zoomChanged(double zoom);

protected:
    void paintEvent(QPaintEvent *event) override;
    bool event(QEvent *event) override;
    void wheelEvent(QWheelEvent *event) override;
    void mousePressEvent(QMouseEvent *event) override;
    void mouseMoveEvent(QMouseEvent *event) override;
    void mouseDoubleClickEvent(QMouseEvent *event) override;

private:
    struct Geometry {
        QRectF row;
        double span = 0; // ms of the lane's section
    };
    std::vector<Geometry> layout() const;
    double xOf(const Geometry &g, double ms) const;

    launcher::telemetry::TimelineView m_view;
    double m_zoom = 1, m_from = 0;
    int m_dragX = -1;
    double m_dragFrom = 0;
};

} // namespace trellis::ui
