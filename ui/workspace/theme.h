// Light or dark: the workbench's palette (Fusion style with a palette of its own, so that both
// look the same on every desktop). Charts take their colours from the palette when made.
#pragma once

#include <QString>

namespace trellis::ui::workspace {

// "light", "dark" or "system" (the platform's own); anything else is "system". Call before the
// main window is made.
void applyTheme(const QString &name);
QString themeSetting();                  // Settings › Theme, "system" when unset
void setThemeSetting(const QString &name); // takes effect at the next start

} // namespace trellis::ui::workspace
