// Semantic validation of a parsed plan: sizes, divisibility, rank counts against the cluster's
// slots, schedule rules, host names. Errors stop a launch; warnings (e.g. a TP group spanning
// nodes) are shown but do not.
#pragma once

#include "backend/plan/plan.h"
#include "backend/plan/result.h"

#include <string>

namespace trellis::plan {

Diagnostics validatePlan(const Plan &plan);

// The parts of validatePlan(), for callers that check thousands of plans differing only in model
// and parallelism (the planner): `model` and `parallel` depend on those sections alone (with the
// cluster's slot count), `fixed` on everything else (cluster, training, telemetry, launch), so
// validatePlan(p) has errors exactly when one of them has. `placement` adds the warnings about
// groups spanning nodes (ranks × nodes of work: warnings only, never an error).
struct ValidationParts {
    bool model = true;
    bool parallel = true;
    bool fixed = true;
    bool placement = true;
};
Diagnostics validatePlan(const Plan &plan, const ValidationParts &parts);

// A host name or address that may be handed to ssh/mpirun: letters, digits, '.', '-', '_' and ':'
// (IPv6), not starting with '-' (it would be read as an option), at most 253 characters.
bool isValidHostName(const std::string &host);
// A time limit in one of the forms sbatch takes (MM, MM:SS, HH:MM:SS, D-HH, D-HH:MM, D-HH:MM:SS).
bool isSlurmTime(const std::string &time);

// What this version of trellis-trainer can execute (a subset of what a valid plan may ask for).
// Each unsupported feature is an error naming the field, so nothing silently runs differently.
Diagnostics checkTrainerSupport(const Plan &plan);

inline const char *kKnownSchedules[] = {"gpipe", "1f1b", "interleaved-1f1b", "zb-h1"};

} // namespace trellis::plan
