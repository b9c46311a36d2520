// The CUDA kernels behind kernels/ops.h (trellis_kernels_cuda, built when CMake finds a CUDA compiler). Each has the contract of
// its CPU reference in kernels/cpu/cpu_ops.h or kernels/cpu/tensor_ops.h, on float device pointers,
// queued on the stream's cudaStream_t; tst_cuda_kernels checks each against that reference on a
// GPU. This header needs no CUDA headers: ops.h includes it in host code.
// Errors (a failed launch, a CUDA or cuBLASLt call) throw std::runtime_error reading
// "<context> <file>:<line> <call> → <error>", the context being what setErrorContext was given
// (the trainer gives "host <name> rank <r>").
// Threading: one stream per thread; each stream has its own scratch memory and cuBLASLt
// workspace; the cuBLASLt handle and the GEMM plans are per process and guarded.
#pragma once

#include "kernels/cpu/tensor_ops.h"
#include "kernels/dtype.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

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

// Layer kernels, for T = float and bf16 (arithmetic in fp32, one rounding on store, as the CPU's
// 16-bit kernels; GEMMs on tensor cores with fp32 accumulation). acc_t<bf16> is float.
template <typename T>
void linearForward(const Stream &s, T *out, const T *in, const T *weight, const T *bias, int BT, int C, int OC);
template <typename T>
void linearBackward(const Stream &s, T *dIn, float *dWeight, float *dBias, const T *dOut, const T *in, const T *weight,
                    int BT, int C, int OC);
template <typename T>
void layerNormForward(const Stream &s, T *out, float *mean, float *rstd, const T *in, const T *gamma, const T *beta,
                      int N, int C);
template <typename T>
void layerNormBackward(const Stream &s, T *dIn, float *dGamma, float *dBeta, const T *dOut, const T *in,
                       const T *gamma, const float *mean, const float *rstd, int N, int C);
template <typename T>
void geluForward(const Stream &s, T *out, const T *in, std::int64_t n);
template <typename T>
void geluBackward(const Stream &s, T *dIn, const T *in, const T *dOut, std::int64_t n);
template <typename T>
void rmsNormForward(const Stream &s, T *out, float *rstd, const T *in, const T *gamma, int N, int C);
template <typename T>
void rmsNormBackward(const Stream &s, T *dIn, float *dGamma, const T *dOut, const T *in, const T *gamma,
                     const float *rstd, int N, int C);
template <typename T>
void swigluForward(const Stream &s, T *out, const T *in, int N, int F);
template <typename T>
void swigluBackward(const Stream &s, T *dIn, const T *in, const T *dOut, int N, int F);
template <typename T>
void rope(const Stream &s, T *x, const float *cosTable, const float *sinTable, int N, int seqLen, int firstPos, int ld,
          int heads, int hs, bool inverse);
template <typename T>
void residualForward(const Stream &s, T *out, const T *a, const T *b, std::int64_t n);
template <typename T>
void crossEntropyForward(const Stream &s, float *losses, float *probs, const T *logits, const std::int32_t *targets,
                         int BT, int V);
template <typename T>
void crossEntropyBackward(const Stream &s, T *dLogits, const float *probs, const std::int32_t *targets, float scale,
                          int BT, int V);
// The cross-entropy that keeps no probabilities (the model's loss on a GPU): the forward reads the
// logits once and writes each row's loss and log-sum-exp lse[BT]; the backward recomputes the
// softmax from the logits and lse: dLogits = (softmax − one-hot) · scale (dLogits may be the
// logits themselves).
template <typename T>
void crossEntropyLseForward(const Stream &s, float *losses, float *lse, const T *logits, const std::int32_t *targets,
                            int BT, int V);
template <typename T>
void crossEntropyLseBackward(const Stream &s, T *dLogits, const T *logits, const float *lse,
                             const std::int32_t *targets, float scale, int BT, int V);
template <typename T>
void encoderForward(const Stream &s, T *out, const std::int32_t *tokens, const T *wte, const T *wpe, int B, int T_,
                    int C, int V);
template <typename T>
void encoderBackward(const Stream &s, float *dwte, float *dwpe, const T *dOut, const std::int32_t *tokens, int B,
                     int T_, int C, int V);

// Materialised attention (float only): the probabilities att[B,NH,T,T] are kept for backward.
void attentionForward(const Stream &s, float *out, float *att, const float *qkv, int B, int T, int C, int NH, int KVH);
void attentionBackward(const Stream &s, float *dqkv, float *scratch, const float *dOut, const float *qkv,
                       const float *att, int B, int T, int C, int NH, int KVH);

// Fused causal (grouped-query) attention through cuDNN's scaled-dot-product attention (bf16 only;
// attention_cudnn.cpp): the T×T scores are never written. Forward: out[B,T,C] and each row's
// log-sum-exp lse[B,NH,T] (fp32) from qkv[B,T,C + 2·KVH·hs]. Backward: dqkv = the gradient
// (written, not added), from dOut, out, qkv and lse; deterministic. Throws DeviceError naming
// the shape and cuDNN's reason when the device cannot run the graph (head size, architecture).
// fusedAttentionBuilt: whether this build has cuDNN's front end.
bool fusedAttentionBuilt();
std::size_t fusedAttentionWorkspaceBytes();
void flashAttentionForward(const Stream &s, bf16 *out, float *lse, const bf16 *qkv, int B, int T, int C, int NH,
                           int KVH);
