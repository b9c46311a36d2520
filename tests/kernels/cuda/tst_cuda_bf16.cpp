// Every bf16 CUDA kernel against its CPU 16-bit reference (kernels/cpu/half_ops.h) on the same bf16
// inputs. Both compute in fp32 and round once on store, so they differ only where a different
// summation order moves a value across a rounding boundary. Bounds (error relative to |r| + the
// tensor's rms, gpu_check.h): bf16 outputs 8e-3 (two bf16 ulps), fp32 outputs (weight gradients,
// statistics, probabilities) 2e-5 as the fp32 kernels.
// Fused attention (cuDNN) has no CPU twin that keeps the same state; it is held to the accuracy of
// the CPU's bf16 attention: against an fp32 reference on the same inputs its error may be at most
// three times the CPU bf16 kernel's plus 2e-3 (flash attention rounds the unnormalised
// probabilities to bf16 for its second GEMM, the CPU kernel the normalised ones: on an H100 the
// worst element at T 256 was 2.7 times the CPU's, about two bf16 ulps), and its backward must be
// bitwise the same in two runs.
// Skips (exit 77) without a GPU.
#include "tests/support/device_vector.h"
#include "tests/support/gpu_check.h"
#include "kernels/cpu/half_ops.h"
#include "kernels/cpu/cpu_ops.h"

#include <cstring>
#include <type_traits>
#include <stdexcept>

using namespace trellis;
using namespace trellis::test;
namespace cuda = trellis::kernels::cuda;
namespace cpu = trellis::kernels::cpu;
using B16 = kernels::bf16;

