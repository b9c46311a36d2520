// History's runs table model alone (the panel's walk, tst_history_panel, drives it through a real
// history): each column's first sort is the way it is read, unknown figures sort after the known
// ones in that sort, a status is shown in the workbench's language and coloured once, a run's kind
// has a column of its own, and a run's figures update its row in place.
#include "ui/history/run_table_model.h"
#include "ui/widgets/run_words.h"

#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QTest>

using namespace trellis;
using ui::RunTableModel;

namespace {

launcher::RunSummary run(qint64 id, const QString &status, double tokensPerS, double loss, launcher::RunKind kind = launcher::RunKind::Launched)
{
    launcher::RunSummary r;
    r.id = id;
    r.runId = QStringLiteral("r%1").arg(id);
    r.status = status;
    r.tokensPerS = tokensPerS;
    r.lastLoss = loss;
    r.stepsDone = loss > 0 ? 10 : 0;
    r.kind = kind;
    return r;
}

// The run ids down the proxy's rows.
QStringList order(const QSortFilterProxyModel &sorted)
{
    QStringList ids;
    for (int row = 0; row < sorted.rowCount(); ++row)
        ids << sorted.index(row, RunTableModel::RunId).data().toString();
    return ids;
}

} // namespace

class TstRunTableModel : public QObject {
    Q_OBJECT
private slots:
    void firstSortIsTheWayAColumnIsRead()
    {
        RunTableModel model;
        model.setRuns({run(1, QStringLiteral("completed"), 900, 2.5), run(2, QStringLiteral("running"), -1, 0),
                       run(3, QStringLiteral("failed"), 1200, 3.5), run(4, QStringLiteral("completed"), 300, 1.5)});
        QCOMPARE(model.headerData(RunTableModel::TokensPerS, Qt::Horizontal, Qt::InitialSortOrderRole).toInt(), int(Qt::DescendingOrder));
        QCOMPARE(model.headerData(RunTableModel::RunId, Qt::Horizontal, Qt::InitialSortOrderRole).toInt(), int(Qt::DescendingOrder));
        QCOMPARE(model.headerData(RunTableModel::Loss, Qt::Horizontal, Qt::InitialSortOrderRole).toInt(), int(Qt::AscendingOrder));
        QCOMPARE(model.headerData(RunTableModel::Name, Qt::Horizontal, Qt::InitialSortOrderRole).toInt(), int(Qt::AscendingOrder));
        QSortFilterProxyModel sorted;
        sorted.setSourceModel(&model);
        sorted.setSortRole(Qt::UserRole);
        // Tokens/s highest first, the run not measured yet last; reversed, it comes first.
        sorted.sort(RunTableModel::TokensPerS, Qt::DescendingOrder);
        QCOMPARE(order(sorted), (QStringList{QStringLiteral("r3"), QStringLiteral("r1"), QStringLiteral("r4"), QStringLiteral("r2")}));
        sorted.sort(RunTableModel::TokensPerS, Qt::AscendingOrder);
        QCOMPARE(order(sorted), (QStringList{QStringLiteral("r2"), QStringLiteral("r4"), QStringLiteral("r1"), QStringLiteral("r3")}));
        // The lowest loss first, a run with no step yet last.
        sorted.sort(RunTableModel::Loss, Qt::AscendingOrder);
        QCOMPARE(order(sorted), (QStringList{QStringLiteral("r4"), QStringLiteral("r1"), QStringLiteral("r3"), QStringLiteral("r2")}));
    }

    void statusAndKindAreWords()
    {
        RunTableModel model;
        model.setRuns({run(1, QStringLiteral("failed"), -1, 0, launcher::RunKind::Collected), run(2, QStringLiteral("stopped"), -1, 0)});
        QCOMPARE(model.index(0, RunTableModel::Status).data().toString(), ui::statusText(QStringLiteral("failed")));
        QCOMPARE(model.index(0, RunTableModel::Status).data(Qt::ForegroundRole).value<QColor>(), ui::statusColour(QStringLiteral("failed")));
        QVERIFY(!model.index(1, RunTableModel::Status).data(Qt::ForegroundRole).isValid()); // the palette's
        QCOMPARE(model.index(0, RunTableModel::Kind).data().toString(), QStringLiteral("collected"));
        QCOMPARE(model.index(1, RunTableModel::Kind).data().toString(), QStringLiteral("launched"));
        QCOMPARE(model.headerData(RunTableModel::Kind, Qt::Horizontal, Qt::DisplayRole).toString(), QStringLiteral("Kind"));
        QVERIFY(!RunTableModel::shownByDefault(RunTableModel::Kind));
        QCOMPARE(ui::statusText(QStringLiteral("a newer word")), QStringLiteral("a newer word")); // shown as it is
    }

    void figuresUpdateTheirRow()
    {
        RunTableModel model;
        model.setRuns({run(7, QStringLiteral("completed"), -1, 2.0)});
        QSignalSpy changed(&model, &QAbstractItemModel::dataChanged);
        model.updateRun(run(7, QStringLiteral("completed"), 4321, 2.0));
        QCOMPARE(changed.size(), 1);
        QVERIFY(model.index(0, RunTableModel::TokensPerS).data().toString().contains(QStringLiteral("4")));
        model.updateRun(run(8, QStringLiteral("completed"), 1, 1)); // not listed: nothing
        QCOMPARE(changed.size(), 1);
    }
};

QTEST_MAIN(TstRunTableModel)
#include "tst_run_table_model.moc"
