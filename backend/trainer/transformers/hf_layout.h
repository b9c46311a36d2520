// A whole model (the tp = 1, ep = 1 layout of GptModel) in Hugging Face transformers' layout:
// GPT2LMHeadModel for the gpt architecture (Conv1D weights stored [in, out], so every linear is
// transposed; q, k, v side by side in c_attn; the head tied to wte, not stored), LlamaForCausalLM
// for llama (q/k/v/o, gate/up/down projections as nn.Linear [out, in], RMSNorm gains, an untied
// lm_head; rotary embeddings are the rotate-half convention transformers uses, so the weights
// carry over unpermuted). A directory holds model.safetensors and config.json, as
// `save_pretrained(..., safe_serialization=True)` writes them and `from_pretrained` reads them.
// Mixtures of experts have no layout here yet (refused by name).
#pragma once

#include "backend/trainer/model/gpt_model.h"

#include <string>
#include <vector>

namespace trellis::trainer {

// Writes DIR/model.safetensors and DIR/config.json (DIR is created). `note` goes into the
// safetensors metadata (where the weights came from). dtype: the tensors' type in the file, "F32",
// "BF16" or "F16" (rounded to nearest even), and config.json's torch_dtype ("float32",
// "bfloat16", "float16"), so transformers loads them in that type. Returns "" or the reason.
std::string exportHuggingFace(const GptConfig &config, const std::vector<float> &whole, const std::string &dir,
                              const std::string &note, const std::string &dtype = "F32");

// Only the tensors file (any whole-model vector: parameters or gradients), at `path`.
std::string writeHuggingFaceTensors(const GptConfig &config, const std::vector<float> &whole, const std::string &path,
                                    const std::string &note, const std::string &dtype = "F32");

// Reads DIR/model.safetensors into `whole` (the layout `config` gives), after checking
// DIR/config.json (when present) against `config`. Every tensor the model needs must be there with
// its shape; unknown tensors are refused too. gpt: a longer position table (n_positions >
// seq_len) contributes its first seq_len rows. Returns "" or the reason naming the file, the
// tensor or the config key.
std::string importHuggingFace(const GptConfig &config, const std::string &dir, std::vector<float> &whole);

} // namespace trellis::trainer
