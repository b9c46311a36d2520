// See export_model.h.
#include "backend/trainer/transformers/export_model.h"

#include "backend/trainer/checkpoint/checkpoint.h"
#include "backend/trainer/transformers/hf_layout.h"
#include "backend/trainer/parallel/parallel_stack.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include <unistd.h>

namespace trellis::trainer {

namespace {

namespace fs = std::filesystem;

// A folder removed with everything in it when the export ends.
struct TemporaryRoot {
    fs::path path;
    ~TemporaryRoot()
    {
        std::error_code ignored;
        if (!path.empty())
            fs::remove_all(path, ignored);
    }
};

// The folder loadCheckpoint reads: a step folder is read alone (through a temporary folder
// holding a link to it); a checkpoint folder gives its newest complete checkpoint. "" or why not.
std::string checkpointRoot(const std::string &checkpointDir, fs::path &root, TemporaryRoot &only)
{
    root = fs::path(checkpointDir).lexically_normal();
    if (!root.has_filename()) // a trailing slash
        root = root.parent_path();
    std::error_code ec;
    if (fs::exists(root / "meta.json")) {
        const fs::path step = fs::absolute(root, ec);
        only.path = fs::temp_directory_path(ec) / ("trellis-export-" + std::to_string(::getpid()));
        fs::create_directories(only.path, ec);
        fs::create_directory_symlink(step, only.path / step.filename(), ec);
        if (ec)
            return checkpointDir + ": cannot be read alone (" + ec.message() + ")";
        root = only.path;
    }
    if (!fs::is_directory(root, ec))
        return checkpointDir + ": not a checkpoint folder";
    return {};
}

// The model as the newest readable meta.json records it; false when none does.
bool newestModel(const fs::path &root, plan::ModelSpec &spec)
{
    std::error_code ec;
    std::vector<fs::path> steps;
    static const std::regex name("step-[0-9]{8}");
    for (const auto &entry : fs::directory_iterator(root, ec))
        if (entry.is_directory() && std::regex_match(entry.path().filename().string(), name))
            steps.push_back(entry.path());
    std::sort(steps.rbegin(), steps.rend());
    for (const fs::path &s : steps) {
        std::ifstream in(s / "meta.json");
        nlohmann::json meta;
        try {
            in >> meta;
        } catch (const std::exception &) {
            continue;
        }
        const nlohmann::json &m = meta["model"];
        if (!m.is_object())
            continue;
        spec.arch = m.value("arch", std::string(plan::kArchGpt));
        spec.layers = m.value("layers", 0);
        spec.hidden = m.value("hidden", 0);
        spec.heads = m.value("heads", 0);
        spec.kvHeads = m.value("kv_heads", spec.heads);
        spec.ffn = m.value("ffn", 0);
        spec.seqLen = m.value("seq_len", 0);
        spec.vocab = m.value("vocab", 0);
        spec.moe.experts = m.value("experts", 0);
        return true;
    }
    return false;
}

} // namespace

ExportResult exportCheckpointModel(const std::string &checkpointDir, const std::string &outDir, const std::string &dtype)
{
    ExportResult result;
    fs::path root;
    TemporaryRoot only;
    if ((result.error = checkpointRoot(checkpointDir, root, only)); !result.error.empty())
        return result;
    plan::Plan plan;
    if (!newestModel(root, plan.model)) {
        result.error = root.string() + ": no complete checkpoint (step-NNNNNNNN/meta.json) to export";
        return result;
    }
    if (plan.model.moe.experts > 0) {
        result.error = root.string() + ": a mixture-of-experts model has no transformers layout in this version (model.moe)";
        return result;
    }
    const GptConfig config = modelConfigOf(plan.model);
    std::uint64_t count = 0;
    try {
        count = GptModel<float>(config, false).parameterCount();
    } catch (const std::exception &) {
        result.error = root.string() + ": the checkpoint's model is not one trellis-trainer builds";
        return result;
    }
    TrainingState state;
    const LoadResult loaded = loadCheckpoint(root.string(), plan, count, {}, state);
    if (!loaded.error.empty() || !loaded.found) {
        result.error = !loaded.error.empty() ? loaded.error
                                             : root.string() + ": no complete checkpoint" +
                                                   (loaded.skipped.empty() ? std::string() : " (" + loaded.skipped.front() + ")");
        return result;
    }
    std::error_code ec;
    result.checkpoint = only.path.empty() ? loaded.path : fs::absolute(fs::path(checkpointDir), ec).lexically_normal().string();
    result.step = state.step;
    result.arch = plan.model.arch;
    result.parameters = count;
    result.dtype = dtype.empty() ? state.precision : dtype;
    if (result.dtype != "fp32" && result.dtype != "bf16" && result.dtype != "fp16") {
        result.error = (dtype.empty() ? root.string() + ": meta.json's precision '" : std::string("--dtype '")) + result.dtype +
                       "' is not fp32, bf16 or fp16";
        return result;
    }
    const std::string fileType = result.dtype == "bf16" ? "BF16" : result.dtype == "fp16" ? "F16" : "F32";
    result.error = exportHuggingFace(config, state.parameters, outDir,
                                     "trellis-trainer checkpoint " + result.checkpoint + " (step " + std::to_string(state.step) + ")",
                                     fileType);
    return result;
}

} // namespace trellis::trainer
