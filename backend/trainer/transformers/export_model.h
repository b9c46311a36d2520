// The newest complete checkpoint under a checkpoint folder (any dp, tp, pp, cp, ep and ZeRO stage
// wrote it: its shards hold whole-model ranges) gathered into one model and written in Hugging
// Face transformers' layout (hf_layout.h). Needs no MPI: one process reads every shard. The
// tensors are written in the type the run trained in (meta.json's precision: a bf16 run's
// fp32 masters rounded to bf16 — the weights its model computed with), or in `dtype`.
#pragma once

#include <cstdint>
#include <string>

namespace trellis::trainer {

struct ExportResult {
    std::string error;      // "" when written
    std::string checkpoint; // the checkpoint folder read
    std::uint64_t step = 0;
    std::string arch;
    std::uint64_t parameters = 0;
    std::string dtype; // "fp32", "bf16" or "fp16"
};

// dtype: "" (the checkpoint's precision), "fp32", "bf16" or "fp16".
ExportResult exportCheckpointModel(const std::string &checkpointDir, const std::string &outDir, const std::string &dtype = {});

} // namespace trellis::trainer
