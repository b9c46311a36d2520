// Benchmark (run by hand: build/bin/bench_calibration; ctest asserts no wall-clock figure).
// The cost model against the trainer on this machine, after `trellis-cli calibrate`: for every
// plan in resources/plans/ (all run on the CPU), the predicted step time is within 15% of the
// median step time the trainer measures (slowest rank, steps 6-45; a miss is tried once more,
// freshly calibrated), and the predicted activation bytes of each pipeline stage are exactly what
// its first rank reports. Real mpirun, real runs.
#include "launcher/history/history_database.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

using namespace trellis::launcher;

namespace {

const QString kCli = QStringLiteral(TRELLIS_BINARY_DIR "/bin/trellis-cli");
const QString kPlans = QStringLiteral(TRELLIS_SOURCE_DIR "/resources/plans");

struct Result {
    int code = -1;
    QByteArray out, err;
};

Result cli(const QStringList &args)
{
    QProcess p;
    p.start(kCli, args);
    Result r;
    if (!p.waitForFinished(600000))
        return r;
    r.code = p.exitCode();
    r.out = p.readAllStandardOutput();
    r.err = p.readAllStandardError();
    return r;
}

// resources/plans/NAME for 45 steps of the corpus's licenses, written into `dir`; its JSON, or an
// empty object when it could not be read or written.
QJsonObject writePlan45(const QString &name, const QString &path)
{
    QFile in(kPlans + QLatin1Char('/') + name);
    if (!in.open(QIODevice::ReadOnly))
        return {};
    QJsonObject doc = QJsonDocument::fromJson(in.readAll()).object();
    QJsonObject training = doc.value(QStringLiteral("training")).toObject();
    training[QStringLiteral("steps")] = 45;
    QJsonObject data = training.value(QStringLiteral("data")).toObject();
    data[QStringLiteral("path")] = QStringLiteral(TRELLIS_SOURCE_DIR "/resources/corpus/licenses.txt");
    training[QStringLiteral("data")] = data;
    doc[QStringLiteral("training")] = training;
    QFile out(path);
    if (!out.open(QIODevice::WriteOnly) || out.write(QJsonDocument(doc).toJson()) < 0)
        return {};
    return doc;
}

// The typical step of a run: the median over steps 6-45 of the slowest rank's time (each step
// waits for it); -1 unless all 40 steps are there.
double medianSlowestStep(const RunData &run)
{
    std::map<qint64, double> slowest;
    for (const auto &st : run.steps)
        if (st.step > 5)
            slowest[st.step] = std::max(slowest[st.step], st.stepMs);
    std::vector<double> times;
    for (const auto &[step, ms] : slowest)
        times.push_back(ms);
    if (times.size() != 40)
        return -1;
    std::sort(times.begin(), times.end());
    return (times[times.size() / 2 - 1] + times[times.size() / 2]) / 2;
}

} // namespace

class TstCalibration : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString db() const { return m_dir.filePath(QStringLiteral("history.sqlite")); }

    // The quick start (45 steps) in a fresh history: estimated (calibrating unasked), then run;
    // (predicted - measured) / measured of the median step of the slowest rank over steps 6-45, or
    // 100 when something failed (said).
    double unaskedQuickStartError(const QTemporaryDir &fresh, int attempt)
    {
        const QString history = fresh.filePath(QStringLiteral("history.sqlite"));
        const QString path = fresh.filePath(QStringLiteral("quickstart.json"));
        if (writePlan45(QStringLiteral("quickstart.json"), path).isEmpty())
            return 100;
        const Result est = cli({QStringLiteral("--db"), history, QStringLiteral("estimate"), path, QStringLiteral("--json")});
        const QJsonObject e = QJsonDocument::fromJson(est.out).object();
        if (est.code != 0 || !est.err.contains("this machine is not calibrated: measuring it for 4 ranks first") ||
            !e.value(QStringLiteral("calibrated")).toBool()) {
            qWarning("estimate did not calibrate unasked: %s", est.err.constData());
            return 100;
        }
        const double predicted = e.value(QStringLiteral("step_ms")).toDouble();
        const Result run = cli({QStringLiteral("--db"), history, QStringLiteral("run"), path, QStringLiteral("--quiet")});
        HistoryDatabase h;
        const auto found = run.code == 0 && h.open(history, false).isEmpty() ? h.findRun(QStringLiteral("last")) : std::nullopt;
        const auto loaded = found ? h.loadRun(found->id) : std::nullopt;
        if (!loaded) {
            qWarning("the run failed: %s", run.err.constData());
            return 100;
        }
        const double measured = medianSlowestStep(*loaded);
        if (measured <= 0)
            return 100;
        const double error = (predicted - measured) / measured;
        qInfo("quick start, calibrated unasked, attempt %d: predicted %.1f ms a step, measured %.1f ms (%+.1f%%)", attempt, predicted,
              measured, 100 * error);
        return error;
    }

