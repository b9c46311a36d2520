// The CUDA kernels behind kernels/ops.h (trellis_kernels_cuda, built when CMake finds a CUDA compiler). Each has the contract of
// its CPU reference in kernels/cpu/ops.h or kernels/cpu/tensor_ops.h, on float device pointers,
// queued on the stream's cudaStream_t; tst_cuda_kernels checks each against that reference on a
// GPU. This header needs no CUDA headers: ops.h includes it in host code.
// Errors (a failed launch, a CUDA or cuBLASLt call) throw std::runtime_error reading
// "<context> <file>:<line> <call> → <error>", the context being what setErrorContext was given
// (the trainer gives "host <name> rank <r>").
// Threading: one stream per thread; the cuBLASLt handle and the scratch memory are per process
// and guarded.
#pragma once

#include "kernels/cpu/tensor_ops.h"

#include <cstddef>
#include <cstdint>
#include <string>

namespace trellis::kernels {
struct Stream;
}

namespace trellis::kernels::cuda {

// Number of CUDA devices this process sees (0 without a driver or a GPU; never throws).
int deviceCount();
// "NVIDIA H100 80GB HBM3, 132 SMs, sm_90, driver 13.0" for device `index`.
std::string deviceDescription(int index);
void setErrorContext(const std::string &context);
// Whether linear layers and attention may use TF32 tensor cores for float GEMMs (default off:
// fp32 products, comparable with the CPU reference to ~1e-6).
void setTf32(bool enabled);
bool tf32();
// Bytes of device memory the kernels hold for their own scratch (attention's head-major copies,
// reduction partials, the cuBLASLt workspace); not part of any DeviceBuffer.
std::size_t scratchBytes();

void linearForward(const Stream &s, float *out, const float *in, const float *weight, const float *bias, int BT, int C,
                   int OC);
void linearBackward(const Stream &s, float *dIn, float *dWeight, float *dBias, const float *dOut, const float *in,
                    const float *weight, int BT, int C, int OC);
void layerNormForward(const Stream &s, float *out, float *mean, float *rstd, const float *in, const float *gamma,
                      const float *beta, int N, int C);
void layerNormBackward(const Stream &s, float *dIn, float *dGamma, float *dBeta, const float *dOut, const float *in,
                       const float *gamma, const float *mean, const float *rstd, int N, int C);
void geluForward(const Stream &s, float *out, const float *in, std::int64_t n);
void geluBackward(const Stream &s, float *dIn, const float *in, const float *dOut, std::int64_t n);
void attentionForward(const Stream &s, float *out, float *att, const float *qkv, int B, int T, int C, int NH, int KVH);
void attentionBackward(const Stream &s, float *dqkv, float *scratch, const float *dOut, const float *qkv,
                       const float *att, int B, int T, int C, int NH, int KVH);
void rmsNormForward(const Stream &s, float *out, float *rstd, const float *in, const float *gamma, int N, int C);
void rmsNormBackward(const Stream &s, float *dIn, float *dGamma, const float *dOut, const float *in, const float *gamma,
                     const float *rstd, int N, int C);
void swigluForward(const Stream &s, float *out, const float *in, int N, int F);
void swigluBackward(const Stream &s, float *dIn, const float *in, const float *dOut, int N, int F);
void rope(const Stream &s, float *x, const float *cosTable, const float *sinTable, int N, int seqLen, int firstPos,
          int ld, int heads, int hs, bool inverse);
void residualForward(const Stream &s, float *out, const float *a, const float *b, std::int64_t n);
void crossEntropyForward(const Stream &s, float *losses, float *probs, const float *logits,
                         const std::int32_t *targets, int BT, int V);
void crossEntropyBackward(const Stream &s, float *dLogits, const float *probs, const std::int32_t *targets,
                          float scale, int BT, int V);
void encoderForward(const Stream &s, float *out, const std::int32_t *tokens, const float *wte, const float *wpe, int B,
                    int T, int C);
void encoderBackward(const Stream &s, float *dwte, float *dwpe, const float *dOut, const std::int32_t *tokens, int B,
                     int T, int C);

// Element-wise and bookkeeping (tensor_ops.h). fill and copy take any trivially copyable element
// of 1, 4 or 8 bytes.
void fillBytes(const Stream &s, void *data, std::int64_t n, const void *value, std::size_t elementSize);
void copyBytes(const Stream &s, void *dst, const void *src, std::size_t bytes);
void accumulate(const Stream &s, float *dst, const float *src, std::int64_t n);
void scale(const Stream &s, float *data, std::int64_t n, float factor);
double sum(const Stream &s, const float *data, std::int64_t n);
double sumSquares(const Stream &s, const float *data, std::int64_t n);
void embeddingRangeForward(const Stream &s, float *out, const std::int32_t *tokens, const float *wte, int first, int V,
                           int BT, int C);
void addPositions(const Stream &s, float *out, const float *wpe, int firstRow, int rows, int seqLen, int C);
void embeddingRangeBackward(const Stream &s, float *dwte, float *dwpe, const float *dOut, const std::int32_t *tokens,
                            int first, int V, int BT, int seqLen, int C);
void rowMax(const Stream &s, float *out, const float *logits, int BT, int V);
void maxOverBlocks(const Stream &s, float *out, const float *blocks, int count, int BT);
void softmaxPartials(const Stream &s, float *probs, float *partial, const float *logits, const float *globalMax,
                     const std::int32_t *targets, int first, int BT, int V);
void softmaxFinish(const Stream &s, float *probs, float *losses, const float *sums, const float *globalMax, int BT,
                   int V);
void crossEntropyRangeBackward(const Stream &s, float *dLogits, const float *probs, const std::int32_t *targets,
                               int first, float scale, int BT, int V);
void adamw(const Stream &s, float *params, const float *grads, float *m, float *v, const std::uint8_t *decay,
           std::int64_t n, const cpu::AdamWStep &step);

// Device memory and streams for trainer::CudaDevice.
void *deviceAllocate(int device, std::size_t bytes); // zeroed; throws std::bad_alloc when out of memory
void deviceRelease(void *memory);
void toHost(const Stream &s, void *host, const void *device, std::size_t bytes);  // waits
void fromHost(const Stream &s, void *device, const void *host, std::size_t bytes); // waits
void *createStream(int device);
void synchronize(const Stream &s);
// Free and total memory of the current device.
void memoryInfo(std::size_t &freeBytes, std::size_t &totalBytes);

} // namespace trellis::kernels::cuda
