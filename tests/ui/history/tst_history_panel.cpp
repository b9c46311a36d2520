// History mode walked as a person would, over a history the real programs wrote (a run of the real
// trainer, two simulated runs of 2 and 8 ranks, one simulated run still going): type a plan-field
// filter, tag the run it leaves, sort by tokens/s, delete a run, launch the tagged run again; after
// each step, what the table shows and what the history file holds. And what is refused: a filter
// that does not parse (said under the line), a tag with a space, deleting the run still going.
#include "launcher/history/history_database.h"
#include "launcher/history/run_files.h"
#include "ui/history/history_panel.h"
#include "ui/history/run_summary_view.h"
#include "ui/history/run_table_model.h"
#include "ui/workspace/main_window.h"

#include <QAction>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QProcess>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTableView>
#include <QTemporaryDir>
#include <QTest>

#include <algorithm>

using namespace trellis;
using launcher::HistoryDatabase;
using launcher::RunSummary;

namespace {

struct Cli {
    int code = -1;
    QString out;
};

Cli cli(const QString &db, const QStringList &args, int timeoutMs = 180000)
{
    QProcess p;
    p.setProcessChannelMode(QProcess::MergedChannels);
    p.start(QStringLiteral(TRELLIS_BINARY_DIR "/bin/trellis-cli"), QStringList{QStringLiteral("--db"), db} + args);
    if (!p.waitForFinished(timeoutMs))
        p.kill();
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, QString::fromUtf8(p.readAll())};
}

// What the history file holds now, read with a connection of the test's own.
QList<RunSummary> held(const QString &db, const QString &filter = QStringLiteral("archived:any"))
{
    HistoryDatabase h;
    if (!h.open(db, false).isEmpty())
        return {};
    return h.listRuns(launcher::parseRunFilter(filter).filter, 1000);
}

QStringList shownRunIds(ui::HistoryPanel *panel)
{
    QStringList ids;
    QAbstractItemModel *m = panel->table()->model();
    for (int row = 0; row < m->rowCount(); ++row)
        ids << m->index(row, ui::RunTableModel::RunId).data().toString();
    return ids;
}

QString shown(ui::HistoryPanel *panel, const QString &runId, int column)
{
    QAbstractItemModel *m = panel->table()->model();
    for (int row = 0; row < m->rowCount(); ++row)
        if (m->index(row, ui::RunTableModel::RunId).data().toString() == runId)
            return m->index(row, column).data().toString();
    return QStringLiteral("(not shown)");
}

void select(ui::HistoryPanel *panel, const QString &runId)
{
    for (const RunSummary &r : panel->model()->runs())
        if (r.runId == runId)
            panel->selectRunIds({r.id});
}

} // namespace

