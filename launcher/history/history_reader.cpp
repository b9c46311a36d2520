// See history_reader.h.
#include "launcher/history/history_reader.h"
#include "launcher/history/history_writer.h"
#include "launcher/history_location.h"

#include "launcher/document/calibration_file.h"

#include "launcher/metrics/dashboard_snapshot.h"

#include "launcher/history/history_database.h"
#include "launcher/report/html_report.h"
#include "launcher/history/history_digest.h"
#include "launcher/report/run_export.h"

#include <QFileInfo>
#include <QSqlDriver>

namespace trellis::launcher {

HistoryReader::HistoryReader(QString path) : m_path(std::move(path))
{
    qRegisterMetaType<RunSummary>();
    qRegisterMetaType<RunData>();
    qRegisterMetaType<QList<RunSummary>>();
    qRegisterMetaType<std::shared_ptr<const telemetry::DashboardSnapshot>>();
    qRegisterMetaType<Comparison>();
    qRegisterMetaType<telemetry::TimelineView>();
    qRegisterMetaType<QList<qint64>>();
    qRegisterMetaType<RunEdit>();
}

HistoryReader::~HistoryReader()
{
    if (m_thread.isRunning()) {
        // Close the connection on its own thread, then stop the thread.
        QMetaObject::invokeMethod(this, [this] { m_db.reset(); }, Qt::BlockingQueuedConnection);
        m_thread.quit();
        m_thread.wait();
    }
}

void HistoryReader::startThread()
{
    m_thread.setObjectName(QStringLiteral("history-reader"));
    moveToThread(&m_thread);
    m_thread.start();
}

bool HistoryReader::ensureOpen()
{
    if (m_db && m_db->isOpen())
        return true;
    const bool server = isServerHistory(m_path);
    if (!server && !QFileInfo::exists(m_path))
        return false; // nothing recorded yet: not an error
    m_db = std::make_unique<HistoryDatabase>();
    // A team's new database gets its tables from whoever comes first, this reader too.
    const QString error = m_db->open(m_path, server);
    if (!error.isEmpty()) {
        m_db.reset();
        emit failed(error);
        return false;
    }
    if (server) {
        // Another user's supervisor writing a run is heard here (HistoryWriter's NOTIFY), on this
        // thread: the driver's socket notifier lives where the connection was opened.
        QSqlDriver *driver = m_db->connection().driver();
        if (driver->subscribeToNotification(QString::fromLatin1(kHistoryChannel)))
            connect(driver, &QSqlDriver::notification, this,
                    [this](const QString &, QSqlDriver::NotificationSource, const QVariant &payload) { emit runWritten(payload.toString()); });
    }
    return true;
}

void HistoryReader::switchTo(const QString &path)
{
    m_db.reset();
    m_needFigures.clear();
    m_path = path;
    requestRuns();
}

void HistoryReader::requestRuns()
{
    if (!ensureOpen()) {
        emit runsReady({});
        emit recentRunsReady({});
        return;
    }
    const QList<RunSummary> runs = m_db->listRuns(m_filter, kListLimit);
    emit runsReady(runs);
    if (m_filter.isEmpty())
        emit recentRunsReady(runs.mid(0, 20));
    const bool idle = m_needFigures.isEmpty();
    m_needFigures.clear();
    for (const RunSummary &r : runs)
        if (HistoryDatabase::needsFigures(r))
            m_needFigures.append(r);
    if (idle && !m_needFigures.isEmpty())
        QMetaObject::invokeMethod(this, &HistoryReader::computeNextFigures, Qt::QueuedConnection);
}

// One run's figures a turn, so that a history of old runs gets its figures filled in without
// holding up the requests queued meanwhile.
void HistoryReader::computeNextFigures()
{
    if (m_needFigures.isEmpty() || !m_db)
        return;
    const RunSummary run = m_needFigures.takeFirst();
    const RunSummary done = m_db->withFigures(run);
    if (done.figuresStep != run.figuresStep)
        emit runFiguresReady(done);
    if (!m_needFigures.isEmpty())
        QMetaObject::invokeMethod(this, &HistoryReader::computeNextFigures, Qt::QueuedConnection);
}

void HistoryReader::setRunFilter(const QString &text)
{
    const RunFilterParse parsed = parseRunFilter(text);
    if (!parsed.error.isEmpty()) {
        emit filterFailed(parsed.error);
        return;
    }
    m_filter = parsed.filter;
    requestRuns();
}

void HistoryReader::editRuns(const QList<qint64> &ids, RunEdit edit, const QString &text)
{
    if (!ensureOpen()) {
        emit runsEdited(QString(), QStringLiteral("no history at %1").arg(m_path));
        return;
    }
    QStringList done, errors;
    for (const qint64 id : ids) {
        const std::optional<RunSummary> run = m_db->findRun(QString::number(id));
        if (!run) {
            errors << m_db->lastError();
            continue;
        }
        QString error;
        switch (edit) {
        case RunEdit::Tag: error = m_db->tagRun(id, text); break;
        case RunEdit::Untag: error = m_db->untagRun(id, text); break;
        case RunEdit::Note: error = m_db->setRunNote(id, text); break;
        case RunEdit::Rename: error = m_db->renameRun(id, text); break;
        case RunEdit::Archive: error = m_db->setRunArchived(id, true); break;
        case RunEdit::Unarchive: error = m_db->setRunArchived(id, false); break;
        case RunEdit::Delete: error = m_db->deleteRun(id); break;
        }
        if (error.isEmpty())
            done << run->runId;
        else
            errors << QStringLiteral("%1: %2").arg(run->runId, error);
    }
    static const char *const verbs[] = {"tagged", "untagged", "noted", "renamed", "archived", "unarchived", "deleted"};
    const QString message = done.isEmpty() ? QString()
                                           : QStringLiteral("%1 %2").arg(QLatin1String(verbs[static_cast<int>(edit)]), done.join(QStringLiteral(", ")));
    emit runsEdited(message, errors.join(QLatin1Char('\n')));
    requestRuns();
}

void HistoryReader::requestRun(qint64 id)
{
    if (!ensureOpen())
        return;
    if (auto data = m_db->loadRun(id, false)) {
        // The dashboards' view of it, built here rather than on the GUI thread, from the steps a
        // window at a time (a long run's rows are never all in memory); the run as shown carries
        // its newest step row alone.
        bool any = false;
        StepRow newest;
        const auto steps = [&](const std::function<void(const StepRow &)> &add) {
            m_db->forEachStepChunk(id, 0, [&](const QList<StepRow> &rows) {
                for (const StepRow &row : rows)
                    add(row);
                newest = rows.last();
                any = true;
            });
        };
        const auto collectives = [&](const std::function<void(const CollectiveRow &)> &add) {
            m_db->forEachCollectiveChunk(id, [&](const QList<CollectiveRow> &rows) {
                for (const CollectiveRow &row : rows)
                    add(row);
            });
        };
        const auto experts = [&](const std::function<void(const ExpertLoadRow &)> &add) {
            m_db->forEachExpertChunk(id, [&](const QList<ExpertLoadRow> &rows) {
                for (const ExpertLoadRow &row : rows)
                    add(row);
            });
        };
        auto snapshot = telemetry::snapshotOf(*data, {}, telemetry::Metric::StepMs, defaultCalibrationPath(m_path), experts, steps,
                                              collectives);
        if (any)
            data->steps = {newest};
        emit runReady(*data);
        emit runSnapshotReady(std::move(snapshot));
        requestTimeline(id);
    } else if (!m_db->findRun(QString::number(id))) {
        const QString message = QStringLiteral("run #%1 is no longer in %2").arg(id).arg(m_path);
        emit runMissing(message);
        emit failed(message);
    } else
        emit failed(m_db->lastError());
}

void HistoryReader::requestRunOf(const QString &reference)
{
    if (!ensureOpen())
        return;
    if (const auto summary = m_db->findRun(reference))
        requestRun(summary->id);
    else {
        emit runMissing(QStringLiteral("no run '%1' in %2").arg(reference, m_path));
        emit failed(QStringLiteral("no run '%1' in %2").arg(reference, m_path));
    }
}

void HistoryReader::requestReport(qint64 id, const QString &path)
{
    if (!ensureOpen()) {
        emit reportWritten(path, QStringLiteral("no run history at %1").arg(m_path));
        return;
    }
    // Read a window of steps at a time: a long run's every row would not fit.
    const auto data = m_db->loadRun(id, false);
    QString error;
    const auto digest = data ? digestFromHistory(*m_db, id, *data, &error) : std::nullopt;
    if (!digest) {
        emit reportWritten(path, data ? error : m_db->lastError());
        return;
    }
    emit reportWritten(path, writeFileAtomically(path, renderHtmlReport(*data, *digest, defaultCalibrationPath(m_path), {},
                                                                        m_db->spansOfLastTracedStep(id))
                                                           .toUtf8()));
}

void HistoryReader::requestComparison(const QList<qint64> &ids)
{
    if (!ensureOpen())
        return;
    QList<RunData> runs;
    QList<RunDigest> digests;
    for (qint64 id : ids) {
        auto data = m_db->loadRun(id, false);
        QString error;
        auto digest = data ? digestFromHistory(*m_db, id, *data, &error) : std::nullopt;
        if (!digest) {
            emit failed(data ? error : m_db->lastError());
            return;
        }
        runs << std::move(*data);
        digests << std::move(*digest);
    }
    emit comparisonReady(compareRuns(runs, digests));
}

void HistoryReader::requestComparisonOf(const QStringList &references)
{
    if (!ensureOpen())
        return;
    QList<qint64> ids;
    for (const QString &reference : references) {
        const auto summary = m_db->findRun(reference);
        if (!summary) {
            emit failed(QStringLiteral("no run '%1' in %2").arg(reference, m_path));
            return;
        }
        ids << summary->id;
    }
    requestComparison(ids);
}

void HistoryReader::requestTimeline(qint64 id)
{
    if (!ensureOpen())
        return;
    const auto data = m_db->loadRun(id, false);
    if (!data)
        return;
    const telemetry::Prediction p = telemetry::predictionFor(data->planJson, defaultCalibrationPath(m_path));
    emit timelineReady(telemetry::timelineOf(data->ranks, m_db->spansOfLastTracedStep(id), p.timeline, p.bubbleFraction));
}

void HistoryReader::requestTimelineOf(const QString &runId)
{
    if (!ensureOpen())
        return;
    if (const auto summary = m_db->findRun(runId))
        requestTimeline(summary->id);
}

} // namespace trellis::launcher
