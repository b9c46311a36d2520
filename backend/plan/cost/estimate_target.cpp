// What an estimate is for (see cost_model.h): the device's figures, and whose implementation the
// memory accounting and the attention kernel follow, with auto resolved.
#include "backend/plan/cost/cost_model.h"

#include <string>

namespace trellis::plan {

DeviceSpec deviceFor(const ClusterSpec &cluster)
{
    // Datasheet dense figures: H100 SXM 989 TFLOP/s bf16, 67 fp32, 80 GB, 3.35 TB/s HBM3; H200
    // SXM the same compute with 141 GB at 4.8 TB/s; A100 SXM 80 GB 312 bf16, 19.5 fp32, 2.04 TB/s;
    // A100 PCIe 80 GB 1.94 TB/s. Element-wise passes reach about 80% of the HBM figure.
    // GEMM efficiency, achieved over peak for the model's matrix shapes: one figure per
    // generation, fitted (least squares of the log error, tst_cost_model) on Narayanan et al.
    // 2021 Table 1 for the A100 (0.657; tested out of sample on Korthikanti et al. 2022's MFU
    // table) and on Llama 3's Table 4 for the H100 (0.593); PCIe parts run at lower clocks
    // under their power cap (the SXM figure × 0.9).
    const std::string model = cluster.nodes.empty() ? std::string() : cluster.nodes.front().gpuModel;
    const bool cuda = !cluster.nodes.empty() && cluster.nodes.front().device == DeviceKind::Cuda;
    if (model == "H100-SXM")
        return {"H100-SXM", 67, 989, 80, 0.59, 0.8 * 3350};
    if (model == "H200-SXM")
        return {"H200-SXM", 67, 989, 141, 0.59, 0.8 * 4800};
    if (model == "A100-SXM")
        return {"A100-SXM", 19.5, 312, 80, 0.66, 0.8 * 2039};
    if (model == "A100-PCIe")
        return {"A100-PCIe", 19.5, 312, 80, 0.59, 0.8 * 1935};
    if (cuda)
        return {model.empty() ? "GPU" : model, 19.5, 312, 40, 0.6, 0.8 * 1555};
    // A CPU core with OpenBLAS: tens of GFLOP/s in fp32; `trellis-cli calibrate` measures it.
    return {"cpu", 0.02, 0.02, 0, 1.0, 0};
}

bool runsOnTrainer(const Plan &plan)
{
    const ModelSpec &m = plan.model;
    const bool cpu = plan.cluster.nodes.empty() || plan.cluster.nodes.front().device == DeviceKind::Cpu;
    const ParallelSpec &p = plan.parallel;
    // What trellis-trainer refuses with a mixture of experts (checkTrainerSupport) runs elsewhere.
    const bool moeRefused = m.moe.experts > 0 && (p.cp > 1 || (p.pp > 1 && p.schedule == "zb-h1"));
    return cpu && !moeRefused && !(p.ep > 1 && p.zero > 0);
}

Framework resolvedFramework(const Plan &plan)
{
    if (plan.parallel.framework != Framework::Auto)
        return plan.parallel.framework;
    if (runsOnTrainer(plan))
        return Framework::Trellis;
    return plan.parallel.zero >= 2 ? Framework::DeepSpeed : Framework::Megatron;
}

AttentionKernel resolvedAttention(const Plan &plan)
{
    if (plan.parallel.attention != AttentionKernel::Auto)
        return plan.parallel.attention;
    const bool cpu = plan.cluster.nodes.empty() || plan.cluster.nodes.front().device == DeviceKind::Cpu;
    return cpu ? AttentionKernel::Materialized : AttentionKernel::Flash;
}

std::string accountingSummary(const Plan &plan)
{
    const ParallelSpec &p = plan.parallel;
    const Framework f = resolvedFramework(plan);
    const bool mixed = p.precision != Precision::Fp32;
    const std::string precision = toString(p.precision);
    std::string s = f == Framework::Megatron ? "Megatron-LM" : f == Framework::DeepSpeed ? "DeepSpeed" : "trellis-trainer";
    s += ": ";
    if (!mixed)
        s += "fp32 parameters, gradients and Adam moments";
    else if (f == Framework::Megatron && p.precision == Precision::Bf16)
        s += "bf16 parameters, fp32 main gradients, fp32 master weights and Adam moments";
    else if (f == Framework::Megatron)
        s += "fp16 parameters and gradients, fp32 master weights and Adam moments (fp32 gradient copies at the optimizer step)";
    else
        s += precision + " parameters and gradients, fp32 master weights and Adam moments";
    if (p.zero == 1)
        s += f == Framework::Megatron ? " (distributed optimizer: the fp32 states sharded over dp)" : " (optimizer states sharded over dp: ZeRO-1)";
    else if (p.zero == 2)
        s += " (optimizer states and gradients sharded over dp: ZeRO-2)";
    else if (p.zero == 3)
        s += " (every model state sharded over dp: ZeRO-3)";
    s += resolvedAttention(plan) == AttentionKernel::Flash       ? "; flash attention"
         : p.recompute == Recompute::Selective ? "; attention probabilities recomputed in backward (selective)"
         : p.recompute == Recompute::Full      ? "; layers recomputed in backward (full)"
                                                 : "; attention probabilities kept";
    return s;
}

} // namespace trellis::plan
