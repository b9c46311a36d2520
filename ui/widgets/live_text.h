// A line of text that changes as a run goes (the progress line, a counter, the outlier ranks):
// drawn elided to the width the layout gives it, the whole text in its tooltip. A QLabel whose
// text changes asks its window to lay itself out again (at 1024 ranks the main window's dock
// layout was redone ten times a second for the progress line); a new text here repaints this
// widget only: its size hint depends on its font, never on its text.
#pragma once

#include <QWidget>

namespace trellis::ui {

class LiveText : public QWidget {
    Q_OBJECT
public:
    explicit LiveText(QWidget *parent = nullptr, const QString &text = {});
    void setText(const QString &text);
    QString text() const { return m_text; }
    // Bold and red: a figure that should be zero and is not.
    void setAlarm(bool alarm);
    bool alarm() const { return m_alarm; }
    QSize sizeHint() const override;
    QSize minimumSizeHint() const override;

protected:
    void paintEvent(QPaintEvent *event) override;

private:
    QString m_text;
    bool m_alarm = false;
};

} // namespace trellis::ui
