// See run_words.h.
#include "ui/widgets/run_words.h"

#include <QCoreApplication>

namespace trellis::ui {

QString statusText(const QString &status)
{
    static const char *const words[] = {
        QT_TRANSLATE_NOOP("RunWords", "launching"), QT_TRANSLATE_NOOP("RunWords", "running"), QT_TRANSLATE_NOOP("RunWords", "completed"),
        QT_TRANSLATE_NOOP("RunWords", "failed"),    QT_TRANSLATE_NOOP("RunWords", "stopped"),
    };
    for (const char *word : words)
        if (status == QLatin1String(word))
            return QCoreApplication::translate("RunWords", word);
    return status;
}

QColor statusColour(const QString &status)
{
    if (status == QLatin1String("failed"))
        return QColor(0xb0, 0x00, 0x20);
    if (status == QLatin1String("completed"))
        return QColor(0x0a, 0x7d, 0x28);
    return {};
}

QString kindText(launcher::RunKind kind)
{
    switch (kind) {
    case launcher::RunKind::Launched: return QCoreApplication::translate("RunWords", "launched");
    case launcher::RunKind::Simulated: return QCoreApplication::translate("RunWords", "simulated");
    case launcher::RunKind::Collected: return QCoreApplication::translate("RunWords", "collected");
    case launcher::RunKind::Adopted: return QCoreApplication::translate("RunWords", "adopted");
    }
    return {};
}

} // namespace trellis::ui
