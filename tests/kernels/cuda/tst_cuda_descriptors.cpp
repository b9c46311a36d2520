// The host code the CUDA kernels describe our tensors to cuBLASLt and cuDNN with
// (kernels/cuda/descriptors.h), checked on the CPU against naive references: a GEMM run the way
// cuBLASLt reads the layout (column-major, its A our B) equals the row-major product for every
// transpose, odd sizes, padded leading dimensions and batches; the alignment told is the real
// one (a bf16 vocabulary of 50,257 is 2-byte aligned); the attention views address the q, k, v and
// o elements of the packed rows, grouped-query heads included.
#include "kernels/cuda/descriptors.h"

#include <QTest>

#include <random>
#include <vector>

using namespace trellis::kernels::cuda;

namespace {

// Column-major D = op(A)·op(B) over layout `g`'s descriptors, A and B raw memory: what cuBLASLt
// computes from them (alpha 1, beta 0), batch matrix `n`.
std::vector<double> asCublasLt(const GemmLayout &g, const std::vector<double> &ltA, const std::vector<double> &ltB, int n)
{
    const std::int64_t rows = g.opA ? g.a.cols : g.a.rows;
    const std::int64_t inner = g.opA ? g.a.rows : g.a.cols;
    const std::int64_t cols = g.opB ? g.b.rows : g.b.cols;
    std::vector<double> d(static_cast<std::size_t>(g.c.ld * (cols - 1) + rows + n * g.c.stride), 0.0);
    for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < cols; ++j) {
            double s = 0;
            for (std::int64_t k = 0; k < inner; ++k) {
                const double a = g.opA ? ltA[static_cast<std::size_t>(n * g.a.stride + k + i * g.a.ld)]
                                       : ltA[static_cast<std::size_t>(n * g.a.stride + i + k * g.a.ld)];
                const double b = g.opB ? ltB[static_cast<std::size_t>(n * g.b.stride + j + k * g.b.ld)]
                                       : ltB[static_cast<std::size_t>(n * g.b.stride + k + j * g.b.ld)];
                s += a * b;
            }
            d[static_cast<std::size_t>(n * g.c.stride + i + j * g.c.ld)] = s;
        }
    return d;
}

std::vector<double> randomValues(std::size_t n, unsigned seed)
{
    std::mt19937 gen(seed);
    std::uniform_real_distribution<double> dist(-1, 1);
    std::vector<double> v(n);
    for (auto &x : v)
        x = dist(gen);
    return v;
}

} // namespace

class TstCudaDescriptors : public QObject {
    Q_OBJECT
private slots:
    void gemmLayoutComputesTheRowMajorProduct_data()
    {
        QTest::addColumn<bool>("ta");
        QTest::addColumn<bool>("tb");
        QTest::addColumn<int>("M");
        QTest::addColumn<int>("N");
        QTest::addColumn<int>("K");
        QTest::addColumn<int>("pad");   // added to every leading dimension
        QTest::addColumn<int>("batch");
        for (bool ta : {false, true})
            for (bool tb : {false, true}) {
                const QString tag = QStringLiteral("%1%2").arg(ta ? 'T' : 'N').arg(tb ? 'T' : 'N');
                QTest::newRow(qPrintable(tag + QStringLiteral(" 5x7x3"))) << ta << tb << 5 << 7 << 3 << 0 << 1;
                QTest::newRow(qPrintable(tag + QStringLiteral(" 1x9x4 padded"))) << ta << tb << 1 << 9 << 4 << 3 << 1;
                QTest::newRow(qPrintable(tag + QStringLiteral(" 6x2x5 batch 3 padded"))) << ta << tb << 6 << 2 << 5 << 2 << 3;
            }
    }
    void gemmLayoutComputesTheRowMajorProduct()
    {
        QFETCH(bool, ta);
        QFETCH(bool, tb);
        QFETCH(int, M);
        QFETCH(int, N);
        QFETCH(int, K);
        QFETCH(int, pad);
        QFETCH(int, batch);
        // Row-major operands: op(A) is M×K (A stored K×M when transposed), op(B) K×N.
        const int lda = (ta ? M : K) + pad, ldb = (tb ? K : N) + pad, ldc = N + pad;
        const long long sA = static_cast<long long>(ta ? K : M) * lda + 1, sB = static_cast<long long>(tb ? N : K) * ldb + 2,
                        sC = static_cast<long long>(M) * ldc + 3;
        const auto A = randomValues(static_cast<std::size_t>(sA * batch), 1), B = randomValues(static_cast<std::size_t>(sB * batch), 2);
        const GemmLayout g = gemmLayout(ta, tb, M, N, K, lda, ldb, ldc, batch, sA, sB, sC, 4, 4, nullptr, nullptr, nullptr, nullptr);
        for (int n = 0; n < batch; ++n) {
            const std::vector<double> d = asCublasLt(g, B, A, n); // cuBLASLt's A is our B
            for (int i = 0; i < M; ++i)
                for (int j = 0; j < N; ++j) {
                    double expected = 0;
                    for (int k = 0; k < K; ++k)
                        expected += (ta ? A[static_cast<std::size_t>(n * sA + k * lda + i)] : A[static_cast<std::size_t>(n * sA + i * lda + k)]) *
                                    (tb ? B[static_cast<std::size_t>(n * sB + j * ldb + k)] : B[static_cast<std::size_t>(n * sB + k * ldb + j)]);
                    const double got = d[static_cast<std::size_t>(n * sC + j + static_cast<long long>(i) * ldc)];
                    QVERIFY2(std::abs(got - expected) < 1e-12,
                             qPrintable(QStringLiteral("batch %1 C[%2][%3]: %4, expected %5").arg(n).arg(i).arg(j).arg(got).arg(expected)));
                }
        }
    }

