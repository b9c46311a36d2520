// See launch_dialog.h.
#include "ui/run/launch_dialog.h"

#include "launcher/targets/ssh_target.h"

#include <QComboBox>
#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QDir>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QMessageBox>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

#include <memory>
#include <thread>

namespace trellis::ui {

using launcher::PreflightCheck;

LaunchDialog::LaunchDialog(const plan::Plan &plan, const QString &trainerPath, QWidget *parent)
    : QDialog(parent), m_plan(plan), m_trainerPath(trainerPath)
{
    setWindowTitle(tr("Launch %1").arg(QString::fromStdString(plan.name)));
    m_workDir = m_scratch.path();
    auto *layout = new QVBoxLayout(this);
    auto *row = new QHBoxLayout;
    row->addWidget(new QLabel(tr("Target:"), this));
    m_target = new QComboBox(this);
    m_target->addItem(tr("SSH nodes of the plan"), QStringLiteral("ssh"));
    m_target->addItem(tr("Slurm cluster (a batch job)"), QStringLiteral("slurm"));
    m_target->addItem(tr("This machine"), QStringLiteral("local"));
    m_target->setCurrentIndex(m_target->findData(QString::fromUtf8(plan::toString(plan.launch.target))));
    row->addWidget(m_target, 1);
    layout->addLayout(row);
    m_summary = new QLabel(this);
    m_summary->setWordWrap(true);
    layout->addWidget(m_summary);
    m_progress = new QProgressBar(this);
    layout->addWidget(m_progress);
    m_table = new QTableWidget(0, 4, this);
    m_table->setHorizontalHeaderLabels({tr("Host"), tr("Check"), tr("Result"), tr("Detail")});
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->verticalHeader()->hide();
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setWordWrap(true);
    m_table->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    layout->addWidget(m_table, 1);
    auto *buttons = new QDialogButtonBox(this);
    m_launch = buttons->addButton(tr("Launch"), QDialogButtonBox::AcceptRole);
    m_again = buttons->addButton(tr("Check again"), QDialogButtonBox::ActionRole);
    m_acceptKey = buttons->addButton(tr("Accept host key…"), QDialogButtonBox::ActionRole);
    buttons->addButton(QDialogButtonBox::Cancel);
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_again, &QPushButton::clicked, this, [this] { runPreflight(); });
    connect(m_acceptKey, &QPushButton::clicked, this, &LaunchDialog::acceptSelectedKey);
    connect(m_target, &QComboBox::currentIndexChanged, this, &LaunchDialog::targetChanged);
    resize(860, 420);
    targetChanged();
}

void LaunchDialog::targetChanged()
{
    const QString target = m_target->currentData().toString();
    m_plan.launch.target = target == QLatin1String("ssh")     ? plan::LaunchTarget::Ssh
                           : target == QLatin1String("slurm") ? plan::LaunchTarget::Slurm
                                                              : plan::LaunchTarget::Local;
    runPreflight();
}

void LaunchDialog::runPreflight(const QString &acceptHost, const QString &fingerprint)
{
    const int generation = ++m_generation;
    m_launch->setEnabled(false);
    m_again->setEnabled(false);
    m_acceptKey->setEnabled(false);
    m_table->setRowCount(0);
    m_progress->setRange(0, 0); // busy until the first host answers
    m_summary->setText(m_plan.launch.target == plan::LaunchTarget::Slurm ? tr("Asking the Slurm cluster…") : tr("Checking the hosts…"));
    launcher::TargetOptions options;
    options.trainerPath = m_trainerPath;
    options.workDir = m_workDir;
    QPointer<LaunchDialog> self(this);
    std::thread([self, generation, plan = m_plan, options, acceptHost, fingerprint] {
        QString error;
        std::unique_ptr<launcher::LaunchTarget> target = launcher::makeLaunchTarget(plan, options, error);
        launcher::Preflight result;
        QString acceptError;
        if (!target) {
            result.checks.push_back({{}, QStringLiteral("target"), PreflightCheck::Status::Failed, error});
        } else {
            if (!acceptHost.isEmpty())
                if (auto *ssh = dynamic_cast<launcher::SshTarget *>(target.get()))
                    acceptError = ssh->acceptHostKey(acceptHost, fingerprint, nullptr);
            result = target->preflight([self, generation](int done, int total) {
                QMetaObject::invokeMethod(QCoreApplication::instance(), [self, generation, done, total] {
                    if (self && self->m_generation == generation)
                        self->showProgress(done, total);
                });
            });
        }
        QMetaObject::invokeMethod(QCoreApplication::instance(), [self, generation, result, acceptError] {
            if (self && self->m_generation == generation)
                self->showResult(result, acceptError);
        });
    }).detach();
}

