// See live_text.h.
#include "ui/widgets/live_text.h"

#include <QPainter>

namespace trellis::ui {

LiveText::LiveText(QWidget *parent, const QString &text) : QWidget(parent)
{
    setSizePolicy(QSizePolicy::Expanding, QSizePolicy::Fixed);
    setText(text);
}

void LiveText::setText(const QString &text)
{
    if (text == m_text)
        return;
    m_text = text;
    setToolTip(text);
    update();
}

void LiveText::setAlarm(bool alarm)
{
    if (alarm == m_alarm)
        return;
    m_alarm = alarm;
    update();
}

QSize LiveText::sizeHint() const
{
    // Room for a typical line; the layout stretches or shrinks it (the text is elided).
    return {fontMetrics().averageCharWidth() * 40, fontMetrics().height() + 4};
}

QSize LiveText::minimumSizeHint() const { return {fontMetrics().averageCharWidth() * 4, fontMetrics().height() + 4}; }

void LiveText::paintEvent(QPaintEvent *)
{
    QPainter p(this);
    QFont f = font();
    f.setBold(m_alarm);
    p.setFont(f);
    p.setPen(m_alarm ? QColor(0xb0, 0x00, 0x00) : palette().color(QPalette::WindowText));
    const QFontMetrics metrics(f);
    p.drawText(rect(), Qt::AlignLeft | Qt::AlignVCenter, metrics.elidedText(m_text, Qt::ElideRight, width()));
}

} // namespace trellis::ui
