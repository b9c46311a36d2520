// DeepSpeed and Megatron-LM interop; see interop.h.
#include "plan/interop.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

namespace trellis::plan {
namespace {

using nlohmann::json;

std::string typeName(const json &v)
{
    return v.is_string() ? "\"" + v.get<std::string>() + "\"" : v.dump();
}

// Reads DeepSpeed keys with their JSON path in every message.
class DsReader {
public:
    DsReader(Diagnostics &errors, Diagnostics &warnings) : m_errors(errors), m_warnings(warnings) {}

    void error(const std::string &path, const std::string &message) { m_errors.push_back({Severity::Error, "deepspeed." + path, message}); }
    void unused(const std::string &path) { m_warnings.push_back({Severity::Warning, "deepspeed." + path, "is not used by Trellis"}); }

    std::optional<long long> integer(const json &obj, const std::string &key, const std::string &path, long long min, long long max)
    {
        if (!obj.contains(key))
            return std::nullopt;
        const json &v = obj.at(key);
        if (!v.is_number_integer() || v.get<long long>() < min || v.get<long long>() > max) {
            error(path, "expected an integer " + std::to_string(min) + "-" + std::to_string(max) + ", got " + typeName(v));
            return std::nullopt;
        }
        return v.get<long long>();
    }
    std::optional<double> number(const json &obj, const std::string &key, const std::string &path, double min)
    {
        if (!obj.contains(key))
            return std::nullopt;
        const json &v = obj.at(key);
        if (!v.is_number() || !std::isfinite(v.get<double>()) || v.get<double>() < min) {
            std::ostringstream s;
            s << "expected a number >= " << min << ", got " << typeName(v);
            error(path, s.str());
            return std::nullopt;
        }
        return v.get<double>();
    }
    std::optional<bool> boolean(const json &obj, const std::string &key, const std::string &path)
    {
        if (!obj.contains(key))
            return std::nullopt;
        if (!obj.at(key).is_boolean()) {
            error(path, "expected true or false, got " + typeName(obj.at(key)));
            return std::nullopt;
        }
        return obj.at(key).get<bool>();
    }
    const json *object(const json &obj, const std::string &key, const std::string &path)
    {
        if (!obj.contains(key))
            return nullptr;
        if (!obj.at(key).is_object()) {
            error(path, "expected an object, got " + typeName(obj.at(key)));
            return nullptr;
        }
        return &obj.at(key);
    }
    void onlyKnown(const json &obj, const std::string &prefix, const std::set<std::string> &known)
    {
        for (const auto &[key, value] : obj.items())
            if (!known.count(key))
                unused(prefix + key);
    }

private:
    Diagnostics &m_errors;
    Diagnostics &m_warnings;
};

} // namespace

Result<Plan> fromDeepSpeedConfig(const json &c, const Plan &base, Diagnostics *warningsOut)
{
    Diagnostics errors, warnings;
    if (!c.is_object())
        return Result<Plan>::failure("deepspeed", "expected a JSON object, got " + typeName(c));
    DsReader r(errors, warnings);
    Plan p = base;
    ParallelSpec &ps = p.parallel;
    TrainingSpec &ts = p.training;
    r.onlyKnown(c, "", {"train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps", "zero_optimization",
                        "bf16", "fp16", "gradient_clipping", "optimizer", "scheduler", "activation_checkpointing"});

    const auto tbs = r.integer(c, "train_batch_size", "train_batch_size", 1, 1LL << 31);
    const auto mbs = r.integer(c, "train_micro_batch_size_per_gpu", "train_micro_batch_size_per_gpu", 1, 1LL << 20);
    const auto gas = r.integer(c, "gradient_accumulation_steps", "gradient_accumulation_steps", 1, 1LL << 20);
    const long long dp = ps.dp;
    if (mbs)
        ps.microBatchSize = static_cast<int>(*mbs);
    if (gas)
        ps.microBatches = static_cast<int>(*gas);
    if (tbs) {
        if (mbs && gas && *tbs != *mbs * *gas * dp) {
            r.error("train_batch_size", std::to_string(*tbs) + " is not train_micro_batch_size_per_gpu (" + std::to_string(*mbs) +
                                            ") × gradient_accumulation_steps (" + std::to_string(*gas) + ") × dp (" +
                                            std::to_string(dp) + ") = " + std::to_string(*mbs * *gas * dp));
        } else if (!gas) {
            const long long per = static_cast<long long>(ps.microBatchSize) * dp;
            if (*tbs % per != 0)
                r.error("train_batch_size", std::to_string(*tbs) + " is not a multiple of train_micro_batch_size_per_gpu (" +
                                                std::to_string(ps.microBatchSize) + ") × dp (" + std::to_string(dp) + ")");
            else
                ps.microBatches = static_cast<int>(*tbs / per);
        } else if (!mbs) {
            const long long per = *gas * dp;
            if (*tbs % per != 0)
                r.error("train_batch_size", std::to_string(*tbs) + " is not a multiple of gradient_accumulation_steps (" +
                                                std::to_string(*gas) + ") × dp (" + std::to_string(dp) + ")");
            else
                ps.microBatchSize = static_cast<int>(*tbs / per);
        }
    }
    if (const json *z = r.object(c, "zero_optimization", "zero_optimization")) {
        r.onlyKnown(*z, "zero_optimization.", {"stage", "reduce_bucket_size", "overlap_comm"});
        if (const auto stage = r.integer(*z, "stage", "zero_optimization.stage", 0, 3))
            ps.zero = static_cast<int>(*stage);
        if (const auto bucket = r.number(*z, "reduce_bucket_size", "zero_optimization.reduce_bucket_size", 1))
            ps.bucketMb = *bucket * 4.0 / (1024.0 * 1024.0); // DeepSpeed counts elements
        if (const auto overlap = r.boolean(*z, "overlap_comm", "zero_optimization.overlap_comm"))
            ps.overlapGradReduce = *overlap;
    }
    bool bf16 = false, fp16 = false;
    for (const char *key : {"bf16", "fp16"}) {
        if (const json *o = r.object(c, key, key)) {
            r.onlyKnown(*o, std::string(key) + ".", {"enabled"});
            if (const auto on = r.boolean(*o, "enabled", std::string(key) + ".enabled"))
                (std::string(key) == "bf16" ? bf16 : fp16) = *on;
        }
    }
    if (bf16 && fp16)
        r.error("fp16.enabled", "bf16 and fp16 cannot both be enabled");
    ps.precision = bf16 ? Precision::Bf16 : fp16 ? Precision::Fp16 : Precision::Fp32;
    if (const auto clip = r.number(c, "gradient_clipping", "gradient_clipping", 0))
        ts.gradClip = *clip;
    if (const json *o = r.object(c, "optimizer", "optimizer")) {
        r.onlyKnown(*o, "optimizer.", {"type", "params"});
        if (o->contains("type")) {
            std::string type = o->at("type").is_string() ? o->at("type").get<std::string>() : "";
            std::transform(type.begin(), type.end(), type.begin(), [](unsigned char ch) { return std::tolower(ch); });
            if (type != "adam" && type != "adamw")
                r.error("optimizer.type", "Trellis trains with AdamW; got " + typeName(o->at("type")));
        }
        if (const json *params = r.object(*o, "params", "optimizer.params")) {
            r.onlyKnown(*params, "optimizer.params.", {"lr", "betas", "eps", "weight_decay"});
            if (const auto lr = r.number(*params, "lr", "optimizer.params.lr", 1e-12))
                ts.lr = *lr;
            if (params->contains("betas")) {
                const json &b = params->at("betas");
                if (!b.is_array() || b.size() != 2 || !b[0].is_number() || !b[1].is_number())
                    r.error("optimizer.params.betas", "expected [beta1, beta2], got " + typeName(b));
                else {
                    ts.beta1 = b[0].get<double>();
                    ts.beta2 = b[1].get<double>();
                }
            }
            if (const auto eps = r.number(*params, "eps", "optimizer.params.eps", 0))
                ts.eps = *eps;
            if (const auto wd = r.number(*params, "weight_decay", "optimizer.params.weight_decay", 0))
                ts.weightDecay = *wd;
        }
    }
    if (const json *o = r.object(c, "scheduler", "scheduler")) {
        r.onlyKnown(*o, "scheduler.", {"type", "params"});
        const std::string type = o->contains("type") && o->at("type").is_string() ? o->at("type").get<std::string>() : "";
        if (type != "WarmupLR" && type != "WarmupDecayLR" && type != "WarmupCosineLR")
            r.error("scheduler.type", "expected WarmupLR, WarmupDecayLR or WarmupCosineLR, got " +
                                          (o->contains("type") ? typeName(o->at("type")) : std::string("nothing")));
        if (const json *params = r.object(*o, "params", "scheduler.params")) {
            r.onlyKnown(*params, "scheduler.params.",
                        {"warmup_num_steps", "total_num_steps", "warmup_min_lr", "warmup_max_lr", "cos_min_ratio",
                         "warmup_min_ratio", "warmup_type"});
            if (const auto w = r.integer(*params, "warmup_num_steps", "scheduler.params.warmup_num_steps", 0, 1LL << 31))
                ts.warmupSteps = static_cast<int>(*w);
            if (const auto total = r.integer(*params, "total_num_steps", "scheduler.params.total_num_steps", 1, 1LL << 31))
                ts.steps = static_cast<int>(*total);
            if (const auto max = r.number(*params, "warmup_max_lr", "scheduler.params.warmup_max_lr", 1e-12))
                ts.lr = *max;
            if (const auto ratio = r.number(*params, "cos_min_ratio", "scheduler.params.cos_min_ratio", 0))
                ts.minLr = ts.lr * *ratio;
        }
    }
    if (c.contains("activation_checkpointing"))
        ps.recompute = Recompute::Full;
    if (warningsOut)
        warningsOut->insert(warningsOut->end(), warnings.begin(), warnings.end());
    if (!errors.empty())
        return errors;
    return p;
}

json toDeepSpeedConfig(const Plan &p)
{
    const ParallelSpec &ps = p.parallel;
    const TrainingSpec &ts = p.training;
    json z = {{"stage", ps.zero}, {"overlap_comm", ps.overlapGradReduce}};
    if (ps.bucketMb)
        z["reduce_bucket_size"] = static_cast<long long>(std::llround(*ps.bucketMb * 1024.0 * 1024.0 / 4.0));
    json c = {
        {"train_batch_size", ps.globalBatch()},
        {"train_micro_batch_size_per_gpu", ps.microBatchSize},
        {"gradient_accumulation_steps", ps.microBatches},
        {"zero_optimization", z},
        {"bf16", {{"enabled", ps.precision == Precision::Bf16}}},
        {"fp16", {{"enabled", ps.precision == Precision::Fp16}}},
        {"gradient_clipping", ts.gradClip},
        {"optimizer", {{"type", "AdamW"}, {"params", {{"lr", ts.lr}, {"betas", {ts.beta1, ts.beta2}}, {"eps", ts.eps}, {"weight_decay", ts.weightDecay}}}}},
        {"scheduler",
         {{"type", "WarmupCosineLR"},
          {"params", {{"warmup_num_steps", ts.warmupSteps}, {"total_num_steps", ts.steps}, {"warmup_max_lr", ts.lr}, {"cos_min_ratio", ts.minLr / ts.lr}}}}},
    };
    if (ps.recompute == Recompute::Full)
        c["activation_checkpointing"] = {{"partition_activations", false}, {"contiguous_memory_optimization", false}};
    return c;
}

namespace {

// Splits like a POSIX shell: blanks separate words, quotes group, backslash escapes, and a
// backslash before a newline continues the line.
bool shellWords(std::string_view line, std::vector<std::string> &words, std::string &error)
{
    std::string word;
    bool inWord = false;
    char quote = 0;
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char ch = line[i];
        if (quote) {
            if (ch == quote)
                quote = 0;
            else if (ch == '\\' && quote == '"' && i + 1 < line.size())
                word += line[++i];
            else
                word += ch;
        } else if (ch == '\\' && i + 1 < line.size()) {
            if (line[i + 1] != '\n')
                word += line[i + 1], inWord = true;
            ++i;
        } else if (ch == '\'' || ch == '"') {
            quote = ch;
            inWord = true;
        } else if (std::isspace(static_cast<unsigned char>(ch))) {
            if (inWord)
                words.push_back(word);
            word.clear();
            inWord = false;
        } else {
            word += ch;
            inWord = true;
        }
    }
    if (quote) {
        error = std::string("unterminated ") + quote + " quote";
        return false;
    }
    if (inWord)
        words.push_back(word);
    return true;
}

enum class Kind { Int, Number, Flag, Text };

const std::map<std::string, Kind> &megatronFlags()
{
    static const std::map<std::string, Kind> flags = {
        {"--tensor-model-parallel-size", Kind::Int}, {"--pipeline-model-parallel-size", Kind::Int},
        {"--context-parallel-size", Kind::Int}, {"--expert-model-parallel-size", Kind::Int},
        {"--num-layers-per-virtual-pipeline-stage", Kind::Int}, {"--virtual-pipeline-model-parallel-size", Kind::Int},
        {"--sequence-parallel", Kind::Flag}, {"--micro-batch-size", Kind::Int}, {"--global-batch-size", Kind::Int},
        {"--num-layers", Kind::Int}, {"--hidden-size", Kind::Int}, {"--num-attention-heads", Kind::Int},
        {"--num-query-groups", Kind::Int}, {"--group-query-attention", Kind::Flag}, {"--ffn-hidden-size", Kind::Int},
        {"--seq-length", Kind::Int}, {"--vocab-size", Kind::Int}, {"--lr", Kind::Number}, {"--min-lr", Kind::Number},
        {"--lr-warmup-iters", Kind::Int}, {"--train-iters", Kind::Int}, {"--weight-decay", Kind::Number},
        {"--adam-beta1", Kind::Number}, {"--adam-beta2", Kind::Number}, {"--adam-eps", Kind::Number},
        {"--clip-grad", Kind::Number}, {"--seed", Kind::Int}, {"--bf16", Kind::Flag}, {"--fp16", Kind::Flag},
        {"--recompute-granularity", Kind::Text}, {"--recompute-activations", Kind::Flag},
        {"--use-distributed-optimizer", Kind::Flag}, {"--num-experts", Kind::Int}, {"--moe-router-topk", Kind::Int},
        {"--overlap-grad-reduce", Kind::Flag}, {"--save-interval", Kind::Int}, {"--save", Kind::Text},
    };
    return flags;
}

// The shortest text that reads back as the same double.
std::string num(double v)
{
    char buf[64];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    return std::string(buf, r.ptr);
}

} // namespace