class TstHistoryPanel : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        qputenv("TRELLIS_CLI", TRELLIS_BINARY_DIR "/bin/trellis-cli");
        qputenv("TRELLIS_TRAINER", TRELLIS_BINARY_DIR "/bin/trellis-trainer");
        qputenv("OMPI_ALLOW_RUN_AS_ROOT", "1");
        qputenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    }

    void walk()
    {
        QTemporaryDir dir;
        const QString db = dir.filePath(QStringLiteral("history.sqlite"));
        // Run ids are claimed machine-wide (the run registry): this test's own.
        const QString tag = QString::number(QCoreApplication::applicationPid());
        const auto id = [&](const char *name) { return QLatin1String(name) + QLatin1Char('-') + tag; };
        QString planText;
        {
            QFile source(QStringLiteral(TRELLIS_SOURCE_DIR "/tests/data/plans/dp4_short.json"));
            QVERIFY(source.open(QIODevice::ReadOnly));
            planText = QString::fromUtf8(source.readAll()).replace(QStringLiteral("../../../resources"), QStringLiteral(TRELLIS_SOURCE_DIR "/resources"));
        }
        const QString plan = dir.filePath(QStringLiteral("dp4.json"));
        {
            QFile f(plan);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(planText.toUtf8());
        }
        Cli r = cli(db, {QStringLiteral("run"), plan, QStringLiteral("--quiet"), QStringLiteral("--run-id"), id("real-dp4")});
        QVERIFY2(r.code == 0, qPrintable(r.out));
        for (const char *ranks : {"2", "8"}) {
            r = cli(db, {QStringLiteral("simulate"), QStringLiteral("--ranks"), QLatin1String(ranks), QStringLiteral("--seconds"), QStringLiteral("2"),
                         QStringLiteral("--quiet"), QStringLiteral("--run-id"), QStringLiteral("sim-%1-%2").arg(QLatin1String(ranks), tag)});
            QVERIFY2(r.code == 0, qPrintable(r.out));
        }
        // One still going while the window looks (stopped at the end).
        r = cli(db, {QStringLiteral("simulate"), QStringLiteral("--ranks"), QStringLiteral("2"), QStringLiteral("--seconds"), QStringLiteral("120"),
                     QStringLiteral("--detach"), QStringLiteral("--run-id"), id("sim-going")});
        QVERIFY2(r.code == 0, qPrintable(r.out));
        const auto stopGoing = qScopeGuard([&] { cli(db, {QStringLiteral("stop"), id("sim-going")}, 30000); }); // however the test ends
        QTRY_VERIFY_WITH_TIMEOUT(held(db, QStringLiteral("status:running")).size() == 1, 60000);

        ui::MainWindow window(db);
        launcher::RunOptions options;
        options.trainerPath = QStringLiteral(TRELLIS_BINARY_DIR "/bin/trellis-trainer");
        window.setRunOptions(options);
        window.resize(1280, 800);
        window.show();
        window.setMode(ui::MainWindow::Mode::History);
        ui::HistoryPanel *panel = window.historyPanel();
        QTRY_COMPARE_WITH_TIMEOUT(panel->rowCount(), 4, 20000);
        // The window follows the run still going (it reattaches to runs that outlived a window,
        // in Run mode); the person goes to History.
        QTRY_VERIFY_WITH_TIMEOUT(!window.launchAction()->isEnabled(), 10000);
        window.setMode(ui::MainWindow::Mode::History);
        QVERIFY(panel->isVisible());

        // 1. A filter that does not parse says why under the line, and the list stays.
        QTest::keyClicks(panel->filterEdit(), QStringLiteral("parallel.tq=4"));
        QTRY_VERIFY_WITH_TIMEOUT(!panel->filterError()->isHidden(), 5000);
        QVERIFY2(panel->filterError()->text().contains(QStringLiteral("no plan field 'parallel.tq'")), qPrintable(panel->filterError()->text()));
        QCOMPARE(panel->rowCount(), 4);
        // A plan field: the run of 4 data-parallel ranks alone.
        panel->filterEdit()->clear();
        QTest::keyClicks(panel->filterEdit(), QStringLiteral("parallel.dp=4"));
        QTRY_COMPARE_WITH_TIMEOUT(shownRunIds(panel), QStringList{id("real-dp4")}, 10000);
        QVERIFY(panel->filterError()->isHidden());

        // 2. Selecting it shows its summary; tagging it; a tag with a space is refused.
        select(panel, id("real-dp4"));
        ui::RunSummaryView *summary = window.runSummaryView();
        QTRY_VERIFY_WITH_TIMEOUT(summary->runId() > 0 && summary->headline().contains(QStringLiteral("dp4 tp1 pp1")), 10000);
        QTRY_VERIFY_WITH_TIMEOUT(summary->lossPoints() == 12, 10000);
        QVERIFY(!panel->tagSelected(QStringLiteral("two words")));
        QVERIFY2(panel->statusLabel()->text().contains(QStringLiteral("letters, digits")), qPrintable(panel->statusLabel()->text()));
        QVERIFY(panel->tagSelected(QStringLiteral("baseline")));
        QTRY_COMPARE_WITH_TIMEOUT(shown(panel, id("real-dp4"), ui::RunTableModel::Tags), QStringLiteral("baseline"), 10000);
        for (const RunSummary &run : held(db))
            QCOMPARE(run.tags, run.runId == id("real-dp4") ? QStringList{QStringLiteral("baseline")} : QStringList{});
        QVERIFY(panel->noteSelected(QStringLiteral("the reference for the sweep")));
        QTRY_COMPARE_WITH_TIMEOUT(held(db, QStringLiteral("tag:baseline")).value(0).note, QStringLiteral("the reference for the sweep"), 10000);
        // Who recorded it (the OS user here; the role on a server) is shown with its tags and note.
        const QString owner = held(db, QStringLiteral("tag:baseline")).value(0).owner;
        QVERIFY(!owner.isEmpty());
        QTRY_VERIFY2_WITH_TIMEOUT(summary->details().contains(QStringLiteral("Recorded by %1").arg(owner)), qPrintable(summary->details()), 10000);
        QTRY_VERIFY2_WITH_TIMEOUT(summary->details().contains(QStringLiteral("Tags: baseline")) && summary->details().contains(QStringLiteral("the reference for the sweep")),
                                  qPrintable(summary->details()), 10000);

        // 3. Every run again; sorted by tokens/s (each ended run's figures computed meanwhile):
        // highest first at the first click, lowest first at the second, as the history holds them.
        panel->filterEdit()->clear();
        QTRY_COMPARE_WITH_TIMEOUT(panel->rowCount(), 4, 10000);
        const auto figuresIn = [&] {
            for (const RunSummary &run : held(db))
                if (run.status != QLatin1String("running") && run.tokensPerS <= 0)
                    return false;
            return true;
        };
        QTRY_VERIFY_WITH_TIMEOUT(figuresIn(), 20000);
        QTRY_VERIFY_WITH_TIMEOUT(!shown(panel, id("sim-8"), ui::RunTableModel::TokensPerS).isEmpty(), 10000);
        QHeaderView *header = panel->table()->horizontalHeader();
        const QPoint tokensHeader(header->sectionViewportPosition(ui::RunTableModel::TokensPerS) + header->sectionSize(ui::RunTableModel::TokensPerS) / 2,
                                  header->height() / 2);
        QTest::mouseClick(header->viewport(), Qt::LeftButton, {}, tokensHeader);
        QCOMPARE(header->sortIndicatorSection(), int(ui::RunTableModel::TokensPerS));
        QCOMPARE(header->sortIndicatorOrder(), Qt::DescendingOrder);
        QList<RunSummary> byTokens = held(db, QStringLiteral("status:completed,failed,stopped"));
        std::sort(byTokens.begin(), byTokens.end(), [](const RunSummary &a, const RunSummary &b) { return a.tokensPerS > b.tokensPerS; });
        QVERIFY(byTokens.first().tokensPerS > byTokens.last().tokensPerS);
        QStringList expected;
        for (const RunSummary &run : byTokens)
            expected << run.runId;
        expected << id("sim-going"); // not measured yet: last
        QCOMPARE(shownRunIds(panel), expected);
        QTest::mouseClick(header->viewport(), Qt::LeftButton, {}, tokensHeader);
        QCOMPARE(header->sortIndicatorOrder(), Qt::AscendingOrder);
        std::reverse(expected.begin(), expected.end());
        QCOMPARE(shownRunIds(panel), expected);

        // 4. Deleting: the run still going is refused with the reason; the 2-rank run goes, its
        // rows and its files, nothing else.
        select(panel, id("sim-going"));
        QVERIFY(!panel->deleteSelected(false));
        QVERIFY2(panel->statusLabel()->text().contains(QStringLiteral("still running")), qPrintable(panel->statusLabel()->text()));
        select(panel, id("sim-2"));
        const QStringList files = launcher::runFilesFor(db, id("sim-2"));
        QVERIFY(!files.isEmpty());
        QVERIFY2(panel->deletionText().contains(files.first()), qPrintable(panel->deletionText()));
        QVERIFY(panel->deleteSelected(false));
        QTRY_COMPARE_WITH_TIMEOUT(panel->rowCount(), 3, 10000);
        QVERIFY(!shownRunIds(panel).contains(id("sim-2")));
        QCOMPARE(held(db).size(), 3);
        for (const QString &f : files)
            QVERIFY2(!QFileInfo::exists(f), qPrintable(f));
        QVERIFY(!launcher::runFilesFor(db, id("sim-8")).isEmpty());

        // 5. Launch again: a simulated run cannot be (its plan stood in for simulated ranks); the
        // real one starts the same plan, and trains the same losses, once the run the window
        // follows (it reattached to the one going) has ended.
        select(panel, id("sim-8"));
        QVERIFY(!panel->canLaunchAgain());
        r = cli(db, {QStringLiteral("stop"), id("sim-going")});
        QVERIFY2(r.code == 0, qPrintable(r.out));
        QTRY_VERIFY_WITH_TIMEOUT(held(db, QStringLiteral("status:running")).isEmpty(), 30000);
        QTRY_VERIFY_WITH_TIMEOUT(window.launchAction()->isEnabled(), 30000); // no run followed any more
        window.setMode(ui::MainWindow::Mode::History);
        select(panel, id("real-dp4"));
        QTRY_VERIFY(panel->canLaunchAgain());
        QSignalSpy finished(window.feed(), &launcher::RunFeed::finished);
        // Asked for once, as a click does: launched when the run's plan has been read.
        window.launchAgain(panel->selectedRunId());
        QTRY_COMPARE_WITH_TIMEOUT(window.mode(), ui::MainWindow::Mode::Run, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(finished.size(), 1, 180000);
        // The feed says the run ended when its supervisor does; the history's row follows once its
        // writer has committed the end (under load, a moment later).
        QTRY_VERIFY_WITH_TIMEOUT(held(db).size() == 4 && held(db).first().status != QStringLiteral("running"), 30000);
        const QList<RunSummary> after = held(db);
        QCOMPARE(after.size(), 4);
        const RunSummary again = after.first(); // newest
        QCOMPARE(again.status, QStringLiteral("completed"));
        QCOMPARE(again.layout, QStringLiteral("dp4 tp1 pp1"));
        {
            HistoryDatabase h;
            QCOMPARE(h.open(db, false), QString());
            const auto first = h.loadRun(h.findRun(id("real-dp4"))->id);
            const auto second = h.loadRun(again.id);
            QVERIFY(first && second);
            QCOMPARE(second->steps.size(), first->steps.size());
            for (int i = 0; i < first->steps.size(); ++i)
                QCOMPARE(second->steps[i].loss, first->steps[i].loss); // the same plan, the same losses
        }

    }
};

QTEST_MAIN(TstHistoryPanel)
#include "tst_history_panel.moc"
