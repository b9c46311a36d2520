// See hf_layout.h.
#include "backend/trainer/transformers/hf_layout.h"

#include "backend/trainer/transformers/safetensors.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>

namespace trellis::trainer {
namespace {

namespace fs = std::filesystem;

// One Hugging Face tensor and where its elements live in the whole model's flat vector: element
// (i, j) of the [rows, cols] HF tensor is whole[base + i·rowStride + j·colStride] (a transpose
// swaps the strides); `rows` may stop short of a longer HF tensor (gpt's position table).
struct Mapping {
    std::string name;
    std::int64_t rows = 0, cols = 0; // cols 0: a vector
    std::size_t base = 0, rowStride = 0, colStride = 1;
};

std::vector<Mapping> mappingsOf(const GptConfig &c)
{
    const GptModel<float> layout(c, false);
    std::map<std::string, const ParamTensor *> ours;
    for (const ParamTensor &t : layout.tensors())
        ours[t.name] = &t;
    auto at = [&](const std::string &name) { return ours.at(name)->offset; };
    const std::int64_t C = c.hidden, F = c.ffn, V = c.vocab, T = c.maxSeqLen;
    const std::int64_t KV = (c.kvHeads > 0 ? c.kvHeads : c.heads) * (C / c.heads);
    const auto Cz = static_cast<std::size_t>(C);
    std::vector<Mapping> out;
    auto matrix = [&](const std::string &hf, std::size_t base, std::int64_t rows, std::int64_t cols) { // same [out, in]
        out.push_back({hf, rows, cols, base, static_cast<std::size_t>(cols), 1});
    };
    auto transposed = [&](const std::string &hf, std::size_t base, std::int64_t ourRows, std::int64_t ourCols) {
        out.push_back({hf, ourCols, ourRows, base, 1, static_cast<std::size_t>(ourCols)}); // HF [in, out]
    };
    auto vec = [&](const std::string &hf, std::size_t base, std::int64_t n) { out.push_back({hf, n, 0, base, 1, 0}); };
    if (!c.llama) {
        matrix("transformer.wte.weight", at("wte"), V, C);
        matrix("transformer.wpe.weight", at("wpe"), T, C);
        for (int l = 0; l < c.layers; ++l) {
            const std::string p = "h" + std::to_string(l) + ".", h = "transformer.h." + std::to_string(l) + ".";
            vec(h + "ln_1.weight", at(p + "ln1.weight"), C);
            vec(h + "ln_1.bias", at(p + "ln1.bias"), C);
            transposed(h + "attn.c_attn.weight", at(p + "attn.qkv.weight"), 3 * C, C);
            vec(h + "attn.c_attn.bias", at(p + "attn.qkv.bias"), 3 * C);
            transposed(h + "attn.c_proj.weight", at(p + "attn.proj.weight"), C, C);
            vec(h + "attn.c_proj.bias", at(p + "attn.proj.bias"), C);
            vec(h + "ln_2.weight", at(p + "ln2.weight"), C);
            vec(h + "ln_2.bias", at(p + "ln2.bias"), C);
            transposed(h + "mlp.c_fc.weight", at(p + "mlp.fc.weight"), F, C);
            vec(h + "mlp.c_fc.bias", at(p + "mlp.fc.bias"), F);
            transposed(h + "mlp.c_proj.weight", at(p + "mlp.proj.weight"), C, F);
            vec(h + "mlp.c_proj.bias", at(p + "mlp.proj.bias"), C);
        }
        vec("transformer.ln_f.weight", at("lnf.weight"), C);
        vec("transformer.ln_f.bias", at("lnf.bias"), C);
        return out;
    }
    matrix("model.embed_tokens.weight", at("wte"), V, C);
    for (int l = 0; l < c.layers; ++l) {
        const std::string p = "h" + std::to_string(l) + ".", h = "model.layers." + std::to_string(l) + ".";
        vec(h + "input_layernorm.weight", at(p + "ln1.weight"), C);
        const std::size_t qkv = at(p + "attn.qkv.weight");
        matrix(h + "self_attn.q_proj.weight", qkv, C, C);
        matrix(h + "self_attn.k_proj.weight", qkv + Cz * Cz, KV, C);
        matrix(h + "self_attn.v_proj.weight", qkv + (Cz + static_cast<std::size_t>(KV)) * Cz, KV, C);
        matrix(h + "self_attn.o_proj.weight", at(p + "attn.proj.weight"), C, C);
        vec(h + "post_attention_layernorm.weight", at(p + "ln2.weight"), C);
        const std::size_t fc = at(p + "mlp.fc.weight");
        matrix(h + "mlp.gate_proj.weight", fc, F, C);
        matrix(h + "mlp.up_proj.weight", fc + static_cast<std::size_t>(F) * Cz, F, C);
        matrix(h + "mlp.down_proj.weight", at(p + "mlp.proj.weight"), C, F);
    }
    vec("model.norm.weight", at("lnf.weight"), C);
    matrix("lm_head.weight", at("lm_head.weight"), V, C);
    return out;
}

std::vector<std::int64_t> shapeOf(const Mapping &m)
{
    return m.cols == 0 ? std::vector<std::int64_t>{m.rows} : std::vector<std::int64_t>{m.rows, m.cols};
}

std::string shapeText(const std::vector<std::int64_t> &shape)
{
    std::string s = "[";
    for (std::size_t i = 0; i < shape.size(); ++i)
        s += (i ? ", " : "") + std::to_string(shape[i]);
    return s + "]";
}

const char *torchDtypeOf(const std::string &dtype)
{
    return dtype == "BF16" ? "bfloat16" : dtype == "F16" ? "float16" : "float32";
}

nlohmann::json configOf(const GptConfig &c, const std::string &dtype)
{
    if (!c.llama)
        return {{"architectures", {"GPT2LMHeadModel"}}, {"model_type", "gpt2"},          {"vocab_size", c.vocab},
                {"n_positions", c.maxSeqLen},          {"n_ctx", c.maxSeqLen},           {"n_embd", c.hidden},
                {"n_layer", c.layers},                 {"n_head", c.heads},              {"n_inner", c.ffn},
                {"activation_function", "gelu_new"},   {"layer_norm_epsilon", 1e-5},     {"resid_pdrop", 0.0},
                {"embd_pdrop", 0.0},                   {"attn_pdrop", 0.0},              {"scale_attn_weights", true},
                {"tie_word_embeddings", true},         {"torch_dtype", torchDtypeOf(dtype)}};
    return {{"architectures", {"LlamaForCausalLM"}},
            {"model_type", "llama"},
            {"vocab_size", c.vocab},
            {"hidden_size", c.hidden},
            {"intermediate_size", c.ffn},
            {"num_hidden_layers", c.layers},
            {"num_attention_heads", c.heads},
            {"num_key_value_heads", c.kvHeads > 0 ? c.kvHeads : c.heads},
            {"max_position_embeddings", c.maxSeqLen},
            {"rms_norm_eps", 1e-5},
            {"rope_theta", c.ropeTheta},
            {"hidden_act", "silu"},
            {"attention_bias", false},
            {"tie_word_embeddings", false},
            {"torch_dtype", torchDtypeOf(dtype)}};
}

std::string checkConfig(const GptConfig &c, const std::string &path)
{
    std::ifstream in(path);
    if (!in)
        return {}; // optional: the tensors' shapes are checked anyway
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(in);
    } catch (const std::exception &) {
        return path + ": not valid JSON";
    }
    if (!j.is_object())
        return path + ": not a JSON object";
    const std::string type = j.value("model_type", std::string());
    const std::string want = c.llama ? "llama" : "gpt2";
    if (type != want)
        return path + ": model_type is '" + type + "' but the plan's model.arch needs '" + want + "'";
    auto integer = [&](const char *key, long long expected, const char *field) -> std::string {
        if (!j.contains(key) || j[key].is_null())
            return {};
        if (!j[key].is_number_integer() || j[key].get<long long>() != expected)
            return path + ": " + key + " is " + j[key].dump() + " but the plan's " + field + " is " + std::to_string(expected);
        return {};
    };
    auto number = [&](const char *key, double expected) -> std::string {
        if (!j.contains(key) || j[key].is_null())
            return {};
        if (!j[key].is_number() || std::abs(j[key].get<double>() - expected) > 1e-12 * std::max(1.0, std::abs(expected)))
            return path + ": " + key + " is " + j[key].dump() + " but trellis-trainer uses " + nlohmann::json(expected).dump();
        return {};
    };
    std::vector<std::string> problems;
    if (!c.llama) {
        problems = {integer("vocab_size", c.vocab, "model.vocab"), integer("n_embd", c.hidden, "model.hidden"),
                    integer("n_layer", c.layers, "model.layers"), integer("n_head", c.heads, "model.heads"),
                    integer("n_inner", c.ffn, "model.ffn"), number("layer_norm_epsilon", 1e-5)};
        if (j.contains("n_positions") && j["n_positions"].is_number_integer() && j["n_positions"].get<long long>() < c.maxSeqLen)
            problems.push_back(path + ": n_positions " + j["n_positions"].dump() + " is shorter than the plan's model.seq_len (" +
                               std::to_string(c.maxSeqLen) + ")");
        const std::string act = j.value("activation_function", std::string("gelu_new"));
        if (act != "gelu_new" && act != "gelu_pytorch_tanh")
            problems.push_back(path + ": activation_function '" + act + "' (trellis-trainer's GELU is the tanh approximation, gelu_new)");
    } else {
        problems = {integer("vocab_size", c.vocab, "model.vocab"),
                    integer("hidden_size", c.hidden, "model.hidden"),
                    integer("intermediate_size", c.ffn, "model.ffn"),
                    integer("num_hidden_layers", c.layers, "model.layers"),
                    integer("num_attention_heads", c.heads, "model.heads"),
                    integer("num_key_value_heads", c.kvHeads > 0 ? c.kvHeads : c.heads, "model.kv_heads"),
                    number("rms_norm_eps", 1e-5),
                    number("rope_theta", c.ropeTheta)};
        const std::string act = j.value("hidden_act", std::string("silu"));
        if (act != "silu")
            problems.push_back(path + ": hidden_act '" + act + "' (trellis-trainer's SwiGLU uses silu)");
        if (j.value("attention_bias", false) || j.value("mlp_bias", false))
            problems.push_back(path + ": attention_bias/mlp_bias (trellis-trainer's llama has no biases)");
        if (j.contains("rope_scaling") && !j["rope_scaling"].is_null())
            problems.push_back(path + ": rope_scaling " + j["rope_scaling"].dump() + " (trellis-trainer's rotary embeddings are unscaled)");
    }
    for (const std::string &p : problems)
        if (!p.empty())
            return p;
    return {};
}

} // namespace

