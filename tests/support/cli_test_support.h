// What the trellis-cli integration tests share: the programs, the quick 4-rank plan, and running
// trellis-cli to completion with its exit code and output.
#pragma once

#include "backend/plan/cost/cost_model.h"
#include "backend/plan/plan_json.h"

#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QTemporaryDir>
#include <QString>
#include <QStringList>

#include <cmath>
#include <map>

namespace trellis::test {

inline const QString kCli = QStringLiteral(TRELLIS_BINARY_DIR "/bin/trellis-cli");
inline const QString kPlan = QStringLiteral(TRELLIS_SOURCE_DIR "/tests/data/plans/dp4_short.json");

struct Result {
    int code = -1;
    QString out, err;
};

// The cost model's memory for a plan file, per pipeline stage (rank 0 of each stage).
inline std::vector<trellis::plan::StageMemory> predictedMemory(const QString &planPath)
{
    auto loaded = trellis::plan::loadPlanFile(planPath.toStdString());
    if (!loaded)
        return {};
    const auto &p = loaded.value();
    return trellis::plan::estimatePlan(p, trellis::plan::deviceFor(p.cluster)).memory;
}

// Runs `program` to its end: exit code and output ("timed out" in err past timeoutMs).
inline Result runProgram(const QString &program, const QStringList &args, int timeoutMs = 240000)
{
    QProcess p;
    p.start(program, args);
    Result r;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.err = QStringLiteral("timed out");
        return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}

// A failed program's result for a test message: its exit code, its stderr and the last lines of
// its stdout (QTest cuts a message at about 1000 characters, which would keep only the head).
inline QString failure(const Result &r, int lastLines = 6)
{
    const QStringList lines = r.out.trimmed().split(QLatin1Char('\n'));
    return QStringLiteral("exit code %1; stderr: %2; stdout ends: %3")
        .arg(r.code)
        .arg(r.err.trimmed().right(600), lines.mid(std::max<qsizetype>(0, lines.size() - lastLines)).join(QStringLiteral(" | ")));
}

// A text file's content; "" when it cannot be read.
inline QString readAll(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()) : QString();
}

inline Result cli(const QStringList &args, int timeoutMs = 240000)
{
    return runProgram(kCli, args, timeoutMs);
}

// Sets `fields` in a plan file's `section` object ("training", "launch"); false when the file
// cannot be rewritten.
inline bool setPlanFields(const QString &planPath, const QString &section, const QJsonObject &fields)
{
    QFile f(planPath);
    if (!f.open(QIODevice::ReadOnly))
        return false;
    QJsonObject root = QJsonDocument::fromJson(f.readAll()).object();
    f.close();
    QJsonObject object = root[section].toObject();
    for (auto it = fields.begin(); it != fields.end(); ++it)
        object[it.key()] = it.value();
    root[section] = object;
    return f.open(QIODevice::WriteOnly | QIODevice::Truncate) && f.write(QJsonDocument(root).toJson()) > 0;
}

inline bool setTrainingFields(const QString &planPath, const QJsonObject &fields)
{
    return setPlanFields(planPath, QStringLiteral("training"), fields);
}

// "" when `there` has every step of `here` with a loss within `relative` (1e-6 unless said), else
// the first step that differs, `where` naming the other side ("over ssh", "under Slurm").
template <typename Step>
inline QString lossesDiffer(const std::map<Step, double> &there, const std::map<Step, double> &here, const QString &where,
                            double relative = 1e-6)
{
    for (const auto &[step, loss] : here) {
        const auto it = there.find(step);
        if (it == there.end())
            return QStringLiteral("step %1: missing %2").arg(step).arg(where);
        if (std::abs(it->second - loss) > relative * std::abs(loss))
            return QStringLiteral("step %1: %2 %3, %4 here").arg(step).arg(it->second, 0, 'g', 10).arg(where).arg(loss, 0, 'g', 10);
    }
    return {};
}

