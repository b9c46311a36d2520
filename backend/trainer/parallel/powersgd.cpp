// See powersgd.h.
#include "backend/trainer/parallel/powersgd.h"

#include "backend/trainer/common/rng.h"

#include <cblas.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

// LAPACK's Householder QR as OpenBLAS exports it (Fortran calling convention, column-major).
extern "C" {
void sgeqrf_(const int *m, const int *n, float *a, const int *lda, float *tau, float *work, const int *lwork, int *info);
void sorgqr_(const int *m, const int *n, const int *k, float *a, const int *lda, const float *tau, float *work, const int *lwork,
             int *info);
}

namespace trellis::trainer {

void orthonormalizeColumns(float *a, int rows, int r)
{
    if (r <= 0 || rows < r)
        throw std::invalid_argument("orthonormalizeColumns: needs rows >= r > 0");
    // Row-major rows × r is column-major r × rows; LAPACK wants the columns contiguous.
    std::vector<float> col(static_cast<std::size_t>(rows) * r), tau(static_cast<std::size_t>(r));
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < r; ++j)
            col[static_cast<std::size_t>(j) * rows + i] = a[static_cast<std::size_t>(i) * r + j];
    int info = 0, lwork = -1;
    float query = 0;
    sgeqrf_(&rows, &r, col.data(), &rows, tau.data(), &query, &lwork, &info);
    lwork = std::max(1, static_cast<int>(query));
    std::vector<float> work(static_cast<std::size_t>(lwork));
    sgeqrf_(&rows, &r, col.data(), &rows, tau.data(), work.data(), &lwork, &info);
    if (info != 0)
        throw std::runtime_error("PowerSGD: sgeqrf failed (" + std::to_string(info) + ")");
    lwork = -1;
    sorgqr_(&rows, &r, &r, col.data(), &rows, tau.data(), &query, &lwork, &info);
    lwork = std::max(1, static_cast<int>(query));
    work.resize(static_cast<std::size_t>(lwork));
    sorgqr_(&rows, &r, &r, col.data(), &rows, tau.data(), work.data(), &lwork, &info);
    if (info != 0)
        throw std::runtime_error("PowerSGD: sorgqr failed (" + std::to_string(info) + ")");
    for (int i = 0; i < rows; ++i)
        for (int j = 0; j < r; ++j)
            a[static_cast<std::size_t>(i) * r + j] = col[static_cast<std::size_t>(j) * rows + i];
}

PowerSgd::PowerSgd(DeviceCommunicator &dp, std::vector<GradientMatrix> matrices,
                   std::vector<std::pair<std::size_t, std::size_t>> vectors, int rank, bool warmStart, std::uint64_t seed)
    : m_dp(dp), m_vectors(std::move(vectors)), m_warmStart(warmStart), m_seed(seed)
{
    if (rank < 1)
        throw std::invalid_argument("PowerSGD: the rank must be at least 1");
    std::size_t p = 0, q = 0, e = 0, packed = 0;
    for (const auto &[begin, end] : m_vectors)
        m_whole += (end - begin) * sizeof(float);
    for (const GradientMatrix &m : matrices) {
        const int r = std::min({rank, m.rows, m.cols});
        const auto whole = static_cast<std::size_t>(m.rows) * static_cast<std::size_t>(m.cols);
        m_whole += whole * sizeof(float);
        m_matrices.push_back({m, r, p, q, e});
        p += static_cast<std::size_t>(m.rows) * r;
        q += static_cast<std::size_t>(m.cols) * r;
        e += whole;
    }
    std::sort(m_vectors.begin(), m_vectors.end());
    for (const auto &[begin, end] : m_vectors)
        packed += end - begin;
    m_p.assign(p, 0.0f);
    m_q.assign(q, 0.0f);
    m_error.assign(e, 0.0f);
    m_packed.assign(packed, 0.0f);
    std::size_t largest = 0;
    for (const Factor &f : m_matrices)
        largest = std::max(largest, static_cast<std::size_t>(f.m.rows) * f.m.cols);
    m_scratch.assign(largest, 0.0f);
    drawQ();
}

// A normal draw for every Q, the same on every replica (the seed and the draw's number).
void PowerSgd::drawQ()
{
    Rng rng(m_seed ^ (0x9e3779b97f4a7c15ull * (m_draws + 1)));
    ++m_draws;
    for (float &v : m_q)
        v = static_cast<float>(rng.normal());
}