namespace {

std::mt19937 g_rng(4321);
constexpr double kBf16 = 8e-3, kF32 = 2e-5;

std::vector<B16> b16(const std::vector<float> &v)
{
    std::vector<B16> r(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
        r[i] = B16(v[i]);
    return r;
}
std::vector<float> wide(const std::vector<B16> &v)
{
    std::vector<float> r(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
        r[i] = static_cast<float>(v[i]);
    return r;
}
std::vector<B16> randomB16(std::size_t n, float lo = -1.0f, float hi = 1.0f) { return b16(randomVector(n, g_rng, lo, hi)); }
void checkB(const std::string &what, const std::vector<B16> &got, const std::vector<B16> &ref, double bound = kBf16)
{
    checkClose(what + " [bf16]", wide(got), wide(ref), bound);
}
void checkF(const std::string &what, const std::vector<float> &got, const std::vector<float> &ref, double bound = kF32)
{
    checkClose(what + " [bf16 in, fp32 out]", got, ref, bound);
}

void linear(int BT, int C, int OC)
{
    const std::string tag = " (" + std::to_string(BT) + "x" + std::to_string(C) + "x" + std::to_string(OC) + ")";
    auto in = randomB16(BT * C), w = randomB16(OC * C), b = randomB16(OC), dOut = randomB16(BT * OC);
    auto dIn = randomB16(BT * C);
    auto dW = randomVector(OC * C, g_rng), dB = randomVector(OC, g_rng);
    std::vector<B16> out(BT * OC);
    Dev<B16> din(in), dw(w), db(b), dout(BT * OC), ddOut(dOut), ddIn(dIn);
    Dev<float> ddW(dW), ddB(dB);
    cpu::half::linearForward(out.data(), in.data(), w.data(), b.data(), BT, C, OC);
    cuda::linearForward<B16>(g_stream, dout, din, dw, db, BT, C, OC);
    checkB("linearForward" + tag, dout.host(), out);
    cpu::half::linearBackward(dIn.data(), dW.data(), dB.data(), dOut.data(), in.data(), w.data(), BT, C, OC);
    cuda::linearBackward<B16>(g_stream, ddIn, ddW, ddB, ddOut, din, dw, BT, C, OC);
    checkB("linearBackward dIn (accumulates)" + tag, ddIn.host(), dIn);
    checkF("linearBackward dWeight (accumulates)" + tag, ddW.host(), dW);
    checkF("linearBackward dBias (accumulates)" + tag, ddB.host(), dB);
}

// N rows of C: C = 200 takes the fused backward in 16-byte packs, 203 element by element, 6200
// (too wide for a warp's shared sums) the separate column sums.
void norms(int N, int C)
{
    const std::string tag = " (" + std::to_string(N) + "x" + std::to_string(C) + ")";
    auto in = randomB16(N * C, -2, 3), g = randomB16(C, 0.5f, 1.5f), b = randomB16(C), dOut = randomB16(N * C);
    {
        std::vector<B16> out(N * C);
        std::vector<float> mean(N), rstd(N);
        Dev<B16> dout(N * C), din(in), dg(g), db(b), ddOut(dOut);
        Dev<float> dmean(N), drstd(N);
        cpu::half::layerNormForward(out.data(), mean.data(), rstd.data(), in.data(), g.data(), b.data(), N, C);
        cuda::layerNormForward<B16>(g_stream, dout, dmean, drstd, din, dg, db, N, C);
        checkB("layerNormForward out" + tag, dout.host(), out);
        checkF("layerNormForward rstd" + tag, drstd.host(), rstd);
        auto dIn = randomB16(N * C);
        auto dG = randomVector(C, g_rng), dB = randomVector(C, g_rng);
        Dev<B16> ddIn(dIn);
        Dev<float> ddG(dG), ddB(dB);
        cpu::half::layerNormBackward(dIn.data(), dG.data(), dB.data(), dOut.data(), in.data(), g.data(), mean.data(),
                                     rstd.data(), N, C);
        cuda::layerNormBackward<B16>(g_stream, ddIn, ddG, ddB, ddOut, din, dg, dmean, drstd, N, C);
        checkB("layerNormBackward dIn" + tag, ddIn.host(), dIn);
        checkF("layerNormBackward dGamma" + tag, ddG.host(), dG);
        checkF("layerNormBackward dBeta" + tag, ddB.host(), dB);
    }
    {
        std::vector<B16> out(N * C);
        std::vector<float> rstd(N);
        Dev<B16> dout(N * C), din(in), dg(g), ddOut(dOut);
        Dev<float> drstd(N);
        cpu::half::rmsNormForward(out.data(), rstd.data(), in.data(), g.data(), N, C);
        cuda::rmsNormForward<B16>(g_stream, dout, drstd, din, dg, N, C);
        checkB("rmsNormForward out" + tag, dout.host(), out);
        auto dIn = randomB16(N * C);
        auto dG = randomVector(C, g_rng);
        Dev<B16> ddIn(dIn);
        Dev<float> ddG(dG);
        cpu::half::rmsNormBackward(dIn.data(), dG.data(), dOut.data(), in.data(), g.data(), rstd.data(), N, C);
        cuda::rmsNormBackward<B16>(g_stream, ddIn, ddG, ddOut, din, dg, drstd, N, C);
        checkB("rmsNormBackward dIn" + tag, ddIn.host(), dIn);
        checkF("rmsNormBackward dGamma" + tag, ddG.host(), dG);
    }
}

// n = 3001 runs element by element, 4096 in 16-byte packs.
void elementwise(int n)
{
    const std::string tag = " (n " + std::to_string(n) + ")";
    auto x = randomB16(n, -4, 4), y = randomB16(n), d = randomB16(n), acc = randomB16(n);
    std::vector<B16> out(n);
    Dev<B16> dx(x), dy(y), dd(d), dout(n), dacc(acc);
    cpu::half::geluForward(out.data(), x.data(), n);
    cuda::geluForward<B16>(g_stream, dout, dx, n);
    checkB("geluForward" + tag, dout.host(), out);
    cpu::half::geluBackward(acc.data(), x.data(), d.data(), n);
    cuda::geluBackward<B16>(g_stream, dacc, dx, dd, n);
    checkB("geluBackward (accumulates)" + tag, dacc.host(), acc);
    cpu::half::residualForward(out.data(), x.data(), y.data(), n);
    cuda::residualForward<B16>(g_stream, dout, dx, dy, n);
    checkB("residualForward" + tag, dout.host(), out);
    const int N = 23, F = 67;
    auto sin = randomB16(N * 2 * F, -3, 3), sd = randomB16(N * F), sdIn = randomB16(N * 2 * F);
    std::vector<B16> sout(N * F);
    Dev<B16> dsin(sin), dsd(sd), dsdIn(sdIn), dsout(N * F);
    cpu::half::swigluForward(sout.data(), sin.data(), N, F);
    cuda::swigluForward<B16>(g_stream, dsout, dsin, N, F);
    checkB("swigluForward", dsout.host(), sout);
    cpu::half::swigluBackward(sdIn.data(), sin.data(), sd.data(), N, F);
    cuda::swigluBackward<B16>(g_stream, dsdIn, dsin, dsd, N, F);
    checkB("swigluBackward (accumulates)", dsdIn.host(), sdIn);
    const int rows = 2 * 19, seq = 19, heads = 3, hs = 16, ld = heads * hs + 8;
    auto rx = randomB16(rows * ld);
    auto cosT = randomVector(64 * hs / 2, g_rng), sinT = randomVector(64 * hs / 2, g_rng);
    Dev<B16> drx(rx);
    Dev<float> dcos(cosT), dsinT(sinT);
    cpu::half::rope(rx.data(), cosT.data(), sinT.data(), rows, seq, 5, ld, heads, hs, false);
    cuda::rope<B16>(g_stream, drx, dcos, dsinT, rows, seq, 5, ld, heads, hs, false);
    checkB("rope", drx.host(), rx);
}

void lossAndEmbeddings()
{
    const int BT = 29, V = 1031;
    auto logits = randomB16(BT * V, -8, 8);
    std::vector<std::int32_t> targets(BT);
    std::uniform_int_distribution<int> tok(0, V - 1);
    for (auto &t : targets)
        t = tok(g_rng);
    std::vector<float> loss(BT), probs(static_cast<std::size_t>(BT) * V);
    Dev<B16> dlogits(logits), dgrad(logits.size());
    Dev<float> dloss(BT), dprobs(probs.size());
    Dev<std::int32_t> dtargets(targets);
    cpu::half::crossEntropyForward(loss.data(), probs.data(), logits.data(), targets.data(), BT, V);
    cuda::crossEntropyForward<B16>(g_stream, dloss, dprobs, dlogits, dtargets, BT, V);
    checkF("crossEntropyForward losses", dloss.host(), loss, 1e-5);
    checkF("crossEntropyForward probabilities", dprobs.host(), probs, 1e-5);
    std::vector<B16> grad(logits.size());
    cpu::half::crossEntropyBackward(grad.data(), probs.data(), targets.data(), 0.25f, BT, V);
    cuda::crossEntropyBackward<B16>(g_stream, dgrad, dprobs, dtargets, 0.25f, BT, V);
    checkB("crossEntropyBackward", dgrad.host(), grad);

    const int B = 3, T = 11, C = 40, Vt = 50;
    std::vector<std::int32_t> tokens(B * T);
    std::uniform_int_distribution<int> t2(0, Vt - 1);
    for (auto &t : tokens)
        t = t2(g_rng);
    auto wte = randomB16(Vt * C), wpe = randomB16(T * C), dOut = randomB16(B * T * C);
    auto gte = randomVector(Vt * C, g_rng), gpe = randomVector(T * C, g_rng);
    std::vector<B16> out(B * T * C);
    Dev<B16> dwte(wte), dwpe(wpe), dout(B * T * C), ddOut(dOut);
    Dev<float> dgte(gte), dgpe(gpe);
    Dev<std::int32_t> dtok(tokens);
    cpu::half::encoderForward(out.data(), tokens.data(), wte.data(), wpe.data(), B, T, C, Vt);
    cuda::encoderForward<B16>(g_stream, dout, dtok, dwte, dwpe, B, T, C, Vt);
    checkB("encoderForward", dout.host(), out);
    cpu::half::encoderBackward(gte.data(), gpe.data(), dOut.data(), tokens.data(), B, T, C, Vt);
    cuda::encoderBackward<B16>(g_stream, dgte, dgpe, ddOut, dtok, B, T, C, Vt);
    checkF("encoderBackward dwte (accumulates)", dgte.host(), gte, 1e-6);
    checkF("encoderBackward dwpe (accumulates)", dgpe.host(), gpe, 1e-6);
}

// The cross-entropy without probabilities (the model's on a GPU) against the CPU's with them, for
// float (bound 1e-5) and bf16 (the gradient rounded: 8e-3); the gradient written over the logits too.
template <typename E>
void lseCrossEntropy()
{
    const int BT = 29, V = 1031;
    const char *type = std::is_same_v<E, float> ? " [fp32]" : " [bf16]";
    std::vector<E> logits(static_cast<std::size_t>(BT) * V);
    const auto source = randomVector(logits.size(), g_rng, -8, 8);
    for (std::size_t i = 0; i < logits.size(); ++i)
        logits[i] = E(source[i]);
    std::vector<std::int32_t> targets(BT);
    std::uniform_int_distribution<int> tok(0, V - 1);
    for (auto &t : targets)
        t = tok(g_rng);
    std::vector<float> loss(BT), probs(logits.size());
    std::vector<E> grad(logits.size());
    if constexpr (std::is_same_v<E, float>) {
        cpu::crossEntropyForward(loss.data(), probs.data(), logits.data(), targets.data(), BT, V);
        cpu::crossEntropyBackward(grad.data(), probs.data(), targets.data(), 0.25f, BT, V);
    } else {
        cpu::half::crossEntropyForward(loss.data(), probs.data(), logits.data(), targets.data(), BT, V);
        cpu::half::crossEntropyBackward(grad.data(), probs.data(), targets.data(), 0.25f, BT, V);
    }
    Dev<E> dlogits(logits), dgrad(logits.size());
    Dev<float> dloss(BT), dlse(BT);
    Dev<std::int32_t> dtargets(targets);
    cuda::crossEntropyLseForward<E>(g_stream, dloss, dlse, dlogits, dtargets, BT, V);
    checkClose(std::string("crossEntropyLseForward losses") + type, dloss.host(), loss, 1e-5);
    cuda::crossEntropyLseBackward<E>(g_stream, dgrad, dlogits, dlse, dtargets, 0.25f, BT, V);
    cuda::crossEntropyLseBackward<E>(g_stream, dlogits.get(), dlogits.get(), dlse, dtargets, 0.25f, BT, V); // in place
    const double bound = std::is_same_v<E, float> ? 1e-5 : kBf16;
    if constexpr (std::is_same_v<E, float>) {
        checkClose("crossEntropyLseBackward [fp32]", dgrad.host(), grad, bound);
        checkClose("crossEntropyLseBackward over the logits [fp32]", dlogits.host(), grad, bound);
    } else {
        checkB("crossEntropyLseBackward", dgrad.host(), grad, bound);
        checkB("crossEntropyLseBackward over the logits", dlogits.host(), grad, bound);
    }
}

void conversions()
{
    const int n = 4099;
    auto f = randomVector(n, g_rng, -100, 100);
    f[0] = 1.0f + 1.0f / 256; // a tie: rounds to even
    f[1] = 3.0e38f;
    auto ref = b16(f);
    Dev<float> df(f);
    Dev<B16> db(n);
    cuda::convert(g_stream, db.get(), df.get(), n);
    const auto got = db.host();
    check(std::memcmp(got.data(), ref.data(), n * sizeof(B16)) == 0, "convert fp32 -> bf16 is the CPU's rounding, bit for bit",
          0, 0);
    Dev<float> back(n);
    cuda::convert(g_stream, back.get(), db.get(), n);
    check(back.host() == wide(ref), "convert bf16 -> fp32 is exact", 0, 0);
    auto acc = randomVector(n, g_rng);
    auto src = randomB16(n);
    Dev<float> dacc(acc);
    Dev<B16> dsrc(src);
    cpu::half::accumulate(acc.data(), src.data(), n);
    cuda::accumulate(g_stream, dacc.get(), dsrc.get(), n);
    checkF("accumulate bf16 into fp32", dacc.host(), acc, 1e-7);
    auto acc16 = randomB16(n);
    Dev<B16> dacc16(acc16);
    cpu::half::accumulate(acc16.data(), src.data(), n);
    cuda::accumulate(g_stream, dacc16.get(), dsrc.get(), n);
    checkB("accumulate bf16 into bf16", dacc16.host(), acc16, 1e-7);
    kernels::fill(g_stream, dacc16.get(), n, B16(-1.5f)); // through ops.h, as the model zeroes its buffers
    check(wide(dacc16.host()) == std::vector<float>(n, -1.5f), "fill bf16", 0, 0);
}

// cuDNN's fused attention against the fp32 reference, beside the CPU bf16 attention.
void fusedAttention(int B, int T, int NH, int KVH, int hs)
{
    const int C = NH * hs, ld = C + 2 * KVH * hs;
    const std::string tag = " (B " + std::to_string(B) + " T " + std::to_string(T) + " heads " + std::to_string(NH) +
                            " kv " + std::to_string(KVH) + " hs " + std::to_string(hs) + ")";
    const auto qkv = randomB16(static_cast<std::size_t>(B) * T * ld, -2, 2);
    const auto dOut = randomB16(static_cast<std::size_t>(B) * T * C);
    const std::size_t tt = static_cast<std::size_t>(B) * NH * T * T;
    // fp32 reference on the same (rounded) inputs, and the CPU's bf16 kernel.
    std::vector<float> ref(B * T * C), refAtt(tt), refD(qkv.size()), scratchF(T * T);
    cpu::attentionForward(ref.data(), refAtt.data(), wide(qkv).data(), B, T, C, NH, KVH);
    cpu::attentionBackward(refD.data(), scratchF.data(), wide(dOut).data(), wide(qkv).data(), refAtt.data(), B, T, C,
                           NH, KVH);
    std::vector<B16> half(B * T * C), halfAtt(tt), halfD(qkv.size());
    cpu::half::attentionForward(half.data(), halfAtt.data(), qkv.data(), B, T, C, NH, KVH);
    cpu::half::attentionBackward(halfD.data(), scratchF.data(), dOut.data(), qkv.data(), halfAtt.data(), B, T, C, NH,
                                 KVH);
    Dev<B16> dqkv(qkv), dout(static_cast<std::size_t>(B) * T * C), ddOut(dOut), dgrad(qkv.size()), dgrad2(qkv.size());
    Dev<float> dlse(static_cast<std::size_t>(B) * NH * T);
    cuda::flashAttentionForward(g_stream, dout.get(), dlse.get(), dqkv.get(), B, T, C, NH, KVH);
    cuda::flashAttentionBackward(g_stream, dgrad.get(), ddOut.get(), dout.get(), dqkv.get(), dlse.get(), B, T, C, NH,
                                 KVH);
    cuda::flashAttentionBackward(g_stream, dgrad2.get(), ddOut.get(), dout.get(), dqkv.get(), dlse.get(), B, T, C, NH,
                                 KVH);
    const double gpuOut = relativeError(wide(dout.host()), ref), cpuOut = relativeError(wide(half), ref);
    check(gpuOut <= 3 * cpuOut + 2e-3,
          "fused attention out vs fp32" + tag + ", CPU bf16 " + std::to_string(cpuOut), gpuOut, 3 * cpuOut + 2e-3);
    const double gpuD = relativeError(wide(dgrad.host()), refD), cpuD = relativeError(wide(halfD), refD);
    check(gpuD <= 3 * cpuD + 2e-3, "fused attention dqkv vs fp32" + tag + ", CPU bf16 " + std::to_string(cpuD), gpuD,
          3 * cpuD + 2e-3);
    const auto a = dgrad.host(), b = dgrad2.host();
    check(std::memcmp(a.data(), b.data(), a.size() * sizeof(B16)) == 0, "fused attention backward is deterministic" + tag,
          0, 0);
}

void refusals()
{
    // A head size cuDNN cannot take is refused by name, before any launch.
    try {
        Dev<B16> q(2 * 8 * 3 * 12), o(2 * 8 * 12);
        Dev<float> lse(2 * 8);
        cuda::flashAttentionForward(g_stream, o.get(), lse.get(), q.get(), 2, 8, 12, 1, 1);
        check(false, "head size 12 is refused", 0, 0);
    } catch (const std::runtime_error &e) {
        std::printf("     reported: %s\n", e.what());
        check(std::string(e.what()).find("head size 12") != std::string::npos, "head size 12 is refused, naming it", 0, 0);
    }
}

} // namespace

int main(int argc, char **argv)
{
    if (argc > 1 && std::string(argv[1]) == "--help") {
        std::printf("usage: tst_cuda_bf16\nChecks every bf16 CUDA kernel against its CPU 16-bit reference and cuDNN's fused "
                    "attention against fp32 on GPU 0; exits 77 (skipped) without a GPU.\n");
        return 0;
    }
    if (cuda::deviceCount() == 0) {
        std::printf("SKIP: no CUDA device on this machine (the GPU checks run where one is lent)\n");
        return kSkip;
    }
    std::printf("device: %s\n", cuda::deviceDescription(0).c_str());
    g_stream.device = kernels::Device::Cuda;
    g_stream.handle = cuda::createStream(0);
    cpu::setKernelThreads(1);
    linear(77, 96, 128);
    linear(64, 768, 2304);
    linear(33, 96, 130);
    norms(45, 200);
    norms(7, 203);
    norms(5, 6200);
    elementwise(3001);
    elementwise(4096);
    lossAndEmbeddings();
    lseCrossEntropy<float>();
    lseCrossEntropy<B16>();
    conversions();
    if (!cuda::fusedAttentionBuilt()) {
        check(false, "this build has cuDNN's fused attention", 0, 0);
    } else {
        fusedAttention(2, 37, 4, 4, 16);
        fusedAttention(2, 37, 4, 2, 16);
        fusedAttention(2, 37, 4, 1, 16);
        fusedAttention(1, 256, 12, 12, 64);
        refusals();
    }
    return finish("tst_cuda_bf16");
}
