// See export_model.h.
#include "trainer/interop/export_model.h"

#include "trainer/checkpoint.h"
#include "trainer/interop/hf_layout.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>

#include <unistd.h>

namespace trellis::trainer {

ExportResult exportCheckpointModel(const std::string &checkpointDir, const std::string &outDir, const std::string &dtype)
{
    namespace fs = std::filesystem;
    ExportResult result;
    // A step folder is read alone (through a temporary folder holding a link to it); a checkpoint
    // folder gives its newest complete checkpoint.
    fs::path root = fs::path(checkpointDir).lexically_normal();
    if (!root.has_filename()) // a trailing slash
        root = root.parent_path();
    std::error_code ec;
    struct TemporaryRoot {
        fs::path path;
        ~TemporaryRoot()
        {
            std::error_code ignored;
            if (!path.empty())
                fs::remove_all(path, ignored);
        }
    } only;
    if (fs::exists(root / "meta.json")) {
        const fs::path step = fs::absolute(root, ec);
        only.path = fs::temp_directory_path(ec) / ("trellis-export-" + std::to_string(::getpid()));
        fs::create_directories(only.path, ec);
        fs::create_directory_symlink(step, only.path / step.filename(), ec);
        if (ec) {
            result.error = checkpointDir + ": cannot be read alone (" + ec.message() + ")";
            return result;
        }
        root = only.path;
    }
    if (!fs::is_directory(root, ec)) {
        result.error = checkpointDir + ": not a checkpoint folder";
        return result;
    }
    // The model as the newest readable meta.json records it.
    std::vector<fs::path> steps;
    static const std::regex name("step-[0-9]{8}");
    for (const auto &entry : fs::directory_iterator(root, ec))
        if (entry.is_directory() && std::regex_match(entry.path().filename().string(), name))
            steps.push_back(entry.path());
    std::sort(steps.rbegin(), steps.rend());
    plan::Plan plan;
    bool haveModel = false;
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
        plan::ModelSpec &spec = plan.model;
        spec.arch = m.value("arch", std::string(plan::kArchGpt));
        spec.layers = m.value("layers", 0);
        spec.hidden = m.value("hidden", 0);
        spec.heads = m.value("heads", 0);
        spec.kvHeads = m.value("kv_heads", spec.heads);
        spec.ffn = m.value("ffn", 0);
        spec.seqLen = m.value("seq_len", 0);
        spec.vocab = m.value("vocab", 0);
        spec.moe.experts = m.value("experts", 0);
        haveModel = true;
        break;
    }
    if (!haveModel) {
        result.error = root.string() + ": no complete checkpoint (step-NNNNNNNN/meta.json) to export";
        return result;
    }
    if (plan.model.moe.experts > 0) {
        result.error = root.string() + ": a mixture-of-experts model has no transformers layout in this version (model.moe)";
        return result;
    }
    GptConfig config;
    config.vocab = plan.model.vocab;
    config.maxSeqLen = plan.model.seqLen;
    config.layers = plan.model.layers;
    config.hidden = plan.model.hidden;
    config.heads = plan.model.heads;
    config.kvHeads = plan.model.kvHeads;
    config.ffn = plan.model.ffn;
    config.llama = plan.model.arch == plan::kArchLlama;
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