    // The alignment told to cuBLASLt is what the memory has: never more (a lie makes it read
    // misaligned vectors), never less than an element.
    void alignmentIsTheTruth_data()
    {
        QTest::addColumn<int>("ld");
        QTest::addColumn<int>("elementBytes");
        QTest::addColumn<int>("offsetElements"); // of the matrix's start within an aligned buffer
        QTest::addColumn<int>("expected");
        QTest::newRow("bf16 GPT-2 vocabulary 50257") << 50257 << 2 << 0 << 2;
        QTest::newRow("bf16 padded to 50304") << 50304 << 2 << 0 << 256;
        QTest::newRow("fp32 vocabulary 50257") << 50257 << 4 << 0 << 4;
        QTest::newRow("bf16 hidden 768") << 768 << 2 << 0 << 256;
        QTest::newRow("bf16 768 at an odd element") << 768 << 2 << 1 << 2;
        QTest::newRow("fp32 768 at element 8") << 768 << 4 << 8 << 32;
    }
    void alignmentIsTheTruth()
    {
        QFETCH(int, ld);
        QFETCH(int, elementBytes);
        QFETCH(int, offsetElements);
        QFETCH(int, expected);
        const auto *base = reinterpret_cast<const unsigned char *>(std::uintptr_t(1) << 20); // 1 MiB: 256-aligned
        const void *start = base + offsetElements * elementBytes;
        const GemmLayout g = gemmLayout(false, false, 8, ld, 64, 128, ld, ld, 1, 0, 0, 0, elementBytes, elementBytes, base, start, base,
                                        nullptr);
        QCOMPARE(g.alignment, expected);
    }

    void attentionViewsAddressThePackedRows_data()
    {
        QTest::addColumn<int>("NH");
        QTest::addColumn<int>("KVH");
        QTest::newRow("multi-head") << 4 << 4;
        QTest::newRow("grouped-query") << 4 << 2;
        QTest::newRow("multi-query") << 4 << 1;
    }
    void attentionViewsAddressThePackedRows()
    {
        QFETCH(int, NH);
        QFETCH(int, KVH);
        const int B = 2, T = 5, hs = 8, C = NH * hs;
        const AttentionLayout l = attentionLayout(B, T, C, NH, KVH);
        const std::int64_t row = C + 2 * KVH * hs;
        QCOMPARE(l.qkvRow, row);
        for (int b = 0; b < B; ++b)
            for (int t = 0; t < T; ++t)
                for (int i = 0; i < hs; ++i) {
                    const std::int64_t base = (static_cast<std::int64_t>(b) * T + t) * row;
                    for (int h = 0; h < NH; ++h) {
                        QCOMPARE(at(l.q, b, h, t, i), base + h * hs + i);
                        QCOMPARE(at(l.o, b, h, t, i), (static_cast<std::int64_t>(b) * T + t) * C + h * hs + i);
                    }
                    for (int g = 0; g < KVH; ++g) {
                        QCOMPARE(at(l.k, b, g, t, i), base + C + g * hs + i);
                        QCOMPARE(at(l.v, b, g, t, i), base + C + KVH * hs + g * hs + i);
                    }
                }
        QCOMPARE(at(l.stats, 1, NH - 1, T - 1, 0), static_cast<std::int64_t>(NH) * T * 2 - 1);
    }
};

QTEST_APPLESS_MAIN(TstCudaDescriptors)
#include "tst_cuda_descriptors.moc"
