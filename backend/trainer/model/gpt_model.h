// A decoder with explicit forward and backward passes (no autograd), in two architectures: GPT-2
// (LayerNorm, GELU, learned positions, tied head) and llama (RMSNorm, SwiGLU, rotary positions,
// grouped-query attention, untied head, no biases). Parameters and
// their gradients live in one flat buffer each; every layer's tensors are contiguous, so later
// sharding (ZeRO, pipeline stages) can cut the buffer by layer. Every buffer is a DeviceBuffer of
// the model's device and every computation a kernels/ops.h op on its stream, so the same code runs
// wherever the kernels do. Templated on the element type T of parameters and activations: float
// trains in fp32, bf16 and f16 in mixed precision, double checks gradients by finite differences.
// What must stay precise is G = acc_t<T> (fp32 for the 16-bit types): weight gradients (the
// flat gradient buffer accumulates in fp32 across micro-batches), norm statistics, attention and
// router softmaxes, probabilities, the loss. The parameters a 16-bit model uses are compute
// copies of fp32 master weights kept by the parallel strategies (parallel/); the activations and
// their gradients are T, so tensor-, sequence- and context-parallel partial sums are reduced in T.
// Threading: one model, one thread.
#pragma once

#include "kernels/dtype.h"
#include "backend/trainer/comm/communicator.h"
#include "backend/trainer/device/buffer.h"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace trellis::trainer {

struct GptConfig {
    int vocab = 256;
    int maxSeqLen = 128;
    int layers = 2;
    int hidden = 128;
    int heads = 4;
    int ffn = 512;
    // The weights' initial standard deviation; 0: 0.02·sqrt(768 / hidden) (see initialize()).
    double initStd = 0;
    // Tensor parallelism (Megatron-LM): tp ranks split the heads, the MLP's inner width and the
    // vocabulary; this instance holds rank tpRank's share.
    int tp = 1;
    int tpRank = 0;
    // Sequence parallelism (with tp > 1): the norm and residual regions hold only this rank's
    // 1/tp of the batch·sequence rows; all-gather before the column-parallel linears and
    // reduce-scatter after the row-parallel ones replace the all-reduces.
    bool sequenceParallel = false;
    // The llama architecture: RMSNorm without biases, a SwiGLU MLP (gate and up projections of
    // width ffn side by side in one [2·ffn, hidden] matrix, "mlp.fc"), rotary position embeddings
    // (no wpe), grouped-query attention over kvHeads key/value heads (0: heads; tp splits them
    // too, so tp must divide kvHeads), an untied output head (lm_head, in the final norm's unit).
    bool llama = false;
    int kvHeads = 0;
    double ropeTheta = 10000.0;
    // Context parallelism (ring attention): cp ranks each hold seqLen/cp tokens of every sequence
    // (contextPositions says which); forward takes this rank's tokens only, attention passes the
    // keys and values around the cp group (and their gradients back), everything else is
    // per-token. zigzag: two chunks a rank, balancing the causal work.
    int cp = 1;
    int cpRank = 0;
    bool cpZigzag = true;
    // Mixture of experts (experts > 0, model/moe.cpp): every layer's MLP becomes a router
    // (softmax over the experts) and `experts` MLPs of width ffn, each token's output the sum of
    // its topK experts' outputs weighted by their router probabilities. capacity > 0: an expert
    // takes at most `capacity` tokens of each sequence (earliest first; the rest dropped, their
    // slots padded so every exchange has a fixed size); 0: dropless. auxLossCoef weighs the
    // per-sequence load-balancing loss. Expert parallelism: ep ranks each hold experts/ep of the
    // experts (this instance rank epRank's); tokens reach them and come back by all-to-all over
    // the ep group. tp splits every expert like the dense MLP.
    int experts = 0;
    int topK = 1;
    int capacity = 0;
    double auxLossCoef = 0.01;
    int ep = 1;
    int epRank = 0;
};

