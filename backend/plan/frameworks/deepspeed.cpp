// DeepSpeed config interop; the mapping and its rules are in framework_configs.h. DeepSpeed's defaults are
// those of deepspeed/runtime (zero/config.py, lr_schedules.py, config.py's batch rules).
#include "backend/plan/frameworks/framework_configs.h"
#include "backend/plan/frameworks/framework_common.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>

namespace trellis::plan {
namespace {

using nlohmann::json;
using namespace interop_detail;

// A JSON value as the config spells it, cut short for messages.
std::string shown(const json &v)
{
    std::string text = v.dump();
    if (text.size() > 40)
        text = text.substr(0, 37) + "...";
    return text;
}

std::string describeRange(long long min, long long max)
{
    if (max == kMaxInt && min == 1)
        return "a positive integer";
    if (max == kMaxInt && min == 0)
        return "a non-negative integer";
    return "an integer " + std::to_string(min) + "-" + std::to_string(max);
}

// Typed access to the keys of a DeepSpeed config; every message names the key's dotted path.
class DeepSpeedReader : public Report {
public:
    DeepSpeedReader() : Report("deepspeed") {}

    static std::string pathOf(const std::string &prefix, const char *key) { return prefix + key; }

    // Warns about each key of `object` that is not in `known`.
    void unusedKeys(const json &object, const std::string &prefix, std::initializer_list<const char *> known)
    {
        for (const auto &item : object.items())
            if (std::none_of(known.begin(), known.end(), [&](const char *k) { return item.key() == k; }))
                warn(prefix + item.key() + " is not used");
    }

    // An integer in [min, max]; an integral float (5e8) counts, as it does for DeepSpeed.
    std::optional<long long> integer(const json &object, const std::string &prefix, const char *key, long long min,
                                     long long max)
    {
        if (!object.contains(key))
            return std::nullopt;
        const json &v = object.at(key);
        if (v.is_number()) {
            const double d = v.get<double>();
            if (std::isfinite(d) && d == std::floor(d) && d >= static_cast<double>(min) && d <= static_cast<double>(max))
                return static_cast<long long>(d);
        }
        error(pathOf(prefix, key), "expected " + describeRange(min, max) + ", got " + shown(v));
        return std::nullopt;
    }

    // A finite number >= min (or > min when `above`).
    std::optional<double> number(const json &object, const std::string &prefix, const char *key, double min, bool above = false)
    {
        if (!object.contains(key))
            return std::nullopt;
        const json &v = object.at(key);
        if (v.is_number()) {
            const double d = v.get<double>();
            if (std::isfinite(d) && (above ? d > min : d >= min))
                return d;
        }
        error(pathOf(prefix, key), std::string("expected a number ") + (above ? "> " : ">= ") + num(min) + ", got " + shown(v));
        return std::nullopt;
    }

    std::optional<bool> boolean(const json &object, const std::string &prefix, const char *key)
    {
        if (!object.contains(key))
            return std::nullopt;
        if (!object.at(key).is_boolean()) {
            error(pathOf(prefix, key), "expected true or false, got " + shown(object.at(key)));
            return std::nullopt;
        }
        return object.at(key).get<bool>();
    }

