#pragma once

namespace trellis::launcher {

// Nice the calling thread (not its process) by `increment` (0..19). A workbench thread that decodes
// or queries in the background calls it, so that on a machine whose cores are busy (a local run,
// a simulation) the GUI thread is the one the scheduler runs first. Lowering a priority needs no
// privilege; failure is ignored (the thread then runs at its process's priority).
void lowerThisThreadPriority(int increment);

} // namespace trellis::launcher