// Where the router sent tokens: per layer and expert the tokens routed there (every top-k choice,
// before capacity drops), the choices dropped for capacity, and the load-balancing loss summed
// over layers and micro-batches (as added to the objective, before the loss scale).
struct ExpertLoad {
    int layers = 0, experts = 0;
    std::vector<std::uint64_t> tokens; // layer-major
    std::uint64_t dropped = 0;
    double auxLoss = 0;          // summed over auxTerms (layer, micro-batch) pairs
    std::uint64_t auxTerms = 0;
    void add(const ExpertLoad &other);
};

// The positions in the whole sequence of context-parallel rank `rank`'s `local` tokens, in the
// order it holds them: zigzag — chunks rank and 2·cp − 1 − rank of 2·cp (local even); else chunk
// rank of cp.
std::vector<std::int32_t> contextPositions(int cp, int rank, int local, bool zigzag);

// A unit is a contiguous range of the flat parameter buffer that ZeRO-3 gathers and frees as
// one: unit 0 = embeddings (wte, and gpt's wpe), units 1..L = the transformer layers, unit L+1 =
// the final norm (and llama's lm_head). gpt's tied output head uses unit 0.
struct ParamUnit {
    std::size_t begin = 0;
    std::size_t end = 0;
    std::size_t size() const { return end - begin; }
};

// Forward and BackwardInput (a split backward's input half, zero-bubble "B") read the
// parameters only; Backward computes weight gradients too.
enum class Pass { Forward, BackwardInput, Backward };

// Activation recompute. Full: keep only each layer's output (the residual stream) and one
// shared set of a layer's inner activations; backward re-runs each layer's forward first;
// activation memory drops by about (layers−1)/layers of the per-layer part. Selective
// (Korthikanti et al. 2022): keep everything but the attention probabilities (heads·B·T·T a
// layer), which one buffer shared by the layers holds; backward recomputes them from the
// kept q, k, v just before the attention backward. Gradients are bit for bit the same either way.
enum class Recompute { None, Selective, Full };

// Where a unit's parameters and gradients are while the model uses them. Without hooks the model
// uses its own flat buffers. With hooks (ZeRO-2/3) the model asks for each unit before it touches
// it and hands it back after; the pointers returned are indexed from the unit's begin. acquire for
// Backward must return a gradient buffer the model adds into; release after Backward means the
// unit's gradients for this backward are final.
template <typename T>
class UnitHooks {
public:
    struct View {
        T *params = nullptr;                // compute copy (T)
        kernels::acc_t<T> *grads = nullptr; // accumulation type
    };
    virtual ~UnitHooks() = default;
    virtual View acquire(int unit, Pass pass) = 0;
    virtual void release(int unit, Pass pass) = 0;
};

// The part of the model one instance runs: layers [firstLayer, endLayer) (endLayer −1: all), plus
// the embeddings (the first pipeline stage) and the final norm, head and loss (the last).
struct StageRange {
    int firstLayer = 0;
    int endLayer = -1;
    bool embed = true;
    bool head = true;
};

struct ParamTensor {
    std::string name;
    std::size_t offset = 0;
    std::size_t size = 0;
    std::vector<int> shape;
};

// Which of `count` flat parameters get weight decay: the matrices, not biases, norm gains or the
// position embeddings.
std::vector<bool> weightDecayMask(const std::vector<ParamTensor> &tensors, std::size_t count);

template <typename T>
class GptModel {
public:
    using G = kernels::acc_t<T>; // gradients, statistics, probabilities, the loss

    // allocate = false: no flat buffers (the layout only, or an instance whose unit hooks own the
    // storage).
    explicit GptModel(const GptConfig &config, bool allocate = true, Device &device = Device::cpu());

