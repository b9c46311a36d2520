// CPU reference element-wise kernels; see tensor_ops.h.
#include "kernels/cpu/tensor_ops.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace trellis::kernels::cpu {

template <typename T>
void fill(T *data, std::int64_t n, T value)
{
    std::fill(data, data + n, value);
}

template <typename T>
void copy(T *dst, const T *src, std::int64_t n)
{
    if (n > 0 && dst != src)
        std::memmove(dst, src, static_cast<std::size_t>(n) * sizeof(T));
}

template <typename T>
void accumulate(T *dst, const T *src, std::int64_t n)
{
    for (std::int64_t i = 0; i < n; ++i)
        dst[i] += src[i];
}

template <typename T>
void scale(T *data, std::int64_t n, T factor)
{
    for (std::int64_t i = 0; i < n; ++i)
        data[i] *= factor;
}

template <typename T>
double sum(const T *data, std::int64_t n)
{
    double s = 0;
    for (std::int64_t i = 0; i < n; ++i)
        s += static_cast<double>(toAcc(data[i]));
    return s;
}

template <typename T>
double sumSquares(const T *data, std::int64_t n)
{
    double s = 0;
    for (std::int64_t i = 0; i < n; ++i)
        s += static_cast<double>(toAcc(data[i])) * static_cast<double>(toAcc(data[i]));
    return s;
}

template <typename T>
void embeddingRangeForward(T *out, const std::int32_t *tokens, const T *wte, int first, int V, int BT, int C)
{
    for (int i = 0; i < BT; ++i) {
        const int tok = tokens[i] - first;
        T *row = out + static_cast<std::int64_t>(i) * C;
        if (tok >= 0 && tok < V)
            std::copy_n(wte + static_cast<std::int64_t>(tok) * C, C, row);
        else
            std::fill_n(row, C, T(0));
    }
}

template <typename T>
void addPositions(T *out, const T *wpe, int firstRow, int rows, int seqLen, int C)
{
    for (int i = 0; i < rows; ++i) {
        const T *p = wpe + static_cast<std::int64_t>((firstRow + i) % seqLen) * C;
        T *row = out + static_cast<std::int64_t>(i) * C;
        for (int c = 0; c < C; ++c)
            row[c] = fromAcc<T>(toAcc(row[c]) + toAcc(p[c]));
    }
}

template <typename T>
void embeddingRangeBackward(acc_t<T> *dwte, acc_t<T> *dwpe, const T *dOut, const std::int32_t *tokens, int first, int V,
                            int BT, int seqLen, int C)
{
    using A = acc_t<T>;
    for (int i = 0; i < BT; ++i) {
        const T *d = dOut + static_cast<std::int64_t>(i) * C;
        const int tok = tokens[i] - first;
        if (tok >= 0 && tok < V) {
            A *w = dwte + static_cast<std::int64_t>(tok) * C;
            for (int c = 0; c < C; ++c)
                w[c] += toAcc(d[c]);
        }
        if (!dwpe)
            continue; // no learned positions (rotary ones live in attention)
        A *p = dwpe + static_cast<std::int64_t>(i % seqLen) * C;
        for (int c = 0; c < C; ++c)
            p[c] += toAcc(d[c]);
    }
}

template <typename T>
void rowMax(acc_t<T> *out, const T *logits, int BT, int V)
{
    for (int i = 0; i < BT; ++i) {
        const T *row = logits + static_cast<std::int64_t>(i) * V;
        acc_t<T> mx = toAcc(row[0]);
        for (int v = 1; v < V; ++v)
            mx = std::max(mx, toAcc(row[v]));
        out[i] = mx;
    }
}

template <typename T>
void maxOverBlocks(T *out, const T *blocks, int count, int BT)
{
    for (int i = 0; i < BT; ++i) {
        T mx = blocks[i];
        for (int b = 1; b < count; ++b)
            mx = std::max(mx, blocks[static_cast<std::int64_t>(b) * BT + i]);
        out[i] = mx;
    }
}

template <typename T>
void softmaxPartials(acc_t<T> *probs, acc_t<T> *partial, const T *logits, const acc_t<T> *globalMax,
                     const std::int32_t *targets, int first, int BT, int V)
{
    using A = acc_t<T>;
    for (int i = 0; i < BT; ++i) {
        const T *row = logits + static_cast<std::int64_t>(i) * V;
        A *prob = probs + static_cast<std::int64_t>(i) * V;
        A s = 0;
        for (int v = 0; v < V; ++v) {
            prob[v] = std::exp(toAcc(row[v]) - globalMax[i]);
            s += prob[v];
        }
        const int t = targets[i] - first;
        partial[2 * i] = s;
        partial[2 * i + 1] = t >= 0 && t < V ? toAcc(row[t]) : A(0);
    }
}

