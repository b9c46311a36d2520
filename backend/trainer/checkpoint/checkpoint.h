// Checkpoints: <dir>/step-NNNNNNNN/ holds one shard per rank (rank-NNNNN.bin: the parameters
// (all of them on rank 0, or with ZeRO-3 those of the ranges each rank owns), the Adam moments of
// the ranges the rank owns, the Adam step) and meta.json, written
// last. Every rank writes into step-NNNNNNNN.partial/; after a barrier rank 0 writes meta.json
// through a temporary file and renames the directory into place, so a checkpoint either is
// complete or is ignored, and an existing complete one is never overwritten by a failed save.
// Shards record the parameter ranges they hold, so a checkpoint written at one DP degree and
// ZeRO stage loads at another: each rank picks the ranges it now owns (resharding). Parameters and
// moments are fp32 whatever the run's precision (mixed precision saves its master weights; the
// 16-bit compute copies are remade from them), so a run resumes in another precision too; meta.json
// names the precision it was written in and fp16's loss-scaler state. With local updates
// (parallel.dp_sync) every replica writes (format version 2 shards: the replica, the outer
// counters, the anchor and momentum of its ranges) and meta.json names the mode and replicas;
// a rank's own opaque state (PowerSGD's) is the end of a version 2 shard too.
#pragma once