    const GptConfig &config() const { return m_config; }
    std::size_t parameterCount() const { return m_count; }
    const std::vector<ParamTensor> &tensors() const { return m_tensors; }
    Device &device() const { return *m_device; }
    // The model's own flat buffers (device memory; host-readable on the CPU device).
    std::span<T> parameters() { return {m_params.data(), m_count}; }
    std::span<const T> parameters() const { return {m_params.data(), m_count}; }
    std::span<G> gradients() { return {m_grads.data(), m_count}; }
    std::span<const G> gradients() const { return {m_grads.data(), m_count}; }

    // GPT-2 initialisation (both architectures) scaled by width: weights N(0, σ) with
    // σ = 0.02·sqrt(768/hidden) (GPT-2's 0.02 at hidden 768) unless config.initStd sets it, residual projections
    // N(0, σ/sqrt(2·layers)), biases 0, norm gains 1. Deterministic for a seed, in tensor order.
    void initialize(std::uint64_t seed);

    // tokens, targets: batch·seqLen each (seqLen ≤ maxSeqLen). Returns the mean cross-entropy.
    G forward(const std::int32_t *tokens, const std::int32_t *targets, int batch, int seqLen);
    // Adds d(lossScale · mean loss)/dθ of the last forward to gradients().
    void backward(G lossScale = G(1));

    // Pipeline stages. setStage before the first forward; the instance then only touches the
    // units of its stage. forwardStage takes tokens (with embed) or the previous stage's output
    // `input` [batch·seqLen·hidden] (without), and targets (with head); it returns the mean loss
    // with head (else 0) and leaves the stage's output activations in output().
    void setStage(const StageRange &stage);
    const StageRange &stage() const { return m_stage; }
    G forwardStage(const std::int32_t *tokens, const std::int32_t *targets, const T *input, int batch, int seqLen);
    const T *output() const;
    // dOutput: the gradient of output() (unused with head). weights = true adds the weight
    // gradients too; false computes only the gradient of the stage input (zero-bubble "B") and
    // keeps the output gradients of every weight-bearing op for backwardWeights() ("W"), which
    // adds exactly what the fused backward would have. inputGradient(): d loss / d input.
    void backwardStage(const T *dOutput, G lossScale, bool weights = true);
    void backwardWeights();
    const T *inputGradient() const { return m_dResidual.data(); }
    void zeroGradients();

    // Called during backward each time the gradients from `offset` to the end of the flat buffer
    // are final (after the head/final norm, after each layer, after the embeddings: offsets only
    // decrease). Data parallelism starts reducing those buckets while backward goes on.
    using GradientsReady = std::function<void(std::size_t offset)>;
    void setGradientsReadyHook(GradientsReady hook) { m_ready = std::move(hook); }

    const std::vector<ParamUnit> &units() const { return m_units; }
    // nullptr restores the flat buffers. The hooks must outlive their use by the model.
    void setUnitHooks(UnitHooks<T> *hooks);
    // Frees the flat buffers once hooks own the storage (ZeRO-2 frees the gradients, ZeRO-3 both).
    void releaseFlatParameters() { m_params.release(); }
    void releaseFlatGradients() { m_grads.release(); }

    // Kept activations: the layers' buffer plus the mixture-of-experts layers' routing and rows.
    std::size_t activationBytes() const;

    using Recompute = trainer::Recompute;
    void setRecompute(Recompute recompute)
    {
        m_recompute = recompute;
        m_capacityBT = 0; // re-plan the activation buffer on the next forward
    }
    Recompute recompute() const { return m_recompute; }
    const T *logits() const { return m_logits; } // device memory

