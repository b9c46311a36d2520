// Running the real trainer from a test: a plan written into the test's folder, `mpirun -np N
// trellis-trainer --plan … --dump-…`, and the dumps read back (whole-model parameters and step-1
// gradients as float32, every step's loss as float64). Header-only, Qt Core.
#pragma once

#include <QDir>
#include <QFile>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

namespace trellis::test {

struct TrainerRun {
    int code = -1;
    QString output;
    std::vector<float> params, grads;
    std::vector<double> losses;
};

template <typename T>
std::vector<T> readDump(const QString &path)
{
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly))
        return {};
    const QByteArray bytes = f.readAll();
    std::vector<T> v(static_cast<std::size_t>(bytes.size()) / sizeof(T));
    std::memcpy(v.data(), bytes.constData(), v.size() * sizeof(T));
    return v;
}

// `mpirun -np RANKS trellis-trainer ARGS…` (single-copy off, one BLAS thread a rank): its exit code
// and merged output; code -1 with "timed out" when it ran past timeoutMs (then it is killed).
inline TrainerRun runTrainerProcess(int ranks, const QStringList &args, int timeoutMs = 300000)
{
    TrainerRun run;
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(QStringLiteral("mpirun"), QStringList{QStringLiteral("-np"), QString::number(ranks), QStringLiteral("--oversubscribe"),
                                                  QStringLiteral("--allow-run-as-root"), QStringLiteral("--mca"),
                                                  QStringLiteral("btl_vader_single_copy_mechanism"), QStringLiteral("none"),
                                                  QStringLiteral("-x"), QStringLiteral("OPENBLAS_NUM_THREADS=1"),
                                                  QStringLiteral(TRELLIS_BINARY_DIR "/bin/trellis-trainer")} +
                                          args);
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        run.output = QStringLiteral("timed out: ") + QString::fromUtf8(p.readAll());
        return run;
    }
    run.code = p.exitCode();
    run.output = QString::fromUtf8(p.readAll());
    if (run.code != 0) {
        // Open MPI's help blocks (between lines of dashes, a thousand characters of advice) after
        // the ranks' own lines: a failure message is cut at about that length, and what a rank said
        // is what tells why (seen: a run whose only line left was mpirun's "exiting improperly").
        QStringList own, help;
        bool inHelp = false;
        for (const QString &line : run.output.split(QLatin1Char('\n'))) {
            const bool dashes = line.startsWith(QStringLiteral("-----"));
            (inHelp || dashes ? help : own) << line;
            if (dashes)
                inHelp = !inHelp;
        }
        run.output = own.join(QLatin1Char('\n')) + QStringLiteral("\n[Open MPI's report]\n") + help.join(QLatin1Char('\n'));
    }
    return run;
}

// Writes `plan` (JSON text) as DIR/NAME.json and runs it on `ranks` ranks with every dump asked
// for (DIR/NAME.params, .grads, .losses), which it reads back; extra arguments follow.
inline TrainerRun runTrainer(const QTemporaryDir &dir, const QString &name, const QString &plan, int ranks,
                             const QStringList &extra = {}, int timeoutMs = 300000)
{
    const QString path = dir.filePath(name + QStringLiteral(".json"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    f.write(plan.toUtf8());
    f.close();
    TrainerRun run = runTrainerProcess(ranks,
                                       QStringList{QStringLiteral("--plan"), path, QStringLiteral("--dump-params"),
                                                   dir.filePath(name + QStringLiteral(".params")), QStringLiteral("--dump-grads"),
                                                   dir.filePath(name + QStringLiteral(".grads")), QStringLiteral("--dump-losses"),
                                                   dir.filePath(name + QStringLiteral(".losses"))} +
                                           extra,
                                       timeoutMs);
    run.params = readDump<float>(dir.filePath(name + QStringLiteral(".params")));
    run.grads = readDump<float>(dir.filePath(name + QStringLiteral(".grads")));
    run.losses = readDump<double>(dir.filePath(name + QStringLiteral(".losses")));
    return run;
}

// ‖a − b‖ / ‖b‖ (infinite when the sizes differ or b is empty).
inline double relativeL2(const std::vector<float> &a, const std::vector<float> &b)
{
    if (a.size() != b.size() || b.empty())
        return INFINITY;
    double diff = 0, ref = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        diff += (double(a[i]) - double(b[i])) * (double(a[i]) - double(b[i]));
        ref += double(b[i]) * double(b[i]);
    }
    return std::sqrt(diff / ref);
}

// The largest |a − b| / |b| over the losses of every step (infinite when the counts differ).
inline double worstLossDifference(const std::vector<double> &a, const std::vector<double> &b)
{
    if (a.size() != b.size() || b.empty())
        return INFINITY;
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        worst = std::max(worst, std::abs(a[i] - b[i]) / std::abs(b[i]));
    return worst;
}

// The largest |a − b| over two vectors of the same size (infinite when the sizes differ).
inline double maxAbsoluteDifference(const std::vector<float> &a, const std::vector<float> &b)
{
    if (a.size() != b.size())
        return INFINITY;
    double worst = 0;
    for (std::size_t i = 0; i < a.size(); ++i)
        worst = std::max(worst, std::abs(double(a[i]) - double(b[i])));
    return worst;
}

} // namespace trellis::test