    // A nested object; anything else is an error.
    const json *section(const json &object, const std::string &prefix, const char *key)
    {
        if (!object.contains(key))
            return nullptr;
        if (!object.at(key).is_object()) {
            error(pathOf(prefix, key), "expected an object, got " + shown(object.at(key)));
            return nullptr;
        }
        return &object.at(key);
    }
};

// The Hugging Face Trainer writes "auto" where it fills in its own arguments; the base plan plays
// that part here. train_batch_size "auto" is dropped, so it is derived like an absent one.
void resolveAuto(json &config, const Plan &base, DeepSpeedReader &r)
{
    const ParallelSpec &ps = base.parallel;
    const TrainingSpec &ts = base.training;
    struct Fill {
        std::vector<const char *> path;
        json value;
        std::string note; // what is used instead, for the warning
    };
    const auto baseValue = [](const json &v) { return "the base plan's value (" + v.dump() + ") is used"; };
    std::vector<Fill> fills = {
        {{"train_micro_batch_size_per_gpu"}, ps.microBatchSize, ""},
        {{"gradient_accumulation_steps"}, ps.microBatches, ""},
        {{"gradient_clipping"}, ts.gradClip, ""},
        {{"bf16", "enabled"}, ps.precision == Precision::Bf16, ""},
        {{"bfloat16", "enabled"}, ps.precision == Precision::Bf16, ""},
        {{"fp16", "enabled"}, ps.precision == Precision::Fp16, ""},
        {{"optimizer", "params", "lr"}, ts.lr, ""},
        {{"optimizer", "params", "betas"}, json::array({ts.beta1, ts.beta2}), ""},
        {{"optimizer", "params", "eps"}, ts.eps, ""},
        {{"optimizer", "params", "weight_decay"}, ts.weightDecay, ""},
        {{"scheduler", "params", "warmup_num_steps"}, ts.warmupSteps, ""},
        {{"scheduler", "params", "total_num_steps"}, ts.steps, ""},
        {{"scheduler", "params", "warmup_max_lr"}, ts.lr, ""},
        {{"scheduler", "params", "warmup_min_lr"}, 0.0, "0 is used, as the Trainer fills it"},
    };
    if (base.model.hidden > 0) {
        const long long h = base.model.hidden;
        fills.push_back({{"zero_optimization", "reduce_bucket_size"}, h * h,
                         "model.hidden² (" + std::to_string(h * h) + ") is used, as the Trainer fills it"});
    }
    const auto isAuto = [](const json &v) { return v.is_string() && v.get<std::string>() == "auto"; };
    if (config.contains("train_batch_size") && isAuto(config["train_batch_size"])) {
        config.erase("train_batch_size");
        r.warn("train_batch_size is \"auto\" (a Hugging Face Trainer placeholder): it is derived from the micro-batch "
               "size, the accumulation steps and dp");
    }
    for (const Fill &f : fills) {
        json *at = &config;
        std::string dotted;
        for (const char *key : f.path) {
            if (!at->is_object() || !at->contains(key)) {
                at = nullptr;
                break;
            }
            at = &(*at)[key];
            // Appended piecewise: GCC 12 raises a false -Wrestrict on a chained string operator+.
            if (!dotted.empty())
                dotted += '.';
            dotted += key;
        }
        if (at && isAuto(*at)) {
            *at = f.value;
            r.warn(dotted + " is \"auto\" (a Hugging Face Trainer placeholder): " + (f.note.empty() ? baseValue(f.value) : f.note));
        }
    }
}

// train_batch_size = micro × accumulation × dp, the rules of DeepSpeed's
// _set_batch_related_parameters with dp from the base plan.
void readBatch(const json &c, DeepSpeedReader &r, ParallelSpec &ps)
{
    const auto total = r.integer(c, "", "train_batch_size", 1, kMaxInt);
    const auto micro = r.integer(c, "", "train_micro_batch_size_per_gpu", 1, kMaxInt);
    const auto accum = r.integer(c, "", "gradient_accumulation_steps", 1, kMaxInt);
    if ((c.contains("train_batch_size") && !total) || (c.contains("train_micro_batch_size_per_gpu") && !micro) ||
        (c.contains("gradient_accumulation_steps") && !accum))
        return; // a type error is already reported
    if (ps.dp < 1) {
        if (total || micro || accum)
            r.error("", "the base plan's parallel.dp (" + std::to_string(ps.dp) + ") must be at least 1 to derive the batch");
        return;
    }
    const long long dp = ps.dp;
    const std::string dpText = "dp (" + std::to_string(dp) + ")";
    const auto set = [&](long long m, long long a) {
        ps.microBatchSize = static_cast<int>(m);
        ps.microBatches = static_cast<int>(a);
    };
    // `total` split into `per` equal parts, or an error naming the factors.
    const auto split = [&](long long per, const std::string &factors) -> std::optional<long long> {
        if (*total % per == 0)
            return *total / per;
        r.error("train_batch_size", std::to_string(*total) + " is not a multiple of " + factors + " = " + std::to_string(per));
        return std::nullopt;
    };
    if (total && micro && accum) {
        const auto perRank = times(*micro, *accum);
        const auto product = perRank ? times(*perRank, dp) : std::nullopt;
        if (product != total)
            r.error("train_batch_size", std::to_string(*total) + " is not train_micro_batch_size_per_gpu (" + std::to_string(*micro) +
                                            ") × gradient_accumulation_steps (" + std::to_string(*accum) + ") × " + dpText +
                                            " = " + num(static_cast<double>(*micro) * static_cast<double>(*accum) * dp));
        else
            set(*micro, *accum);
    } else if (total && micro) {
        if (const auto a = split(*micro * dp, "train_micro_batch_size_per_gpu (" + std::to_string(*micro) + ") × " + dpText))
            set(*micro, *a);
    } else if (total && accum) {
        if (const auto m = split(*accum * dp, "gradient_accumulation_steps (" + std::to_string(*accum) + ") × " + dpText))
            set(*m, *accum);
    } else if (micro && accum) {
        set(*micro, *accum);
    } else if (total) {
        if (const auto m = split(dp, dpText))
            set(*m, 1);
    } else if (micro) {
        set(*micro, 1);
    } else if (accum) {
        r.error("gradient_accumulation_steps", "DeepSpeed needs train_batch_size or train_micro_batch_size_per_gpu beside it");
    }
}

void readZero(const json &c, DeepSpeedReader &r, const ModelSpec &model, ParallelSpec &ps)
{
    const json empty = json::object();
    const json *z = r.section(c, "", "zero_optimization");
    if (!z && c.contains("zero_optimization"))
        return;
    if (!z)
        z = &empty;
    r.unusedKeys(*z, "zero_optimization.", {"stage", "overlap_comm", "reduce_bucket_size"});
    ps.zero = static_cast<int>(r.integer(*z, "zero_optimization.", "stage", 0, 3).value_or(0));
    ps.overlapGradReduce = r.boolean(*z, "zero_optimization.", "overlap_comm").value_or(ps.zero == 3);
    if (const auto elements = r.number(*z, "zero_optimization.", "reduce_bucket_size", 1)) {
        // DeepSpeed counts elements; a bucket larger than the model is one bucket of all of it.
        const double gradients = static_cast<double>(parameterCount(model));
        const double used = gradients > 0 ? std::min(*elements, gradients) : *elements;
        ps.bucketMb = used * kFp32Bytes / kBytesPerMb;
    }
}

void readPrecision(const json &c, DeepSpeedReader &r, ParallelSpec &ps)
{
    bool bf16 = false, fp16 = false;
    // "bfloat16" is DeepSpeed's older spelling of "bf16".
    for (const char *key : {"bf16", "bfloat16", "fp16"}) {
        if (const json *o = r.section(c, "", key)) {
            const std::string prefix = std::string(key) + ".";
            r.unusedKeys(*o, prefix, {"enabled"});
            if (r.boolean(*o, prefix, "enabled").value_or(false))
                (std::string(key) == "fp16" ? fp16 : bf16) = true;
        }
    }
    if (bf16 && fp16)
        r.error("", "bf16.enabled and fp16.enabled cannot both be true");
    ps.precision = bf16 ? Precision::Bf16 : fp16 ? Precision::Fp16 : Precision::Fp32;
}

void readOptimizer(const json &c, DeepSpeedReader &r, TrainingSpec &ts)
{
    const json *o = r.section(c, "", "optimizer");
    if (!o)
        return;
    r.unusedKeys(*o, "optimizer.", {"type", "params"});
    if (o->contains("type")) {
        const json &type = o->at("type");
        std::string name = type.is_string() ? type.get<std::string>() : "";
        std::transform(name.begin(), name.end(), name.begin(), [](unsigned char ch) { return static_cast<char>(std::tolower(ch)); });
        if (name != "adam" && name != "adamw")
            r.error("optimizer.type", "expected \"Adam\" or \"AdamW\", got " + shown(type));
    }
    const json *params = r.section(*o, "optimizer.", "params");
    if (!params)
        return;
    const std::string prefix = "optimizer.params.";
    r.unusedKeys(*params, prefix, {"lr", "betas", "eps", "weight_decay", "adam_w_mode"});
    if (const auto lr = r.number(*params, prefix, "lr", 0, true))
        ts.lr = *lr;
    if (params->contains("betas")) {
        const json &b = params->at("betas");
        const auto beta = [&](std::size_t i) { return b[i].is_number() && b[i].get<double>() >= 0 && b[i].get<double>() < 1; };
        if (!b.is_array() || b.size() != 2 || !beta(0) || !beta(1)) {
            r.error(prefix + "betas", "expected [beta1, beta2] with each in [0, 1), got " + shown(b));
        } else {
            ts.beta1 = b[0].get<double>();
            ts.beta2 = b[1].get<double>();
        }
    }
    if (const auto eps = r.number(*params, prefix, "eps", 0, true))
        ts.eps = *eps;
    if (const auto wd = r.number(*params, prefix, "weight_decay", 0))
        ts.weightDecay = *wd;
    // DeepSpeed's Adam decouples weight decay (AdamW) unless adam_w_mode is false.
    if (r.boolean(*params, prefix, "adam_w_mode") == false)
        r.warn(prefix + "adam_w_mode is false (weight decay as L2 regularisation): Trellis decouples it (AdamW)");
}

// The three warm-up schedulers of deepspeed/runtime/lr_schedules.py. Trellis' schedule is a linear
// warm-up from 0 to lr over warmup_steps, then a cosine to min_lr at `steps`.
void readScheduler(const json &c, DeepSpeedReader &r, TrainingSpec &ts)
{
    const json *o = r.section(c, "", "scheduler");
    if (!o)
        return;
    r.unusedKeys(*o, "scheduler.", {"type", "params"});
    const std::string type = o->contains("type") && o->at("type").is_string() ? o->at("type").get<std::string>() : "";
    const bool warmupLr = type == "WarmupLR", decayLr = type == "WarmupDecayLR", cosineLr = type == "WarmupCosineLR";
    if (!warmupLr && !decayLr && !cosineLr) {
        r.error("scheduler.type", "expected \"WarmupLR\", \"WarmupDecayLR\" or \"WarmupCosineLR\", got " +
                                      (o->contains("type") ? shown(o->at("type")) : std::string("nothing")));
        return;
    }
    const json empty = json::object();
    const json *params = r.section(*o, "scheduler.", "params");
    if (!params && o->contains("params"))
        return;
    if (!params)
        params = &empty;
    const std::string prefix = "scheduler.params.";
    if (cosineLr)
        r.unusedKeys(*params, prefix, {"total_num_steps", "warmup_num_steps", "warmup_type", "warmup_min_ratio", "cos_min_ratio"});
    else
        r.unusedKeys(*params, prefix, {"total_num_steps", "warmup_num_steps", "warmup_type", "warmup_min_lr", "warmup_max_lr"});
    if (warmupLr && params->contains("total_num_steps"))
        r.warn(prefix + "total_num_steps is not a WarmupLR parameter and is not used");

    const int warmup = static_cast<int>(r.integer(*params, prefix, "warmup_num_steps", 0, kMaxInt).value_or(1000));
    ts.warmupSteps = warmup;
    std::string warmupType = "log";
    if (params->contains("warmup_type")) {
        const json &t = params->at("warmup_type");
        if (t == "log" || t == "linear")
            warmupType = t.get<std::string>();
        else
            r.error(prefix + "warmup_type", "expected \"log\" or \"linear\", got " + shown(t));
    }
    if (warmupType == "log" && warmup > 0)
        r.warn(prefix + "warmup_type is \"log\"" + (params->contains("warmup_type") ? "" : " (DeepSpeed's default)") +
               ": Trellis warms up linearly");
    if (decayLr || cosineLr) {
        if (const auto total = r.integer(*params, prefix, "total_num_steps", 1, kMaxInt))
            ts.steps = static_cast<int>(*total);
        else if (!params->contains("total_num_steps"))
            r.error(prefix + "total_num_steps", type + " needs it");
    }
    if (cosineLr) {
        // The peak is the optimizer's lr; warm-up starts at warmup_min_ratio × lr.
        if (const auto ratio = r.number(*params, prefix, "warmup_min_ratio", 0); ratio > 0.0)
            r.warn(prefix + "warmup_min_ratio is " + num(*ratio) + ": Trellis warms up from 0");
        ts.minLr = ts.lr * r.number(*params, prefix, "cos_min_ratio", 0).value_or(0.0001);
        return;
    }
    ts.lr = r.number(*params, prefix, "warmup_max_lr", 0, true).value_or(0.001);
    if (const auto start = r.number(*params, prefix, "warmup_min_lr", 0); start > 0.0)
        r.warn(prefix + "warmup_min_lr is " + num(*start) + ": Trellis warms up from 0");
    if (warmupLr) {
        ts.minLr = ts.lr; // constant after the warm-up: a cosine from lr to lr
    } else {
        ts.minLr = 0;
        r.warn("scheduler.type WarmupDecayLR decays linearly to 0: Trellis decays along a cosine (min_lr 0)");
    }
}

} // namespace

Result<Plan> fromDeepSpeedConfig(const json &input, const Plan &base, Diagnostics *warnings)
{
    DeepSpeedReader r;
    if (!input.is_object()) {
        r.error("", "expected a JSON object, got " + shown(input));
        return r.finish(base, warnings);
    }
    json c = input;
    resolveAuto(c, base, r);
    r.unusedKeys(c, "", {"train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
                         "zero_optimization", "bf16", "bfloat16", "fp16", "gradient_clipping", "optimizer", "scheduler",
                         "activation_checkpointing"});
    Plan p = base;
    p.parallel.framework = Framework::DeepSpeed; // its memory accounting
    readBatch(c, r, p.parallel);
    readZero(c, r, p.model, p.parallel);
    readPrecision(c, r, p.parallel);
    p.training.gradClip = r.number(c, "", "gradient_clipping", 0).value_or(0.0);
    readOptimizer(c, r, p.training);
    readScheduler(c, r, p.training);
    // DeepSpeed checkpoints whole layers (the model calls deepspeed.checkpointing); the section
    // only tunes how, so its presence is what matters.
    if (const json *ac = r.section(c, "", "activation_checkpointing")) {
        r.unusedKeys(*ac, "activation_checkpointing.", {"partition_activations", "contiguous_memory_optimization",
                                                        "cpu_checkpointing", "number_checkpoints",
                                                        "synchronize_checkpoint_boundary", "profile"});
        p.parallel.recompute = Recompute::Full;
    }
    return r.finish(std::move(p), warnings);
}

json toDeepSpeedConfig(const Plan &p)
{
    const ParallelSpec &ps = p.parallel;
    const TrainingSpec &ts = p.training;
    json zero = {{"stage", ps.zero}, {"overlap_comm", ps.overlapGradReduce}};
    if (ps.bucketMb)
        zero["reduce_bucket_size"] = std::llround(*ps.bucketMb * kBytesPerMb / kFp32Bytes);
    json c = {
        {"train_batch_size", ps.globalBatch()},
        {"train_micro_batch_size_per_gpu", ps.microBatchSize},
        {"gradient_accumulation_steps", ps.microBatches},
        {"zero_optimization", zero},
        {"bf16", {{"enabled", ps.precision == Precision::Bf16}}},
        {"fp16", {{"enabled", ps.precision == Precision::Fp16}}},
        {"gradient_clipping", ts.gradClip},
        {"optimizer",
         {{"type", "AdamW"},
          {"params", {{"lr", ts.lr}, {"betas", {ts.beta1, ts.beta2}}, {"eps", ts.eps}, {"weight_decay", ts.weightDecay}}}}},
        // WarmupCosineLR peaks at the optimizer's lr. DeepSpeed warms up for at least 2 steps, so
        // warmup_steps 0 runs 2 warm-up steps there.
        {"scheduler",
         {{"type", "WarmupCosineLR"},
          {"params",
           {{"total_num_steps", ts.steps},
            {"warmup_num_steps", ts.warmupSteps},
            {"warmup_type", "linear"},
            {"warmup_min_ratio", 0.0},
            {"cos_min_ratio", ts.lr > 0 ? ts.minLr / ts.lr : 0.0}}}}},
    };
    if (ps.recompute == Recompute::Full)
        c["activation_checkpointing"] = {{"partition_activations", false}, {"contiguous_memory_optimization", false}};
    return c;
}

} // namespace trellis::plan
