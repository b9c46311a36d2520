// trellis-trainer exit codes: the one place they are defined. The trainer exits with them, the
// launcher maps them (and mpirun's own codes) to a failure reason shown to the user.
#pragma once

namespace trellis::proto {

enum ExitCode : int {
    kExitOk = 0,
    kExitUsage = 2,          // bad command line
    kExitPlanInvalid = 3,    // plan file unreadable or invalid
    kExitUnsupported = 4,    // valid plan asking for something this trainer cannot run
    kExitWorldMismatch = 5,  // MPI world size differs from dp·tp·pp·cp
    kExitDataError = 6,      // training data missing, unreadable or too short
    kExitNonFinite = 7,      // loss or gradient became NaN/inf
    kExitMpiError = 8,       // an MPI call failed
    kExitIoError = 9,        // writing an output file failed
    kExitCheckpointError = 10, // a checkpoint exists but does not fit the plan, or saving failed
    kExitOutOfMemory = 11,   // an allocation failed
    kExitInternalError = 12, // any other exception: a bug in the trainer, reported with its message
    kExitDeviceError = 13,   // the plan's GPU is missing, or a CUDA call failed (rank, device, call named)
    kExitInjectedCrash = 70, // --inject crash@rank:step
    kExitCommandNotExecutable = 126, // own_trainer.command: the program exists but cannot be run
    kExitCommandNotFound = 127,      // own_trainer.command: no such program (or its folder is missing)
};

// Human-readable meaning of an exit code; codes above 128 are "killed by signal N-128".
inline const char *describeExitCode(int code)
{
    switch (code) {
    case kExitOk: return "completed";
    case kExitUsage: return "bad trainer command line";
    case kExitPlanInvalid: return "plan file invalid";
    case kExitUnsupported: return "plan asks for a feature the trainer does not support";
    case kExitWorldMismatch: return "MPI world size does not match the plan";
    case kExitDataError: return "training data error";
    case kExitNonFinite: return "loss became NaN or infinite";
    case kExitMpiError: return "MPI error";
    case kExitIoError: return "output file could not be written";
    case kExitCheckpointError: return "checkpoint error";
    case kExitOutOfMemory: return "out of memory";
    case kExitInternalError: return "internal trainer error";
    case kExitDeviceError: return "GPU missing or CUDA error";
    case kExitInjectedCrash: return "injected crash (fault injection)";
    case kExitCommandNotExecutable: return "the command cannot be executed";
    case kExitCommandNotFound: return "the command was not found";
    case 134: return "aborted (SIGABRT)";
    case 137: return "killed (SIGKILL)";
    case 139: return "segmentation fault (SIGSEGV)";
    case 143: return "terminated (SIGTERM)";
    default: return code > 128 ? "killed by a signal" : "failed";
    }
}

} // namespace trellis::proto
