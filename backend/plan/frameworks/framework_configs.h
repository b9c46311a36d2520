// Interoperability with the two configurations ML engineers already have: a DeepSpeed config JSON
// and a Megatron-LM argument line. Reading fills a plan from them; writing turns a plan back into
// either. Every field that maps survives plan -> config -> plan.
//
// What the foreign configuration does not govern comes from a base plan: the cluster and the
// data always; the model for DeepSpeed (for Megatron-LM, model flags on the line replace the
// base's model fields and clear model.preset); dp for DeepSpeed (for Megatron-LM it is derived:
// world / (tp·pp·cp), the world being the base cluster's slots, or the base plan's ranks when the
// base has no cluster).
//
// Defaults. A setting the foreign tool reads with a default of its own takes that default when it
// is absent, so the plan describes the run the tool would make: DeepSpeed without
// zero_optimization is ZeRO stage 0, without bf16/fp16 fp32, without gradient_clipping
// unclipped; a Megatron line without --use-distributed-optimizer has no optimizer sharding, and
// absent parallel sizes are 1. What the tool leaves to the training script keeps the base's value
// (DeepSpeed's optimizer and scheduler when their sections are absent, activation checkpointing,
// the seed; training hyper-parameters a Megatron line leaves out).
//
// Diagnostics name the source document in their path ("deepspeed", "megatron") and the key or flag
// at the start of the message, e.g.
//   deepspeed: zero_optimization.stage: expected an integer 0-3, got "two"
//   megatron: --tensor-model-parallel-size: expected a positive integer, got 'x'
// Keys and flags Trellis does not use are warnings ("deepspeed: wall_clock_breakdown is not
// used"), as are settings that map only approximately (a logarithmic warm-up, a linear decay);
// they go to `warnings` when given, whether or not reading succeeds. Wrong types and values,
// inconsistent batch sizes and layouts that do not divide the world are errors.
//
// What does not survive a round trip: DeepSpeed has no selective recompute (not written; reading
// keeps the base's recompute when activation_checkpointing is absent); Megatron-LM has no ZeRO-2/3
// (written as --use-distributed-optimizer, read back as ZeRO-1) and no gpipe/zb-h1 schedules
// (written as its 1F1B); bucket_mb is written to the nearest whole element and min_lr as a ratio
// of lr (equal to round-off).
#pragma once

#include "backend/plan/plan.h"
#include "backend/plan/result.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace trellis::plan {

// DeepSpeed -> plan.
//   train_micro_batch_size_per_gpu     parallel.micro_batch_size
//   gradient_accumulation_steps        parallel.micro_batches
//   train_batch_size                   checked: = micro × accumulation × dp (dp from the base);
//                                      with two of the three the third is derived, with one the
//                                      accumulation is 1 (DeepSpeed's rule)
//   zero_optimization.stage            parallel.zero (default 0)
//   zero_optimization.overlap_comm     parallel.overlap_grad_reduce (default: stage == 3)
//   zero_optimization.reduce_bucket_size  parallel.bucket_mb = elements × 4 bytes / 2^20, at most
//                                      the model's fp32 gradients (a larger bucket is one bucket)
//   bf16.enabled / fp16.enabled        parallel.precision (neither: fp32; both: error)
//   gradient_clipping                  training.grad_clip (default 0: no clipping)
//   optimizer {type Adam|AdamW, params lr, betas, eps, weight_decay}   training.*
//   scheduler WarmupLR                 lr = warmup_max_lr, min_lr = lr (constant after warm-up)
//   scheduler WarmupDecayLR            lr = warmup_max_lr, steps = total_num_steps, min_lr = 0
//                                      (linear decay read as cosine: warning)
//   scheduler WarmupCosineLR           steps = total_num_steps, min_lr = lr × cos_min_ratio
//   scheduler params warmup_num_steps  training.warmup_steps (DeepSpeed's default: 1000)
//   activation_checkpointing present   parallel.recompute = full
// "auto" values (Hugging Face Trainer placeholders) take the base plan's value, with a warning.
Result<Plan> fromDeepSpeedConfig(const nlohmann::json &config, const Plan &base, Diagnostics *warnings = nullptr);

// Plan -> DeepSpeed config with every mapped key written explicitly (scheduler WarmupCosineLR
// with a linear warm-up, optimizer AdamW).
nlohmann::json toDeepSpeedConfig(const Plan &plan);

// Megatron-LM -> plan. The line is split like a POSIX shell (blanks, '…' and "…" quotes, backslash
// escapes, backslash-newline continuation, # comments); the launch command before the flags
// (torchrun …, python pretrain_gpt.py) is skipped. Flags are `--flag value` or `--flag=value`.
//   --tensor-/--pipeline-/--context-/--expert-model-parallel-size   tp, pp, cp, ep (default 1)
//   --num-layers-per-virtual-pipeline-stage N   virtual_stages = layers / pp / N
//   --virtual-pipeline-model-parallel-size V, --num-virtual-stages-per-pipeline-rank V
//                                      virtual_stages = V; schedule interleaved-1f1b when > 1,
//                                      else 1f1b
//   --sequence-parallel, --use-distributed-optimizer (ZeRO-1), --overlap-grad-reduce   switches
//   --micro-batch-size, --global-batch-size   micro_batch_size, micro_batches = global /
//                                      (micro × dp); without --global-batch-size one micro-batch
//   --num-layers, --hidden-size, --num-attention-heads, --group-query-attention +
//   --num-query-groups, --ffn-hidden-size (default 4 × hidden), --seq-length,
//   --max-position-embeddings, --vocab-size (padded as Megatron pads it, to a multiple of
//   --make-vocab-size-divisible-by (128) × tp), --num-experts, --moe-router-topk (default 2)
//   --lr, --min-lr, --lr-warmup-iters | --lr-warmup-fraction, --train-iters, --lr-decay-style,
//   --weight-decay, --adam-beta1/2, --adam-eps, --clip-grad, --seed   training.*
//   --bf16 | --fp16                    precision
//   --recompute-granularity full|selective, --recompute-activations (selective),
//   --recompute-method, --recompute-num-layers   recompute
//   --save-interval, --save, --load    training.checkpoint.every / dir
Result<Plan> fromMegatronArgs(std::string_view argLine, const Plan &base, Diagnostics *warnings = nullptr);

// Plan -> one Megatron-LM argument line (no program name), flags always in the same order:
// layout, model, batch, precision and recompute, optimizer and schedule, checkpoints.
std::string toMegatronArgs(const Plan &plan);

// The words a POSIX shell would pass for `line` (no expansions): what fromMegatronArgs reads.
// An unterminated quote is an error ("unterminated ' quote").
Result<std::vector<std::string>> splitShellWords(std::string_view line);

} // namespace trellis::plan
