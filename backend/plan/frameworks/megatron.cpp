// Megatron-LM argument-line interop and the shell-word splitter it reads with; the mapping and its
// rules are in framework_configs.h. Megatron-LM's defaults are those of megatron/training/arguments.py.
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

using interop_detail::kMaxInt;
using interop_detail::num;
using interop_detail::Report;
using interop_detail::times;

// ---------------------------------------------------------------------------------------------
// Shell words

Result<std::vector<std::string>> splitShellWords(std::string_view line)
{
    std::vector<std::string> words;
    std::string word;
    bool inWord = false;
    char quote = 0;
    const auto at = [&](std::size_t i) { return i < line.size() ? line[i] : '\0'; };
    for (std::size_t i = 0; i < line.size(); ++i) {
        const char ch = line[i];
        if (quote == '\'') {
            if (ch == '\'')
                quote = 0;
            else
                word += ch;
        } else if (quote == '"') {
            if (ch == '"') {
                quote = 0;
            } else if (ch == '\\' && at(i + 1) == '\n') {
                ++i; // continuation inside double quotes
            } else if (ch == '\\' && std::string_view("$`\"\\").find(at(i + 1)) != std::string_view::npos) {
                word += line[++i];
            } else {
                word += ch; // other backslashes stay
            }
        } else if (ch == '\\') {
            if (at(i + 1) == '\n') {
                ++i; // continuation
            } else if (at(i + 1) == '\r' && at(i + 2) == '\n') {
                i += 2; // continuation in a file with CRLF line ends
            } else if (i + 1 < line.size()) {
                word += line[++i];
                inWord = true;
            }
        } else if (ch == '\'' || ch == '"') {
            quote = ch;
            inWord = true;
        } else if (ch == '#' && !inWord) {
            while (i + 1 < line.size() && line[i + 1] != '\n')
                ++i; // a comment runs to the end of the line
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
    if (quote)
        return Result<std::vector<std::string>>::failure("megatron", std::string("unterminated ") + quote + " quote");
    if (inWord)
        words.push_back(word);
    return words;
}

// ---------------------------------------------------------------------------------------------
// Megatron-LM

namespace {

enum class Arg { Switch, Positive, NonNegative, Real, Seed, Text };

const std::map<std::string, Arg, std::less<>> &megatronFlags()
{
    static const std::map<std::string, Arg, std::less<>> flags = {
        // Layout and data parallelism.
        {"--tensor-model-parallel-size", Arg::Positive},
        {"--pipeline-model-parallel-size", Arg::Positive},
        {"--context-parallel-size", Arg::Positive},
        {"--expert-model-parallel-size", Arg::Positive},
        {"--num-layers-per-virtual-pipeline-stage", Arg::Positive},
        {"--num-virtual-stages-per-pipeline-rank", Arg::Positive},
        {"--virtual-pipeline-model-parallel-size", Arg::Positive},
        {"--sequence-parallel", Arg::Switch},
        {"--use-distributed-optimizer", Arg::Switch},
        {"--overlap-grad-reduce", Arg::Switch},
        {"--use-flash-attn", Arg::Switch},
        {"--micro-batch-size", Arg::Positive},
        {"--global-batch-size", Arg::Positive},
        // Model.
        {"--num-layers", Arg::Positive},
        {"--hidden-size", Arg::Positive},
        {"--num-attention-heads", Arg::Positive},
        {"--group-query-attention", Arg::Switch},
        {"--num-query-groups", Arg::Positive},
        {"--ffn-hidden-size", Arg::Positive},
        {"--seq-length", Arg::Positive},
        {"--max-position-embeddings", Arg::Positive},
        {"--vocab-size", Arg::Positive},
        {"--make-vocab-size-divisible-by", Arg::Positive},
        {"--num-experts", Arg::Positive},
        {"--moe-router-topk", Arg::Positive},
        {"--moe-expert-capacity-factor", Arg::Real},
        {"--moe-aux-loss-coeff", Arg::Real},
        {"--swiglu", Arg::Switch},
        {"--normalization", Arg::Text},
        {"--position-embedding-type", Arg::Text},
        {"--untie-embeddings-and-output-weights", Arg::Switch},
        {"--disable-bias-linear", Arg::Switch},
        // Precision and recompute.
        {"--bf16", Arg::Switch},
        {"--fp16", Arg::Switch},
        {"--recompute-granularity", Arg::Text},
        {"--recompute-activations", Arg::Switch},
        {"--recompute-method", Arg::Text},
        {"--recompute-num-layers", Arg::Positive},
        // Optimizer and schedule.
        {"--lr", Arg::Real},
        {"--min-lr", Arg::Real},
        {"--lr-warmup-iters", Arg::NonNegative},
        {"--lr-warmup-fraction", Arg::Real},
        {"--lr-decay-style", Arg::Text},
        {"--lr-decay-iters", Arg::Positive},
        {"--train-iters", Arg::Positive},
        {"--weight-decay", Arg::Real},
        {"--adam-beta1", Arg::Real},
        {"--adam-beta2", Arg::Real},
        {"--adam-eps", Arg::Real},
        {"--clip-grad", Arg::Real},
        {"--seed", Arg::Seed},
        // Checkpoints.
        {"--save-interval", Arg::NonNegative},
        {"--save", Arg::Text},
        {"--load", Arg::Text},
    };
    return flags;
}

std::string_view flagName(std::string_view word) { return word.substr(0, word.find('=')); }

// Where Megatron's arguments start: after the script (torchrun … pretrain_gpt.py), or after the
// leading words that are not options (a program name, VAR=value) when there is no script.
std::size_t firstArgument(const std::vector<std::string> &words)
{
    for (std::size_t i = 0; i < words.size(); ++i) {
        if (megatronFlags().count(flagName(words[i])))
            break;
        if (words[i].ends_with(".py"))
            return i + 1;
    }
    std::size_t i = 0;
    while (i < words.size() && !words[i].starts_with("-"))
        ++i;
    return i;
}

// A parsed Megatron-LM argument line: switches given, values by flag, typed access with errors
// naming the flag. Unknown flags and stray words are warnings.
class MegatronLine : public Report {
public:
    explicit MegatronLine(const std::vector<std::string> &words) : Report("megatron")
    {
        for (std::size_t i = firstArgument(words); i < words.size(); ++i) {
            const std::string &word = words[i];
            if (!word.starts_with("--")) {
                const bool variable = word.starts_with("$");
                warn("'" + word + (variable ? "' is an unexpanded shell variable and is not used" : "' is not a flag and is not used"));
                continue;
            }
            const std::string flag(flagName(word));
            const bool inlineValue = flag.size() < word.size();
            std::string value = inlineValue ? word.substr(flag.size() + 1) : std::string();
            const auto known = megatronFlags().find(flag);
            if (known == megatronFlags().end()) {
                warn(flag + " is not used");
                while (!inlineValue && i + 1 < words.size() && !words[i + 1].starts_with("--"))
                    ++i; // its values (some flags take several: --rampup-batch-size 16 16 5859375)
                continue;
            }
            if (known->second == Arg::Switch) {
                if (inlineValue)
                    error(flag, "takes no value, got '" + value + "'");
                else
                    m_switches.insert(flag);
                continue;
            }
            if (!inlineValue) {
                if (i + 1 >= words.size() || words[i + 1].starts_with("--")) {
                    error(flag, "needs a value");
                    continue;
                }
                value = words[++i];
            }
            m_values[flag] = value; // the last one wins, as with argparse
        }
    }

    bool on(const char *flag) const { return m_switches.count(flag) > 0; }
    bool has(const char *flag) const { return m_values.count(flag) > 0; }

    std::optional<int> positive(const char *flag) { return integer(flag, 1, "a positive integer"); }
    std::optional<int> nonNegative(const char *flag) { return integer(flag, 0, "a non-negative integer"); }

    std::optional<double> real(const char *flag)
    {
        const auto it = m_values.find(flag);
        if (it == m_values.end())
            return std::nullopt;
        const std::string &s = it->second;
        double v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc() && end == s.data() + s.size() && !s.empty() && std::isfinite(v) && v >= 0)
            return v;
        error(flag, "expected a non-negative number, got '" + s + "'");
        return std::nullopt;
    }

    std::optional<std::uint64_t> seed(const char *flag)
    {
        const auto it = m_values.find(flag);
        if (it == m_values.end())
            return std::nullopt;
        const std::string &s = it->second;
        std::uint64_t v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc() && end == s.data() + s.size() && !s.empty())
            return v;
        error(flag, "expected a non-negative integer, got '" + s + "'");
        return std::nullopt;
    }

    std::optional<std::string> text(const char *flag)
    {
        const auto it = m_values.find(flag);
        if (it == m_values.end())
            return std::nullopt;
        if (it->second.starts_with("$")) {
            error(flag, "'" + it->second + "' is an unexpanded shell variable");
            return std::nullopt;
        }
        return it->second;
    }

private:
    std::optional<int> integer(const char *flag, long long min, const char *expected)
    {
        const auto it = m_values.find(flag);
        if (it == m_values.end())
            return std::nullopt;
        const std::string &s = it->second;
        long long v = 0;
        const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
        if (ec == std::errc() && end == s.data() + s.size() && !s.empty() && v >= min && v <= kMaxInt)
            return static_cast<int>(v);
        error(flag, std::string("expected ") + expected + ", got '" + s + "'");
        return std::nullopt;
    }

    std::set<std::string, std::less<>> m_switches;
    std::map<std::string, std::string, std::less<>> m_values;
};

std::string str(long long v) { return std::to_string(v); }

// Model flags replace the base's fields; any of them clears model.preset.
void readModel(MegatronLine &line, ModelSpec &m)
{
    const auto layers = line.positive("--num-layers");
    const auto hidden = line.positive("--hidden-size");
    const auto heads = line.positive("--num-attention-heads");
    const auto groups = line.positive("--num-query-groups");
    const auto ffn = line.positive("--ffn-hidden-size");
    const auto seq = line.positive("--seq-length");
    const auto positions = line.positive("--max-position-embeddings");
    const auto vocab = line.positive("--vocab-size");
    const auto experts = line.positive("--num-experts");
    const auto topK = line.positive("--moe-router-topk");
    if (layers) m.layers = *layers;
    if (hidden) m.hidden = *hidden;
    if (ffn)
        m.ffn = *ffn;
    else if (hidden)
        m.ffn = static_cast<int>(std::min(4LL * *hidden, kMaxInt)); // Megatron's default: 4 × hidden
    if (heads) m.heads = *heads;
    // Without --group-query-attention Megatron ignores --num-query-groups (multi-head attention);
    // with it and no --num-query-groups there is one group.
    if (line.on("--group-query-attention")) {
        m.kvHeads = groups.value_or(1);
    } else if (heads || groups) {
        if (groups)
            line.warn("--num-query-groups has no effect without --group-query-attention");
        m.kvHeads = m.heads;
    }
    // Trellis' learned position table has seq_len rows, Megatron's max_position_embeddings.
    if (seq) m.seqLen = *seq;
    if (positions && seq && *positions < *seq)
        line.error("--max-position-embeddings", str(*positions) + " is less than --seq-length (" + str(*seq) + ")");
    else if (positions && seq && *positions > *seq)
        line.warn("--max-position-embeddings (" + str(*positions) + ") is longer than --seq-length (" + str(*seq) +
                  "): Trellis' position table has seq_len rows");
    else if (positions && !seq)
        m.seqLen = *positions;
    if (vocab) m.vocab = *vocab;
    if (experts) {
        m.moe.experts = *experts;
        m.moe.topK = topK.value_or(2); // Megatron's default
        // Megatron's defaults: dropless (no capacity factor), no load-balancing loss.
        m.moe.capacityFactor = std::nullopt;
        m.moe.auxLossCoef = 0.0;
    } else if (topK) {
        m.moe.topK = *topK;
    }
    if (const auto factor = line.real("--moe-expert-capacity-factor")) {
        if (*factor > 0)
            m.moe.capacityFactor = *factor;
        else
            line.error("--moe-expert-capacity-factor", "must be greater than 0, got " + std::to_string(*factor));
    }
    if (const auto coef = line.real("--moe-aux-loss-coeff")) {
        if (*coef >= 0)
            m.moe.auxLossCoef = *coef;
        else
            line.error("--moe-aux-loss-coeff", "must not be negative, got " + std::to_string(*coef));
    }
    // The Llama recipe (SwiGLU, RMSNorm, rotary positions, untied head, no biases) is Trellis'
    // llama architecture; --swiglu decides, the other parts are expected with it.
    const auto norm = line.text("--normalization");
    const auto positionType = line.text("--position-embedding-type");
    const bool llamaFlags = line.on("--swiglu") || line.on("--untie-embeddings-and-output-weights") ||
                            line.on("--disable-bias-linear") || (norm && *norm == "RMSNorm") || (positionType && *positionType == "rope");
    if (line.on("--swiglu")) {
        m.arch = kArchLlama;
        if (!norm || *norm != "RMSNorm" || !line.on("--untie-embeddings-and-output-weights") || !line.on("--disable-bias-linear"))
            line.warn("--swiglu is planned as the llama architecture (RMSNorm, untied head, no biases), which the other "
                      "flags here do not all ask for");
    } else if (llamaFlags) {
        line.warn("without --swiglu the model is planned as the gpt architecture; RMSNorm, rotary positions, the untied "
                  "head and bias-free linears are not modelled apart");
    }
    if (layers || hidden || heads || groups || line.on("--group-query-attention") || ffn || seq || positions || vocab || experts ||
        topK || llamaFlags) {
        m.preset.clear();
        if (!line.on("--swiglu"))
            m.arch = kArchGpt;
    }
}

// Megatron pads the vocabulary to a multiple of --make-vocab-size-divisible-by × tp.
void padVocabulary(MegatronLine &line, ModelSpec &m, int tp)
{
    const int divisor = line.positive("--make-vocab-size-divisible-by").value_or(128);
    const long long multiple = static_cast<long long>(divisor) * tp;
    if (m.vocab <= 0 || m.vocab % multiple == 0)
        return;
    const long long padded = (m.vocab + multiple - 1) / multiple * multiple;
    if (padded > kMaxInt)
        return;
    line.warn("the vocabulary (" + str(m.vocab) + ") is padded to " + str(padded) + ", a multiple of --make-vocab-size-divisible-by (" +
              str(divisor) + ") × --tensor-model-parallel-size (" + str(tp) + "), as Megatron pads it");
    m.vocab = static_cast<int>(padded);
    m.preset.clear();
}

// Virtual pipeline stages: three alternative flags, at most one of them (Megatron's rule).
void readVirtualStages(MegatronLine &line, const ModelSpec &m, ParallelSpec &ps)
{
    const auto perStage = line.positive("--num-layers-per-virtual-pipeline-stage");
    const auto perRank = line.positive("--num-virtual-stages-per-pipeline-rank");
    const auto legacy = line.positive("--virtual-pipeline-model-parallel-size");
    ps.virtualStages = 1;
    if (int(perStage.has_value()) + int(perRank.has_value()) + int(legacy.has_value()) > 1) {
        line.error("", "--num-layers-per-virtual-pipeline-stage, --num-virtual-stages-per-pipeline-rank and "
                       "--virtual-pipeline-model-parallel-size are alternatives; give one");
    } else if (perStage) {
        const char *flag = "--num-layers-per-virtual-pipeline-stage";
        if (m.layers % ps.pp != 0)
            line.error(flag, "the model's " + str(m.layers) + " layers are not a multiple of --pipeline-model-parallel-size (" +
                                 str(ps.pp) + ")");
        else if ((m.layers / ps.pp) % *perStage != 0)
            line.error(flag, str(*perStage) + " does not divide the " + str(m.layers / ps.pp) + " layers of each pipeline stage (" +
                                 str(m.layers) + " layers / --pipeline-model-parallel-size " + str(ps.pp) + ")");
        else
            ps.virtualStages = m.layers / ps.pp / *perStage;
    } else if (perRank || legacy) {
        ps.virtualStages = perRank ? *perRank : *legacy;
    }
    // Megatron runs 1F1B, interleaved when there are virtual stages.
    ps.schedule = ps.virtualStages > 1 ? "interleaved-1f1b" : "1f1b";
}

void readRecompute(MegatronLine &line, const ModelSpec &m, ParallelSpec &ps)
{
    ps.recompute = Recompute::None;
    const auto granularity = line.text("--recompute-granularity");
    const auto method = line.text("--recompute-method");
    const auto layers = line.positive("--recompute-num-layers");
    if (granularity == "full")
        ps.recompute = Recompute::Full;
    else if (granularity == "selective")
        ps.recompute = Recompute::Selective;
    else if (granularity)
        line.error("--recompute-granularity", "expected full or selective, got '" + *granularity + "'");
    if (line.on("--recompute-activations")) {
        if (ps.recompute == Recompute::Full)
            line.warn("--recompute-activations makes --recompute-granularity selective (Megatron's rule)");
        ps.recompute = Recompute::Selective;
    }
    if (method && *method != "uniform" && *method != "block") {
        line.error("--recompute-method", "expected uniform or block, got '" + *method + "'");
    } else if (ps.recompute == Recompute::Selective && method) {
        line.error("--recompute-method", "Megatron allows it only with --recompute-granularity full");
    } else if (ps.recompute == Recompute::Full && !method) {
        line.warn("--recompute-granularity full without --recompute-method: Megatron needs one; read as every layer recomputed");
    } else if (ps.recompute == Recompute::Full && method == "block" && layers && ps.pp > 0 && ps.virtualStages > 0 &&
               *layers < m.layers / (ps.pp * ps.virtualStages)) {
        line.warn("--recompute-method block recomputes " + str(*layers) + " of the " + str(m.layers / (ps.pp * ps.virtualStages)) +
                  " layers of each pipeline stage: Trellis recomputes all of them");
    } else if (ps.recompute != Recompute::Full && (method || layers)) {
        const std::string flag = method ? "--recompute-method" : "--recompute-num-layers";
        line.warn(flag + " has no effect without --recompute-granularity full");
    }
}

// dp = world / (tp·pp·cp), then the batch; a layout that does not divide the world is an error
// and leaves the batch alone.
void readBatch(MegatronLine &line, const Plan &base, ParallelSpec &ps)
{
    const int slots = base.cluster.totalSlots();
    const long long world = slots > 0 ? slots : base.parallel.worldSize();
    const std::string worldText = slots > 0 ? "the base cluster's " + str(slots) + " slots" : "the base plan's " + str(world) + " ranks";
    const long long modelParallel = 1LL * ps.tp * ps.pp * ps.cp;
    if (world < 1) {
        line.error("", "the base plan has neither cluster slots nor ranks to derive dp from");
        return;
    }
    if (world % modelParallel != 0) {
        line.error("", "--tensor-model-parallel-size (" + str(ps.tp) + ") × --pipeline-model-parallel-size (" + str(ps.pp) +
                           ") × --context-parallel-size (" + str(ps.cp) + ") = " + str(modelParallel) + " does not divide " + worldText);
        return;
    }
    ps.dp = static_cast<int>(world / modelParallel);
    if (const auto micro = line.positive("--micro-batch-size"))
        ps.microBatchSize = *micro;
    ps.microBatches = 1; // Megatron's default global batch: micro × dp
    if (const auto global = line.positive("--global-batch-size"); global && ps.microBatchSize > 0) {
        const long long per = 1LL * ps.microBatchSize * ps.dp;
        if (*global % per != 0)
            line.error("--global-batch-size", str(*global) + " is not a multiple of --micro-batch-size (" + str(ps.microBatchSize) +
                                                  ") × dp (" + str(ps.dp) + ") = " + str(per));
        else
            ps.microBatches = static_cast<int>(*global / per);
    }
}

void readTraining(MegatronLine &line, TrainingSpec &ts)
{
    if (const auto v = line.real("--lr")) ts.lr = *v;
    if (const auto v = line.real("--min-lr")) ts.minLr = *v;
    if (const auto v = line.positive("--train-iters")) ts.steps = *v;
    if (const auto v = line.real("--weight-decay")) ts.weightDecay = *v;
    if (const auto v = line.real("--adam-beta1")) ts.beta1 = *v;
    if (const auto v = line.real("--adam-beta2")) ts.beta2 = *v;
    if (const auto v = line.real("--adam-eps")) ts.eps = *v;
    if (const auto v = line.real("--clip-grad")) ts.gradClip = *v;
    if (const auto v = line.seed("--seed")) ts.seed = *v;

    // Megatron decays from the end of the warm-up to --lr-decay-iters (default: --train-iters);
    // Trellis to the last step.
    const auto decayIters = line.positive("--lr-decay-iters");
    if (decayIters && *decayIters != ts.steps)
        line.warn("--lr-decay-iters (" + str(*decayIters) + ") differs from the training steps (" + str(ts.steps) +
                  "): Trellis decays the learning rate until the last step");
    const auto warmupIters = line.nonNegative("--lr-warmup-iters");
    const auto warmupFraction = line.real("--lr-warmup-fraction");
    if (warmupIters && warmupFraction)
        line.error("--lr-warmup-fraction", "cannot be combined with --lr-warmup-iters");
    else if (warmupIters)
        ts.warmupSteps = *warmupIters;
    else if (warmupFraction)
        ts.warmupSteps = static_cast<int>(std::llround(*warmupFraction * decayIters.value_or(ts.steps)));

    const auto style = line.text("--lr-decay-style");
    if (style == "constant")
        ts.minLr = ts.lr; // a cosine from lr to lr
    else if (style && *style != "cosine")
        line.warn("--lr-decay-style " + *style + ": Trellis decays along a cosine");
    else if (!style && (line.has("--lr") || line.has("--train-iters")))
        line.warn("--lr-decay-style is not given: Megatron decays linearly by default, Trellis along a cosine");

    if (const auto v = line.nonNegative("--save-interval")) ts.checkpoint.every = *v;
    // Trellis saves to and resumes from one folder.
    const auto save = line.text("--save");
    const auto load = line.text("--load");
    if (save)
        ts.checkpoint.dir = *save;
    else if (load)
        ts.checkpoint.dir = *load;
    if (save && load && *save != *load)
        line.warn("--load (" + *load + ") differs from --save: Trellis resumes from the folder it saves to");
}

} // namespace

