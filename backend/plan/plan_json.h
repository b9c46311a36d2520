// Loading and saving trellis.plan/1 JSON. Loading checks syntax, the schema tag, unknown keys and
// value types, and resolves presets; every problem names its field path. Semantic checks (does tp
// divide heads, do the ranks match the slots) are validatePlan()'s job.
#pragma once

#include "backend/plan/plan.h"
#include "backend/plan/result.h"

#include <string>

namespace trellis::plan {

// Parses a plan from JSON text. `sourceName` prefixes syntax errors ("plan.json:3:7: ...");
// cluster.hostfile is read relative to `baseDir` (the current folder when "").
Result<Plan> parsePlan(const std::string &jsonText, const std::string &sourceName = "plan", const std::string &baseDir = "");
// Reads and parses a file; a missing or unreadable file is an error naming the path.
Result<Plan> loadPlanFile(const std::string &path);
// Parses, then runs validatePlan(); warnings are returned through `warnings` when given.
Result<Plan> loadAndValidatePlanFile(const std::string &path, Diagnostics *warnings = nullptr);

// Every field written explicitly, presets already resolved; parsePlan(toJson(p)) == p. A plan read
// with cluster.hostfile is written with the hosts it read in cluster.nodes.
std::string planToJson(const Plan &plan, int indent = 2);
// Writes to a temporary file beside `path`, then renames it over `path`.
Result<bool> savePlanFile(const Plan &plan, const std::string &path);

} // namespace trellis::plan
