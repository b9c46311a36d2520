// The rank's side of joining a collector (docs/collector.md): a job Trellis did not launch carries
// TRELLIS_COLLECTOR (tcp://HOST:PORT) and TRELLIS_COLLECTOR_KEYS (a 0600 key file with
// server_public, client_public, client_secret); each rank asks the collector once, at start, which
// run it belongs to and where its telemetry goes (proto Join / JoinReply over CURVE), and then
// reports as a launched rank does. The job's identity comes from the environment its launcher set.
// Threading: any thread; joinCollector blocks at most its timeout (the training has not begun).
#pragma once

#include "backend/protocol/curve_keys.h"
#include "backend/protocol/telemetry.pb.h"

#include <functional>
#include <string>

namespace trellis::proto {

// Reads the environment through `env` (getenv by default; tests pass their own).
using EnvironmentReader = std::function<const char *(const char *)>;

// The job's identity as its launcher left it in the environment:
//   job_name  TRELLIS_JOB_NAME, else SLURM_JOB_NAME, else `fallbackName`;
//   job_id    TRELLIS_JOB_ID; else SLURM_JOB_ID (slurm); else TORCHELASTIC_RUN_ID unless "none"
//             (torchrun); else MASTER_ADDR:MASTER_PORT (torchrun without a rendezvous id);
//             else PMIX_NAMESPACE or OMPI_MCA_ess_base_jobid (mpirun); else "" — then a job of
//             more than one rank cannot be told from another of its name, and the collector
//             refuses it (set TRELLIS_JOB_ID, the same on every rank);
//   attempt   TRELLIS_RESTART_COUNT, SLURM_RESTART_COUNT or TORCHELASTIC_RESTART_COUNT, else 0.
// rank, world_size, host, pid, command and client are the caller's.
Join joinFromEnvironment(const std::string &fallbackName, const EnvironmentReader &env = {});

struct JoinResult {
    std::string runId, endpoint;
    CurveKeys keys;     // what the telemetry connection uses (the rank's side of the key file)
    std::string error;  // non-empty: no telemetry for this rank, and why
};

// TRELLIS_COLLECTOR and TRELLIS_COLLECTOR_KEYS from `env`; false when the first is unset (the
// job is not meant to report anywhere).
bool collectorRequested(const EnvironmentReader &env = {});

// Asks the collector named by TRELLIS_COLLECTOR, with the keys of TRELLIS_COLLECTOR_KEYS, for the
// run of `join`; waits at most `timeoutMs`. Every failure (no key file, a key file others can
// read, no answer, refused) is a JoinResult with `error` naming it.
JoinResult joinCollector(const Join &join, int timeoutMs = 5000, const EnvironmentReader &env = {});

} // namespace trellis::proto
