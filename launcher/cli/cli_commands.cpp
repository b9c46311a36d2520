// See cli_commands.h: the table of trellis-cli's commands, their options and the dispatch; the
// commands themselves are in cli_*_commands.cpp.
#include "launcher/cli/cli_commands.h"

#include "launcher/cli/cli_support.h"
#include "launcher/history/history_database.h"
#include "launcher/job/job_keeper.h"
#include "launcher/simulator/simulator.h"
#include "launcher/targets/slurm_target.h"

#include <QCoreApplication>
#include <QSet>
#include <QTextStream>

#include <optional>
#include <vector>

namespace trellis::launcher {

using namespace cli;

namespace {

// A subcommand that takes parsed arguments: the options that take a value, the flags, and what
// runs it (with the history database's path).
struct Subcommand {
    QString name;
    QSet<QString> valued;
    QSet<QString> flags;
    int (*handler)(const Args &a, const QString &dbPath);
};

const std::vector<Subcommand> &subcommands()
{
    static const std::vector<Subcommand> table = {
        {QStringLiteral("validate"), {}, {}, [](const Args &a, const QString &) { return cmdValidate(a); }},
        {QStringLiteral("estimate"), {QStringLiteral("--calibration")}, {QStringLiteral("--json"), QStringLiteral("--no-calibrate")}, cmdEstimate},
        {QStringLiteral("convert"), {QStringLiteral("--to"), QStringLiteral("--from"), QStringLiteral("--base"), QStringLiteral("--out")}, {},
         [](const Args &a, const QString &) { return cmdConvert(a); }},
        {QStringLiteral("calibrate"), {QStringLiteral("--ranks"), QStringLiteral("--out")}, {}, cmdCalibrate},
        {QStringLiteral("search"),
         {QStringLiteral("--model"), QStringLiteral("--cluster"), QStringLiteral("--nodes"), QStringLiteral("--global-batch"),
          QStringLiteral("--top")},
         {QStringLiteral("--exhaustive")},
         [](const Args &a, const QString &) { return cmdSearch(a); }},
        {QStringLiteral("run"),
         {QStringLiteral("--report"), QStringLiteral("--inject"), QStringLiteral("--hang-timeout"), QStringLiteral("--hang-confirm"), QStringLiteral("--metrics-port"),
          QStringLiteral("--run-id"), QStringLiteral("--hostfile"), QStringLiteral("--ranks"), QStringLiteral("--name"),
          QStringLiteral("--max-restarts")},
         {QStringLiteral("--quiet"), QStringLiteral("--detach"), QStringLiteral("--command")},
         cmdRun},
        {QStringLiteral("preflight"), {QStringLiteral("--accept-host-key"), QStringLiteral("--hostfile")}, {QStringLiteral("--json")},
         [](const Args &a, const QString &) { return cmdPreflight(a); }},
        {QStringLiteral("attach"), {}, {}, cmdAttach},
        {QStringLiteral("simulate"),
         {QStringLiteral("--ranks"), QStringLiteral("--hz"), QStringLiteral("--seconds"), QStringLiteral("--pp"), QStringLiteral("--slow"),
          QStringLiteral("--silent"), QStringLiteral("--crash"), QStringLiteral("--relays"), QStringLiteral("--nice"), QStringLiteral("--run-id"), QStringLiteral("--metrics-port"),
          QStringLiteral("--hang-timeout"), QStringLiteral("--hang-confirm")},
         {QStringLiteral("--quiet"), QStringLiteral("--detach")},
         cmdSimulate},
        {QStringLiteral("adopt"), {QStringLiteral("--metrics-port"), QStringLiteral("--hang-timeout"), QStringLiteral("--hang-confirm")}, {QStringLiteral("--quiet")}, cmdAdopt},
        {QStringLiteral("collect"),
         {QStringLiteral("--bind"), QStringLiteral("--keys"), QStringLiteral("--advertise"), QStringLiteral("--hang-timeout"), QStringLiteral("--hang-confirm")},
         {QStringLiteral("--quiet")},
         cmdCollect},
        {QStringLiteral("compare"), {QStringLiteral("--report")}, {}, cmdCompare},
        {QStringLiteral("ps"), {}, {},
         [](const Args &a, const QString &) { return a.positional.isEmpty() ? cmdPs() : usageError(QStringLiteral("ps takes no arguments")); }},
        {QStringLiteral("stop"), {}, {}, [](const Args &a, const QString &) { return cmdStop(a); }},
        {QStringLiteral("runs"), {QStringLiteral("--limit"), QStringLiteral("--filter")}, {QStringLiteral("--yes")}, cmdRuns},
        {QStringLiteral("history"), {QStringLiteral("--from"), QStringLiteral("--to")}, {}, cmdHistory},
        {QStringLiteral("export"), {QStringLiteral("--format"), QStringLiteral("--table"), QStringLiteral("--out")}, {}, cmdExport},
        {QStringLiteral("export-model"), {QStringLiteral("--out"), QStringLiteral("--dtype")}, {}, cmdExportModel},
        {QStringLiteral("experts"), {QStringLiteral("--step")}, {QStringLiteral("--json")}, cmdExperts},
        {QStringLiteral("report"), {QStringLiteral("--out")}, {}, cmdReport},
        {QStringLiteral("trace"), {QStringLiteral("--out")}, {}, cmdTrace},
    };
    return table;
}

// The options before the command (--db, --help, --version), taken off the front of `rest`.
// Returns the exit code when the process is done already; nothing when a command should follow.
std::optional<int> takeGlobalOptions(QStringList &rest, QString &dbPath, bool &dbGiven)
{
    while (!rest.isEmpty() && rest.first().startsWith(QLatin1String("--"))) {
        const QString option = rest.takeFirst();
        if (option == QLatin1String("--db")) {
            if (rest.isEmpty())
                return usageError(QStringLiteral("--db needs a path or a postgresql:// connection string"));
            dbPath = rest.takeFirst();
            dbGiven = true;
        } else if (option == QLatin1String("--help") || option == QLatin1String("-h")) {
            out() << usageText() << Qt::flush;
            return 0;
        } else if (option == QLatin1String("--version")) {
            out() << "trellis-cli " << QCoreApplication::applicationVersion() << Qt::endl;
            return 0;
        } else {
            return usageError(QStringLiteral("unknown option %1").arg(option));
        }
    }
    return std::nullopt;
}

bool isHelpAlone(const QStringList &rest)
{
    return rest.size() == 1 && (rest[0] == QLatin1String("--help") || rest[0] == QLatin1String("-h"));
}

// `trellis-cli COMMAND --help`: the command's own lines of the usage.
int printCommandHelp(const QString &command)
{
    const QStringList lines = usageText().split(QLatin1Char('\n'));
    bool inCommand = false;
    QStringList mine;
    for (const QString &line : lines) {
        if (line.startsWith(QStringLiteral("  ") + command + QLatin1Char(' ')) || line == QStringLiteral("  ") + command)
            inCommand = true;
        else if (line.startsWith(QStringLiteral("  ")) && !line.startsWith(QStringLiteral("    ")))
            inCommand = false;
        else if (!line.startsWith(QStringLiteral("    ")))
            inCommand = false;
        if (inCommand)
            mine << line;
    }
    if (mine.isEmpty())
        return usageError(QStringLiteral("unknown command '%1'").arg(command));
    out() << "usage: trellis-cli [--db PATH]\n" << mine.join(QLatin1Char('\n')) << "\n" << Qt::flush;
    return 0;
}

} // namespace

int runCli(const QStringList &arguments)
{
    QStringList rest = arguments;
    QString dbPath = HistoryDatabase::defaultPath();
    bool dbGiven = false;
    if (const std::optional<int> code = takeGlobalOptions(rest, dbPath, dbGiven))
        return *code;
    if (rest.isEmpty())
        return usageError(QStringLiteral("no command given"));
    const QString command = rest.takeFirst();
    // The keeper's arguments after "--" are the job's own: never read as ours.
    if (command == QLatin1String("job-keeper") && !isHelpAlone(rest))
        return runJobKeeper(rest);
    if (command == QLatin1String("slurm-job"))
        return runSlurmJob(rest); // its own --help
    if (command == QLatin1String("simulate-ranks") && !isHelpAlone(rest))
        return simulator::simulateRanks(rest);
    // What follows a lone "--" is a command's own (run --command -- python3 train.py --help).
    const QStringList own = rest.indexOf(QStringLiteral("--")) >= 0 ? rest.mid(0, rest.indexOf(QStringLiteral("--"))) : rest;
    if (own.contains(QStringLiteral("--help")) || own.contains(QStringLiteral("-h")))
        return printCommandHelp(command);
    if (command == QLatin1String("plan"))
        return cmdPlan(rest);
    for (const Subcommand &sub : subcommands())
        if (command == sub.name) {
            Args a = parseArgs(rest, sub.valued, sub.flags);
            a.historyGiven = dbGiven;
            return a.error.isEmpty() ? sub.handler(a, dbPath) : usageError(a.error);
        }
    return usageError(QStringLiteral("unknown command '%1'").arg(command));
}

} // namespace trellis::launcher
