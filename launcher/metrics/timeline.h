// The step timeline of a pipeline run (the Gantt view): what each pipeline stage did during one
// traced step, as the trainer measured it (spans, telemetry.trace_every), beside what the cost
// model's schedule simulator predicts for the same plan, with the bubble fraction of each. Built
// off the GUI thread (history reader), bounded: one lane per pipeline stage measured, one per
// stage predicted, whatever the world size.
#pragma once

#include "launcher/run_types.h"
#include "backend/plan/cost/cost_model.h"

#include <QList>
#include <QString>

#include <vector>

namespace trellis::launcher::telemetry {

struct TimelineBar {
    double startMs = 0, endMs = 0; // from the step's first action (measured) or 0 (predicted)
    QString kind;                  // as plan::toString(ActionKind): F, B, W, BW, send_act, recv_grad, ...
    int microBatch = -1;
    int chunk = -1;
    bool compute = false;          // F, B, W, BW; the rest is communication (or waiting for it)
};

struct TimelineLane {
    QString label;                 // "stage 1 · rank 4" or "stage 1 · predicted"
    int stage = 0;
    int rank = -1;                 // measured: the rank whose spans these are
    bool predicted = false;
    double busyMs = 0;             // compute bars' total
    double bubbleFraction = 0;     // 1 − busy / the timeline's span
    std::vector<TimelineBar> bars;
};

struct TimelineView {
    qint64 step = -1;              // the traced step shown; -1: none
    QString note;                  // why something is missing
    std::vector<TimelineLane> lanes; // measured lanes by stage, then predicted lanes by stage
    double measuredMs = 0, predictedMs = 0;       // first action to last
    double measuredBubble = -1, predictedBubble = -1; // over all stages; -1: unknown
};

// Compute actions among the kind names.
bool isComputeKind(const QString &kind);
// The colour an action is drawn in, wherever a timeline is drawn ("#rrggbb"): forward blue,
// backward green, weight gradients purple, communication grey.
const char *timelineColour(const QString &kind);

// Lanes of the simulator's timeline (per pipeline rank, actions in ms), as predicted lanes.
std::vector<TimelineLane> predictedLanes(const std::vector<std::vector<TimelineBar>> &perStage);

// The cost model's predicted step as a view with predicted lanes only (one per pipeline stage; the
// optimizer step left out), its length and bubble fraction: what the Estimate panel draws before
// anything runs.
TimelineView predictedTimeline(const plan::Estimate &estimate);
// The lanes alone (for a dashboard snapshot).
std::vector<TimelineLane> predictedLanes(const plan::Estimate &estimate);

// The view of one traced step: `spans` are that step's spans (any ranks; one lane per pipeline
// stage is kept, its lowest rank), `ranks` give each rank's pipeline coordinate, `predicted` the
// simulator's lanes (empty: no prediction) and its bubble fraction.
TimelineView timelineOf(const QList<RankRow> &ranks, const QList<SpanRow> &spans, const std::vector<TimelineLane> &predicted,
                        double predictedBubble);

} // namespace trellis::launcher::telemetry

#include <QMetaType>
Q_DECLARE_METATYPE(trellis::launcher::telemetry::TimelineView)
