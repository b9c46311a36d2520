// oneDNN runs on the trainer's kernel thread count (docs/precision.md, issue #57), by oneDNN's own
// report — never a timing. The program runs itself as a probe (--probe K[,K...]: set the kernel
// threads to each K in turn and multiply through the oneDNN path) with DNNL_VERBOSE=2 and an
// OMP_NUM_THREADS that differs from K; oneDNN's verbose header says how many threads it runs on
// ("runtime:OpenMP,nthr:N") and each primitive it makes is a "create" line. The probe uses oneDNN's
// fp32 matmul, threaded as its bf16 one, so the test runs on any x86-64 CPU; where this CPU has
// native bf16 the bf16 GEMM is probed too.
#include "kernels/cpu/cpu_ops.h"
#include "kernels/cpu/half_gemm.h"
#include "kernels/dtype.h"

#include <QCoreApplication>
#include <QProcess>
#include <QRegularExpression>
#include <QTest>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

using namespace trellis::kernels;

namespace {

// The probe: for each thread count, one 96×80×64 product through oneDNN (fp32, and bf16 with
// `bf16`). Exit 3 when this build has no oneDNN.
int probe(const char *counts, bool bf16Too)
{
    const int M = 96, N = 80, K = 64;
    std::vector<float> a(static_cast<std::size_t>(M) * K, 0.5f), b(static_cast<std::size_t>(K) * N, 0.25f), c(static_cast<std::size_t>(M) * N);
    std::vector<bf16> ah(a.size(), bf16(0.5f)), bh(b.size(), bf16(0.25f));
    std::string list(counts);
    for (std::size_t at = 0; at < list.size();) {
        const std::size_t comma = list.find(',', at);
        const int threads = std::stoi(list.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
        at = comma == std::string::npos ? list.size() : comma + 1;
        cpu::setKernelThreads(threads);
        if (!cpu::oneDnnGemmF32(false, false, M, N, K, a.data(), K, b.data(), N, c.data(), N))
            return 3;
        if (c[0] != 0.5f * 0.25f * K)
            return 4;
        if (bf16Too) {
            cpu::gemm16<bf16, float>(false, false, M, N, K, ah.data(), K, bh.data(), N, c.data(), N, false, nullptr);
            if (c[0] != 0.5f * 0.25f * K)
                return 4;
        }
    }
    std::printf("probe done\n");
    return 0;
}

struct Probed {
    int code = -1;
    QString output;
};

Probed runProbe(const QString &counts, int ompThreads, bool bf16Too)
{
    QProcess p;
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.insert(QStringLiteral("DNNL_VERBOSE"), QStringLiteral("2")); // 2: creations too
    env.insert(QStringLiteral("OMP_NUM_THREADS"), QString::number(ompThreads));
    env.remove(QStringLiteral("OPENBLAS_NUM_THREADS"));
    p.setProcessEnvironment(env);
    p.setProcessChannelMode(QProcess::MergedChannels);
    QStringList args{QStringLiteral("--probe"), counts};
    if (bf16Too)
        args << QStringLiteral("--bf16");
    p.start(QCoreApplication::applicationFilePath(), args);
    if (!p.waitForFinished(60000)) {
        p.kill();
        p.waitForFinished();
        return {-1, QStringLiteral("the probe did not finish within 60 s")};
    }
    return {p.exitCode(), QString::fromUtf8(p.readAll())};
}

// oneDNN's own word on its thread count: the verbose header's nthr.
int reportedThreads(const QString &output)
{
    static const QRegularExpression nthr(QStringLiteral("onednn_verbose,info,cpu,runtime:OpenMP,nthr:(\\d+)"));
    const auto m = nthr.match(output);
    return m.hasMatch() ? m.captured(1).toInt() : -1;
}

int matmulsCreated(const QString &output, const QString &dataType)
{
    int n = 0;
    for (const QString &line : output.split(QLatin1Char('\n')))
        if (line.startsWith(QStringLiteral("onednn_verbose,create")) && line.contains(QStringLiteral(",matmul,")) &&
            line.contains(QStringLiteral("src_") + dataType) && line.contains(QStringLiteral("96x64:64x80")))
            ++n;
    return n;
}

} // namespace

class TstOneDnnThreads : public QObject {
    Q_OBJECT

private slots:
    void initTestCase()
    {
        const Probed p = runProbe(QStringLiteral("1"), 1, false);
        if (p.code == 3)
            QSKIP("this build has no oneDNN (TRELLIS_ENABLE_ONEDNN, Debian's libdnnl-dev)");
        QVERIFY2(p.code == 0, qPrintable(p.output));
    }

    // The kernel thread count wins over OpenMP's own setting, both ways: fewer (no oversubscription
    // of cores other ranks use) and more.
    void runsOnTheKernelThreads_data()
    {
        QTest::addColumn<int>("kernel");
        QTest::addColumn<int>("omp");
        QTest::newRow("1 asked, OpenMP set to 2") << 1 << 2;
        QTest::newRow("2 asked, OpenMP set to 1") << 2 << 1;
        QTest::newRow("3 asked, OpenMP set to 1") << 3 << 1;
    }
    void runsOnTheKernelThreads()
    {
        QFETCH(int, kernel);
        QFETCH(int, omp);
        const Probed p = runProbe(QString::number(kernel), omp, false);
        QVERIFY2(p.code == 0, qPrintable(p.output));
        QCOMPARE(reportedThreads(p.output), kernel);
    }

    // A primitive keeps the team size it was made with: after the thread count changes, the same
    // shape gets a primitive of its own (oneDNN says "create" again) rather than the cached one.
    void aPrimitivePerThreadCount()
    {
        const Probed p = runProbe(QStringLiteral("1,2,1,2"), 1, false);
        QVERIFY2(p.code == 0, qPrintable(p.output));
        QCOMPARE(matmulsCreated(p.output, QStringLiteral("f32")), 2);
    }

    // The bf16 GEMM itself, where this CPU has native bf16 (AVX512-BF16 or AMX).
    void bf16GemmFollowsToo()
    {
        if (!cpu::nativeBf16Gemm())
            QSKIP("this CPU has no native bf16 for oneDNN (no AVX512-BF16): the fp32 probe above covers the threading");
        const Probed p = runProbe(QStringLiteral("2,1"), 1, true);
        QVERIFY2(p.code == 0, qPrintable(p.output));
        QCOMPARE(reportedThreads(p.output), 2);
        QCOMPARE(matmulsCreated(p.output, QStringLiteral("bf16")), 2);
    }
};

int main(int argc, char **argv)
{
    if (argc >= 3 && std::strcmp(argv[1], "--probe") == 0)
        return probe(argv[2], argc >= 4 && std::strcmp(argv[3], "--bf16") == 0);
    QCoreApplication app(argc, argv);
    TstOneDnnThreads t;
    return QTest::qExec(&t, argc, argv);
}

#include "tst_onednn_threads.moc"
