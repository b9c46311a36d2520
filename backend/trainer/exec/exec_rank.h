// `trellis-trainer --exec`: one rank of a job that runs its own trainer (plan section `trainer`,
// docs/pytorch.md). Started by mpirun (or srun) as every rank, it sets what torchrun would set —
// RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT — from the launcher's
// own variables, adds the Trellis telemetry variables and the plan's environment, changes to the
// job's folder and replaces itself with the command (execvp: no shell, no child, the command keeps
// this process's pid, so mpirun's signals reach it). It never initialises MPI.
#pragma once

namespace trellis::trainer {

// argv[0] is "--exec"; the command follows "--". Returns only on failure, with an exit code
// (protocol/exit_codes.h: 2 usage, 126 not executable, 127 not found).
int execRank(int argc, char **argv);

} // namespace trellis::trainer
