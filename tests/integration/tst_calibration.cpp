// The cost model against the trainer on this machine, after `trellis-cli calibrate`: for every
// plan in resources/plans/ (all run on the CPU), the predicted step time is within 15% of the
// mean step time the trainer measures (slowest rank, steps 6-25), and the predicted activation
// bytes of each pipeline stage are exactly what its first rank reports. Real mpirun, real runs.
#include "launcher/history_database.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>
#include <map>

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

} // namespace

class TstCalibration : public QObject {
    Q_OBJECT
private:
    QTemporaryDir m_dir;
    QString db() const { return m_dir.filePath(QStringLiteral("history.sqlite")); }

private slots:
    void initTestCase()
    {
        // Calibration beside the history database, for the world sizes of the plans.
        const Result r = cli({QStringLiteral("--db"), db(), QStringLiteral("calibrate"), QStringLiteral("--ranks"), QStringLiteral("2,4")});
        QVERIFY2(r.code == 0, r.err.constData());
        QVERIFY(QFile::exists(m_dir.filePath(QStringLiteral("calibration.json"))));
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
        QFile in(kPlans + QLatin1Char('/') + plan);
        QVERIFY(in.open(QIODevice::ReadOnly));
        QJsonObject doc = QJsonDocument::fromJson(in.readAll()).object();
        QJsonObject training = doc.value(QStringLiteral("training")).toObject();
        training[QStringLiteral("steps")] = 25;
        QJsonObject data = training.value(QStringLiteral("data")).toObject();
        data[QStringLiteral("path")] = QStringLiteral(TRELLIS_SOURCE_DIR "/resources/corpus/licenses.txt");
        training[QStringLiteral("data")] = data;
        doc[QStringLiteral("training")] = training;
        const QString path = m_dir.filePath(plan);
        QFile out(path);
        QVERIFY(out.open(QIODevice::WriteOnly));
        out.write(QJsonDocument(doc).toJson());
        out.close();

        const Result est = cli({QStringLiteral("--db"), db(), QStringLiteral("estimate"), path, QStringLiteral("--json")});
        QVERIFY2(est.code == 0, est.err.constData());
        const QJsonObject e = QJsonDocument::fromJson(est.out).object();
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
        std::map<qint64, double> slowest;
        std::map<int, qint64> activations; // first rank of each pipeline stage
        std::map<int, int> stageOf;
        for (const auto &r : loaded->ranks)
            if (r.dp == 0 && r.tp == 0)
                stageOf[r.rank] = r.pp;
        for (const auto &s : loaded->steps) {
            if (s.step > 5)
                slowest[s.step] = std::max(slowest[s.step], s.stepMs);
            if (s.step == 25 && stageOf.count(s.rank))
                activations[stageOf[s.rank]] = s.memActivations;
        }
        double measured = 0;
        for (const auto &[step, ms] : slowest)
            measured += ms;
        measured /= static_cast<double>(slowest.size());
        const double error = (predicted - measured) / measured;
        qInfo("%s: predicted %.1f ms a step, measured %.1f ms (%+.1f%%)", qPrintable(plan), predicted, measured, 100 * error);
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
#include "tst_calibration.moc"
