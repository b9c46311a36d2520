// The whole model on the GPU against the same model on the CPU (fp32 both): GPT-2 and llama
// (grouped-query) configurations, several AdamW steps. Every step's loss and, on the first step,
// every parameter gradient (pre-clip, no clipping) must agree to the bounds below; the parameters
// after the last step too. Skips (exit 77) without a GPU.
#include "gpu_check.h"
#include "kernels/cuda/cuda_ops.h"
#include "trainer/adamw.h"
#include "trainer/model/gpt_model.h"

#include <cstdio>

using namespace trellis;
using namespace trellis::trainer;
using namespace trellis::gpucheck;

namespace {

void compare(const char *name, GptConfig cfg, int batch, int steps)
{
    std::mt19937 rng(7);
    std::uniform_int_distribution<int> tok(0, cfg.vocab - 1);
    Device &gpu = Device::cuda(0);
    GptModel<float> onCpu(cfg), onGpu(cfg, true, gpu);
    onCpu.initialize(42);
    onGpu.initialize(42);
    const std::vector<ParamRange> all{{0, onCpu.parameterCount()}};
    AdamW cpuOpt(all, {}, Device::cpu()), gpuOpt(all, {}, gpu);
    cpuOpt.setDecayMask(weightDecayMask(onCpu.tensors(), onCpu.parameterCount()));
    gpuOpt.setDecayMask(weightDecayMask(onGpu.tensors(), onGpu.parameterCount()));
    const int n = batch * cfg.maxSeqLen;
    for (int step = 0; step < steps; ++step) {
        std::vector<std::int32_t> tokens(n), targets(n);
        for (int i = 0; i < n; ++i) {
            tokens[i] = tok(rng);
            targets[i] = tok(rng);
        }
        onCpu.zeroGradients();
        onGpu.zeroGradients();
        const float lc = onCpu.forward(tokens.data(), targets.data(), batch, cfg.maxSeqLen);
        const float lg = onGpu.forward(tokens.data(), targets.data(), batch, cfg.maxSeqLen);
        onCpu.backward();
        onGpu.backward();
        const double rel = std::abs(static_cast<double>(lg) - lc) / std::abs(lc);
        check(rel <= 1e-5, std::string(name) + " step " + std::to_string(step) + " loss " + std::to_string(lc) +
                               " vs " + std::to_string(lg), rel, 1e-5);
        if (step == 0) {
            std::vector<float> gc(onCpu.gradients().begin(), onCpu.gradients().end());
            std::vector<float> gg(gc.size());
            gpu.toHost(gg.data(), onGpu.gradients().data(), gg.size() * sizeof(float));
            std::vector<double> errors;
            for (const auto &t : onCpu.tensors()) {
                auto slice = [&](const std::vector<float> &v) {
                    return std::vector<float>(v.begin() + static_cast<long>(t.offset),
                                              v.begin() + static_cast<long>(t.offset + t.size));
                };
                errors.push_back(relativeError(slice(gg), slice(gc)));
            }
            const auto worst = std::max_element(errors.begin(), errors.end());
            const std::string worstName = onCpu.tensors()[static_cast<std::size_t>(worst - errors.begin())].name;
            check(*worst <= 1e-4, std::string(name) + " every gradient tensor (worst: " + worstName + ")", *worst, 1e-4);
            if (*worst > 1e-4)
                for (std::size_t i = 0; i < errors.size(); ++i)
                    std::printf("     %-24s %.3g\n", onCpu.tensors()[i].name.c_str(), errors[i]);
        }
        cpuOpt.step(onCpu.parameters().data(), onCpu.gradients().data(), 1e-3);
        gpuOpt.step(onGpu.parameters().data(), onGpu.gradients().data(), 1e-3);
    }
    std::vector<float> pc(onCpu.parameters().begin(), onCpu.parameters().end()), pg(pc.size());
    gpu.toHost(pg.data(), onGpu.parameters().data(), pg.size() * sizeof(float));
    checkClose(std::string(name) + " parameters after " + std::to_string(steps) + " steps", pg, pc, 1e-4);
}

} // namespace

int main(int argc, char **argv)
{
    if (argc > 1 && std::string(argv[1]) == "--help") {
        std::printf("usage: tst_gpt_cuda\nThe model on GPU 0 against the CPU model (gpt and llama); exits 77 "
                    "(skipped) without a GPU.\n");
        return 0;
    }
    if (!Device::cudaAvailable()) {
        std::printf("SKIP: no CUDA device on this machine (the GPU checks run where one is lent)\n");
        return kSkip;
    }
    std::printf("device: %s\n", Device::cuda(0).name().c_str());
    GptConfig gpt;
    gpt.vocab = 97;
    gpt.maxSeqLen = 48;
    gpt.layers = 2;
    gpt.hidden = 96;
    gpt.heads = 4;
    gpt.ffn = 384;
    compare("gpt", gpt, 3, 4);
    GptConfig even = gpt;
    even.vocab = 128;
    compare("gpt (vocabulary 128)", even, 3, 2);
    GptConfig one = gpt;
    compare("gpt (batch 1)", one, 1, 2);
    GptConfig llama = gpt;
    llama.llama = true;
    llama.kvHeads = 2;
    llama.ffn = 256;
    compare("llama (GQA 4 over 2)", llama, 3, 4);
    return finish("tst_gpt_cuda");
}