void PowerSgd::reduce(float *grads)
{
    if (!m_warmStart && m_reduced > 0)
        drawQ(); // a fresh start every step but the first (the constructor's draw)
    ++m_reduced;
    // The vectors (and matrices kept whole): packed, averaged, put back.
    std::size_t at = 0;
    for (const auto &[begin, end] : m_vectors) {
        std::memcpy(m_packed.data() + at, grads + begin, (end - begin) * sizeof(float));
        at += end - begin;
    }
    auto whole = m_packed.empty() ? nullptr : m_dp.allReduceAsync(m_packed.data(), m_packed.data(), m_packed.size(), ReduceOp::Avg);
    // M ← M + E, then P = M·Q for every matrix.
    for (const Factor &f : m_matrices) {
        float *m = grads + f.m.offset;
        const auto n = static_cast<std::size_t>(f.m.rows) * f.m.cols;
        const float *e = m_error.data() + f.e;
        for (std::size_t i = 0; i < n; ++i)
            m[i] += e[i];
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, f.m.rows, f.r, f.m.cols, 1.0f, m, f.m.cols, m_q.data() + f.q, f.r,
                    0.0f, m_p.data() + f.p, f.r);
    }
    if (!m_p.empty())
        m_dp.allReduce(m_p.data(), m_p.size(), ReduceOp::Avg);
    // P ← orth(P), Q = Mᵀ·P.
    for (const Factor &f : m_matrices) {
        orthonormalizeColumns(m_p.data() + f.p, f.m.rows, f.r);
        cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, f.m.cols, f.r, f.m.rows, 1.0f, grads + f.m.offset, f.m.cols,
                    m_p.data() + f.p, f.r, 0.0f, m_q.data() + f.q, f.r);
    }
    if (!m_q.empty())
        m_dp.allReduce(m_q.data(), m_q.size(), ReduceOp::Avg);
    // M̂ = P·Qᵀ; E ← M − M̂; the gradient is M̂.
    for (const Factor &f : m_matrices) {
        float *m = grads + f.m.offset;
        const auto n = static_cast<std::size_t>(f.m.rows) * f.m.cols;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, f.m.rows, f.m.cols, f.r, 1.0f, m_p.data() + f.p, f.r,
                    m_q.data() + f.q, f.r, 0.0f, m_scratch.data(), f.m.cols);
        float *e = m_error.data() + f.e;
        for (std::size_t i = 0; i < n; ++i) {
            e[i] = m[i] - m_scratch[i];
            m[i] = m_scratch[i];
        }
    }
    if (whole) {
        whole->wait();
        at = 0;
        for (const auto &[begin, end] : m_vectors) {
            std::memcpy(grads + begin, m_packed.data() + at, (end - begin) * sizeof(float));
            at += end - begin;
        }
    }
}

namespace {
constexpr char kStateMagic[8] = {'P', 'S', 'G', 'D', 'S', 'T', '0', '1'};
} // namespace

std::string PowerSgd::saveState() const
{
    std::string out(kStateMagic, sizeof kStateMagic);
    const std::uint64_t header[4] = {m_reduced, m_draws, m_q.size(), m_error.size()};
    out.append(reinterpret_cast<const char *>(header), sizeof header);
    out.append(reinterpret_cast<const char *>(m_q.data()), m_q.size() * sizeof(float));
    out.append(reinterpret_cast<const char *>(m_error.data()), m_error.size() * sizeof(float));
    return out;
}

std::string PowerSgd::restoreState(const std::string &bytes)
{
    std::uint64_t header[4] = {};
    if (bytes.size() < sizeof kStateMagic + sizeof header || std::memcmp(bytes.data(), kStateMagic, sizeof kStateMagic) != 0)
        return "not PowerSGD state";
    std::memcpy(header, bytes.data() + sizeof kStateMagic, sizeof header);
    if (header[2] != m_q.size() || header[3] != m_error.size())
        return "its Q and error feedback hold " + std::to_string(header[2]) + " and " + std::to_string(header[3]) +
               " elements, this compression's " + std::to_string(m_q.size()) + " and " + std::to_string(m_error.size());
    if (bytes.size() != sizeof kStateMagic + sizeof header + (m_q.size() + m_error.size()) * sizeof(float))
        return "truncated";
    const char *at = bytes.data() + sizeof kStateMagic + sizeof header;
    std::memcpy(m_q.data(), at, m_q.size() * sizeof(float));
    std::memcpy(m_error.data(), at + m_q.size() * sizeof(float), m_error.size() * sizeof(float));
    m_reduced = header[0];
    m_draws = header[1];
    return {};
}

std::uint64_t PowerSgd::bytesPerStep() const { return (m_p.size() + m_q.size() + m_packed.size()) * sizeof(float); }

std::uint64_t PowerSgd::wholeBytesPerStep() const { return m_whole; }

std::uint64_t PowerSgd::stateBytes() const
{
    return (m_p.size() + m_q.size() + m_error.size() + m_packed.size() + m_scratch.size()) * sizeof(float);
}

} // namespace trellis::trainer
