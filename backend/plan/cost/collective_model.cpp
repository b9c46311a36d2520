// See collective_model.h.
#include "backend/plan/cost/collective_model.h"

#include <algorithm>

namespace trellis::plan::detail {

TpPass tpPass(Pass pass, double layers, bool embed, bool head, bool sp, bool split, bool recompute, double rowBytes,
              double bt, int tp, double normFloats)
{
    TpPass t;
    const double ce = 4.0; // the cross-entropy's statistics are fp32
    if (pass == Pass::Forward) {
        if (sp) {
            t.reduceScatter.add((embed ? 1 : 0) + 2 * layers, rowBytes);
            t.allGather.add(2 * layers + (head ? 1 : 0), rowBytes);
        } else {
            t.allReduce.add((embed ? 1 : 0) + 2 * layers, rowBytes);
        }
        if (head) {
            t.allGather.add(1, bt * tp * ce); // every rank's row maxima
            t.allReduce.add(1, 2 * bt * ce);  // sums of exponentials and target logits
        }
        return t;
    }
    if (pass == Pass::Backward) {
        const double again = recompute ? 2 * layers : 0; // the recomputed forward's collectives
        if (sp) {
            t.allGather.add(4 * layers + (embed ? 1 : 0) + again, rowBytes);
            t.reduceScatter.add((head ? 1 : 0) + 2 * layers + again, rowBytes);
            if (!split)
                t.allReduce.add((head ? 1 : 0) + 2 * layers, normFloats * ce);
        } else {
            t.allReduce.add((head ? 1 : 0) + 2 * layers + again, rowBytes);
        }
        return t;
    }
    if (sp && split) { // the deferred weight gradients gather the norm outputs again
        t.allGather.add(2 * layers, rowBytes);
        t.allReduce.add((head ? 1 : 0) + 2 * layers, normFloats * ce);
    }
    return t;
}

double collectiveMs(const std::string &op, double bytes, int n, const LinkSpec &link)
{
    if (n <= 1 || bytes <= 0)
        return 0;
    const double factor = op == "all_reduce" ? 2.0 * (n - 1) / n : op == "send_recv" ? 1.0 : double(n - 1) / n;
    const double bandwidth = std::max(link.bandwidthGBps, 1e-6) * 1e9; // bytes/s
    return link.latencyUs / 1000.0 + bytes * factor / bandwidth * 1000.0;
}

namespace {
double seconds(double bytes, const LinkSpec &link) { return bytes / (std::max(link.bandwidthGBps, 1e-6) * 1e9); }
double ringAllReduceMs(double bytes, int n, const LinkSpec &link)
{
    return n <= 1 ? 0.0 : 2.0 * (n - 1) * link.latencyUs / 1000.0 + seconds(bytes * 2.0 * (n - 1) / n, link) * 1000.0;
}
} // namespace

double allReduceMs(AllReduceAlgorithm a, double bytes, int n, const Tiers &t)
{
    if (n <= 1 || bytes <= 0)
        return 0;
    const LinkSpec &slow = t.nodes > 1 ? t.inter : t.intra;
    switch (a) {
    case AllReduceAlgorithm::Ring: return ringAllReduceMs(bytes, n, slow);
    case AllReduceAlgorithm::RecursiveDoubling: {
        int core = 0; // the largest power of two ≤ n: its ⌊log2 n⌋ exchanges
        while ((2 << core) <= n)
            ++core;
        // Ranks beyond it fold their data in before and receive the result after: two more steps.
        const int steps = (1 << core) == n ? core : core + 2;
        return steps * (slow.latencyUs / 1000.0 + seconds(bytes, slow) * 1000.0);
    }
    case AllReduceAlgorithm::Hierarchical:
        if (t.flatBecause.empty()) {
            const int k = t.perNode;
            const double inside = (k - 1) * t.intra.latencyUs / 1000.0 + seconds(bytes * (k - 1) / k, t.intra) * 1000.0;
            return 2 * inside + ringAllReduceMs(bytes / k, t.nodes, t.inter);
        }
        break;
    case AllReduceAlgorithm::Auto: break;
    }
    return collectiveMs("all_reduce", bytes, n, slow);
}

double callsMs(const std::string &op, const Calls &c, int n, const LinkSpec &link)
{
    return c.calls > 0 ? c.calls * collectiveMs(op, c.bytes / c.calls, n, link) : 0.0;
}

double TpPass::ms(int n, const LinkSpec &link) const
{
    return callsMs("all_reduce", allReduce, n, link) + callsMs("all_gather", allGather, n, link) +
           callsMs("reduce_scatter", reduceScatter, n, link);
}

} // namespace trellis::plan::detail