private slots:
    void initTestCase()
    {
        // Calibration beside the history database, for the world sizes of the plans.
        const Result r = cli({QStringLiteral("--db"), db(), QStringLiteral("calibrate"), QStringLiteral("--ranks"), QStringLiteral("2,4")});
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY(QFile::exists(m_dir.filePath(QStringLiteral("calibration.json"))));
    }

    // The first estimate a person sees on a new machine: the quick start estimated with no
    // calibration yet calibrates this machine for its world size unasked (trellis-cli estimate, as
    // the workbench's Estimate tab does), and its predicted step is within 20% of the run's median
    // step (slowest rank, steps 6-45).
    void quickStartCalibratedUnasked()
    {
        // As predictionsMatchRuns: a miss is tried once more (a fresh history, calibrated afresh)
        // and both attempts are printed.
        qunsetenv("TRELLIS_AUTO_CALIBRATE");
        double error = 1;
        for (int attempt = 1; attempt <= 2 && std::abs(error) >= 0.20; ++attempt) {
            QTemporaryDir fresh;
            error = unaskedQuickStartError(fresh, attempt);
            QVERIFY(error < 10);
        }
        QVERIFY2(std::abs(error) < 0.20, qPrintable(QStringLiteral("step time off by %1%").arg(100 * error, 0, 'f', 1)));
    }

    void predictionsMatchRuns_data()
    {
        QTest::addColumn<QString>("plan");
        const QStringList plans = QDir(kPlans).entryList({QStringLiteral("*.json")}, QDir::Files, QDir::Name);
        QVERIFY(plans.size() >= 3);
        for (const QString &p : plans)
            QTest::newRow(qPrintable(p)) << p;
    }
    void predictionsMatchRuns()
    {
        QFETCH(QString, plan);
        const QString path = m_dir.filePath(plan);
        const QJsonObject doc = writePlan45(plan, path);
        QVERIFY(!doc.isEmpty());

        const QJsonObject parallel = doc.value(QStringLiteral("parallel")).toObject();
        const int world = parallel.value(QStringLiteral("dp")).toInt(1) * parallel.value(QStringLiteral("tp")).toInt(1) *
                          parallel.value(QStringLiteral("pp")).toInt(1) * parallel.value(QStringLiteral("cp")).toInt(1);
        // One attempt: calibrate again for this plan's world size just before it runs (so the
        // calibration and the run see the machine in the same state), estimate, run, and compare
        // with the typical step: the median over steps 6-45 of the slowest rank's time (each
        // step waits for it). A comparison that misses is tried once more and both are printed:
        // a shared machine's load can change within a run, which no model of this machine can
        // know, while an error of the model shows in both attempts.
        QJsonObject e;
        std::map<int, qint64> activations; // first rank of each pipeline stage
        double error = 1;
        for (int attempt = 1; attempt <= 2 && std::abs(error) >= 0.15; ++attempt) {
            const Result cal = cli({QStringLiteral("--db"), db(), QStringLiteral("calibrate"), QStringLiteral("--ranks"), QString::number(world)});
            QVERIFY2(cal.code == 0, cal.err.constData());
            const Result est = cli({QStringLiteral("--db"), db(), QStringLiteral("estimate"), path, QStringLiteral("--json")});
            QVERIFY2(est.code == 0, est.err.constData());
            e = QJsonDocument::fromJson(est.out).object();
            QVERIFY(e.value(QStringLiteral("calibrated")).toBool());
            const double predicted = e.value(QStringLiteral("step_ms")).toDouble();

            const Result run = cli({QStringLiteral("--db"), db(), QStringLiteral("run"), path, QStringLiteral("--quiet")});
            QVERIFY2(run.code == 0, run.err.constData());
            HistoryDatabase h;
            QCOMPARE(h.open(db(), false), QString());
            const auto found = h.findRun(QStringLiteral("last"));
            QVERIFY(found);
            const auto loaded = h.loadRun(found->id);
            QVERIFY(loaded);
            std::map<int, int> stageOf;
            for (const auto &r : loaded->ranks)
                if (r.dp == 0 && r.tp == 0)
                    stageOf[r.rank] = r.pp;
            for (const auto &st : loaded->steps)
                if (st.step == 45 && stageOf.count(st.rank))
                    activations[stageOf[st.rank]] = st.memActivations;
            const double measured = medianSlowestStep(*loaded);
            QVERIFY(measured > 0);
            error = (predicted - measured) / measured;
            qInfo("%s, attempt %d: predicted %.1f ms a step, measured %.1f ms (%+.1f%%)", qPrintable(plan), attempt, predicted,
                  measured, 100 * error);
        }
        QVERIFY2(std::abs(error) < 0.15, qPrintable(QStringLiteral("step time off by %1%").arg(100 * error, 0, 'f', 1)));

        const QJsonArray memory = e.value(QStringLiteral("memory_per_rank")).toArray();
        QCOMPARE(static_cast<size_t>(memory.size()), activations.size());
        for (const QJsonValue &m : memory) {
            const QJsonObject stage = m.toObject();
            QCOMPARE(qint64(stage.value(QStringLiteral("activations")).toDouble()), activations[stage.value(QStringLiteral("stage")).toInt()]);
        }
    }
};

QTEST_GUILESS_MAIN(TstCalibration)
#include "bench_calibration.moc"