std::string writeHuggingFaceTensors(const GptConfig &config, const std::vector<float> &whole, const std::string &path,
                                    const std::string &note, const std::string &dtype)
{
    if (config.experts > 0)
        return "a mixture-of-experts model has no transformers layout in this version (model.moe)";
    if (config.tp != 1 || config.ep != 1 || config.cp != 1)
        return "the transformers layout takes the whole model (tp, cp and ep 1)";
    const std::vector<Mapping> mappings = mappingsOf(config);
    SafetensorsFile file;
    file.metadata["format"] = "pt"; // what transformers expects of a PyTorch checkpoint
    if (!note.empty())
        file.metadata["trellis"] = note;
    for (const Mapping &m : mappings) {
        SafeTensor t;
        t.shape = shapeOf(m);
        t.dtype = dtype;
        const std::int64_t cols = m.cols == 0 ? 1 : m.cols;
        t.values.resize(static_cast<std::size_t>(m.rows * cols));
        for (std::int64_t i = 0; i < m.rows; ++i)
            for (std::int64_t j = 0; j < cols; ++j)
                t.values[static_cast<std::size_t>(i * cols + j)] =
                    whole.at(m.base + static_cast<std::size_t>(i) * m.rowStride + static_cast<std::size_t>(j) * m.colStride);
        file.tensors[m.name] = std::move(t);
    }
    return writeSafetensors(path, file);
}

