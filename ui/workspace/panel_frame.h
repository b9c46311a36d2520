// One panel of the dashboard grid in its frame: a title bar (drag it to reorder, double-click it
// to maximise, a menu to copy or save the chart as PNG or SVG) over either the panel or, while
// the panel has nothing to draw, its empty state — a sentence saying what will appear and what to
// do, never empty axes.
#pragma once

#include <QFrame>

class QLabel;
class QStackedLayout;
class QToolButton;

namespace trellis::ui::dashboards {
class Panel;
}

namespace trellis::ui::workspace {

class PanelFrame : public QFrame {
    Q_OBJECT
public:
    static constexpr const char *kMimeType = "application/x-trellis-panel";

    explicit PanelFrame(dashboards::Panel *panel, QWidget *parent = nullptr);
    dashboards::Panel *panel() const { return m_panel; }
    QString panelId() const;

    // Empty text: the panel shows; else the sentence does.
    void setEmptyText(const QString &text);
    QString emptyText() const;
    bool showsPanel() const;
    void setMaximised(bool maximised);

    // The chart as an image: one chart drawn alone (as vectors in SVG), else the whole panel.
    QImage image() const;
    // Writes the image as PNG or SVG (by the path's suffix); an error names what failed.
    QString saveImage(const QString &path) const;
    void copyImage() const; // to the clipboard

signals:
    void maximiseToggled(PanelFrame *frame);
    void dropped(const QString &panelId, PanelFrame *onto); // a panel dragged onto this one
    void resetZoomRequested();
    void windowRequested(PanelFrame *frame); // "Open in a window": a dock of its own

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;
    void dragEnterEvent(QDragEnterEvent *event) override;
    void dropEvent(QDropEvent *event) override;

private:
    void saveImageAs(const QString &format);

    dashboards::Panel *m_panel;
    QWidget *m_titleBar;
    QLabel *m_title;
    QToolButton *m_maximise;
    QStackedLayout *m_stack;
    QLabel *m_empty;
    QPoint m_pressAt;
};

} // namespace trellis::ui::workspace
