// The cost model's collective accounting (internal to backend/plan): calls and bytes of a kind of
// collective, the tensor-parallel collectives of one pass over a model chunk as gpt_model.cpp
// issues them, and a collective's time from latency + bytes × the nccl-tests bus factor /
// bandwidth.
#pragma once

#include "backend/plan/plan.h"

#include <string>

namespace trellis::plan::detail {

// Collectives of one kind a rank issues: calls and their total bytes (nccl-tests convention).
struct Calls {
    double calls = 0, bytes = 0;
    void add(double n, double bytesEach)
    {
        calls += n;
        bytes += n * bytesEach;
    }
    void add(const Calls &other, double times)
    {
        calls += other.calls * times;
        bytes += other.bytes * times;
    }
};

// The tensor-parallel collectives of one pass over a model chunk for one micro-batch, as
// gpt_model.cpp issues them: all-reduces of the row-parallel outputs and column-parallel input
// gradients (reduce-scatters and all-gathers of rows with sequence parallelism), the
// vocabulary-parallel embedding and cross-entropy, the norm gradients summed over the group.
struct TpPass {
    Calls allReduce, allGather, reduceScatter;
    double ms(int n, const LinkSpec &link) const;
};

enum class Pass { Forward, Backward, Weights };

// normFloats: a norm's parameters (2·hidden for LayerNorm's gain and bias, hidden for RMSNorm).
TpPass tpPass(Pass pass, double layers, bool embed, bool head, bool sp, bool split, bool recompute, double rowBytes,
              double bt, int tp, double normFloats);
// One call of `bytes` over `n` ranks; op is all_reduce, all_gather, reduce_scatter, all_to_all or
// send_recv. 0 for a group of one.
double collectiveMs(const std::string &op, double bytes, int n, const LinkSpec &link);
// The link tiers a group crosses: its members on each node and the nodes (uniform = every node
// holds perNode of them).
struct Tiers {
    LinkSpec intra, inter;
    int perNode = 1, nodes = 1;
    bool uniform = true;
    std::string flatBecause; // why hierarchical is the flat all-reduce here (plan::whyFlat); empty: it is not
};
// One all-reduce of `bytes` over `n` ranks by algorithm `a` (α: a link's latency, β: its
// bandwidth, S: bytes; the slowest tier the group crosses sets α and β of a flat algorithm):
//   auto                α + 2(n−1)/n · S/β (the library's choice: one latency, the bus factor)
//   ring                2(n−1)·α + 2(n−1)/n · S/β
//   recursive_doubling  s·(α + S/β), s = log2 n; ⌊log2 n⌋ + 2 when n is
//                       not a power of two (the extra ranks fold in before and out after)
//   hierarchical        inside a node of k: reduce-scatter and all-gather, each (k−1)·α_i +
//                       (k−1)/k · S/β_i; across m nodes: a ring all-reduce of S/k over the inter
//                       links; the flat auto where flatBecause says why not.
double allReduceMs(AllReduceAlgorithm a, double bytes, int n, const Tiers &t);
// c.calls calls of c.bytes in all.
double callsMs(const std::string &op, const Calls &c, int n, const LinkSpec &link);

} // namespace trellis::plan::detail