void flashAttentionBackward(const Stream &s, bf16 *dqkv, const bf16 *dOut, const bf16 *out, const bf16 *qkv,
                            const float *lse, int B, int T, int C, int NH, int KVH);

// Element-wise and bookkeeping (tensor_ops.h). fill and copy take any trivially copyable element
// of 1, 2, 4 or 8 bytes.
void fillBytes(const Stream &s, void *data, std::int64_t n, const void *value, std::size_t elementSize);
void copyBytes(const Stream &s, void *dst, const void *src, std::size_t bytes);
// dst += src: float into float, bf16 into float, bf16 into bf16 (through fp32, rounded once).
void accumulate(const Stream &s, float *dst, const float *src, std::int64_t n);
void accumulate(const Stream &s, float *dst, const bf16 *src, std::int64_t n);
void accumulate(const Stream &s, bf16 *dst, const bf16 *src, std::int64_t n);
// dst = src converted: float to bf16 (round to nearest even, as kernels/dtype.h) and back.
void convert(const Stream &s, bf16 *dst, const float *src, std::int64_t n);
void convert(const Stream &s, float *dst, const bf16 *src, std::int64_t n);
void scale(const Stream &s, float *data, std::int64_t n, float factor);
double sum(const Stream &s, const float *data, std::int64_t n);
double sumSquares(const Stream &s, const float *data, std::int64_t n);
template <typename T>
void embeddingRangeForward(const Stream &s, T *out, const std::int32_t *tokens, const T *wte, int first, int V, int BT,
                           int C);
template <typename T>
void addPositions(const Stream &s, T *out, const T *wpe, int firstRow, int rows, int seqLen, int C);
template <typename T>
void embeddingRangeBackward(const Stream &s, float *dwte, float *dwpe, const T *dOut, const std::int32_t *tokens,
                            int first, int V, int BT, int seqLen, int C);
template <typename T>
void rowMax(const Stream &s, float *out, const T *logits, int BT, int V);
void maxOverBlocks(const Stream &s, float *out, const float *blocks, int count, int BT);
template <typename T>
void softmaxPartials(const Stream &s, float *probs, float *partial, const T *logits, const float *globalMax,
                     const std::int32_t *targets, int first, int BT, int V);
void softmaxFinish(const Stream &s, float *probs, float *losses, const float *sums, const float *globalMax, int BT,
                   int V);
template <typename T>
void crossEntropyRangeBackward(const Stream &s, T *dLogits, const float *probs, const std::int32_t *targets, int first,
                               float scale, int BT, int V);
void adamw(const Stream &s, float *params, const float *grads, float *m, float *v, const std::uint8_t *decay,
           std::int64_t n, const cpu::AdamWStep &step);

// Times of op families from CUDA events (the benchmark's per-kernel table). While enabled, every
// op queued through kernels/ops.h records an event pair; takeOpTimes waits for them and returns
// the sum per op name since the last take (in first-call order).
struct OpTime {
    std::string name;
    double ms = 0.0;
    int calls = 0;
};
void setOpTiming(bool enabled);
bool opTiming();
std::vector<OpTime> takeOpTimes();
class OpTimer {
public:
    OpTimer(const Stream &s, const char *name);
    ~OpTimer();
    OpTimer(const OpTimer &) = delete;
    OpTimer &operator=(const OpTimer &) = delete;

private:
    int m_slot = -1;
    void *m_stream = nullptr;
};

// Device memory and streams for trainer::CudaDevice.
// Memory from the device's stream-ordered pool (CUDA's caching allocator: cudaMallocFromPoolAsync
// with the pool told to keep what is freed), zeroed on `s` and usable by work queued on `s` after
// this call: no cudaMalloc, no device-wide synchronisation — what a pipeline message's buffer or a
// bucket needs. Released with poolRelease on the same stream (reused by later allocations there
// at once; other streams must be ordered after its last use, as the communicators' events do).
// Throws std::bad_alloc when out of memory, a device error otherwise.
void *poolAllocate(const Stream &s, std::size_t bytes);
void poolRelease(const Stream &s, void *memory) noexcept; // never throws: as deviceRelease
// The pool's bytes held from the device now and at most since the start (cached ones included).
struct PoolUse {
    std::uint64_t reserved = 0, reservedPeak = 0, used = 0, usedPeak = 0;
};
PoolUse poolUse(int device);
// Plain device memory (zeroed, synchronously): tests and one-off buffers.
void *deviceAllocate(int device, std::size_t bytes); // zeroed; throws std::bad_alloc when out of memory
// Never throws (it runs in destructors): an error, as every free after a sticky fault gives, is
// kept and raised by the next call that may throw (toHost, fromHost, synchronize).
void deviceRelease(void *memory) noexcept;
// The error a call that could not throw kept, if any (and forgets it).
std::string takeDeferredError();
// Page-locked host memory (cudaHostAlloc): copies to and from it run at the link's speed.
void *hostAllocate(std::size_t bytes);
void hostRelease(void *memory) noexcept;
void toHost(const Stream &s, void *host, const void *device, std::size_t bytes);  // waits
void fromHost(const Stream &s, void *device, const void *host, std::size_t bytes); // waits
void *createStream(int device);
void synchronize(const Stream &s);
// Free and total memory of the current device.
void memoryInfo(std::size_t &freeBytes, std::size_t &totalBytes);

} // namespace trellis::kernels::cuda