std::string exportHuggingFace(const GptConfig &config, const std::vector<float> &whole, const std::string &dir,
                              const std::string &note, const std::string &dtype)
{
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec)
        return dir + ": " + ec.message();
    if (std::string e = writeHuggingFaceTensors(config, whole, (fs::path(dir) / "model.safetensors").string(), note, dtype);
        !e.empty())
        return e;
    const std::string configPath = (fs::path(dir) / "config.json").string();
    std::ofstream out(configPath + ".partial", std::ios::trunc);
    out << configOf(config, dtype).dump(2) << "\n";
    out.close();
    if (!out)
        return configPath + ": cannot be written";
    fs::rename(configPath + ".partial", configPath, ec);
    return ec ? configPath + ": " + ec.message() : std::string();
}

std::string importHuggingFace(const GptConfig &config, const std::string &dir, std::vector<float> &whole)
{
    if (config.experts > 0)
        return "a mixture-of-experts model has no transformers layout in this version (model.moe)";
    GptConfig c = config;
    c.tp = c.cp = c.ep = 1;
    c.tpRank = c.cpRank = c.epRank = 0;
    if (std::string e = checkConfig(c, (fs::path(dir) / "config.json").string()); !e.empty())
        return e;
    const std::string path = (fs::path(dir) / "model.safetensors").string();
    if (!fs::exists(path))
        return path + ": missing (training.init.from names a directory holding model.safetensors and config.json)";
    SafetensorsFile file;
    if (std::string e = readSafetensors(path, file); !e.empty())
        return e;
    const GptModel<float> layout(c, false);
    whole.assign(layout.parameterCount(), 0.0f);
    std::set<std::string> used;
    for (const Mapping &m : mappingsOf(c)) {
        const auto it = file.tensors.find(m.name);
        if (it == file.tensors.end())
            return path + ": tensor " + m.name + " is missing";
        const SafeTensor &t = it->second;
        const std::vector<std::int64_t> want = shapeOf(m);
        const bool longerPositions = // a longer position table: its first seq_len rows
            !c.llama && m.name == "transformer.wpe.weight" && t.shape.size() == 2 && t.shape[1] == m.cols && t.shape[0] >= m.rows;
        if (!longerPositions && t.shape != want)
            return path + ": tensor " + m.name + " has shape " + shapeText(t.shape) + " but the plan's model needs " + shapeText(want);
        const std::int64_t cols = m.cols == 0 ? 1 : m.cols;
        for (std::int64_t i = 0; i < m.rows; ++i)
            for (std::int64_t j = 0; j < cols; ++j) {
                const float v = t.values[static_cast<std::size_t>(i * cols + j)];
                if (!std::isfinite(v))
                    return path + ": tensor " + m.name + " holds a non-finite value at [" + std::to_string(i) +
                           (m.cols ? ", " + std::to_string(j) : std::string()) + "]";
                whole[m.base + static_cast<std::size_t>(i) * m.rowStride + static_cast<std::size_t>(j) * m.colStride] = v;
            }
        used.insert(m.name);
    }
    for (const auto &[name, t] : file.tensors) {
        if (used.count(name))
            continue;
        // GPT-2's tied head, when a writer stored it anyway, must be the embedding.
        if (!c.llama && name == "lm_head.weight" && t.values == file.tensors.at("transformer.wte.weight").values)
            continue;
        if (!c.llama && (name.ends_with(".attn.bias") || name.ends_with(".attn.masked_bias"))) // causal-mask buffers
            continue;
        return path + ": tensor " + name + " is not part of the plan's " + (c.llama ? "llama" : "gpt") + " model";
    }
    return {};
}

} // namespace trellis::trainer