    // The group the tp ranks all-reduce activations and gradients over (required when tp > 1);
    // host: the same ranks for host values (gatherWhole), may be null.
    void setTensorParallelGroup(DeviceCommunicator *group, HostCommunicator *host = nullptr);
    // The ring of context-parallel ranks (required when cp > 1).
    void setContextParallelGroup(DeviceCommunicator *group);
    // The ranks splitting the experts (required when ep > 1); host: the same ranks for the
    // dropless routing's row counts (host values; required when ep > 1).
    void setExpertParallelGroup(DeviceCommunicator *group, HostCommunicator *host = nullptr);
    // Routing statistics of the forwards since the last call (empty for a dense model).
    ExpertLoad takeExpertLoad();
    // The load-balancing loss of the last forward, summed over its layers: what backward adds
    // to the objective besides the cross-entropy forward returns.
    double auxLoss() const { return m_lastAuxLoss; }
    // Layer l's routing in its last forward: each row's top-k experts, row-major (empty if none).
    std::vector<std::int32_t> routing(int l) const;
    // Whether tensor i holds experts (their gradients reduce over the expert data-parallel group).
    bool isExpert(std::size_t tensor) const;
    // Whether the output head is the embedding matrix (gpt) or a tensor of its own (llama).
    bool tiedHead() const { return !m_config.llama; }
    // Tensors every tp rank holds whole (norms, position embeddings, row-parallel biases); their
    // gradients are the same on every tp rank.
    bool isReplicated(std::size_t tensor) const;
    // Where rank `rank`'s elements of tensor i sit in that tensor of the whole (tp = 1) model:
    // (offset, count) runs in the order of the local tensor.
    std::vector<std::pair<std::size_t, std::size_t>> shardRuns(std::size_t tensor, int rank) const;
    // The whole model's flat vector (tp = 1 layout) from every rank's host vector `local`
    // (collective over the host tp group).
    std::vector<T> gatherWhole(const T *local);
    // This rank's flat vector cut from the whole model's (tp = 1 layout) one.
    std::vector<T> sliceOfWhole(const T *whole) const;

private:
    // Offsets of a layer's tensors; kNone for the ones its architecture lacks (llama's biases).
    static constexpr std::size_t kNone = static_cast<std::size_t>(-1);
    struct Layer {
        // MoE: fc*/fcproj* are the stacked experts' tensors ([local experts, ...]), router the router's.
        std::size_t ln1w, ln1b, qkvw, qkvb, projw, projb, ln2w, ln2b, fcw, fcb, fcprojw, fcprojb, router;
    };
    struct LayerActs {
        T *ln1, *qkv, *atty, *att, *attproj, *residual2, *ln2, *fch, *fchGelu, *fcproj, *residual3;
        G *ln1Mean, *ln1Rstd, *ln2Mean, *ln2Rstd;
        G *lse; // ring attention (cp > 1): the log-sum-exp per (row, head) it keeps instead of att
    };

