// What a supervised run prints to the terminal (trellis-cli run, simulate, adopt): the progress
// line, alerts, restarts and batch-job changes as they come, how the run ended and what its
// telemetry lost. Internal to the launcher.
#pragma once

#include <QElapsedTimer>

namespace trellis::launcher {
class HistoryWriter;
class Supervisor;
}

namespace trellis::launcher::cli {

// What a supervised run prints to the terminal, and since when it runs.
struct RunConsole {
    bool quiet = false;
    bool tty = false;
    QElapsedTimer clock;
    int lastPrintedDecile = -1;
};

// Progress, alerts, restarts and batch-job changes to the terminal; the event loop ends with the run.
void connectConsole(Supervisor &supervisor, RunConsole &console);
// After the event loop: flushes and stops the history writer, and says how the run ended and
// what its telemetry lost; false when the history could not take all of the run (said).
bool printRunEnd(const Supervisor &supervisor, HistoryWriter &writer, const RunConsole &console);

} // namespace trellis::launcher::cli
