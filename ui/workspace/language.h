// The workbench's languages: English (the source), German and Simplified Chinese, from
// translations/trellis_<code>.ts built into the UI library (resource prefix :/i18n), plus Qt's own
// catalogue for its dialogs where the system has it (qt6-translations-l10n). The language follows
// the system locale unless the settings (Settings › Language, QSettings "ui/language") or
// `trellis --language CODE` name one.
#pragma once

#include <QString>
#include <QStringList>

namespace trellis::ui {

// The language codes the workbench ships: "en", "de", "zh_CN".
QStringList availableLanguages();
// A language's own name ("Deutsch", "简体中文").
QString languageName(const QString &code);
// The saved choice; empty: the system's locale.
QString languageSetting();
void setLanguageSetting(const QString &code);
// Installs the translators for `code` (empty: the system locale), replacing any installed before.
// Returns the language in use: one of availableLanguages() ("en" when nothing matched).
QString installTranslations(const QString &code);

} // namespace trellis::ui
