// What checkpoints cost a run, folded from its step reports (StepRow's checkpoint fields): how
// many saves were put in place, how long training waited at the step boundaries that saved (the
// copy into the staging buffers, the folder, the wait for the previous shard; with sync saves the
// write too), how long the shards took to write, and how much slower the steps that ran beside a
// background write were than the steps that ran alone. One rank's reports are folded (rank 0's:
// every rank takes part in every save, and the boundary's collectives keep them in step).
// Used by the dashboards' step-time breakdown and the reports; no Qt beyond QString.
#pragma once

#include "launcher/run_types.h"

#include <QString>

namespace trellis::launcher::telemetry {

struct CheckpointCosts {
    qint64 saves = 0;               // saves put in place (a write time reported)
    qint64 savingBoundaries = 0;    // steps whose boundary spent time on a save
    double blockedMs = 0, mostBlockedMs = 0; // summed over those boundaries, and the longest
    double writeMs = 0;             // summed over the saves
    qint64 besideSteps = 0, aloneSteps = 0;   // steps with / without a shard written beside them
    double besideStepMs = 0, aloneStepMs = 0; // their summed step times

    void add(const StepRow &row);
    bool any() const { return saves > 0 || savingBoundaries > 0; }
    // Training's whole checkpoint time over the saves put in place: an async save's wait is spread
    // over boundaries (begun at one, its copy waited for in the next step, put in place at a later
    // one), so per boundary would count one save's cost two or three times as several smaller ones.
    // Before any save landed, per boundary that waited.
    double blockedPerSaveMs() const
    {
        const qint64 n = saves ? saves : savingBoundaries;
        return n ? blockedMs / static_cast<double>(n) : 0;
    }
    double writePerSaveMs() const { return saves ? writeMs / static_cast<double>(saves) : 0; }
    // The mean step time of the steps that ran alone (0: none did).
    double aloneMeanMs() const { return aloneSteps ? aloneStepMs / static_cast<double>(aloneSteps) : 0; }
    // Mean step time beside a write over alone, minus 1 (0: not both kinds of step seen).
    double slowdown() const;
    // blockedPerSaveMs over the mean step time alone (0: unknown).
    double blockedFractionOfStep() const;
    // One line: "12 saves; training waited 3.1 ms a save (0.2% of a step); each written in
    // 41.0 ms behind training; steps beside a write 1.8% slower (40 of 200 steps)".
    QString summary() const;
};

} // namespace trellis::launcher::telemetry
