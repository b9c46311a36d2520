// Token and position embedding forward and backward; see ops.h. The backward scatters rows into
// dwte by token, so it is split by columns: each slice of columns walks all positions in order
// (the same sums in the same order for any thread count).
#include "kernels/cpu/cpu_ops.h"

#include "kernels/cpu/parallel.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace trellis::kernels::cpu {
namespace {

// A token outside the vocabulary would read (or, backward, write) outside wte: refused, naming it.
void checkTokens(const std::int32_t *tokens, std::int64_t n, int V)
{
    for (std::int64_t i = 0; i < n; ++i)
        if (tokens[i] < 0 || tokens[i] >= V)
            throw std::out_of_range("token id " + std::to_string(tokens[i]) + " at position " + std::to_string(i) +
                                    " is outside the vocabulary [0, " + std::to_string(V) + ")");
}

} // namespace

template <typename T>
void encoderForward(T *out, const std::int32_t *tokens, const T *wte, const T *wpe, int B, int T_, int C, int V)
{
    checkTokens(tokens, static_cast<std::int64_t>(B) * T_, V);
    auto run = [&](std::int64_t i0, std::int64_t i1) {
        for (std::int64_t i = i0; i < i1; ++i) {
            const T *e = wte + static_cast<std::int64_t>(tokens[i]) * C;
            const T *p = wpe + (i % T_) * C;
            T *o = out + i * C;
            for (int c = 0; c < C; ++c)
                o[c] = fromAcc<T>(toAcc(e[c]) + toAcc(p[c]));
        }
    };
    const std::int64_t BT = static_cast<std::int64_t>(B) * T_;
    if constexpr (!std::is_same_v<T, double>)
        parallelRange(BT, std::max(1, 16384 / std::max(1, C)), run);
    else
        run(0, BT);
}

template <typename T>
void encoderBackward(acc_t<T> *dwte, acc_t<T> *dwpe, const T *dOut, const std::int32_t *tokens, int B, int T_, int C, int V)
{
    checkTokens(tokens, static_cast<std::int64_t>(B) * T_, V);
    using A = acc_t<T>;
    const std::int64_t BT = static_cast<std::int64_t>(B) * T_;
    auto run = [&](int c0, int c1) {
        for (std::int64_t i = 0; i < BT; ++i) {
            A *e = dwte + static_cast<std::int64_t>(tokens[i]) * C;
            A *p = dwpe + (i % T_) * C;
            const T *d = dOut + i * C;
            for (int c = c0; c < c1; ++c) {
                e[c] += toAcc(d[c]);
                p[c] += toAcc(d[c]);
            }
        }
    };
    if constexpr (!std::is_same_v<T, double>) {
        const int slice = 64;
        parallelFor((C + slice - 1) / slice, [&](int s) { run(s * slice, std::min(C, (s + 1) * slice)); });
    } else {
        run(0, C);
    }
}

template void encoderForward<float>(float *, const std::int32_t *, const float *, const float *, int, int, int, int);
template void encoderForward<double>(double *, const std::int32_t *, const double *, const double *, int, int, int, int);
template void encoderBackward<float>(float *, float *, const float *, const std::int32_t *, int, int, int, int);
template void encoderBackward<double>(double *, double *, const double *, const std::int32_t *, int, int, int, int);
#define TRELLIS_EMBEDDING_16(T)                                                                                     \
    template void encoderForward<T>(T *, const std::int32_t *, const T *, const T *, int, int, int, int);                \
    template void encoderBackward<T>(float *, float *, const T *, const std::int32_t *, int, int, int, int);
TRELLIS_EMBEDDING_16(bf16)
TRELLIS_EMBEDDING_16(f16)
#undef TRELLIS_EMBEDDING_16

} // namespace trellis::kernels::cpu