Result<Plan> fromMegatronArgs(std::string_view argLine, const Plan &base, Diagnostics *warnings)
{
    const auto words = splitShellWords(argLine);
    if (!words)
        return words.errors();
    MegatronLine line(words.value());
    Plan p = base;
    ParallelSpec &ps = p.parallel;
    readModel(line, p.model);

    ps.tp = line.positive("--tensor-model-parallel-size").value_or(1);
    ps.pp = line.positive("--pipeline-model-parallel-size").value_or(1);
    ps.cp = line.positive("--context-parallel-size").value_or(1);
    ps.ep = line.positive("--expert-model-parallel-size").value_or(1);
    padVocabulary(line, p.model, ps.tp);
    readVirtualStages(line, p.model, ps);
    // Switches: absent means off (Megatron's defaults).
    ps.sequenceParallel = line.on("--sequence-parallel");
    ps.zero = line.on("--use-distributed-optimizer") ? 1 : 0;
    ps.overlapGradReduce = line.on("--overlap-grad-reduce");
    if (line.on("--bf16") && line.on("--fp16"))
        line.error("", "--bf16 and --fp16 cannot both be given");
    ps.precision = line.on("--bf16") ? Precision::Bf16 : line.on("--fp16") ? Precision::Fp16 : Precision::Fp32;
    readRecompute(line, p.model, ps);
    // The plan is Megatron-LM's: its memory accounting (fp32 main gradients), and flash
    // attention when asked for.
    ps.framework = Framework::Megatron;
    if (line.on("--use-flash-attn"))
        ps.attention = AttentionKernel::Flash;
    readBatch(line, base, ps);
    readTraining(line, p.training);
    return line.finish(std::move(p), warnings);
}

