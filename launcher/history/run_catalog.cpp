// HistoryDatabase: what people add to a run (name, note, tags, archived), deleting a run with its
// folder, and the figures the runs list shows, computed once a run ended and kept (schema 14).
#include "launcher/history_location.h"
#include "launcher/history/history_database.h"

#include "launcher/history/history_digest.h"
#include "launcher/history/history_engine.h"
#include "launcher/history/run_files.h"
#include "launcher/metrics/dashboard_snapshot.h"
#include "launcher/statistics.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <QSqlError>
#include <QSqlQuery>
#include <QSysInfo>

namespace trellis::launcher {
namespace {

bool stillGoing(const QString &status)
{
    return status == toString(RunState::Launching) || status == toString(RunState::Running);
}

// Why an edit changed no row: the run is gone, or — on a server — a row-level security policy
// keeps it to its owner (docs/history.md: PostgreSQL changes no row then, and says nothing).
// `what` says what did not happen to it ("was not changed", "was not deleted", …).
QString notChanged(HistoryDatabase &db, qint64 id, const QString &path, const QString &what = QStringLiteral("was not changed"))
{
    const std::optional<RunSummary> run = db.findRun(QString::number(id));
    if (!run)
        return QStringLiteral("no run #%1 in %2").arg(id).arg(path);
    QString role = QStringLiteral("this role");
    if (QSqlQuery q(db.connection()); q.exec(QStringLiteral("SELECT ") + sqlOwner(db.engine())) && q.next())
        role = q.value(0).toString();
    return QStringLiteral("run %1 %2: the server let %3 change none of it (a row-level security policy keeps a run "
                          "to its owner, and this one is %4's)")
        .arg(run->runId, what, role, run->owner.isEmpty() ? QStringLiteral("no one") : run->owner);
}

// The server's refusal of a new row (a tag) by a row-level security policy, said as a person reads it.
QString refused(const QString &serverText, const QString &what)
{
    if (!serverText.contains(QLatin1String("row-level security")))
        return serverText;
    return QStringLiteral("%1 refused: a row-level security policy keeps a run to its owner (%2)").arg(what, serverText.trimmed());
}

} // namespace

QString HistoryDatabase::renameRun(qint64 id, const QString &name)
{
    if (const QString why = checkRunName(name); !why.isEmpty())
        return why;
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("UPDATE runs SET name = ? WHERE id = ?"));
    q.addBindValue(name.trimmed());
    q.addBindValue(id);
    if (!q.exec())
        return q.lastError().text();
    return q.numRowsAffected() == 1 ? QString() : notChanged(*this, id, m_path);
}

QString HistoryDatabase::setRunNote(qint64 id, const QString &note)
{
    if (const QString why = checkNote(note); !why.isEmpty())
        return why;
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("UPDATE runs SET note = ? WHERE id = ?"));
    q.addBindValue(note.isEmpty() ? QVariant() : QVariant(note));
    q.addBindValue(id);
    if (!q.exec())
        return q.lastError().text();
    return q.numRowsAffected() == 1 ? QString() : notChanged(*this, id, m_path);
}

QString HistoryDatabase::tagRun(qint64 id, const QString &tag)
{
    if (const QString why = checkTag(tag); !why.isEmpty())
        return why;
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("SELECT count(*) FROM run_tags WHERE run = ?"));
    q.addBindValue(id);
    if (q.exec() && q.next() && q.value(0).toInt() >= 64)
        return QStringLiteral("a run holds at most 64 tags");
    q.prepare(QStringLiteral("INSERT INTO run_tags(run, tag) SELECT id, ? FROM runs WHERE id = ? ON CONFLICT DO NOTHING"));
    q.addBindValue(tag);
    q.addBindValue(id);
    if (!q.exec())
        return refused(q.lastError().text(), QStringLiteral("tag '%1'").arg(tag));
    return findRun(QString::number(id)) ? QString() : m_lastError;
}

QString HistoryDatabase::untagRun(qint64 id, const QString &tag)
{
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("DELETE FROM run_tags WHERE run = ? AND tag = ?"));
    q.addBindValue(id);
    q.addBindValue(tag);
    if (!q.exec())
        return q.lastError().text();
    if (q.numRowsAffected() == 1)
        return {};
    q.prepare(QStringLiteral("SELECT 1 FROM run_tags WHERE run = ? AND tag = ?"));
    q.addBindValue(id);
    q.addBindValue(tag);
    return q.exec() && q.next() ? notChanged(*this, id, m_path) : QStringLiteral("run #%1 has no tag '%2'").arg(id).arg(tag);
}

QString HistoryDatabase::setRunArchived(qint64 id, bool archived)
{
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("UPDATE runs SET archived = ? WHERE id = ?"));
    q.addBindValue(archived ? 1 : 0);
    q.addBindValue(id);
    if (!q.exec())
        return q.lastError().text();
    return q.numRowsAffected() == 1 ? QString() : notChanged(*this, id, m_path);
}

