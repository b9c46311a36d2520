// PowerSGD (parallel.grad_compression, trainer/parallel/powersgd.h).
// In this process (MPI of one rank, the replica's own view):
// - the Householder QR keeps the columns orthonormal for rank-deficient input (a repeated column,
//   a zero column, all zeros), where Gram–Schmidt would divide by nearly nothing;
// - at full rank (r = min(rows, cols)) the compressed gradient is the gradient, also for a matrix
//   of lower rank than r;
// - below it, error feedback keeps what was left out: after K steps on a fixed gradient G the
//   applied gradients plus the error equal K·G, and their mean tends to G;
// - the vectors are averaged whole; warm start is wired (another Q on the second step without it).
// The real trainer under mpirun: tst_powersgd_training.
#include "tests/support/trainer_runs.h" // relativeL2
#include "backend/trainer/comm/mpi_communicator.h"
#include "backend/trainer/parallel/powersgd.h"
#include "backend/trainer/common/rng.h"

#include <QTest>

#include <mpi.h>

#include <cmath>

using namespace trellis::trainer;
using namespace trellis::test;

namespace {

// max |(AᵀA − I)ij| of a rows × r row-major matrix.
double orthonormalityError(const std::vector<float> &a, int rows, int r)
{
    double worst = 0;
    for (int i = 0; i < r; ++i)
        for (int j = 0; j < r; ++j) {
            double dot = 0;
            for (int k = 0; k < rows; ++k)
                dot += double(a[k * r + i]) * a[k * r + j];
            worst = std::max(worst, std::abs(dot - (i == j ? 1.0 : 0.0)));
        }
    return worst;
}

std::vector<float> normals(std::size_t n, std::uint64_t seed)
{
    Rng rng(seed);
    std::vector<float> v(n);
    for (float &x : v)
        x = static_cast<float>(rng.normal());
    return v;
}

double relative(const std::vector<float> &a, const std::vector<float> &b) { return relativeL2(a, b); }

} // namespace

class TestPowerSgd : public QObject {
    Q_OBJECT
private slots:
    void householderKeepsRankDeficientColumnsOrthonormal()
    {
        const int rows = 6, r = 3;
        std::vector<float> a = normals(rows * r, 1);
        for (int i = 0; i < rows; ++i) {
            a[i * r + 1] = a[i * r + 0]; // a repeated column
            a[i * r + 2] = 0;            // a zero column
        }
        orthonormalizeColumns(a.data(), rows, r);
        QVERIFY2(orthonormalityError(a, rows, r) < 1e-6, qPrintable(QString::number(orthonormalityError(a, rows, r))));
        std::vector<float> zeros(rows * r, 0.0f);
        orthonormalizeColumns(zeros.data(), rows, r);
        QVERIFY(orthonormalityError(zeros, rows, r) < 1e-6);
    }

    void fullRankIsTheGradient()
    {
        MpiCommunicator self(MPI_COMM_SELF, "dp");
        // 8 × 5 of rank 2 (two outer products), then a vector of 3.
        const int rows = 8, cols = 5;
        const auto u = normals(rows * 2, 2), v = normals(cols * 2, 3);
        std::vector<float> grads(rows * cols + 3);
        for (int i = 0; i < rows; ++i)
            for (int j = 0; j < cols; ++j)
                grads[i * cols + j] = u[i] * v[j] + u[rows + i] * v[cols + j];
        grads[40] = 1.5f, grads[41] = -2.0f, grads[42] = 0.25f;
        const std::vector<float> want = grads;
        PowerSgd p(self, {{0, rows, cols}}, {{40, 43}}, 5, true, 7);
        QCOMPARE(p.compressedMatrices(), std::size_t(1));
        for (int step = 0; step < 3; ++step) {
            std::vector<float> g = want;
            p.reduce(g.data());
            QVERIFY2(relative(g, want) < 1e-6, qPrintable(QString::number(relative(g, want))));
        }
        QCOMPARE(p.bytesPerStep(), std::uint64_t((8 * 5 + 5 * 5 + 3) * 4)); // P, Q and the vector
        QCOMPARE(p.wholeBytesPerStep(), std::uint64_t(43 * 4));
    }

    void errorFeedbackKeepsWhatWasLeftOut()
    {
        MpiCommunicator self(MPI_COMM_SELF, "dp");
        const int rows = 16, cols = 12, steps = 200;
        const std::vector<float> g = normals(rows * cols, 4); // full rank 12; compressed to rank 1
        PowerSgd p(self, {{0, rows, cols}}, {}, 1, true, 9);
        std::vector<double> sum(g.size(), 0.0);
        double firstError = 0;
        for (int k = 1; k <= steps; ++k) {
            std::vector<float> applied = g;
            p.reduce(applied.data());
            for (std::size_t i = 0; i < g.size(); ++i)
                sum[i] += applied[i];
            if (k == 1)
                firstError = relative(applied, g);
        }
        // Σ applied + E = K·G: nothing is lost, only delayed.
        std::vector<float> total(g.size()), kg(g.size()), mean(g.size());
        for (std::size_t i = 0; i < g.size(); ++i) {
            total[i] = static_cast<float>(sum[i] + p.errorFeedback()[i]);
            kg[i] = static_cast<float>(steps) * g[i];
            mean[i] = static_cast<float>(sum[i] / steps);
        }
        QVERIFY2(relative(total, kg) < 1e-4, qPrintable(QString::number(relative(total, kg))));
        qInfo("rank 1 of a rank-12 gradient: one step %.3f off, the mean of %d steps %.4f off", firstError, steps, relative(mean, g));
        QVERIFY(firstError > 0.3); // compressed: one step is far from G
        QVERIFY(relative(mean, g) < 0.1 * firstError);
    }

    void warmStartCarriesQ()
    {
        MpiCommunicator self(MPI_COMM_SELF, "dp");
        const std::vector<float> g = normals(10 * 8, 5);
        PowerSgd warm(self, {{0, 10, 8}}, {}, 2, true, 3), cold(self, {{0, 10, 8}}, {}, 2, false, 3);
        std::vector<float> a = g, b = g;
        warm.reduce(a.data());
        cold.reduce(b.data());
        QCOMPARE(a, b); // the same first draw
        a = g, b = g;
        warm.reduce(a.data());
        cold.reduce(b.data());
        QVERIFY(relative(a, b) > 1e-3); // the second: the last Q against a new draw
    }

};

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int code = 0;
    {
        TestPowerSgd test;
        code = QTest::qExec(&test, argc, argv);
    }
    MPI_Finalize();
    return code;
}

#include "tst_powersgd.moc"
