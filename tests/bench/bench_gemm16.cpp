// bf16 (and fp16) linear layers against fp32 over the shapes of the benchmark models (2 layers ×
// 128 and 4 layers × 256 hidden, batch 4 × 128 tokens, vocabulary 256: qkv, projection, MLP in and
// out, the head), forward and backward together (out = x·Wᵀ + b; dX, dW, db), at 1 and 2 kernel
// threads. Runs alternate precisions REPS times; each figure is the median over runs of a run's
// median time over ITERS calls. Prints the GEMM backend the 16-bit path uses (oneDNN where the CPU
// has native bf16, else fp32 GEMMs on converted operands) and the ratio fp32 / 16-bit (> 1: the
// 16-bit layer is faster).
// Usage: build/bin/bench_gemm16 [REPS (5)] [ITERS (20)]
#include "kernels/cpu/half_gemm.h"
#include "kernels/cpu/half_ops.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/dtype.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

using namespace trellis::kernels;
using Clock = std::chrono::steady_clock;

namespace {

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

template <typename T>
struct Layer {
    std::vector<T> in, w, b, out, dOut, dIn;
    std::vector<acc_t<T>> dW, dB;
    Layer(int BT, int C, int OC)
    {
        std::mt19937 gen(1);
        std::normal_distribution<float> d(0.0f, 0.5f);
        auto fill = [&](std::vector<T> &v, std::size_t n) {
            v.resize(n);
            for (auto &x : v)
                x = convertTo<T>(d(gen));
        };
        fill(in, std::size_t(BT) * C);
        fill(w, std::size_t(OC) * C);
        fill(b, std::size_t(OC));
        fill(dOut, std::size_t(BT) * OC);
        out.resize(std::size_t(BT) * OC);
        dIn.resize(in.size());
        dW.assign(w.size(), 0);
        dB.assign(b.size(), 0);
    }
};

// One forward and backward of the layer, timed over `iters` calls: the median ms.
template <typename T>
double time(Layer<T> &l, int BT, int C, int OC, int iters)
{
    std::vector<double> ms;
    for (int i = 0; i < iters; ++i) {
        const auto start = Clock::now();
        if constexpr (is16Bit<T>) {
            cpu::half::linearForward(l.out.data(), l.in.data(), l.w.data(), l.b.data(), BT, C, OC);
            cpu::half::linearBackward(l.dIn.data(), l.dW.data(), l.dB.data(), l.dOut.data(), l.in.data(), l.w.data(), BT, C, OC);
        } else {
            cpu::linearForward(l.out.data(), l.in.data(), l.w.data(), l.b.data(), BT, C, OC);
            cpu::linearBackward(l.dIn.data(), l.dW.data(), l.dB.data(), l.dOut.data(), l.in.data(), l.w.data(), BT, C, OC);
        }
        ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    }
    return median(ms);
}

struct Shape {
    const char *name;
    int BT, C, OC;
};

} // namespace

int main(int argc, char **argv)
{
    const int reps = argc > 1 ? std::atoi(argv[1]) : 5, iters = argc > 2 ? std::atoi(argv[2]) : 20;
    std::printf("16-bit linear layers (forward + backward) against fp32; this CPU's kernels: %s\n", cpu::kernelIsa());
    std::printf("bf16 GEMMs: %s; fp16 GEMMs: %s\n", cpu::gemm16Backend(DType::BF16), cpu::gemm16Backend(DType::F16));
    std::printf("%-26s %7s %10s %10s %10s %8s %8s\n", "shape (BT x C -> OC)", "threads", "fp32 ms", "bf16 ms", "fp16 ms",
                "bf16", "fp16");
    const int BT = 4 * 128;
    const Shape shapes[] = {{"h128 qkv", BT, 128, 384},   {"h128 proj", BT, 128, 128}, {"h128 mlp in", BT, 128, 512},
                            {"h128 mlp out", BT, 512, 128}, {"h128 head", BT, 128, 256},
                            {"h256 qkv", BT, 256, 768},   {"h256 proj", BT, 256, 256}, {"h256 mlp in", BT, 256, 1024},
                            {"h256 mlp out", BT, 1024, 256}, {"h256 head", BT, 256, 256}};
    for (int threads : {1, 2}) {
        cpu::setKernelThreads(threads);
        double total32 = 0, total16 = 0, totalH = 0;
        for (const Shape &s : shapes) {
            Layer<float> f(s.BT, s.C, s.OC);
            Layer<bf16> b(s.BT, s.C, s.OC);
            Layer<f16> h(s.BT, s.C, s.OC);
            std::vector<double> a, c, e;
            for (int r = 0; r < reps; ++r) { // alternating, the order rotating
                for (int k = 0; k < 3; ++k) {
                    switch ((k + r) % 3) {
                    case 0: a.push_back(time(f, s.BT, s.C, s.OC, iters)); break;
                    case 1: c.push_back(time(b, s.BT, s.C, s.OC, iters)); break;
                    default: e.push_back(time(h, s.BT, s.C, s.OC, iters)); break;
                    }
                }
            }
            const double m32 = median(a), m16 = median(c), mH = median(e);
            total32 += m32;
            total16 += m16;
            totalH += mH;
            char label[64];
            std::snprintf(label, sizeof label, "%s (%dx%d->%d)", s.name, s.BT, s.C, s.OC);
            std::printf("%-26s %7d %10.3f %10.3f %10.3f %7.2fx %7.2fx\n", label, threads, m32, m16, mH, m32 / m16, m32 / mH);
        }
        std::printf("%-26s %7d %10.3f %10.3f %10.3f %7.2fx %7.2fx\n", "all shapes", threads, total32, total16, totalH,
                    total32 / total16, total32 / totalH);
    }
    std::printf("(ratio = fp32 ms / 16-bit ms: > 1 means the 16-bit layer is faster; target for bf16 on a CPU with "
                "AVX512-BF16: >= 1.5x at 1 and 2 threads)\n");
    if (!cpu::nativeBf16Gemm())
        std::printf("this CPU has no native bf16 (AVX512-BF16 or AMX): bf16 ran as fp32 GEMMs on converted operands, and "
                    "the 1.5x target does not apply here\n");
    return 0;
}