QString HistoryDatabase::mayChangeRun(qint64 id)
{
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("UPDATE runs SET launcher_pid = launcher_pid WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec())
        return q.lastError().text();
    return q.numRowsAffected() == 1 ? QString() : notChanged(*this, id, m_path, QStringLiteral("cannot be recorded"));
}

QStringList runFilesFor(const QString &databasePath, const QString &runId)
{
    // Run ids are letters, digits, '.', '_', '-' (the registry's rule); anything else names no file.
    static const QRegularExpression safe(QStringLiteral("^[A-Za-z0-9._-]{1,64}$"));
    if (!safe.match(runId).hasMatch() || runId == QLatin1String(".") || runId == QLatin1String(".."))
        return {};
    const QString runs = historyLocalFolder(databasePath) + QStringLiteral("/runs/");
    QStringList files;
    if (const QFileInfo folder(runs + runId); folder.isDir() && !folder.isSymLink())
        files << folder.absoluteFilePath();
    for (const char *kept : {"supervisors", "simulated", "commands"}) {
        const QDir dir(runs + QLatin1String(kept));
        for (const QFileInfo &f : dir.entryInfoList({runId + QStringLiteral(".*")}, QDir::Files | QDir::Hidden))
            files << f.absoluteFilePath();
    }
    return files;
}

QString HistoryDatabase::deleteRun(qint64 id, QStringList *removed)
{
    const std::optional<RunSummary> run = findRun(QString::number(id));
    if (!run)
        return m_lastError;
    if (stillGoing(run->status))
        return QStringLiteral("run %1 is still %2: stop it first (trellis-cli stop %1)").arg(run->runId, run->status);
    // A server's run keeps its files on the machine that launched it: only there are they removed.
    const bool filesHere = m_engine == HistoryEngine::Sqlite || run->launcherHost == QSysInfo::machineHostName();
    const QStringList files = filesHere ? runFilesFor(m_path, run->runId) : QStringList();
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("DELETE FROM runs WHERE id = ?"));
    q.addBindValue(id);
    if (!q.exec())
        return QStringLiteral("cannot delete run %1 (%2)").arg(run->runId, q.lastError().text());
    if (q.numRowsAffected() != 1) // a row-level security policy: nothing deleted, so no file either
        return notChanged(*this, id, m_path, QStringLiteral("was not deleted"));
    // The rows are gone; the files go after them, so a failure here leaves files, never rows that
    // point at missing files.
    QStringList left;
    for (const QString &f : files) {
        const bool gone = QFileInfo(f).isDir() ? QDir(f).removeRecursively() : QFile::remove(f);
        if (!gone)
            left << f;
        else if (removed)
            *removed << f;
    }
    if (!left.isEmpty())
        return QStringLiteral("run %1's rows are deleted, but these could not be removed: %2").arg(run->runId, left.join(QStringLiteral(", ")));
    return {};
}

bool HistoryDatabase::needsFigures(const RunSummary &run)
{
    return !stillGoing(run.status) && run.stepsDone > 0 && run.figuresStep < run.stepsDone;
}

RunSummary HistoryDatabase::withFigures(const RunSummary &run)
{
    if (!needsFigures(run))
        return run;
    const std::optional<RunData> meta = loadRun(run.id, false);
    if (!meta)
        return run;
    QString error;
    const std::optional<RunDigest> digest = digestFromHistory(*this, run.id, *meta, &error);
    if (!digest)
        return run;
    // The job's tokens/s at each step; the first step (warm-up, allocation) is left out when there
    // are more.
    std::vector<double> tokens;
    for (const DigestStep &s : digest->steps())
        if (s.tokensPerS > 0)
            tokens.push_back(s.tokensPerS);
    if (tokens.size() > 2)
        tokens.erase(tokens.begin());
    RunSummary out = run;
    out.tokensPerS = tokens.empty() ? -1 : median(tokens);
    out.mfu = -1;
    if (out.tokensPerS > 0) {
        const telemetry::Prediction p = telemetry::predictionFor(meta->planJson, QString());
        const double peak = p.peakFlopsPerDevice * std::max(1, p.devices);
        if (p.known && p.tokensPerStep > 0 && peak > 0)
            out.mfu = out.tokensPerS * (p.modelFlopsPerStep / p.tokensPerStep) / peak;
    }
    out.figuresStep = run.stepsDone;
    QSqlQuery q(m_db);
    q.prepare(QStringLiteral("UPDATE runs SET tokens_per_s = ?, mfu = ?, figures_step = ? WHERE id = ?"));
    q.addBindValue(out.tokensPerS > 0 ? QVariant(out.tokensPerS) : QVariant());
    q.addBindValue(out.mfu >= 0 ? QVariant(out.mfu) : QVariant());
    q.addBindValue(out.figuresStep);
    q.addBindValue(run.id);
    q.exec(); // a read-only or busy history still shows the figures; they are computed again next time
    return out;
}

} // namespace trellis::launcher
