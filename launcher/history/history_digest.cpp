// See history_digest.h.
#include "launcher/history/history_digest.h"

namespace trellis::launcher {

std::optional<RunDigest> digestFromHistory(HistoryDatabase &db, qint64 id, const RunData &meta, QString *error, qint64 rowsPerChunk)
{
    RunDigest d(meta);
    const bool ok = db.forEachStepChunk(id, 0, [&](const QList<StepRow> &chunk) { d.addSteps(chunk); }, rowsPerChunk) &&
                    db.forEachCollectiveChunk(id, [&](const QList<CollectiveRow> &chunk) { d.addCollectives(chunk); }, rowsPerChunk);
    if (!ok) {
        if (error)
            *error = db.lastError();
        return std::nullopt;
    }
    return d;
}

} // namespace trellis::launcher
