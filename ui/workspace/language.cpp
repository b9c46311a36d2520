// See language.h.
#include "ui/workspace/language.h"

#include <QCoreApplication>
#include <QLibraryInfo>
#include <QLocale>
#include <QSettings>
#include <QTranslator>

namespace trellis::ui {

QStringList availableLanguages() { return {QStringLiteral("en"), QStringLiteral("de"), QStringLiteral("zh_CN")}; }

QString languageName(const QString &code)
{
    if (code == QLatin1String("de"))
        return QStringLiteral("Deutsch"); // notr: a language is named in itself
    if (code == QLatin1String("zh_CN"))
        return QStringLiteral("简体中文");
    return QStringLiteral("English"); // notr: a language is named in itself
}

QString languageSetting() { return QSettings().value(QStringLiteral("ui/language")).toString(); }

void setLanguageSetting(const QString &code)
{
    QSettings settings;
    if (code.isEmpty())
        settings.remove(QStringLiteral("ui/language"));
    else
        settings.setValue(QStringLiteral("ui/language"), code);
}

QString installTranslations(const QString &code)
{
    static QTranslator *ours = nullptr, *qts = nullptr;
    for (QTranslator **t : {&ours, &qts})
        if (*t) {
            QCoreApplication::removeTranslator(*t);
            delete *t;
            *t = nullptr;
        }
    const QLocale locale = code.isEmpty() ? QLocale() : QLocale(code);
    ours = new QTranslator;
    if (!ours->load(locale, QStringLiteral("trellis"), QStringLiteral("_"), QStringLiteral(":/i18n"))) {
        delete ours;
        ours = nullptr;
        return QStringLiteral("en");
    }
    QCoreApplication::installTranslator(ours);
    qts = new QTranslator;
    if (qts->load(locale, QStringLiteral("qtbase"), QStringLiteral("_"), QLibraryInfo::path(QLibraryInfo::TranslationsPath))) {
        QCoreApplication::installTranslator(qts);
    } else {
        delete qts;
        qts = nullptr;
    }
    const QString used = ours->language(); // "de", "zh_CN"
    for (const QString &available : availableLanguages())
        if (used.startsWith(available) || available.startsWith(used.left(2)))
            return available;
    return used;
}

} // namespace trellis::ui
