// The Run mode's dashboards: panels in sections (training, throughput, step time, pipeline,
// communication, memory, experts, health, events) laid out on a grid that fits the window — one
// to three columns by its width, two rows of panels on screen by its height. A section
// collapses from its header; a panel maximises (double-click its title, Esc returns) and moves
// by dragging its title onto another panel or a section's header; the arrangement is saved.
// Hovering a step on one step chart shows it on all of them (the shared cursor), and zooming or
// dragging one step chart's x-range sets it on all of them until "Reset zoom".
// Only panels on screen draw; one scrolled into view, expanded or maximised catches up with the
// newest snapshot at once. A new snapshot is drawn on at most kPanelsPerSnapshot panels, the
// longest-waiting first: with more on screen each refreshes every other snapshot (2 Hz at the
// feed's 4), so a frame's work stays that of two charts however many are shown; when snapshots
// stop (the run ended), the rest catch up kCatchUpMs later. A panel with nothing to draw shows
// its empty state.
#pragma once

#include "launcher/metrics/dashboard_snapshot.h"

#include <qcustomplot.h>

#include <QSet>
#include <QWidget>

#include <memory>
#include <vector>

class QScrollArea;
class QSettings;
class QStackedWidget;
class QGridLayout;
class QToolButton;

namespace trellis::ui::dashboards {
class Panel;
}

namespace trellis::ui::workspace {

class PanelFrame;

class DashboardGrid : public QWidget {
    Q_OBJECT
public:
    static constexpr int kPanelsPerSnapshot = 2;
    static constexpr int kCatchUpMs = 400;
    explicit DashboardGrid(QWidget *parent = nullptr);

    // Building it: sections in their default order, then each panel into its default section,
    // then the saved arrangement (restoreLayout).
    void addSection(const QString &id, const QString &title);
    void addPanel(const QString &sectionId, dashboards::Panel *panel);

    // The arrangement a person left: the order of panels and sections they are in, and which
    // sections are collapsed. Anything unknown or malformed (an older version's, another
    // program's) is ignored: the default arrangement stands for what it does not say.
    void saveLayout(QSettings &settings) const;
    void restoreLayout(const QSettings &settings);
    void resetLayout();

    // Draws the snapshot on the panels on screen; nullptr: nothing followed or opened (every
    // panel shows what will appear once a run is).
    void showSnapshot(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot);
    void refreshEmptyStates(); // a panel's own data changed (the timeline)

    PanelFrame *frame(const QString &panelId) const;
    QStringList sectionIds() const;
    QString sectionOf(const QString &panelId) const;
    QStringList panelsIn(const QString &sectionId) const; // in their order
    int columns() const { return m_columns; }
    bool isOnScreen(const PanelFrame *frame) const;

    void setCollapsed(const QString &sectionId, bool collapsed);
    bool isCollapsed(const QString &sectionId) const;
    // Moves a panel in front of another (into that one's section); an empty `before` with a
    // section id appends it there.
    bool movePanel(const QString &panelId, const QString &beforePanelId, const QString &sectionId = {});
    bool maximise(const QString &panelId);
    void restoreFromMaximised();
    QString maximised() const { return m_maximised; }
    bool reveal(const QString &panelId); // expands its section and scrolls it into view
    // A panel in a dock of its own (floating, or docked at any edge of the main window): for a
    // second monitor, or an arrangement the grid does not make. Closing the dock puts the panel
    // back in its section. Not saved: the grid's arrangement is.
    bool openInWindow(const QString &panelId);
    bool isInWindow(const QString &panelId) const { return m_inWindows.contains(panelId); }
    void backToGrid(const QString &panelId);

    // The shared step cursor (a negative step hides it) and the linked x-range of step charts.
    void setCursorStep(double step);
    double cursorStep() const { return m_cursor; }
    void setStepRange(const QCPRange &range);
    void resetStepRange();
    bool stepRangePinned() const { return m_pinned; }
    QCPRange stepRange() const { return m_range; }

signals:
    void cursorMoved(qint64 step); // -1: left the charts
    void layoutChanged();          // reordered, collapsed: worth saving

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;
    void showEvent(QShowEvent *event) override;
    void keyPressEvent(QKeyEvent *event) override; // Esc: back from a maximised panel

private:
    struct Section {
        QString id, title;
        QWidget *box = nullptr;
        QToolButton *header = nullptr;
        QWidget *body = nullptr;
        std::vector<PanelFrame *> frames;
        bool collapsed = false;
    };
    Section *section(const QString &id);
    const Section *section(const QString &id) const;
    std::pair<int, int> shapeFor(const QSize &viewport) const; // (columns, panel height)
    void relayout();       // sections onto the grid for the viewport's size
    void rebuildBodies();  // frames into their sections' rows
    // Draws on-screen panels that have not drawn the newest snapshot, longest-waiting first, at
    // most `budget` of them; any left wait for the next snapshot or the catch-up timer.
    void catchUp(int budget = 1 << 20);
    void watchStepPlots(PanelFrame *frame);
    void applyRange(dashboards::Panel *panel);
    void updateHeader(Section &s);

    QStackedWidget *m_stack;
    QScrollArea *m_scroll;
    QWidget *m_content;
    QGridLayout *m_grid;
    QWidget *m_maximisedHolder;
    std::vector<Section> m_sections;
    std::vector<std::pair<QString, QString>> m_defaultPlaces; // (section, panel), as added
    std::shared_ptr<const launcher::telemetry::DashboardSnapshot> m_snapshot;
    class QTimer *m_catchUpTimer = nullptr;
    quint64 m_generation = 0;                        // counts the snapshots shown
    std::map<const PanelFrame *, quint64> m_drawn;   // the generation each frame last drew
    QString m_maximised;
    QSet<QString> m_inWindows; // panels in docks of their own
    int m_columns = 0;
    int m_panelHeight = 0;
    double m_cursor = -1;
    bool m_pinned = false;
    QCPRange m_range;
};

} // namespace trellis::ui::workspace