template <typename T>
void softmaxFinish(T *probs, T *losses, const T *sums, const T *globalMax, int BT, int V)
{
    for (int i = 0; i < BT; ++i) {
        const T s = sums[2 * i];
        T *prob = probs + static_cast<std::int64_t>(i) * V;
        for (int v = 0; v < V; ++v)
            prob[v] /= s;
        losses[i] = std::log(s) + globalMax[i] - sums[2 * i + 1];
    }
}

template <typename T>
void crossEntropyRangeBackward(T *dLogits, const acc_t<T> *probs, const std::int32_t *targets, int first, acc_t<T> scale,
                               int BT, int V)
{
    using A = acc_t<T>;
    for (int i = 0; i < BT; ++i)
        for (int v = 0; v < V; ++v) {
            const std::int64_t at = static_cast<std::int64_t>(i) * V + v;
            dLogits[at] = fromAcc<T>((probs[at] - (targets[i] == first + v ? A(1) : A(0))) * scale);
        }
}

void adamw(float *params, const float *grads, float *m, float *v, const std::uint8_t *decay, std::int64_t n,
           const AdamWStep &s)
{
    for (std::int64_t i = 0; i < n; ++i) {
        const float g = grads[i];
        m[i] = s.beta1 * m[i] + (1.0f - s.beta1) * g;
        v[i] = s.beta2 * v[i] + (1.0f - s.beta2) * g * g;
        if (!decay || decay[i])
            params[i] -= s.decay * params[i];
        params[i] -= s.stepSize * m[i] / (std::sqrt(v[i]) * s.invSqrtCorrection2 + s.eps);
    }
}

#define TRELLIS_INSTANTIATE(T)                                                                                   \
    template void accumulate<T>(T *, const T *, std::int64_t);                                                    \
    template void scale<T>(T *, std::int64_t, T);                                                                 \
    template void maxOverBlocks<T>(T *, const T *, int, int);                                                     \
    template void softmaxFinish<T>(T *, T *, const T *, const T *, int, int);                                     \
    TRELLIS_INSTANTIATE_ANY(T)
// The kernels 16-bit types share with float (loads widen, stores round).
#define TRELLIS_INSTANTIATE_ANY(T)                                                                               \
    template void fill<T>(T *, std::int64_t, T);                                                                  \
    template void copy<T>(T *, const T *, std::int64_t);                                                          \
    template double sum<T>(const T *, std::int64_t);                                                              \
    template double sumSquares<T>(const T *, std::int64_t);                                                       \
    template void embeddingRangeForward<T>(T *, const std::int32_t *, const T *, int, int, int, int);             \
    template void addPositions<T>(T *, const T *, int, int, int, int);                                            \
    template void embeddingRangeBackward<T>(acc_t<T> *, acc_t<T> *, const T *, const std::int32_t *, int, int, int, \
                                            int, int);                                                            \
    template void rowMax<T>(acc_t<T> *, const T *, int, int);                                                     \
    template void softmaxPartials<T>(acc_t<T> *, acc_t<T> *, const T *, const acc_t<T> *, const std::int32_t *,   \
                                     int, int, int);                                                              \
    template void crossEntropyRangeBackward<T>(T *, const acc_t<T> *, const std::int32_t *, int, acc_t<T>, int, int);

TRELLIS_INSTANTIATE(float)
TRELLIS_INSTANTIATE(double)
TRELLIS_INSTANTIATE_ANY(bf16)
TRELLIS_INSTANTIATE_ANY(f16)
#undef TRELLIS_INSTANTIATE_ANY
template void fill<std::int32_t>(std::int32_t *, std::int64_t, std::int32_t);
template void copy<std::int32_t>(std::int32_t *, const std::int32_t *, std::int64_t);
template void fill<std::uint8_t>(std::uint8_t *, std::int64_t, std::uint8_t);
template void copy<std::uint8_t>(std::uint8_t *, const std::uint8_t *, std::int64_t);
#undef TRELLIS_INSTANTIATE

} // namespace trellis::kernels::cpu
