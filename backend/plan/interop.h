// Interoperability with the two configurations ML engineers already have: a DeepSpeed config
// JSON and a Megatron-LM argument line. Reading fills a plan from them (what they do not say —
// model, cluster, data — comes from a base plan); writing turns a plan back into either. Fields
// that map survive a round trip; keys and flags that do not map are reported as warnings naming
// them; wrong values are errors naming the key or flag.
#pragma once

#include "plan/plan.h"
#include "plan/result.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace trellis::plan {

// DeepSpeed: train_batch_size / train_micro_batch_size_per_gpu / gradient_accumulation_steps
// (any two determine the third with dp from the base), zero_optimization.{stage,
// reduce_bucket_size (elements; bucket_mb = elements × 4 bytes / MiB), overlap_comm},
// bf16/fp16.enabled, gradient_clipping, optimizer {type Adam/AdamW, params lr, betas, eps,
// weight_decay}, scheduler WarmupLR/WarmupDecayLR/WarmupCosineLR {warmup_num_steps,
// total_num_steps, warmup_min_lr, warmup_max_lr}, activation_checkpointing (present: full
// recompute).
Result<Plan> fromDeepSpeedConfig(const nlohmann::json &config, const Plan &base, Diagnostics *warnings = nullptr);
nlohmann::json toDeepSpeedConfig(const Plan &plan);

// Megatron-LM: --tensor-model-parallel-size, --pipeline-model-parallel-size,
// --context-parallel-size, --expert-model-parallel-size, --num-layers-per-virtual-pipeline-stage,
// --sequence-parallel, --micro-batch-size, --global-batch-size, --num-layers, --hidden-size,
// --num-attention-heads, --num-query-groups, --ffn-hidden-size, --seq-length, --vocab-size, --lr,
// --min-lr, --lr-warmup-iters, --train-iters, --weight-decay, --adam-beta1/2, --adam-eps,
// --clip-grad, --seed, --bf16/--fp16, --recompute-granularity full|selective,
// --use-distributed-optimizer (ZeRO-1), --num-experts, --moe-router-topk, --overlap-grad-reduce,
// --save-interval, --save. dp = slots of the base cluster / (tp·pp·cp).
Result<Plan> fromMegatronArgs(std::string_view argLine, const Plan &base, Diagnostics *warnings = nullptr);
std::string toMegatronArgs(const Plan &plan);

} // namespace trellis::plan
