// Every CUDA kernel against its CPU reference (kernels/cpu), on random inputs of awkward sizes
// (not multiples of 32, several rows per warp, GQA groups), in fp32 on both sides. Bounds are
// relative to each tensor's largest value: 1e-5 for element-wise and row kernels (different
// summation order and expf/tanhf ulps), 2e-5 for GEMM-based kernels (cuBLASLt's blocked sums).
// Skips (exit 77) on a machine without a GPU.
#include "tests/support/device_vector.h"
#include "tests/support/gpu_check.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/tensor_ops.h"
#include "kernels/cuda/cuda_ops.h"
#include "kernels/ops.h"

#include <cstdint>
#include <stdexcept>

using namespace trellis;
using namespace trellis::test;
namespace cuda = trellis::kernels::cuda;
namespace cpu = trellis::kernels::cpu;

namespace {

std::mt19937 g_rng(1234);

std::vector<std::int32_t> randomTokens(std::size_t n, int V)
{
    std::uniform_int_distribution<int> d(0, V - 1);
    std::vector<std::int32_t> t(n);
    for (auto &x : t)
        x = d(g_rng);
    return t;
}

void linear(int BT, int C, int OC)
{
    for (bool withBias : {true, false}) {
        auto in = randomVector(BT * C, g_rng), w = randomVector(OC * C, g_rng), b = randomVector(OC, g_rng);
        auto dOut = randomVector(BT * OC, g_rng);
        auto dIn = randomVector(BT * C, g_rng), dW = randomVector(OC * C, g_rng), dB = randomVector(OC, g_rng);
        std::vector<float> out(BT * OC);
        Dev<float> din(in), dw(w), db(b), dout(BT * OC), ddOut(dOut), ddIn(dIn), ddW(dW), ddB(dB);
        cpu::linearForward(out.data(), in.data(), w.data(), withBias ? b.data() : nullptr, BT, C, OC);
        cuda::linearForward<float>(g_stream, dout, din, dw, withBias ? db.get() : nullptr, BT, C, OC);
        const std::string tag = std::string(withBias ? " (bias" : " (no bias") + ", " + std::to_string(BT) + "x" +
                                std::to_string(C) + "x" + std::to_string(OC) + ")";
        checkClose("linearForward" + tag, dout.host(), out, 2e-5);
        cpu::linearBackward(dIn.data(), dW.data(), withBias ? dB.data() : nullptr, dOut.data(), in.data(), w.data(), BT,
                            C, OC);
        cuda::linearBackward<float>(g_stream, ddIn, ddW, withBias ? ddB.get() : nullptr, ddOut, din, dw, BT, C, OC);
        checkClose("linearBackward dIn (accumulates)" + tag, ddIn.host(), dIn, 2e-5);
        checkClose("linearBackward dWeight (accumulates)" + tag, ddW.host(), dW, 2e-5);
        if (withBias)
            checkClose("linearBackward dBias (accumulates)" + tag, ddB.host(), dB, 1e-5);
    }
}

void norms()
{
    const int N = 45, C = 200;
    auto in = randomVector(N * C, g_rng, -2, 3), g = randomVector(C, g_rng, 0.5f, 1.5f), b = randomVector(C, g_rng);
    auto dOut = randomVector(N * C, g_rng);
    {
        std::vector<float> out(N * C), mean(N), rstd(N);
        Dev<float> dout(N * C), dmean(N), drstd(N), din(in), dg(g), db(b), ddOut(dOut);
        cpu::layerNormForward(out.data(), mean.data(), rstd.data(), in.data(), g.data(), b.data(), N, C);
        cuda::layerNormForward<float>(g_stream, dout, dmean, drstd, din, dg, db, N, C);
        checkClose("layerNormForward out", dout.host(), out, 1e-5);
        checkClose("layerNormForward mean", dmean.host(), mean, 1e-5);
        checkClose("layerNormForward rstd", drstd.host(), rstd, 1e-5);
        auto dIn = randomVector(N * C, g_rng), dG = randomVector(C, g_rng), dB = randomVector(C, g_rng);
        Dev<float> ddIn(dIn), ddG(dG), ddB(dB);
        cpu::layerNormBackward(dIn.data(), dG.data(), dB.data(), dOut.data(), in.data(), g.data(), mean.data(),
                               rstd.data(), N, C);
        cuda::layerNormBackward<float>(g_stream, ddIn, ddG, ddB, ddOut, din, dg, dmean, drstd, N, C);
        checkClose("layerNormBackward dIn", ddIn.host(), dIn, 1e-5);
        checkClose("layerNormBackward dGamma", ddG.host(), dG, 1e-5);
        checkClose("layerNormBackward dBeta", ddB.host(), dB, 1e-5);
    }
    {
        std::vector<float> out(N * C), rstd(N);
        Dev<float> dout(N * C), drstd(N), din(in), dg(g), ddOut(dOut);
        cpu::rmsNormForward(out.data(), rstd.data(), in.data(), g.data(), N, C);
        cuda::rmsNormForward<float>(g_stream, dout, drstd, din, dg, N, C);
        checkClose("rmsNormForward out", dout.host(), out, 1e-5);
        checkClose("rmsNormForward rstd", drstd.host(), rstd, 1e-5);
        auto dIn = randomVector(N * C, g_rng), dG = randomVector(C, g_rng);
        Dev<float> ddIn(dIn), ddG(dG);
        cpu::rmsNormBackward(dIn.data(), dG.data(), dOut.data(), in.data(), g.data(), rstd.data(), N, C);
        cuda::rmsNormBackward<float>(g_stream, ddIn, ddG, ddOut, din, dg, drstd, N, C);
        checkClose("rmsNormBackward dIn", ddIn.host(), dIn, 1e-5);
        checkClose("rmsNormBackward dGamma", ddG.host(), dG, 1e-5);
    }
}

void elementwise()
{
    const int n = 10007;
    auto x = randomVector(n, g_rng, -4, 4), y = randomVector(n, g_rng), d = randomVector(n, g_rng);
    Dev<float> dx(x), dy(y), dd(d), dout(n);
    std::vector<float> out(n);
    cpu::geluForward(out.data(), x.data(), n);
    cuda::geluForward<float>(g_stream, dout, dx, n);
    checkClose("geluForward", dout.host(), out, 1e-5);
    auto dIn = randomVector(n, g_rng);
    Dev<float> ddIn(dIn);
    cpu::geluBackward(dIn.data(), x.data(), d.data(), n);
    cuda::geluBackward<float>(g_stream, ddIn, dx, dd, n);
    checkClose("geluBackward (accumulates)", ddIn.host(), dIn, 1e-5);
    cpu::residualForward(out.data(), x.data(), y.data(), n);
    cuda::residualForward<float>(g_stream, dout, dx, dy, n);
    checkClose("residualForward", dout.host(), out, 1e-6);

    const int N = 37, F = 150;
    auto sin = randomVector(N * 2 * F, g_rng, -4, 4), sd = randomVector(N * F, g_rng);
    Dev<float> dsin(sin), dsd(sd), dsout(N * F);
    std::vector<float> sout(N * F);
    cpu::swigluForward(sout.data(), sin.data(), N, F);
    cuda::swigluForward<float>(g_stream, dsout, dsin, N, F);
    checkClose("swigluForward", dsout.host(), sout, 1e-5);
    auto sdIn = randomVector(N * 2 * F, g_rng);
    Dev<float> dsdIn(sdIn);
    cpu::swigluBackward(sdIn.data(), sin.data(), sd.data(), N, F);
    cuda::swigluBackward<float>(g_stream, dsdIn, dsin, dsd, N, F);
    checkClose("swigluBackward (accumulates)", dsdIn.host(), sdIn, 1e-5);

    // rope over 3 heads of 16 in rows of 70 (a qkv-like row), positions from 5, sequences of 9.
    const int rows = 27, heads = 3, hs = 16, ld = 70, seq = 9, first = 5, maxPos = 20;
    auto rx = randomVector(rows * ld, g_rng), cosT = randomVector(maxPos * hs / 2, g_rng),
         sinT = randomVector(maxPos * hs / 2, g_rng);
    Dev<float> drx(rx), dcos(cosT), dsinT(sinT);
    for (bool inverse : {false, true}) {
        cpu::rope(rx.data(), cosT.data(), sinT.data(), rows, seq, first, ld, heads, hs, inverse);
        cuda::rope<float>(g_stream, drx, dcos, dsinT, rows, seq, first, ld, heads, hs, inverse);
        checkClose(inverse ? "rope (inverse)" : "rope", drx.host(), rx, 1e-6);
    }
}

void attention()
{
    const int B = 2, T = 37, NH = 4, hs = 16, C = NH * hs;
    for (int KVH : {4, 2, 1}) {
        const int ld = C + 2 * KVH * hs;
        auto qkv = randomVector(B * T * ld, g_rng, -2, 2), dOut = randomVector(B * T * C, g_rng);
        std::vector<float> out(B * T * C), att(static_cast<std::size_t>(B) * NH * T * T), scratchTT(T * T);
        Dev<float> dqkvIn(qkv), dout(B * T * C), datt(att.size()), ddOut(dOut);
        cpu::attentionForward(out.data(), att.data(), qkv.data(), B, T, C, NH, KVH);
        cuda::attentionForward(g_stream, dout, datt, dqkvIn, B, T, C, NH, KVH);
        const std::string tag = " (NH 4, KVH " + std::to_string(KVH) + ")";
        checkClose("attentionForward out" + tag, dout.host(), out, 2e-5);
        checkClose("attentionForward probabilities" + tag, datt.host(), att, 2e-5);
        auto dqkv = randomVector(B * T * ld, g_rng);
        Dev<float> ddqkv(dqkv);
        cpu::attentionBackward(dqkv.data(), scratchTT.data(), dOut.data(), qkv.data(), att.data(), B, T, C, NH, KVH);
        cuda::attentionBackward(g_stream, ddqkv, nullptr, ddOut, dqkvIn, datt, B, T, C, NH, KVH);
        checkClose("attentionBackward dqkv (accumulates)" + tag, ddqkv.host(), dqkv, 2e-5);
    }
}

void losses()
{
    const int BT = 29, V = 1031;
    auto logits = randomVector(BT * V, g_rng, -8, 8);
    auto targets = randomTokens(BT, V);
    Dev<float> dlogits(logits), dprobs(BT * V), dloss(BT), dgrad(BT * V);
    Dev<std::int32_t> dtargets(targets);
    std::vector<float> probs(BT * V), loss(BT), grad(BT * V);
    cpu::crossEntropyForward(loss.data(), probs.data(), logits.data(), targets.data(), BT, V);
    cuda::crossEntropyForward<float>(g_stream, dloss, dprobs, dlogits, dtargets, BT, V);
    checkClose("crossEntropyForward losses", dloss.host(), loss, 1e-5);
    checkClose("crossEntropyForward probs", dprobs.host(), probs, 1e-5);
    cpu::crossEntropyBackward(grad.data(), probs.data(), targets.data(), 0.25f, BT, V);
    cuda::crossEntropyBackward<float>(g_stream, dgrad, dprobs, dtargets, 0.25f, BT, V);
    checkClose("crossEntropyBackward", dgrad.host(), grad, 1e-5);
    cuda::crossEntropyBackward<float>(g_stream, dprobs, dprobs, dtargets, 0.25f, BT, V); // in place, as the model does
    checkClose("crossEntropyBackward in place over probs", dprobs.host(), grad, 1e-5);

    // Vocabulary-parallel: this rank holds columns [400, 400 + V).
    const int first = 400;
    auto globalTargets = randomTokens(BT, 2000);
    Dev<std::int32_t> dgt(globalTargets);
    std::vector<float> mx(BT), blocks = randomVector(3 * BT, g_rng), mob(BT), partial(2 * BT);
    Dev<float> dmx(BT), dblocks(blocks), dmob(BT), dpartial(2 * BT);
    cpu::rowMax(mx.data(), logits.data(), BT, V);
    cuda::rowMax<float>(g_stream, dmx, dlogits, BT, V);
    checkClose("rowMax", dmx.host(), mx, 0);
    cpu::maxOverBlocks(mob.data(), blocks.data(), 3, BT);
    cuda::maxOverBlocks(g_stream, dmob, dblocks, 3, BT);
    checkClose("maxOverBlocks", dmob.host(), mob, 0);
    cpu::softmaxPartials(probs.data(), partial.data(), logits.data(), mx.data(), globalTargets.data(), first, BT, V);
    cuda::softmaxPartials<float>(g_stream, dprobs, dpartial, dlogits, dmx, dgt, first, BT, V);
    checkClose("softmaxPartials probs", dprobs.host(), probs, 1e-5);
    checkClose("softmaxPartials (sum, target logit)", dpartial.host(), partial, 1e-5);
    cpu::softmaxFinish(probs.data(), loss.data(), partial.data(), mx.data(), BT, V);
    cuda::softmaxFinish(g_stream, dprobs, dloss, dpartial, dmx, BT, V);
    checkClose("softmaxFinish probs", dprobs.host(), probs, 1e-5);
    checkClose("softmaxFinish losses", dloss.host(), loss, 1e-5);
    cpu::crossEntropyRangeBackward(grad.data(), probs.data(), globalTargets.data(), first, 0.5f, BT, V);
    cuda::crossEntropyRangeBackward<float>(g_stream, dgrad, dprobs, dgt, first, 0.5f, BT, V);
    checkClose("crossEntropyRangeBackward", dgrad.host(), grad, 1e-5);
}

void embeddings()
{
    const int B = 3, T = 11, C = 70, V = 50, first = 20, Vr = 17;
    auto tokens = randomTokens(B * T, V);
    tokens[1] = tokens[2] = tokens[5]; // repeated tokens: the scatter-add must sum them
    auto wte = randomVector(V * C, g_rng), wpe = randomVector(T * C, g_rng), dOut = randomVector(B * T * C, g_rng);
    Dev<std::int32_t> dtok(tokens);
    Dev<float> dwte(wte), dwpe(wpe), dout(B * T * C), ddOut(dOut);
    std::vector<float> out(B * T * C);
    cpu::encoderForward(out.data(), tokens.data(), wte.data(), wpe.data(), B, T, C, V);
    cuda::encoderForward<float>(g_stream, dout, dtok, dwte, dwpe, B, T, C, V);
    checkClose("encoderForward", dout.host(), out, 1e-6);
    auto gte = randomVector(V * C, g_rng), gpe = randomVector(T * C, g_rng);
    Dev<float> dgte(gte), dgpe(gpe);
    cpu::encoderBackward(gte.data(), gpe.data(), dOut.data(), tokens.data(), B, T, C, V);
    cuda::encoderBackward<float>(g_stream, dgte, dgpe, ddOut, dtok, B, T, C, V);
    checkClose("encoderBackward dwte (accumulates)", dgte.host(), gte, 1e-6);
    checkClose("encoderBackward dwpe (accumulates)", dgpe.host(), gpe, 1e-6);

    cpu::embeddingRangeForward(out.data(), tokens.data(), wte.data(), first, Vr, B * T, C);
    cuda::embeddingRangeForward<float>(g_stream, dout, dtok, dwte, first, Vr, B * T, C);
    checkClose("embeddingRangeForward", dout.host(), out, 0);
    cpu::addPositions(out.data(), wpe.data(), 4, B * T - 4, T, C);
    cuda::addPositions<float>(g_stream, dout, dwpe, 4, B * T - 4, T, C);
    checkClose("addPositions", dout.host(), out, 1e-6);
    for (bool positions : {true, false}) {
        cpu::embeddingRangeBackward(gte.data(), positions ? gpe.data() : nullptr, dOut.data(), tokens.data(), first, Vr,
                                    B * T, T, C);
        cuda::embeddingRangeBackward<float>(g_stream, dgte, positions ? dgpe.get() : nullptr, ddOut, dtok, first, Vr, B * T, T,
                                     C);
        checkClose(positions ? "embeddingRangeBackward dwte" : "embeddingRangeBackward dwte (no dwpe)", dgte.host(), gte,
                   1e-6);
        checkClose("embeddingRangeBackward dwpe", dgpe.host(), gpe, 1e-6);
    }
}

void tensorOps()
{
    const int n = 100003;
    auto a = randomVector(n, g_rng), b = randomVector(n, g_rng);
    Dev<float> da(a), db(b);
    kernels::Stream &s = g_stream;
    kernels::fill(s, da.get(), 5, 2.5f); // through ops.h, as the model calls it
    cpu::fill(a.data(), 5, 2.5f);
    kernels::copy(s, da.get() + 10, db.get() + 20, 1000);
    cpu::copy(a.data() + 10, b.data() + 20, 1000);
    kernels::accumulate(s, da.get(), db.get(), n);
    cpu::accumulate(a.data(), b.data(), n);
    kernels::scale(s, da.get(), n, 0.75f);
    cpu::scale(a.data(), n, 0.75f);
    checkClose("fill, copy, accumulate, scale", da.host(), a, 1e-6);
    std::vector<std::int32_t> ints(33, 0);
    Dev<std::int32_t> dints(ints);
    kernels::fill(s, dints.get(), 33, std::int32_t(-7));
    check(dints.host() == std::vector<std::int32_t>(33, -7), "fill int32", 0, 0);
    const double su = kernels::sum(s, da.get(), n), sq = kernels::sumSquares(s, da.get(), n);
    const double ru = cpu::sum(a.data(), n), rq = cpu::sumSquares(a.data(), n);
    check(std::abs(su - ru) <= 1e-9 * std::max(1.0, std::abs(ru)) + 1e-6, "sum (double accumulation)",
          std::abs(su - ru), 1e-6);
    check(std::abs(sq - rq) <= 1e-9 * rq, "sumSquares (double accumulation)", std::abs(sq - rq) / rq, 1e-9);
    check(kernels::sum(s, da.get(), n) == su, "sum is deterministic", 0, 0);

    auto p = randomVector(n, g_rng), g = randomVector(n, g_rng), m = randomVector(n, g_rng, -0.1f, 0.1f),
         v = randomVector(n, g_rng, 0.0f, 0.01f);
    std::vector<std::uint8_t> decay(n);
    for (int i = 0; i < n; ++i)
        decay[i] = static_cast<std::uint8_t>(i % 3 != 0);
    Dev<float> dp(p), dg(g), dm(m), dv(v);
    Dev<std::uint8_t> ddecay(decay);
    const kernels::AdamWStep step{0.9f, 0.95f, 1e-8f, 1e-4f, 6e-4f / 0.1f, 1.0f / std::sqrt(0.05f)};
    cpu::adamw(p.data(), g.data(), m.data(), v.data(), decay.data(), n, step);
    kernels::adamw(s, dp.get(), dg.get(), dm.get(), dv.get(), ddecay.get(), n, step);
    checkClose("adamw params", dp.host(), p, 1e-6);
    checkClose("adamw first moments", dm.host(), m, 1e-6);
    checkClose("adamw second moments", dv.host(), v, 1e-6);
}

void errors()
{
    cuda::setErrorContext("host test rank 3");
    try {
        cuda::deviceAllocate(cuda::deviceCount() + 5, 16);
        check(false, "a CUDA error is reported", 0, 0);
    } catch (const std::runtime_error &e) {
        const std::string what = e.what();
        std::printf("     reported: %s\n", what.c_str());
        const bool ok = what.rfind("host test rank 3 kernels/cuda/device_state.cu:", 0) == 0 &&
                        what.find("cudaSetDevice") != std::string::npos && what.find("\u2192") != std::string::npos;
        check(ok, "CUDA error names host, rank, file:line, call and error", 0, 0);
    }
    try {
        kernels::Stream cpuStream;
        kernels::Stream gpu = g_stream;
        double x = 0;
        kernels::geluForward<double>(gpu, &x, &x, 1);
        (void)cpuStream;
        check(false, "double on the GPU is refused", 0, 0);
    } catch (const std::runtime_error &e) {
        check(std::string(e.what()).find("geluForward (f64)") != std::string::npos,
              "double on the GPU is refused, naming the op", 0, 0);
    }
}

} // namespace

int main(int argc, char **argv)
{
    if (argc > 1 && std::string(argv[1]) == "--help") {
        std::printf("usage: tst_cuda_kernels\nChecks every CUDA kernel against its CPU reference on GPU 0; exits 77 "
                    "(skipped) without a GPU.\n");
        return 0;
    }
    if (!relativeErrorSelfCheck()) {
        std::printf("FAIL the error metric (gpu_check.h relativeError) misjudges its own examples\n");
        return 1;
    }
    if (cuda::deviceCount() == 0) {
        std::printf("SKIP: no CUDA device on this machine (the GPU checks run where one is lent)\n");
        return kSkip;
    }
    std::printf("device: %s\n", cuda::deviceDescription(0).c_str());
    g_stream.device = kernels::Device::Cuda;
    g_stream.handle = cuda::createStream(0);
    cpu::setKernelThreads(1);
    linear(77, 96, 130);
    linear(144, 96, 97);  // odd leading dimensions (a vocabulary of 97): 4-byte aligned columns
    linear(50, 67, 31);
    norms();
    elementwise();
    attention();
    losses();
    embeddings();
    tensorOps();
    errors();
    return finish("tst_cuda_kernels");
}