    std::size_t addTensor(const std::string &name, std::vector<int> shape);
    // The constructor's steps: a layer's tensors, the units, llama's rotary tables.
    Layer addLayerTensors(int l);
    void defineUnits();
    void computeRopeTables();
    // forwardStage's steps.
    void takeBatch(const std::int32_t *tokens, const std::int32_t *targets, int batch, int seqLen);
    void embedForward(int BT);
    G headForward(const T *x, int BT);
    void layerForward(int l, const T *x);
    T *stash(std::size_t slot, const T *data, std::size_t n);
    template <typename U>
    void tpAllReduce(U *data, std::size_t n);
    const kernels::Stream &stream() const { return m_device->stream(); }
    template <typename U>
    void zero(U *data, std::size_t n)
    {
        kernels::fill(stream(), data, static_cast<std::int64_t>(n), U(0));
    }
    GptConfig wholeConfig() const;
    void embeddingBackward(const T *dEncoded);
    void vocabParallelCrossEntropy(int BT);
    bool sp() const { return m_config.tp > 1 && m_config.sequenceParallel; }
    int rows(int BT) const { return sp() ? BT / m_config.tp : BT; } // rows of the norm/residual regions
    void gatherRows(const T *local, T *full, int BT);
    // All rows of a norm/residual-region tensor: `local` itself without sequence parallelism,
    // else gathered into the shared scratch (valid until the next gather).
    const T *gatheredRows(const T *local, int BT);
    void scatterRows(T *full, T *local, int BT); // reduce-scatter of partial sums
    // LayerNorm (gpt) or RMSNorm (llama: b is kNone, mean unused).
    void normForward(T *out, G *mean, G *rstd, const T *in, std::size_t w, std::size_t b, int n);
    void normBackward(T *dx, std::size_t w, std::size_t b, const T *dOut, const T *in, const G *mean, const G *rstd,
                      int n, bool weights);
    // A row-parallel linear of `width` inputs to hidden outputs whose partial sums the tp group adds
    // (all-reduced, or reduce-scattered to this rank's rows with sequence parallelism).
    void rowParallelForward(T *out, const T *in, std::size_t w, std::size_t b, int BT, int width);
    // llama: rotary embeddings on the q and k heads of qkv rows (inverse: on their gradients).
    void applyRope(T *qkv, bool inverse);
    // Calls f(row, position, count) for runs of local rows [first, first + rows) whose positions in
    // the sequence go up by one (a run never crosses a sequence or a context-parallel chunk).
    void forEachPositionRun(int first, int rows, const std::function<void(int row, int position, int count)> &f) const;
    void addPositionRows(T *rows, int first, int count); // gpt: wpe of each row's position
    // Ring attention over the cp group: out = attention of this rank's queries over every rank's
    // keys and values, lse[B,NH,T] kept for backward; backward adds dq, dk, dv into dqkv.
    void ringAttentionForward(T *out, G *lse, const T *qkv);
    void ringAttentionBackward(T *dqkv, const T *dOut, const T *out, const G *lse, const T *qkv);
    bool cp() const { return m_config.cp > 1; }
    // Mixture of experts. moeForward: out (partial sums over tp, every row) of the MoE MLP on the
    // gathered rows x; moeBackward adds the partial input gradient into dx (every row) from the
    // output gradient dOut (every row), and the weight gradients.
    bool moe() const { return m_config.experts > 0; }
    // What a mixture-of-experts layer keeps for backward: router probabilities and gates, each
    // choice's expert and slot in the send buffer (−1: dropped), the rows this rank's experts
    // received (in [source rank][local expert] blocks), their hidden activations and the expert
    // outputs that came back (in send-buffer order); rows per (peer, local expert) both ways.
    struct MoeActs {
        explicit MoeActs(Device &d) : probs(d), gates(d), xin(d), h(d), act(d), ySent(d), slot(d) {}
        DeviceBuffer<G> probs, gates;
        DeviceBuffer<T> xin, h, act, ySent;
        DeviceBuffer<std::int32_t> slot;
        std::vector<std::int32_t> expert;
        std::vector<std::size_t> sendRows, recvRows;
        std::size_t sent = 0, received = 0;
    };
    MoeActs &moeActs(int l);
    // Rows from `send` (blocks of sendRows rows per (peer, local expert)) to `recv` over the ep group.
    void moeExchange(const T *send, const std::vector<std::size_t> &sendRows, T *recv,
                     const std::vector<std::size_t> &recvRows);
    void moeForward(int l, T *out, const T *x);
    void moeBackward(int l, T *dx, const T *dOut, const T *x, G lossScale);
    // moeBackward's steps: back through the local experts (their input gradients into m_moeDx), and
    // through the router (the gates' and the load-balancing loss's gradients).
    void moeExpertsBackward(int l, MoeActs &a, const T *dy);
    void moeRouterBackward(int l, MoeActs &a, T *dx, const T *x, G lossScale);
    // moeForward's steps: the router's probabilities (on the host too), the rows to the ranks of
    // their experts, the local experts' MLPs on what they received, the routing's statistics.
    std::vector<G> moeRouterProbs(int l, const T *x, MoeActs &a);
    void moeDispatch(MoeActs &a, const T *x);
    void moeRunExperts(int l, MoeActs &a);
    void recordExpertLoad(int l, const std::vector<std::size_t> &choices, std::uint64_t dropped, double aux);
    // One backward pass (gpt_model_backward.cpp): fused (weight gradients now) or split (every
    // weight-bearing op's output gradient stashed, in order, for backwardWeights).
    struct BackwardPass {
        bool weights = true;
        Pass pass = Pass::Backward;
        G lossScale = G(1);
        std::size_t slot = 0; // the next stash slot
    };
    G *weightGrad(const BackwardPass &bp, std::size_t offset) { return bp.weights ? gradOrNull(offset) : nullptr; }
    void keepForWeights(BackwardPass &bp, const T *data, std::size_t n);
    // A column-parallel layer's input gradient: its target (zeroed), then the group's partial sums
    // added (reduce-scattered to this rank's rows with sequence parallelism, else all-reduced).
    T *inputGradTarget();
    void finishInputGrad();
    void headBackward(BackwardPass &bp);
    void mlpBackward(int l, BackwardPass &bp); // into m_dResidual: from residual3's gradient to residual2's
    void attentionBranchBackward(int l, const T *x, BackwardPass &bp); // from residual2's to x's
    void allocateActivations(int batch, int seqLen);
    // allocateActivations' steps: the regions' sizes (elements of T and G), then the buffers cut.
    struct ActivationLayout {
        std::int64_t bt = 0, r = 0, att = 0, lse = 0, probs = 0, totalT = 0, totalG = 0;
        int tCap = 0;
        bool keepsLse = false, sharedAtt = false, full = false;
    };
    ActivationLayout activationLayout(std::int64_t bt, int tCap);
    void carveActivations(const ActivationLayout &s);
    void allocateBackwardScratch(std::int64_t rows, std::int64_t bt, int tCap);
    void acquire(int unit, Pass pass);
    void release(int unit, Pass pass);
    int unitOf(std::size_t offset) const;
    T *param(std::size_t offset)
    {
        const int u = unitOf(offset);
        return m_unitParams[static_cast<std::size_t>(u)] + (offset - m_units[static_cast<std::size_t>(u)].begin);
    }
    T *paramOrNull(std::size_t offset) { return offset == kNone ? nullptr : param(offset); }
    G *gradOrNull(std::size_t offset) { return offset == kNone ? nullptr : grad(offset); }
    G *grad(std::size_t offset)
    {
        const int u = unitOf(offset);
        return m_unitGrads[static_cast<std::size_t>(u)] + (offset - m_units[static_cast<std::size_t>(u)].begin);
    }

