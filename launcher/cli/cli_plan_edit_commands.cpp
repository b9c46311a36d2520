// trellis-cli plan new | set | get | diff: what the workbench's plan editor does, for scripts. Every
// value goes through plan::withPlanField, the path the editor's undo commands use, so a field set
// here is checked and stored exactly as one typed in the editor.
#include "launcher/cli/cli_support.h"
#include "backend/plan/plan_fields.h"
#include "backend/plan/plan_json.h"
#include "backend/plan/plan_validate.h"
#include "backend/plan/presets.h"

#include <QFileInfo>

namespace trellis::launcher::cli {
namespace {

QString joined(const std::vector<std::string> &names)
{
    QStringList out;
    for (const auto &n : names)
        out << QString::fromStdString(n);
    return out.join(QStringLiteral(", "));
}

// The plan's problems on stderr; returns whether it has errors.
bool reportProblems(const QString &path, const plan::Plan &p)
{
    const auto diagnostics = plan::validatePlan(p);
    for (const auto &d : diagnostics)
        err() << path << ": " << QString::fromStdString(d.toString()) << "\n";
    err().flush();
    return plan::hasErrors(diagnostics);
}

int writeOrPrint(const plan::Plan &p, const QString &outPath)
{
    if (outPath.isEmpty() || outPath == QLatin1String("-")) {
        out() << QString::fromStdString(plan::planToJson(p)) << Qt::endl;
        return 0;
    }
    if (auto saved = plan::savePlanFile(p, outPath.toStdString()); !saved)
        return fail(QString::fromStdString(saved.errorText()).trimmed());
    return 0;
}

int planNew(const Args &a)
{
    const QString model = a.options.value(QStringLiteral("--model"), QStringLiteral("tiny"));
    const QString cluster = a.options.value(QStringLiteral("--cluster"), QStringLiteral("cpu-local"));
    bool ok = true;
    const int nodes = a.options.contains(QStringLiteral("--nodes")) ? a.options[QStringLiteral("--nodes")].toInt(&ok) : 1;
    if (!ok || nodes < 1 || nodes > 100000)
        return usageError(QStringLiteral("--nodes needs a whole number from 1 to 100000"));
    if (!plan::modelPreset(model.toStdString()))
        return usageError(QStringLiteral("--model: unknown preset '%1' (known: %2)").arg(model, joined(plan::modelPresetNames())));
    if (!plan::clusterPreset(cluster.toStdString()))
        return usageError(
            QStringLiteral("--cluster: unknown preset '%1' (known: %2)").arg(cluster, joined(plan::clusterPresetNames())));
    if (a.positional.size() > 1)
        return usageError(QStringLiteral("plan new takes no file (use --out FILE)"));
    const QString name = a.options.value(QStringLiteral("--name"), QStringLiteral("new plan"));
    const auto p = plan::starterPlan(model.toStdString(), cluster.toStdString(), nodes, name.toStdString());
    return writeOrPrint(*p, a.options.value(QStringLiteral("--out")));
}

int planSet(const Args &a)
{
    if (a.positional.size() < 3)
        return usageError(QStringLiteral("plan set takes PLAN and one or more FIELD=VALUE"));
    const QString path = a.positional[1];
    auto loaded = plan::loadPlanFile(path.toStdString());
    if (!loaded) {
        for (const auto &e : loaded.errors())
            err() << path << ": " << QString::fromStdString(e.toString()) << "\n";
        err().flush();
        return 1;
    }
    plan::Plan p = loaded.value();
    const plan::Plan before = p;
    // All assignments or none: the file is written once, after the last one.
    for (int i = 2; i < a.positional.size(); ++i) {
        const QString &assignment = a.positional[i];
        const qsizetype eq = assignment.indexOf(QLatin1Char('='));
        if (eq <= 0)
            return usageError(QStringLiteral("'%1' is not FIELD=VALUE").arg(assignment));
        const auto next = plan::withPlanField(p, assignment.left(eq).toStdString(), assignment.mid(eq + 1).toStdString());
        if (!next) {
            for (const auto &e : next.errors())
                err() << "trellis-cli: " << QString::fromStdString(e.toString()) << "\n";
            err() << "trellis-cli: nothing written" << Qt::endl;
            return 1;
        }
        p = next.value();
    }
    for (const auto &d : plan::planDifferences(before, p))
        out() << QString::fromStdString(d.path + ": " + d.before + " → " + d.after) << "\n";
    out().flush();
    const QString target = a.options.value(QStringLiteral("--out"), path);
    const bool errors = reportProblems(target, p);
    if (errors && a.flags.contains(QStringLiteral("--check"))) {
        err() << "trellis-cli: the plan would not be valid; nothing written (--check)" << Qt::endl;
        return 1;
    }
    return writeOrPrint(p, target);
}

int planGet(const Args &a)
{
    if (a.positional.size() < 3)
        return usageError(QStringLiteral("plan get takes PLAN and one or more FIELD"));
    auto loaded = plan::loadPlanFile(a.positional[1].toStdString());
    if (!loaded)
        return fail(QString::fromStdString(loaded.errorText()).trimmed());
    int status = 0;
    for (int i = 2; i < a.positional.size(); ++i) {
        const auto value = plan::planField(loaded.value(), a.positional[i].toStdString());
        if (!value) {
            err() << "trellis-cli: " << QString::fromStdString(value.errorText()).trimmed() << "\n";
            status = 1;
            continue;
        }
        out() << (a.positional.size() > 3 ? a.positional[i] + QStringLiteral("=") : QString())
              << QString::fromStdString(value.value()) << "\n";
    }
    out().flush();
    err().flush();
    return status;
}

int planDiff(const Args &a)
{
    if (a.positional.size() != 3)
        return usageError(QStringLiteral("plan diff takes two plan files"));
    std::vector<plan::Plan> plans;
    for (int i = 1; i <= 2; ++i) {
        auto loaded = plan::loadPlanFile(a.positional[i].toStdString());
        if (!loaded)
            return fail(QString::fromStdString(loaded.errorText()).trimmed());
        plans.push_back(loaded.value());
    }
    const auto differences = plan::planDifferences(plans[0], plans[1]);
    for (const auto &d : differences)
        out() << QString::fromStdString(d.path + ": " + d.before + " → " + d.after) << "\n";
    out().flush();
    // As diff(1): 0 the same, 1 different, 2 trouble.
    return differences.empty() ? 0 : 1;
}

} // namespace

int cmdPlan(const QStringList &rest)
{
    const QString sub = rest.value(0);
    if (sub == QLatin1String("new")) {
        const Args a = parseArgs(rest, {QStringLiteral("--model"), QStringLiteral("--cluster"), QStringLiteral("--nodes"),
                                        QStringLiteral("--name"), QStringLiteral("--out")},
                                 {});
        return a.error.isEmpty() ? planNew(a) : usageError(a.error);
    }
    if (sub == QLatin1String("set")) {
        const Args a = parseArgs(rest, {QStringLiteral("--out")}, {QStringLiteral("--check")});
        return a.error.isEmpty() ? planSet(a) : usageError(a.error);
    }
    if (sub == QLatin1String("get")) {
        const Args a = parseArgs(rest, {}, {});
        return a.error.isEmpty() ? planGet(a) : usageError(a.error);
    }
    if (sub == QLatin1String("diff")) {
        const Args a = parseArgs(rest, {}, {});
        return a.error.isEmpty() ? planDiff(a) : usageError(a.error);
    }
    return usageError(sub.isEmpty() ? QStringLiteral("plan needs new, set, get or diff")
                                    : QStringLiteral("unknown plan command '%1' (new, set, get, diff)").arg(sub));
}

} // namespace trellis::launcher::cli
