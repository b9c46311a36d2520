// The page shown when nothing is open: a new plan for this machine, opening a plan file, the
// example plans with a line each, the recent plans and the recent runs of this history.
#pragma once

#include "launcher/run_types.h"

#include <QWidget>

class QListWidget;
class QListWidgetItem;

namespace trellis::ui::workspace {

class StartPage : public QWidget {
    Q_OBJECT
public:
    explicit StartPage(QWidget *parent = nullptr);

    // Example plans: every *.json under `directory` (and its subfolders), each with one line.
    void setExamplesDirectory(const QString &directory);
    void setRecentPlans(const QStringList &paths); // newest first; missing files are left out
    void setRecentRuns(const QList<launcher::RunSummary> &runs);

    QListWidget *examples() const { return m_examples; }
    QListWidget *recentPlans() const { return m_recentPlans; }
    QListWidget *recentRuns() const { return m_recentRuns; }
    // The one line an example plan gets: a sentence for the plans Trellis ships, else a summary.
    static QString describeExample(const QString &path);

signals:
    void newPlanRequested(); // a plan for this machine's cores
    void openPlanRequested(); // a file dialog
    void planChosen(const QString &path);
    void runChosen(const QString &runId);

private:
    QListWidget *m_examples;
    QListWidget *m_recentPlans;
    QListWidget *m_recentRuns;
};

} // namespace trellis::ui::workspace
