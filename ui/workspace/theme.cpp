// See theme.h.
#include "ui/workspace/theme.h"

#include <QApplication>
#include <QPalette>
#include <QSettings>
#include <QStyle>
#include <QStyleFactory>

namespace trellis::ui::workspace {

void applyTheme(const QString &name)
{
    if (name != QLatin1String("light") && name != QLatin1String("dark"))
        return;
    QApplication::setStyle(QStyleFactory::create(QStringLiteral("Fusion"))); // notr: a style's name
    QPalette p;
    if (name == QLatin1String("dark")) {
        const QColor window(0x2b, 0x2d, 0x30), base(0x1e, 0x1f, 0x22), text(0xdf, 0xe1, 0xe5), mid(0x4e, 0x51, 0x57);
        p.setColor(QPalette::Window, window);
        p.setColor(QPalette::WindowText, text);
        p.setColor(QPalette::Base, base);
        p.setColor(QPalette::AlternateBase, QColor(0x33, 0x35, 0x39));
        p.setColor(QPalette::ToolTipBase, window);
        p.setColor(QPalette::ToolTipText, text);
        p.setColor(QPalette::Text, text);
        p.setColor(QPalette::Button, QColor(0x37, 0x39, 0x3d));
        p.setColor(QPalette::ButtonText, text);
        p.setColor(QPalette::BrightText, Qt::white);
        p.setColor(QPalette::Mid, mid);
        p.setColor(QPalette::Dark, QColor(0x18, 0x19, 0x1b));
        p.setColor(QPalette::Light, QColor(0x45, 0x47, 0x4c));
        p.setColor(QPalette::Highlight, QColor(0x35, 0x74, 0xf0));
        p.setColor(QPalette::HighlightedText, Qt::white);
        p.setColor(QPalette::Link, QColor(0x6c, 0xa8, 0xff));
        p.setColor(QPalette::PlaceholderText, QColor(0x9a, 0x9d, 0xa3));
        p.setColor(QPalette::Disabled, QPalette::Text, QColor(0x7a, 0x7d, 0x83));
        p.setColor(QPalette::Disabled, QPalette::WindowText, QColor(0x7a, 0x7d, 0x83));
        p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(0x7a, 0x7d, 0x83));
    } else {
        p = QApplication::style()->standardPalette();
        p.setColor(QPalette::PlaceholderText, QColor(0x70, 0x70, 0x70));
    }
    QApplication::setPalette(p);
}

QString themeSetting() { return QSettings().value(QStringLiteral("workbench/theme"), QStringLiteral("system")).toString(); }

void setThemeSetting(const QString &name) { QSettings().setValue(QStringLiteral("workbench/theme"), name); }

} // namespace trellis::ui::workspace