    GptConfig m_config;
    Device *m_device;
    // This tensor-parallel rank's vocabulary, q width, heads, kv heads, kv width, qkv row width,
    // MLP width, and the MLP's first linear's width (2·F with SwiGLU's gate and up).
    int m_V = 0, m_Cq = 0, m_NH = 0, m_KVH = 0, m_Ckv = 0, m_QKV = 0, m_F = 0, m_Fin = 0;
    DeviceCommunicator *m_tpGroup = nullptr;
    HostCommunicator *m_tpHost = nullptr;
    DeviceCommunicator *m_cpGroup = nullptr;
    DeviceCommunicator *m_epGroup = nullptr;
    HostCommunicator *m_epHost = nullptr;
    int m_El = 0; // experts this ep rank holds
    std::vector<std::unique_ptr<MoeActs>> m_moeActs; // per layer (one shared under full recompute)
    // Scratch: router logits (then their gradient; in G for the softmax), rows in flight, gathered
    // input rows, and the routing's device copies of gate gradients and router-probability gradients.
    DeviceBuffer<T> m_moeLogits{*m_device}, m_moeSend{*m_device}, m_moeRecv{*m_device}, m_moeX{*m_device},
        m_moeH{*m_device}, m_moeDx{*m_device};
    DeviceBuffer<G> m_moeLogitsAcc{*m_device}, m_moeDGates{*m_device}, m_moeDProbs{*m_device};
    DeviceBuffer<std::int32_t> m_moeRowOf{*m_device};
    ExpertLoad m_expertLoad;
    double m_lastAuxLoss = 0;
    bool m_recomputing = false; // a full-recompute forward inside backward: routing not counted again
    std::vector<ParamTensor> m_tensors;
    DeviceBuffer<T> m_params{*m_device};
    DeviceBuffer<G> m_grads{*m_device};
    std::size_t m_count = 0;
    std::size_t m_wte = 0, m_wpe = kNone, m_lnfw = 0, m_lnfb = kNone, m_lmHead = kNone;
    DeviceBuffer<G> m_ropeCos{*m_device}, m_ropeSin{*m_device}; // llama: [maxSeqLen, head size / 2]
    std::vector<Layer> m_layers;
    std::vector<ParamUnit> m_units;
    std::vector<T *> m_unitParams; // valid between acquire and release
    std::vector<G *> m_unitGrads;
    UnitHooks<T> *m_hooks = nullptr;

