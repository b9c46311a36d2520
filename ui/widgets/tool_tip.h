// Answers a widget's tooltip event with the text for the point under the pointer (none hides the
// tooltip). Returns whether the event was a tooltip event (then it is handled).
#pragma once

#include <QEvent>
#include <QHelpEvent>
#include <QToolTip>
#include <QWidget>

namespace trellis::ui {

template <typename Describe>
bool answerToolTip(QEvent *event, QWidget *widget, Describe describeAt)
{
    if (event->type() != QEvent::ToolTip)
        return false;
    const auto *help = static_cast<QHelpEvent *>(event);
    const QString text = describeAt(help->pos());
    if (text.isEmpty())
        QToolTip::hideText();
    else
        QToolTip::showText(help->globalPos(), text, widget);
    return true;
}

} // namespace trellis::ui
