// The checkpoint suites' plans and runs (tst_checkpoint, tst_memory_checkpoints): a small GPT on
// the licenses corpus, 8 steps, a disk checkpoint every 3 steps, under a real mpirun.
#pragma once

#include "backend/protocol/memory_store_path.h"
#include "tests/support/trainer_runs.h"

#include <QFile>
#include <QString>
#include <QStringList>

namespace trellis::test {

inline const QString kTrainer = QStringLiteral(TRELLIS_BINARY_DIR "/bin/trellis-trainer");
inline const QString kCorpus = QStringLiteral(TRELLIS_SOURCE_DIR "/resources/corpus/licenses.txt");

using Run = TrainerRun;

inline QString writePlan(const QString &dir, const QString &name, int dp, int mbs, int zero, int hidden, const QString &ckpt,
                  const QString &extra = {}, int ranks = 0, const QString &checkpointExtra = {})
{
    const QString path = dir + QLatin1Char('/') + name + QStringLiteral(".json");
    QFile f(path);
    f.open(QIODevice::WriteOnly);
    f.write(QStringLiteral(R"({
      "schema": "trellis.plan/1",
      "model": {"layers": 2, "hidden": %5, "heads": 4, "ffn": 64, "seq_len": 32, "vocab": 256},
      "cluster": {"nodes": [{"host": "localhost", "slots": %7}]},
      "parallel": {"dp": %1, "micro_batch_size": %2, "zero": %3, "bucket_mb": 0.01 %8},
      "training": {"steps": 8, "lr": 0.003, "min_lr": 0.0003, "warmup_steps": 1, "seed": 11,
                   "data": {"source": "text", "path": "%4"},
                   "checkpoint": {"every": 3, "dir": "%6", "keep": 2 %9}}
    })")
                .arg(dp)
                .arg(mbs)
                .arg(zero)
                .arg(kCorpus)
                .arg(hidden)
                .arg(ckpt)
                .arg(ranks > 0 ? ranks : dp)
                .arg(extra)
                .arg(checkpointExtra)
                .toUtf8());
    return path;
}

// The memory store of the run whose checkpoint folder is `ckpt` (backend/protocol/memory_store_path.h).
inline QString memoryStoreOf(const QString &ckpt)
{
    return QStringLiteral("%1/%2").arg(QString::fromLatin1(trellis::proto::kMemoryStoreRoot),
                                       QString::fromStdString(trellis::proto::memoryStoreName(ckpt.toStdString())));
}

// In-memory checkpoints every step, the newest `keep` kept.
inline QString memoryEvery1(int keep = 2) { return QStringLiteral(R"(, "memory": {"every": 1, "keep": %1})").arg(keep); }

inline Run trainer(int ranks, const QStringList &args)
{
    return runTrainerProcess(ranks, QStringList{QStringLiteral("--quiet")} + args, 240000);
}

} // namespace trellis::test
