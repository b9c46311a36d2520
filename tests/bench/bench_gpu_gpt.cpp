// GPT-2 124M training steps on GPU 0 (issue #16's benchmark): vocabulary 50304, sequence 1024,
// 12 layers of 768 with 12 heads, fp32 parameters and activations (TF32 GEMMs with --tf32), AdamW.
// Prints tokens/s, peak device memory, the loss of every step, and the model FLOP utilisation
// against the device's dense peak for that math: from the table below for the devices it names
// (datasheet figures), from --peak-tflops otherwise, and left out when neither knows it. The
// PyTorch baseline runs beside it in the same device call: tests/bench/torch_gpt_gpu.py.
// Usage: bench_gpu_gpt [--batch B] [--steps N] [--tf32] [--peak-tflops T]
#include "kernels/cuda/cuda_ops.h"
#include "trainer/adamw.h"
#include "trainer/model/gpt_model.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace trellis;
using namespace trellis::trainer;

namespace {

// Dense peak TFLOP/s (fp32 without tensor cores, TF32 with), from NVIDIA's datasheets; 0: unknown.
double datasheetPeakTflops(const std::string &device, bool tf32)
{
    struct Peak {
        const char *name; // a part of the CUDA device name
        double fp32, tf32;
    };
    static const Peak peaks[] = {
        {"H200", 66.9, 494.7},      {"H100 80GB HBM3", 66.9, 494.7}, {"H100 SXM", 66.9, 494.7},
        {"H100 PCIe", 51.2, 378.0}, {"A100", 19.5, 156.0},
    };
    for (const Peak &p : peaks)
        if (device.find(p.name) != std::string::npos)
            return tf32 ? p.tf32 : p.fp32;
    return 0.0;
}

} // namespace

int main(int argc, char **argv)
{
    int batch = 8, steps = 10;
    bool tf32 = false;
    double peakTflops = 0.0;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help") {
            std::printf("usage: bench_gpu_gpt [--batch B] [--steps N] [--tf32] [--peak-tflops T]\n"
                        "GPT-2 124M (V 50304, T 1024) fp32 training steps on GPU 0; prints tokens/s, peak memory and\n"
                        "MFU against the device's dense peak (H100, H200, A100 known; others need --peak-tflops).\n");
            return 0;
        }
        if (a == "--batch" && i + 1 < argc)
            batch = std::atoi(argv[++i]);
        else if (a == "--steps" && i + 1 < argc)
            steps = std::atoi(argv[++i]);
        else if (a == "--tf32")
            tf32 = true;
        else if (a == "--peak-tflops" && i + 1 < argc)
            peakTflops = std::atof(argv[++i]);
        else {
            std::fprintf(stderr, "bench_gpu_gpt: unknown argument %s (see --help)\n", a.c_str());
            return 2;
        }
    }
    if (!Device::cudaAvailable()) {
        std::printf("bench_gpu_gpt: no CUDA device\n");
        return 77;
    }
    kernels::cuda::setTf32(tf32);
    GptConfig cfg;
    cfg.vocab = 50304;
    cfg.maxSeqLen = 1024;
    cfg.layers = 12;
    cfg.hidden = 768;
    cfg.heads = 12;
    cfg.ffn = 3072;
    Device &gpu = Device::cuda(0);
    GptModel<float> model(cfg, true, gpu);
    model.initialize(1);
    const std::size_t n = model.parameterCount();
    AdamW opt({{0, n}}, {}, gpu);
    opt.setDecayMask(weightDecayMask(model.tensors(), n));
    const int T = cfg.maxSeqLen, BT = batch * T;
    std::mt19937 rng(3);
    std::uniform_int_distribution<int> tok(0, 50256);
    std::vector<std::int32_t> tokens(BT), targets(BT);
    // A fixed batch repeated: the loss must fall (a smoke check that training works).
    for (int i = 0; i < BT; ++i) {
        tokens[i] = tok(rng);
        targets[i] = tok(rng);
    }
    std::printf("device: %s\nmodel: GPT-2 124M, %zu parameters, batch %d x %d, %s\n", gpu.name().c_str(), n, batch, T,
                tf32 ? "fp32 storage, TF32 GEMMs" : "fp32");
    double total = 0.0;
    int timed = 0;
    for (int step = 0; step < steps; ++step) {
        const auto t0 = std::chrono::steady_clock::now();
        model.zeroGradients();
        const float loss = model.forward(tokens.data(), targets.data(), batch, T);
        model.backward();
        opt.step(model.parameters().data(), model.gradients().data(), 3e-4);
        gpu.synchronize();
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        std::printf("step %2d loss %.4f %.1f ms\n", step, loss, ms);
        if (step >= 2) {
            total += ms;
            ++timed;
        }
    }
    const double ms = total / std::max(1, timed);
    const double tokensPerSecond = BT / (ms / 1000.0);
    // Model FLOPs per token (PaLM's count, as llm.c): 6·N + 12·L·C·T (attention scores).
    const double flopsPerToken = 6.0 * static_cast<double>(n) + 12.0 * cfg.layers * cfg.hidden * T;
    const double achieved = flopsPerToken * tokensPerSecond;
    const double peak = 1e12 * (peakTflops > 0 ? peakTflops : datasheetPeakTflops(gpu.name(), tf32));
    char mfu[96];
    if (peak > 0)
        std::snprintf(mfu, sizeof mfu, "MFU %.1f%% of %.0f TFLOP/s", 100.0 * achieved / peak, peak / 1e12);
    else
        std::snprintf(mfu, sizeof mfu, "MFU unknown (no peak for this device: --peak-tflops)");
    std::printf("RESULT trellis %s batch %d: %.1f ms/step, %.0f tokens/s, %.1f TFLOP/s, %s, "
                "peak memory %.2f GiB (+%.2f GiB kernel scratch)\n",
                tf32 ? "tf32" : "fp32", batch, ms, tokensPerSecond, achieved / 1e12, mfu, gpu.peakBytes() / 1073741824.0,
                kernels::cuda::scratchBytes() / 1073741824.0);
    return 0;
}
