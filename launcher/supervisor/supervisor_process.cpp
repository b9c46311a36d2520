// See supervisor_process.h.
#include "launcher/history_location.h"
#include "launcher/supervisor/supervisor_process.h"
#include "launcher/owner_only.h"

#include "launcher/registry/run_registry.h"
#include "backend/plan/plan_json.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QFile>
#include <QRegularExpression>
#include <QDir>
#include <QFileInfo>
#include <QProcess>

#include <csignal>

namespace trellis::launcher {

SupervisorStart startSupervisor(const plan::Plan &thePlan, const QString &planPath, const QString &databasePath,
                                const RunOptions &options)
{
    SupervisorStart s;
    const QString program = supervisorProgram();
    if (!QFileInfo(program).isExecutable()) {
        s.error = QStringLiteral("the run supervisor (trellis-cli) is not at %1").arg(program);
        return s;
    }
    s.runId = Supervisor::newRunId();
    const QString runsDir = historyLocalFolder(databasePath) + QStringLiteral("/runs/supervisors");
    if (!makeOwnerOnlyPath(runsDir)) {
        s.error = QStringLiteral("cannot create %1").arg(runsDir);
        return s;
    }
    s.planPath = runsDir + QLatin1Char('/') + s.runId + QStringLiteral(".plan.json");
    s.logPath = runsDir + QLatin1Char('/') + s.runId + QStringLiteral(".log");
    prepareOwnerOnlyFile(s.planPath);
    prepareOwnerOnlyFile(s.logPath); // the supervisor's output lands in it (QProcess keeps the mode)
    if (auto saved = plan::savePlanFile(Supervisor::withAbsolutePaths(thePlan, planPath), s.planPath.toStdString()); !saved) {
        s.error = QString::fromStdString(saved.errorText());
        return s;
    }
    QStringList args{program, QStringLiteral("--db"), historyIdentity(databasePath), QStringLiteral("run"),
                     s.planPath, QStringLiteral("--quiet"), QStringLiteral("--run-id"), s.runId};
    for (int i = 0; i + 1 < options.extraTrainerArgs.size(); ++i)
        if (options.extraTrainerArgs[i] == QLatin1String("--inject"))
            args << QStringLiteral("--inject") << options.extraTrainerArgs[i + 1];
    if (options.hangTimeoutS > 0)
        args << QStringLiteral("--hang-timeout") << QString::number(options.hangTimeoutS);
    if (options.hangConfirmS > 0)
        args << QStringLiteral("--hang-confirm") << QString::number(options.hangConfirmS);
    QProcess process;
    process.setProgram(QStringLiteral("/usr/bin/setsid"));
    process.setArguments(args);
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    if (!options.trainerPath.isEmpty())
        env.insert(QStringLiteral("TRELLIS_TRAINER"), options.trainerPath);
    process.setProcessEnvironment(env);
    process.setStandardInputFile(QProcess::nullDevice());
    process.setStandardOutputFile(s.logPath);
    process.setStandardErrorFile(s.logPath, QIODevice::Append);
    if (!process.startDetached(&s.pid))
        s.error = QStringLiteral("cannot start the run supervisor (setsid %1)").arg(program);
    return s;
}

SupervisorStart adoptOrphan(const QString &runId, const QString &databasePath)
{
    SupervisorStart s;
    s.runId = runId;
    const QString program = supervisorProgram();
    const QString runsDir = historyLocalFolder(databasePath) + QStringLiteral("/runs/supervisors");
    makeOwnerOnlyPath(runsDir);
    s.logPath = runsDir + QLatin1Char('/') + runId + QStringLiteral(".adopt.log");
    prepareOwnerOnlyFile(s.logPath);
    QProcess process;
    process.setProgram(QStringLiteral("/usr/bin/setsid"));
    process.setArguments({program, QStringLiteral("adopt"), runId, QStringLiteral("--quiet")});
    process.setStandardInputFile(QProcess::nullDevice());
    process.setStandardOutputFile(s.logPath);
    process.setStandardErrorFile(s.logPath, QIODevice::Append);
    if (!process.startDetached(&s.pid))
        s.error = QStringLiteral("cannot start a supervisor to adopt run %1 (setsid %2)").arg(runId, program);
    return s;
}

SupervisorStart startCollector(const QString &databasePath, const QString &bind)
{
    SupervisorStart s;
    const QString program = supervisorProgram();
    const QString runsDir = historyLocalFolder(databasePath) + QStringLiteral("/runs/supervisors");
    if (!makeOwnerOnlyPath(runsDir)) {
        s.error = QStringLiteral("cannot create %1").arg(runsDir);
        return s;
    }
    s.logPath = runsDir + QStringLiteral("/collector-%1.log").arg(QDateTime::currentDateTimeUtc().toString(QStringLiteral("yyyyMMdd-hhmmss")));
    prepareOwnerOnlyFile(s.logPath);
    QProcess process;
    process.setProgram(QStringLiteral("/usr/bin/setsid"));
    process.setArguments({program, QStringLiteral("--db"), historyIdentity(databasePath), QStringLiteral("collect"),
                          QStringLiteral("--bind"), bind});
    process.setStandardInputFile(QProcess::nullDevice());
    process.setStandardOutputFile(s.logPath);
    process.setStandardErrorFile(s.logPath, QIODevice::Append);
    if (!process.startDetached(&s.pid))
        s.error = QStringLiteral("cannot start the collector (setsid %1 collect)").arg(program);
    return s;
}

CollectorListening collectorListening(const QString &logPath)
{
    CollectorListening l;
    QFile log(logPath);
    if (!log.open(QIODevice::ReadOnly))
        return l;
    const QString text = QString::fromUtf8(log.read(65536));
    static const QRegularExpression give(QStringLiteral("TRELLIS_COLLECTOR=(\\S+) TRELLIS_COLLECTOR_KEYS=(\\S+)"));
    if (const auto m = give.match(text); m.hasMatch()) {
        l.address = m.captured(1);
        l.jobKeys = m.captured(2);
    } else if (const qsizetype at = text.indexOf(QStringLiteral("trellis-cli: ")); at >= 0) {
        l.error = text.mid(at + 13).section(QLatin1Char('\n'), 0, 0);
    }
    return l;
}

QString stopSupervisedRun(const QString &runId)
{
    const auto run = RunRegistry::find(runId);
    if (!run)
        return QStringLiteral("no supervisor owns run %1 now").arg(runId);
    if (run->watchedOnly)
        return QStringLiteral("run %1 is a job Trellis did not launch (its collector, pid %2, only watches it): stop it with "
                              "its own launcher (scancel, kill, torchrun)")
            .arg(runId)
            .arg(run->pid);
    if (::kill(static_cast<pid_t>(run->pid), SIGTERM) != 0)
        return QStringLiteral("cannot signal the supervisor of %1 (pid %2)").arg(runId).arg(run->pid);
    return {};
}

} // namespace trellis::launcher
