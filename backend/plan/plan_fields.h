// One field of a plan by its path — the path the validator names in its messages
// ("parallel.tp", "cluster.nodes[2].slots", "cluster.links.intra_node.bandwidth_gbps") — read, set
// and compared. The workbench's undo commands and `trellis-cli plan set/get/diff` both edit plans
// through this, so a value goes through the same loader (types, unknown keys, presets) wherever it
// is typed.
#pragma once

#include "backend/plan/plan.h"
#include "backend/plan/result.h"

#include <string>
#include <vector>

namespace trellis::plan {

// The value at `path` as compact JSON text ("4", "\"1f1b\"", "true", an object for a section).
// An optional field the plan leaves out reads "null"; a path no plan can have is an error.
Result<std::string> planField(const Plan &plan, const std::string &path);

// The plan with the field at `path` set to `value`: JSON text, or a bare word taken as a string
// (`gpipe` for `"gpipe"`). "null" removes an optional field (parallel.bucket_mb, model.moe).
// Two paths do more than store a value, as a person choosing them means:
//   model.preset=NAME     the preset's architecture replaces the model's fields;
//   cluster.preset=NAME   the nodes and links become the preset's, as many nodes as before;
//   cluster.node_count=N  N nodes: a preset cluster is expanded again, hand-built nodes are
//                         copied from the last one (hosts node<i>) or cut from the end.
// Fails, naming the path, for an unknown path or a value the loader refuses; semantic problems
// (tp not dividing heads) are left to validatePlan(), so such a plan can still be edited.
Result<Plan> withPlanField(const Plan &plan, const std::string &path, const std::string &value);

// Whether a plan can have a field at `path` (list indices allowed anywhere a list is).
bool isPlanFieldPath(const std::string &path);

// Every leaf field of the plan, in document order ("cluster.nodes[0].host", ...).
std::vector<std::string> planFieldPaths(const Plan &plan);

struct FieldDifference {
    std::string path;
    std::string before; // JSON text; "null" where `a` leaves the field out
    std::string after;
    bool operator==(const FieldDifference &) const = default;
};
// The leaf fields whose values differ, in document order.
std::vector<FieldDifference> planDifferences(const Plan &a, const Plan &b);

} // namespace trellis::plan