    // Activations of the last forward, carved out of one buffer of T and one of G (statistics,
    // probabilities, losses).
    DeviceBuffer<T> m_acts{*m_device};
    DeviceBuffer<G> m_stats{*m_device};
    std::vector<LayerActs> m_layerActs;
    T *m_encoded = nullptr, *m_lnf = nullptr, *m_logits = nullptr;
    G *m_lnfMean = nullptr, *m_lnfRstd = nullptr, *m_probs = nullptr, *m_losses = nullptr;
    std::vector<std::int32_t> m_hostTokens, m_hostTargets;       // validated on the host
    DeviceBuffer<std::int32_t> m_tokens{*m_device}, m_targets{*m_device};
    int m_batch = 0, m_seqLen = 0, m_capacityBT = 0, m_capacityT = 0;

    GradientsReady m_ready;
    Recompute m_recompute = Recompute::None;
    StageRange m_stage;
    bool m_weightsPending = false;
    std::vector<DeviceBuffer<T>> m_stash; // split backward: output gradients kept for W

    // Backward scratch.
    DeviceBuffer<T> m_dResidual{*m_device}, m_dLn{*m_device}, m_dQkv{*m_device}, m_dAtty{*m_device}, m_dFch{*m_device},
        m_dFchGelu{*m_device}, m_dLogits{*m_device};
    DeviceBuffer<G> m_dAttScratch{*m_device};
    bool m_fusedAttention = false; // cuDNN's fused attention (ops::fusedAttention): lse kept, no probabilities
    bool m_fusedLoss = false;      // ops::fusedCrossEntropy: m_probs holds each row's log-sum-exp
    // Sequence parallelism: gathered rows and partial sums before their reduce-scatter; the final
    // norm's local output (m_lnf then holds all rows, gathered for the head).
    DeviceBuffer<T> m_gathered{*m_device}, m_partial{*m_device}, m_lnfLocal{*m_device};
    DeviceBuffer<G> m_normGrads{*m_device};
    // Context parallelism: every cp rank's positions (cp·T, rank-major; host and device), the
    // ring's key/value blocks (this step's and the next), the running softmax statistics, and
    // backward's dK/dV partial sums (computed, in flight out, arriving) and softmax row terms.
    std::vector<std::int32_t> m_positionsHost;
    DeviceBuffer<std::int32_t> m_positions{*m_device};
    // With a 16-bit T the attention output and dq are summed in G (m_ringAcc) and rounded once;
    // dK/dV travel the ring as G partial sums.
    DeviceBuffer<T> m_kvBlocks{*m_device};
    DeviceBuffer<G> m_ringStats{*m_device}, m_dkvBlocks{*m_device}, m_ringAcc{*m_device};
    // Vocabulary-parallel cross-entropy: this rank's row maxima, every rank's, the global ones and
    // the (sum, target logit) pairs.
    DeviceBuffer<G> m_ceMax{*m_device}, m_ceAllMax{*m_device}, m_ceGlobalMax{*m_device}, m_ceSums{*m_device};
};

extern template class GptModel<float>;
extern template class GptModel<double>;
extern template class GptModel<kernels::bf16>;
extern template class GptModel<kernels::f16>;

} // namespace trellis::trainer
