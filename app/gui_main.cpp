// trellis: the workbench. Composition root only: application settings, the theme, the main
// window, the plan to open (an argument; without one the start page shows).
#include "launcher/history/history_database.h"
#include "launcher/registry/run_registry.h"
#include "ui/workspace/language.h"
#include "ui/workspace/main_window.h"
#include "ui/workspace/theme.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QFileInfo>
#include <QSettings>

int main(int argc, char **argv)
{
    // --help and --version need no display: answer them without one.
    for (int i = 1; i < argc; ++i) {
        const QByteArray a(argv[i]);
        if ((a == "--help" || a == "-h" || a == "--help-all" || a == "--version" || a == "-v") && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM"))
            qputenv("QT_QPA_PLATFORM", "offscreen");
    }
    QApplication app(argc, argv);
    trellis::launcher::HistoryDatabase::setRunLiveness(trellis::launcher::RunRegistry::liveness());
    QApplication::setApplicationName(QStringLiteral("trellis"));
    QApplication::setApplicationVersion(QStringLiteral(TRELLIS_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Trellis workbench: plan, launch and watch distributed training."));
    parser.addHelpOption();
    parser.addVersionOption();
    // The history: --db, else $TRELLIS_HISTORY, else the one chosen in File > Run history, else the file.
    const QString chosen = QSettings().value(QStringLiteral("history/database")).toString();
    QCommandLineOption db(QStringLiteral("db"),
                          QStringLiteral("Run history: a file, or a team's PostgreSQL database as postgresql://USER@HOST/DBNAME "
                                         "(docs/history.md). Default: $TRELLIS_HISTORY, else File > Run history's, else the file; a plan "
                                         "naming its own (telemetry.history) switches to it when launched, unless --db is given."),
                          QStringLiteral("path"),
                          qEnvironmentVariableIsEmpty("TRELLIS_HISTORY") && !chosen.isEmpty()
                              ? chosen
                              : trellis::launcher::HistoryDatabase::defaultPath());
    QCommandLineOption launch(QStringLiteral("launch"), QStringLiteral("Launch the plan right away."));
    QCommandLineOption search(QStringLiteral("search"), QStringLiteral("Search for faster plans right away (Estimate tab)."));
    QCommandLineOption panel(QStringLiteral("panel"),
                             QStringLiteral("Bring a panel to the front: editor, mesh, plan, estimate (or one of its tabs: "
                                            "estimate.memory, .timeline, .collectives, .compare, .search), summary; the dashboards "
                                            "training, throughput, breakdown, heatmap, timeline, communication, memory, experts, health, events "
                                            "(or one of a chart's views: training.loss, .grad_norm, .lr, .loss_scale, .dp — the dp "
                                            "traffic —, throughput.flops)."),
                             QStringLiteral("id"));
    QCommandLineOption run(QStringLiteral("run"), QStringLiteral("Show a recorded run: its id, its row number or 'last' (with --mode history: selected in the runs table)."),
                           QStringLiteral("run"));
    QCommandLineOption compare(QStringLiteral("compare"), QStringLiteral("Compare recorded runs: RUN,RUN[,...]."),
                               QStringLiteral("runs"));
    QCommandLineOption language(QStringLiteral("language"),
                                QStringLiteral("Language of the workbench for this run: en, de or zh_CN (default: Settings › "
                                               "Language, else the system's)."),
                                QStringLiteral("code"));
    QCommandLineOption theme(QStringLiteral("theme"),
                             QStringLiteral("Palette for this run: light, dark or system (default: View › Theme)."),
                             QStringLiteral("name"));
    QCommandLineOption mode(QStringLiteral("mode"), QStringLiteral("Open in a mode: start, plan, run or history."),
                            QStringLiteral("mode"));
    QCommandLineOption listen(QStringLiteral("listen"),
                              QStringLiteral("Listen for jobs Trellis did not launch at this address (tcp://HOST:PORT), as "
                                             "Run › Listen for jobs does."),
                              QStringLiteral("address"));
    parser.addOption(theme);
    parser.addOption(mode);
    parser.addOption(language);
    parser.addOption(db);
    parser.addOption(run);
    parser.addOption(compare);
    parser.addOption(launch);
    parser.addOption(search);
    parser.addOption(panel);
    parser.addOption(listen);
    parser.addPositionalArgument(QStringLiteral("plan"), QStringLiteral("Plan file to open."));
    parser.process(app);
    // UI strings: translations/trellis_<code>.ts, built in under :/i18n (ui/workspace/language.h).
    trellis::ui::installTranslations(parser.isSet(language) ? parser.value(language) : trellis::ui::languageSetting());

    trellis::ui::workspace::applyTheme(parser.isSet(theme) ? parser.value(theme) : trellis::ui::workspace::themeSetting());

    const QString planPath = parser.positionalArguments().value(0);
    trellis::ui::MainWindow window(parser.value(db));
    window.setHistoryPinned(parser.isSet(db)); // --db comes before a plan's telemetry.history
    window.setExamplesDirectory(QStringLiteral(TRELLIS_RESOURCE_DIR "/plans"));
    if (!planPath.isEmpty() && !QFileInfo::exists(planPath))
        qWarning("no plan file '%s'", qPrintable(planPath));
    const bool loaded = !planPath.isEmpty() && QFileInfo::exists(planPath) && window.loadPlan(planPath);
    window.show();
    if (loaded && parser.isSet(search))
        window.searchPlans();
    if (loaded && parser.isSet(launch))
        window.launch();
    if (parser.isSet(run) && parser.value(mode) == QLatin1String("history"))
        window.selectInHistory(parser.value(run)); // its summary beside the runs table
    else if (parser.isSet(run))
        window.openRun(parser.value(run));
    if (parser.isSet(compare))
        window.compareRuns(parser.value(compare).split(QLatin1Char(','), Qt::SkipEmptyParts));
    if (parser.isSet(listen))
        window.startListening(parser.value(listen));
    if (parser.isSet(mode) && !window.raisePanel(parser.value(mode)))
        qWarning("unknown mode '%s' (start, plan, run, history)", qPrintable(parser.value(mode)));
    for (const QString &id : parser.values(panel))
        if (!window.raisePanel(id))
            qWarning("unknown panel '%s'", qPrintable(id));
    return app.exec();
}
