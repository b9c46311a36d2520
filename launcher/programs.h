// Where Trellis's own programs are, for the processes that start them: trellis-cli (the supervisor,
// the job keeper, slurm-job) beside the running program, unless $TRELLIS_CLI names another.
#pragma once

#include <QString>

namespace trellis::launcher {

// trellis-cli beside this program, or $TRELLIS_CLI.
QString supervisorProgram();

} // namespace trellis::launcher
