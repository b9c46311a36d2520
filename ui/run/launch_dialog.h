// The launch dialog for runs that leave this machine: pick the target (ssh, or local after all),
// watch the preflight of every host fill a table (with progress while it runs), accept an unknown
// host key after comparing its fingerprint, and launch only when every check passed. The preflight
// and key scans run on a worker thread; results come back as queued calls, so the GUI thread never
// waits on ssh.
#pragma once

#include "backend/plan/plan.h"

#include <QDialog>
#include <QDir>
#include <QString>
#include <QTemporaryDir>

class QComboBox;
class QLabel;
class QProgressBar;
class QPushButton;
class QTableWidget;

namespace trellis::launcher {
struct Preflight;
}

namespace trellis::ui {

class LaunchDialog : public QDialog {
    Q_OBJECT
public:
    // trainerPath: this machine's trellis-trainer (what the hosts must match).
    LaunchDialog(const plan::Plan &plan, const QString &trainerPath, QWidget *parent = nullptr);
    // The plan to launch, with the target picked here.
    const plan::Plan &plan() const { return m_plan; }

private:
    void runPreflight(const QString &acceptHost = {}, const QString &fingerprint = {});
    void showProgress(int done, int total);
    void showResult(const launcher::Preflight &result, const QString &acceptError);
    void acceptSelectedKey();
    void targetChanged();

    plan::Plan m_plan;
    QString m_trainerPath;
    // The preflight's scratch folder (its ssh config), private and removed with the dialog.
    QTemporaryDir m_scratch{QDir::tempPath() + QStringLiteral("/trellis-launch-XXXXXX")};
    QString m_workDir;
    int m_generation = 0; // results of an earlier preflight are ignored
    QComboBox *m_target = nullptr;
    QLabel *m_summary = nullptr;
    QProgressBar *m_progress = nullptr;
    QTableWidget *m_table = nullptr;
    QPushButton *m_launch = nullptr;
    QPushButton *m_again = nullptr;
    QPushButton *m_acceptKey = nullptr;
    QStringList m_keyHosts, m_keyPrints; // hosts whose key is unknown, and the fingerprint each shows
};

} // namespace trellis::ui