// Step → loss as `rank` reported it, from `trellis-cli export RUN --table steps` (CSV) in `db`.
inline std::map<int, double> lossesOf(const QString &db, const QString &run, int rank)
{
    const Result s = cli({QStringLiteral("--db"), db, QStringLiteral("export"), run, QStringLiteral("--format"), QStringLiteral("csv"),
                          QStringLiteral("--table"), QStringLiteral("steps")});
    const QStringList lines = s.out.split(QLatin1Char('\n'), Qt::SkipEmptyParts);
    std::map<int, double> out;
    if (lines.isEmpty())
        return out;
    const QStringList head = lines.first().split(QLatin1Char(','));
    const auto rankColumn = head.indexOf(QStringLiteral("rank")), step = head.indexOf(QStringLiteral("step")),
               loss = head.indexOf(QStringLiteral("loss"));
    for (int i = 1; i < lines.size(); ++i) {
        const QStringList f = lines[i].split(QLatin1Char(','));
        if (f.value(rankColumn) == QString::number(rank))
            out[f.value(step).toInt()] = f.value(loss).toDouble();
    }
    return out;
}


// A plan of `steps` on 4 data-parallel ranks (or `cluster`), checkpointing every `every` steps
// into the temporary folder, with `restart` as its launch.restart.
inline QString restartPlan(const QTemporaryDir &dir, const QString &name, int steps, int every, const QString &restart,
                           const QString &cluster = {})
{
    const QString path = dir.filePath(name + QStringLiteral(".json"));
    QFile f(path);
    if (!f.open(QIODevice::WriteOnly))
        return {};
    f.write(QStringLiteral(R"({"schema": "trellis.plan/1", "name": "%1",
      "model": {"layers": 2, "hidden": 64, "heads": 4, "ffn": 256, "seq_len": 64, "vocab": 256},
      "cluster": %2,
      "parallel": {"dp": 4, "micro_batch_size": 2},
      "training": {"steps": %3, "lr": 0.003, "min_lr": 0.0003, "seed": 7,
                   "data": {"source": "text", "path": "%4"},
                   "checkpoint": {"every": %5, "dir": "%6", "keep": 3}},
      "launch": {"restart": {%7}}})")
                .arg(name, cluster.isEmpty() ? QStringLiteral(R"({"nodes": [{"host": "localhost", "slots": 4}]})") : cluster)
                .arg(steps)
                .arg(QStringLiteral(TRELLIS_SOURCE_DIR "/resources/corpus/licenses.txt"))
                .arg(every)
                .arg(dir.filePath(name + QStringLiteral("-ckpt")), restart)
                .toUtf8());
    return path;
}

// Transformers-layout weights to start from: `sourcePlan` (an 8-step local plan) run with a
// checkpoint at its end into `dir`/init-ckpt and exported to `dir`/init-weights (returned), or ""
// with `error` saying what failed; `losses` gets the source run's losses (rank 3's).
inline QString trainAndExportWeights(const QString &db, const QString &sourcePlan, const QString &dir, std::map<int, double> &losses,
                                     QString &error)
{
    if (!setTrainingFields(sourcePlan, {{QStringLiteral("checkpoint"), QJsonObject{{QStringLiteral("every"), 8},
                                                                                   {QStringLiteral("dir"), dir + QStringLiteral("/init-ckpt")}}}})) {
        error = QStringLiteral("cannot rewrite ") + sourcePlan;
        return {};
    }
    const Result trained = cli({QStringLiteral("--db"), db, QStringLiteral("run"), sourcePlan, QStringLiteral("--quiet")});
    if (trained.code != 0) {
        error = trained.out + trained.err;
        return {};
    }
    losses = lossesOf(db, QStringLiteral("last"), 3);
    const QString weights = dir + QStringLiteral("/init-weights");
    const Result exported = cli({QStringLiteral("--db"), db, QStringLiteral("export-model"), QStringLiteral("last"), QStringLiteral("--out"), weights});
    if (exported.code != 0) {
        error = exported.out + exported.err;
        return {};
    }
    return weights;
}

} // namespace trellis::test