Result<Plan> fromMegatronArgs(std::string_view argLine, const Plan &base, Diagnostics *warningsOut)
{
    Diagnostics errors, warnings;
    std::vector<std::string> words;
    std::string why;
    if (!shellWords(argLine, words, why))
        return Result<Plan>::failure("megatron", why);
    auto error = [&](const std::string &flag, const std::string &message) { errors.push_back({Severity::Error, "megatron " + flag, message}); };
    std::map<std::string, std::string> values;
    std::set<std::string> flags;
    for (std::size_t i = 0; i < words.size(); ++i) {
        std::string w = words[i], value;
        bool hasValue = false;
        if (!w.starts_with("--")) {
            if (i == 0)
                continue; // the program (pretrain_gpt.py, torchrun ...) before the first flag
            warnings.push_back({Severity::Warning, "megatron", "'" + w + "' is not a flag and is not used"});
            continue;
        }
        if (const auto eq = w.find('='); eq != std::string::npos) {
            value = w.substr(eq + 1);
            w = w.substr(0, eq);
            hasValue = true;
        }
        const auto known = megatronFlags().find(w);
        if (known == megatronFlags().end()) {
            warnings.push_back({Severity::Warning, "megatron " + w, "is not used by Trellis"});
            if (!hasValue && i + 1 < words.size() && !words[i + 1].starts_with("--"))
                ++i; // its value
            continue;
        }
        if (known->second == Kind::Flag) {
            if (hasValue)
                error(w, "takes no value, got '" + value + "'");
            flags.insert(w);
            continue;
        }
        if (!hasValue) {
            if (i + 1 >= words.size() || words[i + 1].starts_with("--")) {
                error(w, "needs a value");
                continue;
            }
            value = words[++i];
        }
        values[w] = value;
    }
    auto integer = [&](const std::string &flag, int min) -> std::optional<int> {
        const auto it = values.find(flag);
        if (it == values.end())
            return std::nullopt;
        try {
            std::size_t used = 0;
            const long long v = std::stoll(it->second, &used);
            if (used == it->second.size() && v >= min && v <= (1LL << 31) - 1)
                return static_cast<int>(v);
        } catch (const std::exception &) {
        }
        error(flag, "expected an integer >= " + std::to_string(min) + ", got '" + it->second + "'");
        return std::nullopt;
    };
    auto number = [&](const std::string &flag) -> std::optional<double> {
        const auto it = values.find(flag);
        if (it == values.end())
            return std::nullopt;
        try {
            std::size_t used = 0;
            const double v = std::stod(it->second, &used);
            if (used == it->second.size() && std::isfinite(v) && v >= 0)
                return v;
        } catch (const std::exception &) {
        }
        error(flag, "expected a non-negative number, got '" + it->second + "'");
        return std::nullopt;
    };

    Plan p = base;
    ParallelSpec &ps = p.parallel;
    ModelSpec &m = p.model;
    TrainingSpec &ts = p.training;
    // Model: explicit sizes replace the preset.
    const auto layers = integer("--num-layers", 1), hidden = integer("--hidden-size", 1), heads = integer("--num-attention-heads", 1),
               groups = integer("--num-query-groups", 1), ffn = integer("--ffn-hidden-size", 1), seq = integer("--seq-length", 1),
               vocab = integer("--vocab-size", 1);
    if (layers || hidden || heads || groups || ffn || seq || vocab) {
        m.preset.clear();
        if (layers) m.layers = *layers;
        if (hidden) {
            m.hidden = *hidden;
            if (!ffn)
                m.ffn = 4 * *hidden; // Megatron's default
        }
        if (heads) {
            m.heads = *heads;
            if (!groups)
                m.kvHeads = *heads;
        }
        if (groups) m.kvHeads = *groups;
        if (ffn) m.ffn = *ffn;
        if (seq) m.seqLen = *seq;
        if (vocab) m.vocab = *vocab;
    }
    ps.tp = integer("--tensor-model-parallel-size", 1).value_or(1);
    ps.pp = integer("--pipeline-model-parallel-size", 1).value_or(1);
    ps.cp = integer("--context-parallel-size", 1).value_or(1);
    ps.ep = integer("--expert-model-parallel-size", 1).value_or(1);
    ps.sequenceParallel = flags.count("--sequence-parallel") > 0;
    ps.zero = flags.count("--use-distributed-optimizer") ? 1 : 0;
    ps.overlapGradReduce = flags.count("--overlap-grad-reduce") > 0;
    ps.precision = flags.count("--bf16") ? Precision::Bf16 : flags.count("--fp16") ? Precision::Fp16 : Precision::Fp32;
    if (flags.count("--bf16") && flags.count("--fp16"))
        error("--fp16", "cannot be combined with --bf16");
    ps.recompute = flags.count("--recompute-activations") ? Recompute::Selective : Recompute::None;
    if (const auto it = values.find("--recompute-granularity"); it != values.end()) {
        if (it->second == "full")
            ps.recompute = Recompute::Full;
        else if (it->second == "selective")
            ps.recompute = Recompute::Selective;
        else
            error("--recompute-granularity", "expected full or selective, got '" + it->second + "'");
    }
    ps.virtualStages = 1;
    if (const auto v = integer("--virtual-pipeline-model-parallel-size", 1))
        ps.virtualStages = *v;
    if (const auto perStage = integer("--num-layers-per-virtual-pipeline-stage", 1)) {
        if (m.layers % (ps.pp * *perStage) != 0)
            error("--num-layers-per-virtual-pipeline-stage", std::to_string(*perStage) + " × --pipeline-model-parallel-size (" +
                                                                 std::to_string(ps.pp) + ") does not divide the layers (" +
                                                                 std::to_string(m.layers) + ")");
        else
            ps.virtualStages = m.layers / (ps.pp * *perStage);
    }
    if (ps.virtualStages > 1)
        ps.schedule = "interleaved-1f1b";
    else if (ps.schedule == "interleaved-1f1b")
        ps.schedule = "1f1b";
    if (const auto experts = integer("--num-experts", 1)) m.moe.experts = *experts;
    if (const auto topK = integer("--moe-router-topk", 1)) m.moe.topK = *topK;
    // Batch: dp is what the cluster's slots leave after tp·pp·cp.
    const int slots = p.cluster.totalSlots();
    const int modelParallel = ps.tp * ps.pp * ps.cp;
    if (slots > 0 && slots % modelParallel != 0)
        error("--tensor-model-parallel-size", "tp·pp·cp = " + std::to_string(modelParallel) + " does not divide the cluster's " +
                                                  std::to_string(slots) + " slots");
    else if (slots > 0)
        ps.dp = slots / modelParallel;
    if (const auto mbs = integer("--micro-batch-size", 1))
        ps.microBatchSize = *mbs;
    if (const auto gbs = integer("--global-batch-size", 1)) {
        const long long per = static_cast<long long>(ps.microBatchSize) * ps.dp;
        if (*gbs % per != 0)
            error("--global-batch-size", std::to_string(*gbs) + " is not a multiple of --micro-batch-size (" +
                                             std::to_string(ps.microBatchSize) + ") × dp (" + std::to_string(ps.dp) + ")");
        else
            ps.microBatches = static_cast<int>(*gbs / per);
    }
    if (const auto v = number("--lr")) ts.lr = *v;
    if (const auto v = number("--min-lr")) ts.minLr = *v;
    if (const auto v = integer("--lr-warmup-iters", 0)) ts.warmupSteps = *v;
    if (const auto v = integer("--train-iters", 1)) ts.steps = *v;
    if (const auto v = number("--weight-decay")) ts.weightDecay = *v;
    if (const auto v = number("--adam-beta1")) ts.beta1 = *v;
    if (const auto v = number("--adam-beta2")) ts.beta2 = *v;
    if (const auto v = number("--adam-eps")) ts.eps = *v;
    if (const auto v = number("--clip-grad")) ts.gradClip = *v;
    if (const auto v = integer("--seed", 0)) ts.seed = static_cast<std::uint64_t>(*v);
    if (const auto v = integer("--save-interval", 0)) ts.checkpoint.every = *v;
    if (const auto it = values.find("--save"); it != values.end()) ts.checkpoint.dir = it->second;
    if (warningsOut)
        warningsOut->insert(warningsOut->end(), warnings.begin(), warnings.end());
    if (!errors.empty())
        return errors;
    return p;
}

