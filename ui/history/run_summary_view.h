// History mode's right-hand pane for one selected run: its plan's headline, its figures, its note
// and tags, its newest events and a small loss curve. Filled from what the history reader sends
// for the run (its record and its dashboards' snapshot), never by reading the history here.
#pragma once

#include "launcher/metrics/dashboard_snapshot.h"
#include "launcher/run_types.h"

#include <QWidget>

#include <memory>

class QCustomPlot;
class QLabel;
class QListWidget;

namespace trellis::ui {

class RunSummaryView : public QWidget {
    Q_OBJECT
public:
    explicit RunSummaryView(QWidget *parent = nullptr);
    // The row the list shows for it (figures, tags) and, when it arrives, what the history holds.
    void showSummary(const launcher::RunSummary &run);
    void showRun(const launcher::RunData &run);
    void showSnapshot(const std::shared_ptr<const launcher::telemetry::DashboardSnapshot> &snapshot);
    void clear(const QString &hint);
    qint64 runId() const { return m_id; }
    QString headline() const;
    // Tags, note, who recorded it and where its files are, as shown under the figures.
    QString details() const;
    int eventCount() const;
    int lossPoints() const;

private:
    static QString hostLine(const launcher::RunSummary &r);
    qint64 m_id = 0;
    QString m_runId;
    QLabel *m_title, *m_headline, *m_figures, *m_note, *m_hint;
    QListWidget *m_events;
    QCustomPlot *m_loss;
    QWidget *m_body;
};

} // namespace trellis::ui
