// Linear layers over cuBLASLt (CPU references: kernels/cpu/cpu_ops.cpp, half_ops.cpp): the forward with
// the bias in the GEMM's epilogue, the backward as two accumulating GEMMs and a column sum for the
// bias. bf16 operands run on tensor cores with fp32 accumulation; the weight and bias gradients
// are fp32, the input gradient is rounded once to bf16.
#include "kernels/cuda/common.cuh"

namespace trellis::kernels::cuda {

template <typename T>
void columnSumOf(cudaStream_t stream, float *out, const T *data, int N, int C); // norms.cu

template <typename T>
void linearForward(const Stream &s, T *out, const T *in, const T *weight, const T *bias, int BT, int C, int OC)
{
    // out[BT,OC] = in[BT,C]·W[OC,C]ᵀ + bias
    gemm(native(s), false, true, BT, OC, C, 1.0f, in, C, 0, weight, C, 0, 0.0f, out, OC, 0, 1, bias, cudaType<T>(),
         cudaType<T>());
}

template <typename T>
void linearBackward(const Stream &s, T *dIn, float *dWeight, float *dBias, const T *dOut, const T *in, const T *weight,
                    int BT, int C, int OC)
{
    if (dIn) // dIn[BT,C] += dOut[BT,OC]·W[OC,C]
        gemm(native(s), false, false, BT, C, OC, 1.0f, dOut, OC, 0, weight, C, 0, 1.0f, dIn, C, 0, 1, nullptr,
             cudaType<T>(), cudaType<T>());
    if (dWeight) // dW[OC,C] += dOutᵀ·in
        gemm(native(s), true, false, OC, C, BT, 1.0f, dOut, OC, 0, in, C, 0, 1.0f, dWeight, C, 0, 1, nullptr,
             cudaType<T>(), CUDA_R_32F);
    if (dBias)
        columnSumOf(native(s), dBias, dOut, BT, OC);
}

#define TRELLIS_INSTANTIATE(T)                                                                                     \
    template void linearForward<T>(const Stream &, T *, const T *, const T *, const T *, int, int, int);           \
    template void linearBackward<T>(const Stream &, T *, float *, float *, const T *, const T *, const T *, int, int, \
                                    int);
TRELLIS_INSTANTIATE(float)
TRELLIS_INSTANTIATE(bf16)
#undef TRELLIS_INSTANTIATE

} // namespace trellis::kernels::cuda
