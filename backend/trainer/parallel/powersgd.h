// PowerSGD gradient compression over the data-parallel replicas (parallel.grad_compression;
// Vogels, Karimireddy and Jaggi 2019, "PowerSGD: Practical Low-Rank Gradient Compression for
// Distributed Optimization"). For each gradient matrix M (rows × cols, row-major) with this
// rank's error feedback E, rank r = min(plan rank, rows, cols):
//   M ← M + E;  P = M·Q;  all-reduce(P, average);  P ← orth(P);  Q = Mᵀ·P;
//   all-reduce(Q, average);  E ← M − P·Qᵀ;  gradient ← P·Qᵀ.
// orth is the Q factor of a Householder QR (LAPACK's sgeqrf and sorgqr, from OpenBLAS), so the
// columns stay orthonormal when P is rank-deficient — a zero gradient, a matrix of lower rank
// than r — where Gram–Schmidt would divide by nearly nothing. At r = min(rows, cols) the result is
// the averaged gradient itself (P·Pᵀ projects onto a space holding all of M's columns) within
// float round-off. Q starts from a seeded normal draw, the same on every replica; with warm start
// it is the previous step's averaged Q (one power iteration a step), else a fresh draw each step.
// Every matrix is compressed when asked, even where its factors are not smaller than it (rank
// near min(rows, cols)): the compression is what was asked for, and what the full-rank check
// tests. The vectors are averaged whole in one all-reduce, all P factors in another and all Q
// factors in a third.
// Host memory (the CPU device; validation refuses CUDA). Threading: training thread only.
#pragma once

#include "backend/trainer/comm/communicator.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace trellis::trainer {

struct GradientMatrix {
    std::size_t offset = 0; // in the gradient buffer
    int rows = 0, cols = 0;
};

// The orthonormal Q factor of the rows × r matrix a (row-major, rows ≥ r), in place (Householder).
void orthonormalizeColumns(float *a, int rows, int r);

class PowerSgd {
public:
    // matrices: the gradient matrices to compress; vectors: [begin, end) ranges of the rest, each
    // averaged whole (offsets into the gradient buffer reduce() is given).
    PowerSgd(DeviceCommunicator &dp, std::vector<GradientMatrix> matrices, std::vector<std::pair<std::size_t, std::size_t>> vectors,
             int rank, bool warmStart, std::uint64_t seed);
    // Replaces the gradients in `grads` by their compressed average over the replicas.
    void reduce(float *grads);

    std::uint64_t bytesPerStep() const;     // what one reduce() all-reduces, per rank
    std::uint64_t wholeBytesPerStep() const; // what averaging every gradient whole would
    std::uint64_t stateBytes() const;       // error feedback, Q, P and the packed buffers
    std::size_t compressedMatrices() const { return m_matrices.size(); }
    std::uint64_t reductions() const { return m_reduced; } // reduce() calls so far
    // Checkpoints: what carries from step to step — the steps and draws counted, Q (the same on
    // every replica) and this rank's error feedback — as bytes, and back. restoreState returns ""
    // or why the bytes do not fit this compression (another model, rank or layout): then nothing
    // changes.
    std::string saveState() const;
    std::string restoreState(const std::string &bytes);
    // The error feedback of the matrices, in their order (tests).
    const std::vector<float> &errorFeedback() const { return m_error; }

private:
    struct Factor {
        GradientMatrix m;
        int r = 0;
        std::size_t p = 0, q = 0, e = 0; // offsets into m_p, m_q, m_error
    };
    void drawQ();

    DeviceCommunicator &m_dp;
    std::vector<Factor> m_matrices;
    std::vector<std::pair<std::size_t, std::size_t>> m_vectors;
    bool m_warmStart;
    std::uint64_t m_seed, m_draws = 0, m_reduced = 0;
    std::vector<float> m_p, m_q, m_error, m_packed, m_scratch;
    std::uint64_t m_whole = 0;
};

} // namespace trellis::trainer
