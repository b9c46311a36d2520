// Linear layers over cuBLASLt (CPU reference: kernels/cpu/ops.cpp): the forward with the bias in
// the GEMM's epilogue, the backward as two accumulating GEMMs and a column sum for the bias.
#include "kernels/cuda/common.cuh"

namespace trellis::kernels::cuda {

void columnSumOf(cudaStream_t stream, float *out, const float *data, int N, int C); // norms.cu

void linearForward(const Stream &s, float *out, const float *in, const float *weight, const float *bias, int BT, int C,
                   int OC)
{
    // out[BT,OC] = in[BT,C]·W[OC,C]ᵀ + bias
    gemm(native(s), false, true, BT, OC, C, 1.0f, in, C, 0, weight, C, 0, 0.0f, out, OC, 0, 1, bias);
}

void linearBackward(const Stream &s, float *dIn, float *dWeight, float *dBias, const float *dOut, const float *in,
                    const float *weight, int BT, int C, int OC)
{
    if (dIn) // dIn[BT,C] += dOut[BT,OC]·W[OC,C]
        gemm(native(s), false, false, BT, C, OC, 1.0f, dOut, OC, 0, weight, C, 0, 1.0f, dIn, C, 0, 1);
    if (dWeight) // dW[OC,C] += dOutᵀ·in
        gemm(native(s), true, false, OC, C, BT, 1.0f, dOut, OC, 0, in, C, 0, 1.0f, dWeight, C, 0, 1);
    if (dBias)
        columnSumOf(native(s), dBias, dOut, BT, OC);
}

} // namespace trellis::kernels::cuda