std::string toMegatronArgs(const Plan &p)
{
    const ParallelSpec &ps = p.parallel;
    const ModelSpec &m = p.model;
    const TrainingSpec &ts = p.training;
    std::ostringstream s;
    s << "--tensor-model-parallel-size " << ps.tp << " --pipeline-model-parallel-size " << ps.pp;
    if (ps.virtualStages > 1) {
        // The per-stage layer count is understood by every Megatron since 2021; uneven splits need
        // the newer per-rank flag.
        if (ps.pp > 0 && m.layers % (ps.pp * ps.virtualStages) == 0)
            s << " --num-layers-per-virtual-pipeline-stage " << m.layers / (ps.pp * ps.virtualStages);
        else
            s << " --num-virtual-stages-per-pipeline-rank " << ps.virtualStages;
    }
    if (ps.cp > 1) s << " --context-parallel-size " << ps.cp;
    if (ps.ep > 1) s << " --expert-model-parallel-size " << ps.ep;
    if (ps.sequenceParallel) s << " --sequence-parallel";
    if (ps.zero >= 1) s << " --use-distributed-optimizer"; // Megatron's optimizer sharding is ZeRO-1
    if (ps.overlapGradReduce) s << " --overlap-grad-reduce";

    s << " --num-layers " << m.layers << " --hidden-size " << m.hidden << " --num-attention-heads " << m.heads;
    if (m.kvHeads != m.heads) s << " --group-query-attention --num-query-groups " << m.kvHeads;
    s << " --ffn-hidden-size " << m.ffn << " --seq-length " << m.seqLen << " --max-position-embeddings " << m.seqLen
      << " --vocab-size " << m.vocab;
    if (m.vocab % (128LL * ps.tp) != 0) s << " --make-vocab-size-divisible-by 1"; // keep the vocabulary as it is
    if (m.moe.experts > 0) {
        s << " --num-experts " << m.moe.experts << " --moe-router-topk " << m.moe.topK << " --moe-aux-loss-coeff "
          << m.moe.auxLossCoef;
        if (m.moe.capacityFactor)
            s << " --moe-expert-capacity-factor " << *m.moe.capacityFactor;
    }
    if (m.arch == kArchLlama)
        s << " --swiglu --normalization RMSNorm --position-embedding-type rope --untie-embeddings-and-output-weights"
             " --disable-bias-linear";

    s << " --micro-batch-size " << ps.microBatchSize << " --global-batch-size " << ps.globalBatch();
    if (ps.precision == Precision::Bf16) s << " --bf16";
    if (ps.precision == Precision::Fp16) s << " --fp16";
    if (ps.attention == AttentionKernel::Flash) s << " --use-flash-attn";
    if (ps.recompute == Recompute::Selective) s << " --recompute-granularity selective";
    if (ps.recompute == Recompute::Full) s << " --recompute-granularity full --recompute-method uniform --recompute-num-layers 1";

    s << " --lr " << num(ts.lr) << " --min-lr " << num(ts.minLr) << " --lr-decay-style cosine --lr-warmup-iters "
      << ts.warmupSteps << " --train-iters " << ts.steps << " --weight-decay " << num(ts.weightDecay) << " --adam-beta1 "
      << num(ts.beta1) << " --adam-beta2 " << num(ts.beta2) << " --adam-eps " << num(ts.eps) << " --clip-grad "
      << num(ts.gradClip) << " --seed " << ts.seed;

    if (ts.checkpoint.every > 0) s << " --save-interval " << ts.checkpoint.every;
    if (!ts.checkpoint.dir.empty()) {
        std::string quoted = ts.checkpoint.dir; // single-quoted for a shell: ' becomes '\''
        for (std::size_t at = 0; (at = quoted.find('\'', at)) != std::string::npos; at += 4)
            quoted.replace(at, 1, "'\\''");
        s << " --save '" << quoted << "' --load '" << quoted << "'";
    }
    return s.str();
}

} // namespace trellis::plan
