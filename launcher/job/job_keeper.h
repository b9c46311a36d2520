// The job keeper: the process between a run's supervisor and mpirun, so the job outlives a
// supervisor that dies and a new one can adopt it. `trellis-cli job-keeper DIR -- PROGRAM ARGS`
// runs PROGRAM with its stdout and stderr copied both to this process's own (the supervisor reads
// them) and to DIR/job.out and DIR/job.err (an adopting supervisor reads those), forwards SIGTERM,
// SIGINT and SIGHUP to it, and when it ends writes DIR/job.status ("exit N" or "signal N")
// atomically and ends the same way. A supervisor gone (its pipe closed) changes nothing for the
// job. No shell is involved: PROGRAM and ARGS go to execvp as they are.
#pragma once

#include <QString>
#include <QStringList>

namespace trellis::launcher {

int runJobKeeper(const QStringList &args); // args after "job-keeper"

struct JobStatus {
    bool known = false;  // DIR/job.status exists and parses
    bool signalled = false;
    int code = 0;        // exit code, or the signal number
};
JobStatus readJobStatus(const QString &runDir);

} // namespace trellis::launcher
