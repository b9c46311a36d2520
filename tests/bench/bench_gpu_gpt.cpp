// GPT-2 124M training steps on GPU 0 (issue #36's benchmark): vocabulary 50304, sequence 1024,
// 12 layers of 768 with 12 heads, AdamW. --precision bf16 (bf16 parameters and activations from
// fp32 masters, bf16 tensor-core GEMMs with fp32 accumulation, cuDNN's fused attention, fp32
// gradients and optimizer), fp32, or tf32 (fp32 storage, TF32 GEMMs).
// Prints tokens/s, peak device memory, the loss of every step, the model FLOP utilisation
// against the device's dense peak for that math (from the table below for the devices it names,
// datasheet figures; from --peak-tflops otherwise; left out when neither knows it) and, with
// --op-table, one step's time per op family from CUDA events. The PyTorch baseline runs beside
// it in the same device call: tests/bench/torch_gpt_gpu.py (tests/bench/bench_gpu_vs_torch.sh).
// --model llama-1b: a llama of TinyLlama's shape instead (1.1B, grouped-query attention 32 over 4).
// Usage: bench_gpu_gpt [--model gpt2-124m|llama-1b] [--batch B] [--steps N] [--precision bf16|fp32|tf32]
//                      [--op-table] [--peak-tflops T]
#include "kernels/cuda/cuda_ops.h"
#include "backend/trainer/optimizer/adamw.h"
#include "backend/trainer/model/gpt_model.h"

#include <algorithm>
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

// Dense peak TFLOP/s (fp32 without tensor cores, TF32 and bf16 with), from NVIDIA's datasheets; 0: unknown.
double datasheetPeakTflops(const std::string &device, const std::string &precision)
{
    struct Peak {
        const char *name; // a part of the CUDA device name
        double fp32, tf32, bf16;
    };
    static const Peak peaks[] = {
        {"H200", 66.9, 494.7, 989.4},      {"H100 80GB HBM3", 66.9, 494.7, 989.4}, {"H100 SXM", 66.9, 494.7, 989.4},
        {"H100 PCIe", 51.2, 378.0, 756.0}, {"A100", 19.5, 156.0, 312.0},
    };
    for (const Peak &p : peaks)
        if (device.find(p.name) != std::string::npos)
            return precision == "bf16" ? p.bf16 : precision == "tf32" ? p.tf32 : p.fp32;
    return 0.0;
}

struct Options {
    int batch = 8, steps = 10;
    std::string precision = "bf16";
    bool opTable = false;
    double peakTflops = 0.0;
    std::string model = "gpt2-124m";
};

// GPT-2 124M (vocabulary padded to 50304), or a llama of TinyLlama's shape (1.1B: 22 layers of
// 2048, 32 heads over 4 key/value heads, SwiGLU of 5632, vocabulary 32000, sequence 2048).
GptConfig configFor(const std::string &model)
{
    GptConfig cfg;
    if (model == "llama-1b") {
        cfg.llama = true;
        cfg.vocab = 32000;
        cfg.maxSeqLen = 2048;
        cfg.layers = 22;
        cfg.hidden = 2048;
        cfg.heads = 32;
        cfg.kvHeads = 4;
        cfg.ffn = 5632;
        return cfg;
    }
    cfg.vocab = 50304;
    cfg.maxSeqLen = 1024;
    cfg.layers = 12;
    cfg.hidden = 768;
    cfg.heads = 12;
    cfg.ffn = 3072;
    return cfg;
}

void printOpTable(const std::vector<kernels::cuda::OpTime> &ops, double stepMs)
{
    std::vector<kernels::cuda::OpTime> sorted = ops;
    std::sort(sorted.begin(), sorted.end(), [](const auto &a, const auto &b) { return a.ms > b.ms; });
    double total = 0.0;
    for (const auto &o : sorted)
        total += o.ms;
    std::printf("per-op time of one step (CUDA events; step %.1f ms, ops %.1f ms):\n", stepMs, total);
    std::printf("  %-28s %9s %7s %6s\n", "op", "ms", "share", "calls");
    for (const auto &o : sorted)
        std::printf("  %-28s %9.2f %6.1f%% %6d\n", o.name.c_str(), o.ms, 100.0 * o.ms / stepMs, o.calls);
}