void LaunchDialog::showProgress(int done, int total)
{
    m_progress->setRange(0, total);
    m_progress->setValue(done);
    m_summary->setText(m_plan.launch.target == plan::LaunchTarget::Slurm ? tr("Checked %1 of %2…").arg(done).arg(total)
                                                                         : tr("Checked %1 of %2 hosts…").arg(done).arg(total));
}

void LaunchDialog::showResult(const launcher::Preflight &result, const QString &acceptError)
{
    m_progress->setRange(0, 1);
    m_progress->setValue(1);
    m_table->setRowCount(0);
    m_keyHosts.clear();
    m_keyPrints.clear();
    for (const PreflightCheck &c : result.checks) {
        const int row = m_table->rowCount();
        m_table->insertRow(row);
        const QString status = c.status == PreflightCheck::Status::Ok        ? tr("ok")
                               : c.status == PreflightCheck::Status::Warning ? tr("warning")
                                                                             : tr("FAILED");
        const QString detail = c.fix.isEmpty() || c.status == PreflightCheck::Status::Ok ? c.detail : tr("%1 — fix: %2").arg(c.detail, c.fix);
        const QStringList cells{c.host.isEmpty() ? tr("(this machine)") : c.host, c.check, status, detail};
        for (int col = 0; col < cells.size(); ++col) {
            auto *item = new QTableWidgetItem(cells[col]);
            item->setToolTip(detail);
            if (c.status == PreflightCheck::Status::Failed)
                item->setForeground(QColor(0xc0, 0x20, 0x20));
            else if (c.status == PreflightCheck::Status::Warning)
                item->setForeground(QColor(0xb0, 0x70, 0x00));
            m_table->setItem(row, col, item);
        }
        if (!c.fingerprint.isEmpty()) {
            m_keyHosts << c.host;
            m_keyPrints << c.fingerprint;
        }
    }
    for (int col = 0; col < 3; ++col) // the detail column takes the rest and wraps
        m_table->resizeColumnToContents(col);
    m_table->resizeRowsToContents();
    const bool passed = result.passed();
    m_summary->setText((acceptError.isEmpty() ? QString() : tr("The key was not accepted: %1").arg(acceptError) + QLatin1Char('\n')) +
                       (passed ? tr("Every check passed: the run can start.")
                               : tr("A check failed: nothing will start until it is fixed (each row says how).")));
    m_launch->setEnabled(passed);
    m_again->setEnabled(true);
    m_acceptKey->setEnabled(!m_keyHosts.isEmpty());
}

void LaunchDialog::acceptSelectedKey()
{
    if (m_keyHosts.isEmpty())
        return;
    int index = 0;
    const int row = m_table->currentRow();
    if (row >= 0 && m_table->item(row, 0))
        index = std::max<qsizetype>(0, m_keyHosts.indexOf(m_table->item(row, 0)->text()));
    const QString host = m_keyHosts[index], print = m_keyPrints[index];
    const auto answer = QMessageBox::question(
        this, tr("Accept host key"),
        tr("%1 shows the key %2.\n\nCompare it with the host's own key (ssh-keygen -lf /etc/ssh/ssh_host_ed25519_key.pub on "
           "that host) before accepting: a key you did not check could belong to someone in between.\n\nAdd it to the known hosts?")
            .arg(host, print));
    if (answer == QMessageBox::Yes)
        runPreflight(host, print);
}

} // namespace trellis::ui
