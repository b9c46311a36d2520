// Shared by trellis-cli's command files (cli_commands.cpp: the entry and help; cli_run_commands.cpp,
// cli_follow_commands.cpp: runs; cli_history_commands.cpp, cli_export_commands.cpp: the history;
// cli_plan_commands.cpp, cli_plan_edit_commands.cpp: plans; cli_target_commands.cpp: targets):
// output streams, errors with the usage text, option parsing and plan loading. Internal to the
// launcher.
#pragma once

#include "launcher/run_types.h"

#include "backend/plan/plan.h"

#include <QMap>
#include <QSet>
#include <QString>
#include <QStringList>
#include <QTextStream>

#include <cstdint>
#include <optional>

namespace trellis::launcher {
class HistoryDatabase;
}

namespace trellis::launcher::cli {

QTextStream &out();
QTextStream &err();
QString usageText();
// "trellis-cli: <message>" on stderr; returns 1.
int fail(const QString &message);
// The message and the usage on stderr; returns 2.
int usageError(const QString &message);
// run, simulate, adopt: the run completed but its history could not take all of it (said: what
// and why). 1 is a run that did not complete, 2 a usage error.
inline constexpr int kExitHistoryIncomplete = 3;

// Simple option parser: "--name value" pairs and flags; everything else positional.
struct Args {
    QStringList positional;
    QMap<QString, QString> options;
    QSet<QString> flags;
    QStringList trailing; // what follows a lone "--", as it is (run --command -- PROGRAM ARGS)
    QString error;
    bool historyGiven = false; // --db was given (it comes before a plan's telemetry.history)
};
Args parseArgs(const QStringList &in, const QSet<QString> &valued, const QSet<QString> &flags);

// Loads and validates a plan for a command; prints the problems and returns nullopt if invalid.
std::optional<plan::Plan> loadValidPlan(const QString &path, const QString &hostfile = {});

// Bytes as MiB with two decimals.
QString mb(std::uint64_t bytes);

// The plan commands (cli_plan_commands.cpp).
int cmdValidate(const Args &a);
int cmdEstimate(const Args &a, const QString &dbPath);
int cmdSearch(const Args &a);
int cmdConvert(const Args &a);
int cmdCalibrate(const Args &a, const QString &dbPath);
// plan new | set | get | diff (cli_plan_edit_commands.cpp); `rest` starts with the subcommand.
int cmdPlan(const QStringList &rest);

// The commands that supervise runs in this process (cli_run_commands.cpp).
int cmdRun(const Args &a, const QString &dbPath);
int cmdSimulate(const Args &a, const QString &dbPath);
int cmdAdopt(const Args &a, const QString &dbPath);
int cmdCollect(const Args &a, const QString &dbPath);
// The commands that follow or stop runs another process supervises (cli_follow_commands.cpp).
int cmdAttach(const Args &a, const QString &dbPath);
int cmdPs();
int cmdStop(const Args &a);
// cli_target_commands.cpp
int cmdPreflight(const Args &a);
// cli_history_commands.cpp
int cmdRuns(const Args &a, const QString &dbPath);
// history copy --from HISTORY --to HISTORY [RUN...]
int cmdHistory(const Args &a, const QString &dbPath);
int cmdExperts(const Args &a, const QString &dbPath);
int cmdCompare(const Args &a, const QString &dbPath);
int cmdReport(const Args &a, const QString &dbPath);
// cli_export_commands.cpp
int cmdExport(const Args &a, const QString &dbPath);
int cmdExportModel(const Args &a, const QString &dbPath);
int cmdTrace(const Args &a, const QString &dbPath);

// Shared by the commands (cli_commands.cpp): the history they read, the HTML report.
int openExisting(HistoryDatabase &db, const QString &dbPath);
// Opens an existing history and finds RUN (id, row number or "last"); prints why not otherwise.
std::optional<RunSummary> findExistingRun(HistoryDatabase &db, const QString &dbPath, const QString &reference);
QString writeReport(HistoryDatabase &db, const RunSummary &run, const QString &path);

} // namespace trellis::launcher::cli