template <typename T>
int run(const Options &o)
{
    const GptConfig cfg = configFor(o.model);
    Device &gpu = Device::cuda(0);
    GptModel<T> model(cfg, true, gpu);
    model.initialize(1);
    const std::size_t n = model.parameterCount();
    AdamW opt({{0, n}}, {}, gpu);
    opt.setDecayMask(weightDecayMask(model.tensors(), n));
    constexpr bool mixed = !std::is_same_v<T, float>;
    DeviceBuffer<float> masters(gpu, mixed ? n : 0);
    if constexpr (mixed)
        kernels::convert(gpu.stream(), masters.data(), model.parameters().data(), static_cast<std::int64_t>(n));
    const int T_ = cfg.maxSeqLen, BT = o.batch * T_;
    std::mt19937 rng(3);
    std::uniform_int_distribution<int> tok(0, std::min(cfg.vocab, 50257) - 1);
    std::vector<std::int32_t> tokens(BT), targets(BT);
    // A fixed batch repeated: the loss must fall (a smoke check that training works).
    for (int i = 0; i < BT; ++i) {
        tokens[i] = tok(rng);
        targets[i] = tok(rng);
    }
    const char *what = o.precision == "bf16"   ? "bf16 (fp32 masters, cuDNN attention)"
                       : o.precision == "tf32" ? "fp32 storage, TF32 GEMMs"
                                               : "fp32";
    std::printf("device: %s\nmodel: %s, %zu parameters, batch %d x %d, %s\n", gpu.name().c_str(), o.model.c_str(), n,
                o.batch, T_, what);
    double total = 0.0;
    int timed = 0;
    std::vector<kernels::cuda::OpTime> table;
    double tableStepMs = 0.0;
    for (int step = 0; step < o.steps; ++step) {
        const bool profile = o.opTable && step == o.steps - 1; // the last step, after the timed ones
        kernels::cuda::setOpTiming(profile);
        const auto t0 = std::chrono::steady_clock::now();
        model.zeroGradients();
        const float loss = model.forward(tokens.data(), targets.data(), o.batch, T_);
        model.backward();
        if constexpr (mixed) {
            opt.step(masters.data(), model.gradients().data(), 3e-4);
            kernels::convert(gpu.stream(), model.parameters().data(), masters.data(), static_cast<std::int64_t>(n));
        } else {
            opt.step(model.parameters().data(), model.gradients().data(), 3e-4);
        }
        gpu.synchronize();
        const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        std::printf("step %2d loss %.4f %.1f ms%s\n", step, loss, ms, profile ? " (timed per op, not counted)" : "");
        if (profile) {
            table = kernels::cuda::takeOpTimes();
            tableStepMs = ms;
            kernels::cuda::setOpTiming(false);
        } else if (step >= 2) {
            total += ms;
            ++timed;
        }
    }
    const double ms = total / std::max(1, timed);
    const double tokensPerSecond = BT / (ms / 1000.0);
    // Model FLOPs per token (PaLM's count, as llm.c): 6·N + 12·L·C·T (attention scores).
    const double flopsPerToken = 6.0 * static_cast<double>(n) + 12.0 * cfg.layers * cfg.hidden * T_;
    const double achieved = flopsPerToken * tokensPerSecond;
    const double peak = 1e12 * (o.peakTflops > 0 ? o.peakTflops : datasheetPeakTflops(gpu.name(), o.precision));
    char mfu[96];
    if (peak > 0)
        std::snprintf(mfu, sizeof mfu, "MFU %.1f%% of %.0f TFLOP/s", 100.0 * achieved / peak, peak / 1e12);
    else
        std::snprintf(mfu, sizeof mfu, "MFU unknown (no peak for this device: --peak-tflops)");
    std::printf("RESULT trellis %s %s batch %d: %.1f ms/step, %.0f tokens/s, %.1f TFLOP/s, %s, "
                "peak memory %.2f GiB (+%.2f GiB kernel scratch)\n",
                o.model.c_str(), o.precision.c_str(), o.batch, ms, tokensPerSecond, achieved / 1e12, mfu, gpu.peakBytes() / 1073741824.0,
                kernels::cuda::scratchBytes() / 1073741824.0);
    if (!table.empty())
        printOpTable(table, tableStepMs);
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--help") {
            std::printf("usage: bench_gpu_gpt [--model gpt2-124m|llama-1b] [--batch B] [--steps N] "
                        "[--precision bf16|fp32|tf32] [--op-table] [--peak-tflops T]\n"
                        "GPT-2 124M (V 50304, T 1024) or a 1.1B llama (GQA 32/4, T 2048) training steps on GPU 0;\n"
                        "prints tokens/s, peak memory, MFU\n"
                        "against the device's dense peak (H100, H200, A100 known; others need --peak-tflops) and,\n"
                        "with --op-table, one step's time per op family (CUDA events).\n");
            return 0;
        }
        if (a == "--batch" && i + 1 < argc)
            o.batch = std::atoi(argv[++i]);
        else if (a == "--steps" && i + 1 < argc)
            o.steps = std::atoi(argv[++i]);
        else if (a == "--precision" && i + 1 < argc)
            o.precision = argv[++i];
        else if (a == "--tf32")
            o.precision = "tf32";
        else if (a == "--model" && i + 1 < argc)
            o.model = argv[++i];
        else if (a == "--op-table")
            o.opTable = true;
        else if (a == "--peak-tflops" && i + 1 < argc)
            o.peakTflops = std::atof(argv[++i]);
        else {
            std::fprintf(stderr, "bench_gpu_gpt: unknown argument %s (see --help)\n", a.c_str());
            return 2;
        }
    }
    if (o.precision != "bf16" && o.precision != "fp32" && o.precision != "tf32") {
        std::fprintf(stderr, "bench_gpu_gpt: --precision is bf16, fp32 or tf32, not %s\n", o.precision.c_str());
        return 2;
    }
    if (o.model != "gpt2-124m" && o.model != "llama-1b") {
        std::fprintf(stderr, "bench_gpu_gpt: --model is gpt2-124m or llama-1b, not %s\n", o.model.c_str());
        return 2;
    }
    if (o.batch < 1 || o.steps < 4) {
        std::fprintf(stderr, "bench_gpu_gpt: --batch must be at least 1 and --steps at least 4\n");
        return 2;
    }
    if (!Device::cudaAvailable()) {
        std::printf("bench_gpu_gpt: no CUDA device\n");
        return 77;
    }
    try {
        kernels::cuda::setTf32(o.precision == "tf32");
        return o.precision == "bf16" ? run<kernels::bf16>(o) : run<float>(o);
    } catch (const std::bad_alloc &) {
        std::printf("RESULT trellis %s batch %d: out of device memory\n", o.precision.c_str(), o.batch);
        return 3;
    } catch (const std::exception &e) {
        std::fprintf(stderr, "bench_gpu_gpt: %s\n", e.what());
        return 1;
    }
}
