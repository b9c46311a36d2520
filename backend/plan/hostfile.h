// Hostfiles: the nodes of cluster.nodes as a text file, a host a line, in Open MPI's form with the
// ssh target's per-node fields beside `slots`:
//   # comments and blank lines are skipped
//   node1 slots=8
//   alice@node2:2222 slots=8 identity=~/.ssh/id_ed25519 remote_dir=/scratch/trellis device=cuda gpu=H100
// Fields: slots (required), max_slots (Open MPI's, accepted and ignored), user, port, identity,
// remote_dir, device (cpu | cuda), gpu. "user@" and ":port" on the host are the same as user= and
// port=. A host listed twice, an unknown field or a bad value is an error naming the line.
// Plans name one with cluster.hostfile (relative to the plan's folder); `trellis-cli run` and
// `preflight` take --hostfile FILE.
#pragma once

#include "backend/plan/plan.h"
#include "backend/plan/result.h"

#include <string>
#include <vector>

namespace trellis::plan {

struct HostfileNode {
    NodeSpec node;
    bool deviceGiven = false; // device= was on the line (else a preset's device applies)
};

Result<std::vector<HostfileNode>> parseHostfile(const std::string &text, const std::string &sourceName);
Result<std::vector<HostfileNode>> readHostfile(const std::string &path);

// The plan's nodes from `path`: the hosts replaced, a device not given taken from the plan's
// first node. "" or why not (naming the file and line).
std::string applyHostfile(Plan &plan, const std::string &path);

} // namespace trellis::plan