std::string toMegatronArgs(const Plan &p)
{
    const ParallelSpec &ps = p.parallel;
    const ModelSpec &m = p.model;
    const TrainingSpec &ts = p.training;
    std::ostringstream s;
    s << "--tensor-model-parallel-size " << ps.tp << " --pipeline-model-parallel-size " << ps.pp;
    if (ps.cp > 1) s << " --context-parallel-size " << ps.cp;
    if (ps.ep > 1) s << " --expert-model-parallel-size " << ps.ep;
    if (ps.virtualStages > 1) s << " --virtual-pipeline-model-parallel-size " << ps.virtualStages;
    if (ps.sequenceParallel) s << " --sequence-parallel";
    s << " --num-layers " << m.layers << " --hidden-size " << m.hidden << " --num-attention-heads " << m.heads;
    if (m.kvHeads != m.heads) s << " --group-query-attention --num-query-groups " << m.kvHeads;
    s << " --ffn-hidden-size " << m.ffn << " --seq-length " << m.seqLen << " --vocab-size " << m.vocab;
    if (m.moe.experts > 0) s << " --num-experts " << m.moe.experts << " --moe-router-topk " << m.moe.topK;
    s << " --micro-batch-size " << ps.microBatchSize << " --global-batch-size " << ps.globalBatch();
    if (ps.zero >= 1) s << " --use-distributed-optimizer"; // Megatron's optimizer sharding is ZeRO-1
    if (ps.overlapGradReduce) s << " --overlap-grad-reduce";
    if (ps.precision == Precision::Bf16) s << " --bf16";
    if (ps.precision == Precision::Fp16) s << " --fp16";
    if (ps.recompute != Recompute::None) s << " --recompute-granularity " << (ps.recompute == Recompute::Full ? "full" : "selective");
    s << " --lr " << num(ts.lr) << " --min-lr " << num(ts.minLr) << " --lr-warmup-iters " << ts.warmupSteps << " --train-iters "
      << ts.steps << " --weight-decay " << num(ts.weightDecay) << " --adam-beta1 " << num(ts.beta1) << " --adam-beta2 "
      << num(ts.beta2) << " --adam-eps " << num(ts.eps) << " --clip-grad " << num(ts.gradClip) << " --seed " << ts.seed;
    if (ts.checkpoint.every > 0) s << " --save-interval " << ts.checkpoint.every;
    if (!ts.checkpoint.dir.empty()) {
        std::string quoted = ts.checkpoint.dir; // single-quoted for a shell: ' becomes '\''
        for (std::size_t at = 0; (at = quoted.find('\'', at)) != std::string::npos; at += 4)
            quoted.replace(at, 1, "'\\''");
        s << " --save '" << quoted << "'";
    }
    return s.str();
}

} // namespace trellis::plan
