// How the workbench names a run's status and kind, in the language it is shown in, and the one
// colour each status is drawn in. The history stores the English words (launcher/run_types.h);
// every view that shows them takes them from here.
#pragma once

#include "launcher/run_types.h"

#include <QColor>
#include <QString>

namespace trellis::ui {

// "completed", "failed", … as the history writes them, translated; an unknown word as it is.
QString statusText(const QString &status);
// The colour a status is drawn in: red for failed, green for completed; invalid (the palette's
// text colour) for the others.
QColor statusColour(const QString &status);
// "launched", "simulated", "collected", "adopted", translated.
QString kindText(launcher::RunKind kind);

} // namespace trellis::ui
