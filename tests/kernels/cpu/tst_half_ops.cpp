// The 16-bit kernels (bf16, fp16) against their definition: every input widened to fp32, the fp32
// kernel run on it, every 16-bit output rounded to nearest even once — bit for bit, for every op
// the model uses (the plain-loop kernels are the same code as for float; the vectorised ones are
// converted in chunks around the float kernels). The exceptions are stated where they are: the
// bias gradient's column sums (another summation order, bounded) and the oneDNN GEMMs (another
// accumulation order, bounded against fp64). Also the conversions themselves: round to nearest
// even, NaN, infinities, fp16 subnormals and overflow, every ISA's table against the scalar code.
#include "kernels/cpu/half_gemm.h"
#include "kernels/cpu/half_ops.h"
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/simd.h"
#include "kernels/cpu/tensor_ops.h"
#include "kernels/dtype.h"

#include <QTest>

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace trellis::kernels;
using trellis::kernels::cpu::half::linearForward;

namespace {

template <typename H>
struct Tensor {
    std::vector<H> h;     // the 16-bit values
    std::vector<float> f; // the same values widened
};

template <typename H>
Tensor<H> random(std::size_t n, unsigned seed, float scale = 1.0f)
{
    std::mt19937 gen(seed);
    std::normal_distribution<float> dist(0.0f, scale);
    Tensor<H> t;
    for (std::size_t i = 0; i < n; ++i) {
        const H x(dist(gen));
        t.h.push_back(x);
        t.f.push_back(static_cast<float>(x));
    }
    return t;
}

template <typename H>
std::vector<H> rounded(const std::vector<float> &f)
{
    std::vector<H> out;
    for (float x : f)
        out.push_back(H(x));
    return out;
}

// The first index where the 16-bit result differs (in bits) from the rounded fp32 one, or -1.
template <typename H>
long firstDifference(const std::vector<H> &got, const std::vector<float> &fp32)
{
    if (got.size() != fp32.size())
        return 0;
    for (std::size_t i = 0; i < got.size(); ++i)
        if (got[i].bits != H(fp32[i]).bits)
            return static_cast<long>(i);
    return -1;
}

long firstDifference(const std::vector<float> &got, const std::vector<float> &want)
{
    if (got.size() != want.size())
        return 0;
    for (std::size_t i = 0; i < got.size(); ++i)
        if (std::memcmp(&got[i], &want[i], sizeof(float)) != 0)
            return static_cast<long>(i);
    return -1;
}

#define EXPECT_ROUNDED(got, fp32)                                                                                      \
    do {                                                                                                               \
        const long at = firstDifference(got, fp32);                                                                    \
        QVERIFY2(at < 0, qPrintable(QStringLiteral("%1: element %2 of %3 differs").arg(#got).arg(at).arg((got).size()))); \
    } while (0)

// The op families, each run for H (bf16, f16) and for float on the widened inputs.
template <typename H>
void linearLayer(bool bias, int BT, int C, int OC)
{
    const auto in = random<H>(size_t(BT) * C, 1), w = random<H>(size_t(OC) * C, 2), b = random<H>(OC, 3);
    std::vector<H> out(size_t(BT) * OC);
    std::vector<float> outF(out.size());
    cpu::half::linearForward(out.data(), in.h.data(), w.h.data(), bias ? b.h.data() : nullptr, BT, C, OC);
    cpu::linearForward(outF.data(), in.f.data(), w.f.data(), bias ? b.f.data() : nullptr, BT, C, OC);
    EXPECT_ROUNDED(out, outF);

    // Backward: dIn accumulates into 16-bit values, dW and dBias into fp32.
    const auto dOut = random<H>(out.size(), 4), dIn0 = random<H>(in.h.size(), 5);
    std::vector<H> dIn = dIn0.h;
    std::vector<float> dInF = dIn0.f, dW(size_t(OC) * C, 0.25f), dWF = dW, dB(OC, -0.5f), dBF = dB;
    cpu::half::linearBackward(dIn.data(), dW.data(), bias ? dB.data() : nullptr, dOut.h.data(), in.h.data(), w.h.data(), BT, C, OC);
    // The fp32 reference: dIn's product formed apart and added once, as the 16-bit kernel must.
    std::vector<float> product(dInF.size(), 0.0f);
    cpu::linearBackward(product.data(), dWF.data(), bias ? dBF.data() : nullptr, dOut.f.data(), in.f.data(), w.f.data(), BT, C, OC);
    for (std::size_t i = 0; i < dInF.size(); ++i)
        dInF[i] += product[i];
    EXPECT_ROUNDED(dIn, dInF);
    QCOMPARE(firstDifference(dW, dWF), -1L);
    // The bias gradient sums rows in another order than the float kernel's vectorised columns.
    for (int o = 0; bias && o < OC; ++o)
        QVERIFY2(std::abs(dB[o] - dBF[o]) <= 1e-5f * (1.0f + std::abs(dBF[o])), qPrintable(QString::number(o)));
}

template <typename H>
void norms()
{
    const int N = 70, C = 48; // three chunks of 32 rows, the last short
    const auto x = random<H>(size_t(N) * C, 11, 2.0f), g = random<H>(C, 12), b = random<H>(C, 13);
    std::vector<H> y(x.h.size());
    std::vector<float> yF(y.size()), mean(N), rstd(N), meanF(N), rstdF(N);
    cpu::half::layerNormForward(y.data(), mean.data(), rstd.data(), x.h.data(), g.h.data(), b.h.data(), N, C);
    cpu::layerNormForward(yF.data(), meanF.data(), rstdF.data(), x.f.data(), g.f.data(), b.f.data(), N, C);
    EXPECT_ROUNDED(y, yF);
    QCOMPARE(firstDifference(mean, meanF), -1L);
    QCOMPARE(firstDifference(rstd, rstdF), -1L);
    const auto dy = random<H>(y.size(), 14), dx0 = random<H>(y.size(), 15);
    std::vector<H> dx = dx0.h;
    std::vector<float> dxF = dx0.f, dg(C, 0.5f), db(C, 0.25f), dgF = dg, dbF = db;
    cpu::half::layerNormBackward(dx.data(), dg.data(), db.data(), dy.h.data(), x.h.data(), g.h.data(), mean.data(), rstd.data(), N, C);
    cpu::layerNormBackward(dxF.data(), dgF.data(), dbF.data(), dy.f.data(), x.f.data(), g.f.data(), meanF.data(), rstdF.data(), N, C);
    EXPECT_ROUNDED(dx, dxF);
    QCOMPARE(firstDifference(dg, dgF), -1L);
    QCOMPARE(firstDifference(db, dbF), -1L);

    // RMSNorm (the same loops for every type).
    std::vector<float> r(N), rF(N);
    cpu::rmsNormForward(y.data(), r.data(), x.h.data(), g.h.data(), N, C);
    cpu::rmsNormForward(yF.data(), rF.data(), x.f.data(), g.f.data(), N, C);
    EXPECT_ROUNDED(y, yF);
    QCOMPARE(firstDifference(r, rF), -1L);
    dx = dx0.h;
    dxF = dx0.f;
    dgF = dg;
    cpu::rmsNormBackward(dx.data(), dg.data(), dy.h.data(), x.h.data(), g.h.data(), r.data(), N, C);
    cpu::rmsNormBackward(dxF.data(), dgF.data(), dy.f.data(), x.f.data(), g.f.data(), rF.data(), N, C);
    EXPECT_ROUNDED(dx, dxF);
    QCOMPARE(firstDifference(dg, dgF), -1L);
}

template <typename H>
void elementwise()
{
    const std::int64_t n = 40000; // three chunks of 16384, the last short
    const auto a = random<H>(size_t(n), 21, 3.0f), b = random<H>(size_t(n), 22), d = random<H>(size_t(n), 23);
    std::vector<H> out(a.h.size());
    std::vector<float> outF(out.size());
    cpu::half::geluForward(out.data(), a.h.data(), n);
    cpu::geluForward(outF.data(), a.f.data(), n);
    EXPECT_ROUNDED(out, outF);
    out = b.h;
    outF = b.f;
    cpu::half::geluBackward(out.data(), a.h.data(), d.h.data(), n);
    cpu::geluBackward(outF.data(), a.f.data(), d.f.data(), n);
    EXPECT_ROUNDED(out, outF);
    cpu::half::residualForward(out.data(), a.h.data(), b.h.data(), n);
    cpu::residualForward(outF.data(), a.f.data(), b.f.data(), n);
    EXPECT_ROUNDED(out, outF);
    // SwiGLU on rows of 2·F.
    const int N = 50, F = 32;
    std::vector<H> s(size_t(N) * F);
    std::vector<float> sF(s.size());
    cpu::swigluForward(s.data(), a.h.data(), N, F);
    cpu::swigluForward(sF.data(), a.f.data(), N, F);
    EXPECT_ROUNDED(s, sF);
    std::vector<H> ds(b.h.begin(), b.h.begin() + 2 * N * F);
    std::vector<float> dsF(b.f.begin(), b.f.begin() + 2 * N * F);
    cpu::swigluBackward(ds.data(), a.h.data(), d.h.data(), N, F);
    cpu::swigluBackward(dsF.data(), a.f.data(), d.f.data(), N, F);
    EXPECT_ROUNDED(ds, dsF);
    // Accumulation into fp32 and 16-bit, conversions both ways.
    std::vector<float> acc(size_t(n), 1.5f), accF = acc;
    cpu::half::accumulate(acc.data(), a.h.data(), n);
    for (std::int64_t i = 0; i < n; ++i)
        accF[size_t(i)] += a.f[size_t(i)];
    QCOMPARE(firstDifference(acc, accF), -1L);
    std::vector<H> acc16 = b.h;
    cpu::half::accumulate(acc16.data(), a.h.data(), n);
    for (std::int64_t i = 0; i < n; ++i)
        outF[size_t(i)] = b.f[size_t(i)] + a.f[size_t(i)];
    EXPECT_ROUNDED(acc16, outF);
    cpu::half::convert(out.data(), accF.data(), n);
    EXPECT_ROUNDED(out, accF);
    std::vector<float> widened(static_cast<std::size_t>(n));
    cpu::half::convert(widened.data(), a.h.data(), n);
    QCOMPARE(firstDifference(widened, a.f), -1L);
}

template <typename H>
void attention(int NH, int KVH)
{
    const int B = 2, T = 21, hs = 8, C = NH * hs, ld = C + 2 * KVH * hs;
    const auto qkv = random<H>(size_t(B) * T * ld, 31);
    std::vector<H> out(size_t(B) * T * C), att(size_t(B) * NH * T * T);
    std::vector<float> outF(out.size()), attF(att.size());
    cpu::half::attentionForward(out.data(), att.data(), qkv.h.data(), B, T, C, NH, KVH);
    cpu::attentionForward(outF.data(), attF.data(), qkv.f.data(), B, T, C, NH, KVH);
    EXPECT_ROUNDED(out, outF);
    EXPECT_ROUNDED(att, attF);
    // Backward from the kept (rounded) probabilities: the float kernel gets the same ones.
    const auto dOut = random<H>(out.size(), 32), dqkv0 = random<H>(qkv.h.size(), 33);
    std::vector<H> dqkv = dqkv0.h;
    std::vector<float> dqkvF = dqkv0.f, attRounded(att.size()), scratch(size_t(T) * T);
    for (std::size_t i = 0; i < att.size(); ++i)
        attRounded[i] = static_cast<float>(att[i]);
    cpu::half::attentionBackward(dqkv.data(), scratch.data(), dOut.h.data(), qkv.h.data(), att.data(), B, T, C, NH, KVH);
    cpu::attentionBackward(dqkvF.data(), scratch.data(), dOut.f.data(), qkv.f.data(), attRounded.data(), B, T, C, NH, KVH);
    EXPECT_ROUNDED(dqkv, dqkvF);
}

template <typename H>
void crossEntropy()
{
    const int BT = 9, V = 4000; // rows of 4 per chunk
    const auto logits = random<H>(size_t(BT) * V, 41, 4.0f);
    std::vector<std::int32_t> targets;
    for (int i = 0; i < BT; ++i)
        targets.push_back((i * 977) % V);
    std::vector<float> losses(BT), probs(logits.h.size()), lossesF(BT), probsF(probs.size());
    cpu::half::crossEntropyForward(losses.data(), probs.data(), logits.h.data(), targets.data(), BT, V);
    cpu::crossEntropyForward(lossesF.data(), probsF.data(), logits.f.data(), targets.data(), BT, V);
    QCOMPARE(firstDifference(losses, lossesF), -1L);
    QCOMPARE(firstDifference(probs, probsF), -1L);
    std::vector<H> d(probs.size());
    std::vector<float> dF(probs.size());
    cpu::half::crossEntropyBackward(d.data(), probs.data(), targets.data(), 0.125f, BT, V);
    cpu::crossEntropyBackward(dF.data(), probsF.data(), targets.data(), 0.125f, BT, V);
    EXPECT_ROUNDED(d, dF);
    // The vocabulary-parallel pieces (columns [first, first + V) of a larger vocabulary).
    std::vector<float> mx(BT), mxF(BT), partial(2 * BT), partialF(2 * BT);
    cpu::rowMax(mx.data(), logits.h.data(), BT, V);
    cpu::rowMax(mxF.data(), logits.f.data(), BT, V);
    QCOMPARE(firstDifference(mx, mxF), -1L);
    cpu::softmaxPartials(probs.data(), partial.data(), logits.h.data(), mx.data(), targets.data(), 100, BT, V);
    cpu::softmaxPartials(probsF.data(), partialF.data(), logits.f.data(), mxF.data(), targets.data(), 100, BT, V);
    QCOMPARE(firstDifference(probs, probsF), -1L);
    QCOMPARE(firstDifference(partial, partialF), -1L);
    cpu::crossEntropyRangeBackward(d.data(), probs.data(), targets.data(), 100, 0.5f, BT, V);
    cpu::crossEntropyRangeBackward(dF.data(), probsF.data(), targets.data(), 100, 0.5f, BT, V);
    EXPECT_ROUNDED(d, dF);
}

template <typename H>
void embeddings()
{
    const int B = 3, T = 7, C = 16, V = 40, BT = B * T;
    const auto wte = random<H>(size_t(V) * C, 51), wpe = random<H>(size_t(T) * C, 52), dOut = random<H>(size_t(BT) * C, 53);
    std::vector<std::int32_t> tokens;
    for (int i = 0; i < BT; ++i)
        tokens.push_back((i * 13) % V);
    std::vector<H> out(size_t(BT) * C);
    std::vector<float> outF(out.size());
    cpu::encoderForward(out.data(), tokens.data(), wte.h.data(), wpe.h.data(), B, T, C, V);
    cpu::encoderForward(outF.data(), tokens.data(), wte.f.data(), wpe.f.data(), B, T, C, V);
    EXPECT_ROUNDED(out, outF);
    std::vector<float> dwte(wte.f.size(), 0.0f), dwpe(wpe.f.size(), 0.0f), dwteF = dwte, dwpeF = dwpe;
    cpu::encoderBackward(dwte.data(), dwpe.data(), dOut.h.data(), tokens.data(), B, T, C, V);
    cpu::encoderBackward(dwteF.data(), dwpeF.data(), dOut.f.data(), tokens.data(), B, T, C, V);
    QCOMPARE(firstDifference(dwte, dwteF), -1L);
    QCOMPARE(firstDifference(dwpe, dwpeF), -1L);
    // Vocabulary range [10, 30) and positions added later.
    cpu::embeddingRangeForward(out.data(), tokens.data(), wte.h.data(), 10, 20, BT, C);
    cpu::embeddingRangeForward(outF.data(), tokens.data(), wte.f.data(), 10, 20, BT, C);
    EXPECT_ROUNDED(out, outF);
    cpu::addPositions(out.data(), wpe.h.data(), 2, BT, T, C);
    for (int i = 0; i < BT; ++i)
        for (int c = 0; c < C; ++c)
            outF[size_t(i) * C + c] = static_cast<float>(H(outF[size_t(i) * C + c])) + wpe.f[size_t((2 + i) % T) * C + c];
    EXPECT_ROUNDED(out, outF);
    cpu::embeddingRangeBackward(dwte.data(), dwpe.data(), dOut.h.data(), tokens.data(), 10, 20, BT, T, C);
    cpu::embeddingRangeBackward(dwteF.data(), dwpeF.data(), dOut.f.data(), tokens.data(), 10, 20, BT, T, C);
    QCOMPARE(firstDifference(dwte, dwteF), -1L);
    QCOMPARE(firstDifference(dwpe, dwpeF), -1L);
    // Rotary embeddings, forward and inverse, in place on rows of ld.
    const int ld = 2 * C, heads = 2, hsr = 8;
    std::vector<float> cosT(size_t(T) * hsr / 2), sinT(cosT.size());
    for (std::size_t i = 0; i < cosT.size(); ++i) {
        cosT[i] = std::cos(0.1f * float(i));
        sinT[i] = std::sin(0.1f * float(i));
    }
    auto rows = random<H>(size_t(BT) * ld, 54);
    for (bool inverse : {false, true}) {
        cpu::rope(rows.h.data(), cosT.data(), sinT.data(), BT, T, 0, ld, heads, hsr, inverse);
        cpu::rope(rows.f.data(), cosT.data(), sinT.data(), BT, T, 0, ld, heads, hsr, inverse);
        EXPECT_ROUNDED(rows.h, rows.f);
        rows.f.clear();
        for (const H &x : rows.h)
            rows.f.push_back(static_cast<float>(x));
    }
}

template <typename H>
void ringAndExperts()
{
    // One ring-attention block (half the keys visible), finished, and its backward.
    const int B = 2, Tq = 6, Tk = 6, NH = 2, KVH = 1, hs = 4, ldq = NH * hs + 2 * KVH * hs;
    const auto q = random<H>(size_t(B) * Tq * ldq, 61), kv = random<H>(size_t(B) * Tk * 2 * KVH * hs, 62);
    const std::vector<std::int32_t> qPos{6, 7, 8, 9, 10, 11}, kPos{3, 4, 5, 6, 7, 8};
    const std::size_t stats = size_t(B) * NH * Tq, outN = size_t(B) * Tq * NH * hs;
    std::vector<float> acc(outN, 0.0f), mx(stats, -std::numeric_limits<float>::infinity()), sum(stats, 0.0f);
    std::vector<float> accF = acc, mxF = mx, sumF = sum, lse(stats), lseF(stats);
    cpu::ringAttentionBlockForward(acc.data(), mx.data(), sum.data(), q.h.data(), ldq, kv.h.data(), qPos.data(), kPos.data(), B,
                                   Tq, Tk, NH, KVH, hs);
    cpu::ringAttentionBlockForward(accF.data(), mxF.data(), sumF.data(), q.f.data(), ldq, kv.f.data(), qPos.data(), kPos.data(),
                                   B, Tq, Tk, NH, KVH, hs);
    QCOMPARE(firstDifference(acc, accF), -1L);
    std::vector<H> out(outN);
    std::vector<float> outF(outN);
    cpu::ringAttentionFinish(out.data(), lse.data(), acc.data(), mx.data(), sum.data(), B, Tq, NH, hs);
    cpu::ringAttentionFinish(outF.data(), lseF.data(), accF.data(), mxF.data(), sumF.data(), B, Tq, NH, hs);
    EXPECT_ROUNDED(out, outF);
    QCOMPARE(firstDifference(lse, lseF), -1L);
    const auto dOut = random<H>(outN, 63);
    std::vector<float> outR(outN), delta(stats), deltaF(stats);
    for (std::size_t i = 0; i < outN; ++i)
        outR[i] = static_cast<float>(out[i]);
    cpu::ringAttentionDelta(delta.data(), dOut.h.data(), out.data(), B, Tq, NH, hs);
    cpu::ringAttentionDelta(deltaF.data(), dOut.f.data(), outR.data(), B, Tq, NH, hs);
    QCOMPARE(firstDifference(delta, deltaF), -1L);
    std::vector<float> dq(q.f.size(), 0.0f), dkv(kv.f.size(), 0.0f), dqF = dq, dkvF = dkv;
    cpu::ringAttentionBlockBackward(dq.data(), ldq, dkv.data(), dOut.h.data(), q.h.data(), kv.h.data(), lse.data(), delta.data(),
                                    qPos.data(), kPos.data(), B, Tq, Tk, NH, KVH, hs);
    cpu::ringAttentionBlockBackward(dqF.data(), ldq, dkvF.data(), dOut.f.data(), q.f.data(), kv.f.data(), lseF.data(),
                                    deltaF.data(), qPos.data(), kPos.data(), B, Tq, Tk, NH, KVH, hs);
    QCOMPARE(firstDifference(dq, dqF), -1L);
    QCOMPARE(firstDifference(dkv, dkvF), -1L);
    std::vector<H> cols(size_t(B) * Tq * 3, H(0.0f));
    cpu::half::copyColumns(cols.data(), 3, dkv.data(), 2 * KVH * hs, B * Tq, 3);
    for (int r = 0; r < B * Tq; ++r)
        for (int c = 0; c < 3; ++c)
            QCOMPARE(cols[size_t(r) * 3 + c].bits, H(dkv[size_t(r) * 2 * KVH * hs + c]).bits);

    // Expert rows: dispatch, gated combine (gates fp32) and their backward.
    const int N = 8, k = 2, C = 5;
    const auto x = random<H>(size_t(N) * C, 64), rows = random<H>(size_t(N) * k * C, 65), d = random<H>(size_t(N) * C, 66);
    const std::vector<std::int32_t> rowOf{3, -1, 0, 7, 7, 2, 5, 1}, slot{0, 3, -1, 5, 2, 9, 14, 6, 1, -1, 8, 4, 7, 10, 12, 11};
    std::vector<float> gates;
    for (int i = 0; i < N * k; ++i)
        gates.push_back(0.1f * float(i % 7) + 0.05f);
    std::vector<H> sel(size_t(N) * C);
    cpu::selectRows(sel.data(), x.h.data(), rowOf.data(), N, C);
    for (int i = 0; i < N; ++i)
        for (int c = 0; c < C; ++c)
            QCOMPARE(sel[size_t(i) * C + c].bits, rowOf[size_t(i)] < 0 ? H(0.0f).bits : x.h[size_t(rowOf[size_t(i)]) * C + c].bits);
    std::vector<H> comb(size_t(N) * C);
    std::vector<float> combF(comb.size());
    cpu::combineRows(comb.data(), rows.h.data(), slot.data(), gates.data(), N, k, C);
    cpu::combineRows(combF.data(), rows.f.data(), slot.data(), gates.data(), N, k, C);
    EXPECT_ROUNDED(comb, combF);
    std::vector<H> dRows(rows.h.size(), H(0.0f));
    std::vector<float> dRowsF(rows.f.size(), 0.0f), dGates(gates.size()), dGatesF(gates.size());
    cpu::combineRowsBackward(dRows.data(), dGates.data(), d.h.data(), rows.h.data(), slot.data(), gates.data(), N, k, C);
    cpu::combineRowsBackward(dRowsF.data(), dGatesF.data(), d.f.data(), rows.f.data(), slot.data(), gates.data(), N, k, C);
    EXPECT_ROUNDED(dRows, dRowsF);
    QCOMPARE(firstDifference(dGates, dGatesF), -1L);
    std::vector<H> dx = d.h;
    std::vector<float> dxF = d.f;
    cpu::addSelectedRows(dx.data(), rows.h.data(), slot.data(), N, k, C);
    cpu::addSelectedRows(dxF.data(), rows.f.data(), slot.data(), N, k, C);
    EXPECT_ROUNDED(dx, dxF);
}

// Every 16-bit value widened and rounded back is itself (NaNs stay NaNs).
template <typename H>
void roundTripsEveryValue()
{
    for (std::uint32_t bits = 0; bits < 65536; ++bits) {
        const H x = H::fromBits(static_cast<std::uint16_t>(bits));
        const float f = static_cast<float>(x);
        if (std::isnan(f))
            QVERIFY(std::isnan(static_cast<float>(H(f))));
        else
            QCOMPARE(H(f).bits, x.bits);
    }
}

} // namespace

class TstHalfOps : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        // These compare against the fp32 backend's exact products; the oneDNN one has its own test.
        QVERIFY(cpu::setGemm16Backend("fp32"));
    }

    void bf16Rounding_data()
    {
        QTest::addColumn<float>("value");
        QTest::addColumn<int>("bits");
        QTest::newRow("one") << 1.0f << 0x3f80;
        QTest::newRow("minus zero") << -0.0f << 0x8000;
        QTest::newRow("tie to even, down") << std::bit_cast<float>(0x3f808000u) << 0x3f80; // 1 + 2^-8: halfway, 0x3f80 even
        QTest::newRow("tie to even, up") << std::bit_cast<float>(0x3f818000u) << 0x3f82;
        QTest::newRow("above the tie") << std::bit_cast<float>(0x3f808001u) << 0x3f81;
        QTest::newRow("largest finite") << std::bit_cast<float>(0x7f7f0000u) << 0x7f7f;
        QTest::newRow("rounds up to infinity") << std::bit_cast<float>(0x7f7f8000u) << 0x7f80;
        QTest::newRow("infinity") << std::numeric_limits<float>::infinity() << 0x7f80;
        QTest::newRow("-infinity") << -std::numeric_limits<float>::infinity() << 0xff80;
        QTest::newRow("signalling nan quietened") << std::bit_cast<float>(0x7f800001u) << 0x7fc0;
        QTest::newRow("smallest subnormal keeps its top bits") << std::bit_cast<float>(0x00010000u) << 0x0001;
    }
    void bf16Rounding()
    {
        QFETCH(float, value);
        QFETCH(int, bits);
        QCOMPARE(int(bf16(value).bits), bits);
        std::uint16_t out = 0;
        for (const char *isa : {"sse2", "avx2", "avx512"}) {
            if (!cpu::simd::supported(isa))
                continue;
            const auto &table = std::strcmp(isa, "sse2") == 0 ? cpu::simd::sse2()
                                : std::strcmp(isa, "avx2") == 0 ? cpu::simd::avx2()
                                                                 : cpu::simd::avx512();
            std::vector<float> in(37, value); // whole vectors and a scalar tail
            std::vector<std::uint16_t> outs(in.size());
            table.floatToBf16(outs.data(), in.data(), std::int64_t(in.size()));
            for (std::uint16_t o : outs)
                QCOMPARE(int(o), bits);
            out = outs.back();
        }
        (void)out;
    }

    void f16Rounding_data()
    {
        QTest::addColumn<float>("value");
        QTest::addColumn<int>("bits");
        QTest::newRow("one") << 1.0f << 0x3c00;
        QTest::newRow("largest finite 65504") << 65504.0f << 0x7bff;
        QTest::newRow("65519 rounds down") << 65519.0f << 0x7bff;
        QTest::newRow("65520 overflows") << 65520.0f << 0x7c00;
        QTest::newRow("smallest normal") << std::ldexp(1.0f, -14) << 0x0400;
        QTest::newRow("smallest subnormal") << std::ldexp(1.0f, -24) << 0x0001;
        QTest::newRow("half of it ties to zero") << std::ldexp(1.0f, -25) << 0x0000;
        QTest::newRow("three halves ties to even (2)") << 3.0f * std::ldexp(1.0f, -25) << 0x0002;
        QTest::newRow("just above half rounds up") << std::nextafter(std::ldexp(1.0f, -25), 1.0f) << 0x0001;
        QTest::newRow("tie in the normals to even") << 1.0f + std::ldexp(1.0f, -11) << 0x3c00;
        QTest::newRow("-2") << -2.0f << 0xc000;
        QTest::newRow("nan") << std::numeric_limits<float>::quiet_NaN() << 0x7e00;
        QTest::newRow("-infinity") << -std::numeric_limits<float>::infinity() << 0xfc00;
    }
    void f16Rounding()
    {
        QFETCH(float, value);
        QFETCH(int, bits);
        QCOMPARE(int(f16(value).bits), bits);
        for (const char *isa : {"sse2", "avx2", "avx512"}) {
            if (!cpu::simd::supported(isa))
                continue;
            const auto &table = std::strcmp(isa, "sse2") == 0 ? cpu::simd::sse2()
                                : std::strcmp(isa, "avx2") == 0 ? cpu::simd::avx2()
                                                                 : cpu::simd::avx512();
            std::vector<float> in(37, value);
            std::vector<std::uint16_t> outs(in.size());
            table.floatToF16(outs.data(), in.data(), std::int64_t(in.size()));
            for (std::uint16_t o : outs)
                QCOMPARE(int(o), bits);
        }
    }

    // Every ISA table's conversions against the scalar ones: all 65536 values widened, and a
    // million random floats (random bits: every exponent, NaNs, subnormals) narrowed.
    void tablesAgreeWithTheScalarConversions()
    {
        std::vector<std::uint16_t> all(65536);
        for (std::uint32_t i = 0; i < 65536; ++i)
            all[i] = static_cast<std::uint16_t>(i);
        std::mt19937 gen(7);
        std::vector<float> randomFloats(1 << 20);
        for (float &f : randomFloats)
            f = std::bit_cast<float>(static_cast<std::uint32_t>(gen()));
        int tables = 0;
        for (const char *isa : {"sse2", "avx2", "avx512"}) {
            if (!cpu::simd::supported(isa))
                continue;
            ++tables;
            const auto &t = std::strcmp(isa, "sse2") == 0 ? cpu::simd::sse2()
                            : std::strcmp(isa, "avx2") == 0 ? cpu::simd::avx2()
                                                             : cpu::simd::avx512();
            std::vector<float> wide(all.size());
            t.bf16ToFloat(wide.data(), all.data(), 65536);
            for (std::uint32_t i = 0; i < 65536; ++i)
                QCOMPARE(std::bit_cast<std::uint32_t>(wide[i]), std::bit_cast<std::uint32_t>(float(bf16::fromBits(all[i]))));
            t.f16ToFloat(wide.data(), all.data(), 65536);
            for (std::uint32_t i = 0; i < 65536; ++i)
                QCOMPARE(std::bit_cast<std::uint32_t>(wide[i]), std::bit_cast<std::uint32_t>(float(f16::fromBits(all[i]))));
            std::vector<std::uint16_t> narrow(randomFloats.size());
            t.floatToBf16(narrow.data(), randomFloats.data(), std::int64_t(randomFloats.size()));
            for (std::size_t i = 0; i < narrow.size(); ++i)
                QCOMPARE(narrow[i], bf16(randomFloats[i]).bits);
            t.floatToF16(narrow.data(), randomFloats.data(), std::int64_t(randomFloats.size()));
            for (std::size_t i = 0; i < narrow.size(); ++i) {
                if (std::isnan(randomFloats[i])) // F16C keeps a NaN's payload bits differently: NaN either way
                    QVERIFY((narrow[i] & 0x7c00) == 0x7c00 && (narrow[i] & 0x3ff) != 0);
                else
                    QCOMPARE(narrow[i], f16(randomFloats[i]).bits);
            }
        }
        qInfo("conversion tables checked: %d (this CPU: %s)", tables, cpu::kernelIsa());
    }

    void roundTrips()
    {
        roundTripsEveryValue<bf16>();
        roundTripsEveryValue<f16>();
    }

    void linear_data()
    {
        QTest::addColumn<bool>("bias");
        QTest::addColumn<int>("threads");
        QTest::addColumn<int>("rows");
        QTest::newRow("with bias") << true << 1 << 37;
        QTest::newRow("without bias") << false << 1 << 37;
        // Enough rows that the bias fill and the rounding of the output split over the threads.
        QTest::newRow("with bias, 3 threads") << true << 3 << 4096;
        QTest::newRow("without bias, 3 threads") << false << 3 << 4096;
    }
    void linear()
    {
        QFETCH(bool, bias);
        QFETCH(int, threads);
        QFETCH(int, rows);
        cpu::setKernelThreads(threads);
        linearLayer<bf16>(bias, rows, 24, 19);
        linearLayer<f16>(bias, rows, 24, 19);
        // Which thread runs which chunk is up to the pool: several calls, so the workers get some.
        for (int repeat = 0; repeat < (threads > 1 ? 8 : 1); ++repeat) {
            linearLayer<bf16>(bias, rows, 64, 96);
            linearLayer<f16>(bias, rows, 64, 96);
        }
        cpu::setKernelThreads(0);
    }
    void normalisation()
    {
        norms<bf16>();
        norms<f16>();
    }
    void elementwiseAndConversions()
    {
        elementwise<bf16>();
        elementwise<f16>();
    }
    void attention_data()
    {
        QTest::addColumn<int>("NH");
        QTest::addColumn<int>("KVH");
        QTest::newRow("multi-head") << 3 << 3;
        QTest::newRow("grouped-query") << 4 << 2;
    }
    void attention()
    {
        QFETCH(int, NH);
        QFETCH(int, KVH);
        ::attention<bf16>(NH, KVH);
        ::attention<f16>(NH, KVH);
    }
    void crossEntropyAndVocabularyParallel()
    {
        crossEntropy<bf16>();
        crossEntropy<f16>();
    }
    void embeddingsAndRotary()
    {
        embeddings<bf16>();
        embeddings<f16>();
    }
    void ringAttentionAndExpertRows()
    {
        ringAndExperts<bf16>();
        ringAndExperts<f16>();
    }

    // oneDNN's bf16 matmul (native on AVX512-BF16/AMX, emulated on other AVX-512) against
    // fp64 products of the same bf16 values: fp32 accumulation in another order, so bounded.
    void oneDnnGemm_data()
    {
        QTest::addColumn<bool>("ta");
        QTest::addColumn<bool>("tb");
        QTest::addColumn<bool>("accumulate");
        for (bool ta : {false, true})
            for (bool tb : {false, true})
                for (bool acc : {false, true})
                    QTest::newRow(qPrintable(QStringLiteral("%1%2%3").arg(ta ? 'T' : 'N').arg(tb ? 'T' : 'N').arg(acc ? " +=" : "")))
                        << ta << tb << acc;
    }
    void oneDnnGemm()
    {
        QFETCH(bool, ta);
        QFETCH(bool, tb);
        QFETCH(bool, accumulate);
        if (!cpu::setGemm16Backend("onednn"))
            QSKIP("no oneDNN bf16 matmul here (oneDNN 2.6 needs AVX-512; or this build has no libdnnl-dev)");
        qInfo("backend: %s", cpu::gemm16Backend(DType::BF16));
        const int M = 29, N = 23, K = 71;
        const auto A = random<bf16>(size_t(M) * K, 71), B = random<bf16>(size_t(K) * N, 72), bias = random<bf16>(N, 73);
        std::vector<float> C(size_t(M) * N, 0.75f);
        std::vector<bf16> C16(C.size(), bf16(0.75f));
        const bf16 *b = accumulate ? nullptr : bias.h.data();
        cpu::gemm16<bf16, float>(ta, tb, M, N, K, A.h.data(), ta ? M : K, B.h.data(), tb ? K : N, C.data(), N, accumulate, b);
        cpu::gemm16<bf16, bf16>(ta, tb, M, N, K, A.h.data(), ta ? M : K, B.h.data(), tb ? K : N, C16.data(), N, accumulate, b);
        cpu::setGemm16Backend("fp32");
        for (int i = 0; i < M; ++i)
            for (int j = 0; j < N; ++j) {
                double s = accumulate ? 0.75 : double(bias.f[size_t(j)]), mag = std::abs(s);
                for (int k = 0; k < K; ++k) {
                    const double p = double(ta ? A.f[size_t(k) * M + i] : A.f[size_t(i) * K + k]) *
                                     double(tb ? B.f[size_t(j) * K + k] : B.f[size_t(k) * N + j]);
                    s += p;
                    mag += std::abs(p);
                }
                // fp32 accumulation of K exact products: |error| ≤ K·2⁻²⁴·Σ|p| (loose, any order).
                QVERIFY2(std::abs(C[size_t(i) * N + j] - s) <= K * 6e-8 * mag,
                         qPrintable(QStringLiteral("(%1,%2): %3 vs %4").arg(i).arg(j).arg(C[size_t(i) * N + j]).arg(s)));
                QVERIFY(std::abs(double(float(C16[size_t(i) * N + j])) - s) <= K * 6e-8 * mag + std::abs(s) * 0.00391);
            }
    }
};

QTEST_GUILESS_MAIN(TstHalfOps)
#include "tst_half_ops.moc"