#include "backend/plan/plan.h"
#include "backend/plan/result.h"
#include "backend/trainer/checkpoint/shard_format.h"
#include "backend/trainer/comm/communicator.h"

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace trellis::trainer {

inline constexpr const char *kCheckpointFormat = "trellis.checkpoint/1";

// A checkpoint's folder name (step-NNNNNNNN) and a rank's shard's file name in it (rank-NNNNN.bin).
std::string stepDirName(std::uint64_t step);
std::string shardName(int rank);
// A whole file into `out`; false when it cannot be read.
bool readFile(const std::filesystem::path &path, std::string &out);
// The same, "" when it cannot be read.
std::string readFile(const std::filesystem::path &path);
// Writes and fsyncs; a failure leaves no file behind. mode: the new file's permissions (less the
// umask).
bool writeDurably(const std::filesystem::path &path, const std::string &bytes, mode_t mode = 0644);

// A save in two halves, so that training can go on while the shards are written
// (training.checkpoint.mode async). begin(), at a step boundary, is collective over `world`: rank 0
// makes the step's partial folder and every rank learns it could; then this rank's shard is
// serialised from staging() and written — on a thread of its own (background) or before begin()
// returns. The caller fills staging() before begin() and leaves it alone until finish(); its
// buffers are kept between saves. finish() is collective too: each rank waits for its own write,
// the ranks agree that every shard was written, and rank 0 writes meta.json and renames the folder
// into place, so a checkpoint is complete or ignored (sync: finish() right after begin()). The background
// thread only writes files, never takes part in a collective.
//
// The copy into staging() may itself run on the writing thread (`stage`, given to begin()): it
// reads the live parameters and moments while the next step's forward and backward run (which
// only read them), and waitStaged() — called before anything changes them, the optimizer's update
// — returns once it has. So the step boundary holds no copy at all; a copy slower than forward and
// backward together is waited for there, and that wait is the save's blocking time too. (The
// snapshot overlapped with the next iteration, as CheckFreq does it.)
class CheckpointWriter {
public:
    // privateFiles: folders 0700 and files 0600 (a memory store's), else as the umask leaves 0644.
    explicit CheckpointWriter(bool background, bool privateFiles = false);
    ~CheckpointWriter();
    CheckpointWriter(const CheckpointWriter &) = delete;
    CheckpointWriter &operator=(const CheckpointWriter &) = delete;

    TrainingState &staging() { return m_staging; }
    // A folder of every node's own (a memory store, on several nodes): each node's first rank
    // (`leader`) makes the partial folder there and puts it in place — meta.json listing every
    // rank's shard, the node's own shards beside it — where otherwise rank 0 alone does.
    void placeOnEveryNode(bool leader)
    {
        m_perNode = true;
        m_leader = leader;
    }
    // "" or why the partial folder could not be made (then nothing is pending, and `stage` is
    // not run). `stage` (may be empty: staging() is filled already) fills staging() first, on the
    // writing thread in the background. stagingMs: what filling the staging buffers took the
    // training thread before (counted in the save's blocking time).
    std::string begin(HostCommunicator &world, const std::string &dir, const plan::Plan &plan, std::uint64_t parameterCount,
                      int keep, std::function<void()> stage = {}, double stagingMs = 0);
    // Blocks until the pending save's `stage` has run (at once when there is none or it has);
    // returns the milliseconds waited. The live state may change only after this.
    double waitStaged();
    bool pending() const { return m_pending; }
    // When the pending save began (steady clock).
    std::chrono::steady_clock::time_point begunAt() const { return m_begunAt; }
    std::uint64_t pendingStep() const { return m_step; }

    struct Outcome {
        bool landed = false;    // every rank's write ended (well or not): the save is no longer pending
        std::string error;      // "" when the shards were written (completed(): and the folder is in place)
        std::uint64_t step = 0; // the step it saved
        std::uint64_t dueStep = 0; // the save due that made land() wait (0: none), for its event
        double blockedMs = 0;   // the staging buffers, begin(): the partial folder, and the whole write when not in the background
        double stagedWaitMs = 0; // waitStaged(): training held for the copy into the staging buffers
        double writeMs = 0;     // the copy (when staged behind), the shard's serialisation and durable write
        double waitedMs = 0;    // finish() waiting for this rank's write to end
        std::uint64_t bytes = 0; // this rank's shard
    };
    // Collective over `world` (call only while pending): every rank's write state in one gather.
    // When every write has ended — `wait`: after this rank's own has — the save lands (landed):
    // the figures, or `error` when a shard was not written (the caller discards the save). Rank 0
    // then puts the folder in place (meta.json written last, renamed, the old ones removed): on a
    // thread of its own in the background, at once when `now` or not in the background; it says
    // so through completed(). Before every write has ended: nothing (landed false).
    Outcome land(HostCommunicator &world, bool wait, bool now = false, std::uint64_t dueStep = 0);
    // Rank 0: a landed save whose folder is in place now (or could not be put in place: error),
    // each once, oldest first; nullopt while one is still being put in place (`wait`: waited for)
    // or when none is left to say.
    std::optional<Outcome> completed(bool wait);
    // land(wait) and completed(wait) together: every rank's save in flight landed and in place.
    Outcome finish(HostCommunicator &world);
    // After a failed save (collective): rank 0 removes what it left, the partial folder.
    void discard(HostCommunicator &world);

private:
    void writeShard();

    bool maker() const { return m_perNode ? m_leader : m_rank == 0; } // makes and completes the folder
    bool m_background;
    bool m_privateFiles;
    bool m_perNode = false, m_leader = false;
    TrainingState m_staging;
    std::string m_shard; // the serialised shard, its buffer kept between saves (the writing thread's)
    std::thread m_thread;
    bool m_pending = false;
    std::filesystem::path m_root, m_partialDir;
    const plan::Plan *m_plan = nullptr;
    std::uint64_t m_parameterCount = 0, m_step = 0;
    int m_keep = 2, m_rank = 0, m_worldSize = 1;
    std::chrono::steady_clock::time_point m_begunAt{};
    std::atomic<bool> m_done{false}; // the writing thread's work has ended (read while it runs)
    std::function<void()> m_stage;   // the pending save's copy into staging(), run before the shard
    double m_stagingMs = 0;
    // Rank 0: landed saves being put in place (m_completer, m_putting) and put in place, not yet said.
    std::thread m_completer;
    std::atomic<bool> m_completerDone{false};
    Outcome m_putting;
    std::vector<Outcome> m_put;
    void joinCompleter();
    std::mutex m_stageMutex;
    std::condition_variable m_stageDone;
    bool m_staged = true; // m_stage has run (guarded by m_stageMutex)
    double m_stagedWaitMs = 0;
    // Written by the writing thread, read after it is joined.
    bool m_written = false;
    std::uint64_t m_bytes = 0, m_checksum = 0;
    double m_writeMs = 0, m_blockedMs = 0;
};

struct LoadResult {
    bool found = false;          // false: no usable checkpoint (start fresh)
    std::string error;           // fatal: a checkpoint exists but cannot be used with this plan
    std::vector<std::string> skipped; // incomplete or corrupt checkpoints passed over, with reasons
    std::string path;            // the checkpoint loaded
    int source = -1;             // the index of the folder it was found in (several: loadCheckpoint's dirs)
};

// Loads the newest complete checkpoint whose checksums verify. Fills `state` for `owned` ranges
// (moments assembled from whichever shards hold them). Errors name the file and the field.
// replica: with local updates the dp rank whose own state to load (a local-update checkpoint
// resumes at the same dp degree and mode only: each replica takes its own shards back, any tp/pp
// layout); -1 for every-step training. A local-update run may start from an every-step
// checkpoint: its replicas begin equal, the outer state fresh (state.replica stays -1).
LoadResult loadCheckpoint(const std::string &dir, const plan::Plan &plan, std::uint64_t parameterCount,
                          const std::vector<ParamRange> &owned, TrainingState &state, int replica = -1, int rank = -1);
// The same over several folders (a memory store, then the checkpoint folder): the newest
// complete checkpoint of any, the earlier folder's at the same step; one that fails its checks is
// skipped (named) for the next, whichever folder holds it.
LoadResult loadCheckpoint(const std::vector<std::string> &dirs, const plan::Plan &plan, std::uint64_t parameterCount,
                          const std::vector<ParamRange> &owned, TrainingState &state, int replica = -1, int rank = -1);

} // namespace trellis::trainer
