// Tests for launcher/history/history_transaction.h's classification: which failures keep and
// retry a whole batch (a lock, a lost server, the store's own trouble) and which are one row's own
// data (held out, given up alone after a few tries). Each engine's codes, as its driver reports them.
#include "launcher/history/history_transaction.h"

#include <QTest>

using namespace trellis::launcher;

Q_DECLARE_METATYPE(trellis::launcher::WriteFailure)

class TstHistoryTransaction : public QObject {
    Q_OBJECT
private slots:
    void classify_data()
    {
        QTest::addColumn<QString>("code");
        QTest::addColumn<QString>("text");
        QTest::addColumn<bool>("lost");
        QTest::addColumn<bool>("postgres");
        QTest::addColumn<WriteFailure>("expected");
        QTest::newRow("sqlite busy") << "5" << "database is locked" << false << false << WriteFailure::Locked;
        QTest::newRow("sqlite locked (shared cache)") << "6" << "database table is locked" << false << false << WriteFailure::Locked;
        QTest::newRow("sqlite busy, extended") << "261" << "database is locked" << false << false << WriteFailure::Locked;
        QTest::newRow("sqlite full") << "13" << "database or disk is full" << false << false << WriteFailure::Store;
        QTest::newRow("sqlite read-only") << "8" << "attempt to write a readonly database" << false << false << WriteFailure::Store;
        QTest::newRow("sqlite i/o error, extended") << "778" << "disk I/O error" << false << false << WriteFailure::Store;
        QTest::newRow("sqlite constraint") << "19" << "UNIQUE constraint failed" << false << false << WriteFailure::Row;
        QTest::newRow("sqlite trigger raise") << "1811" << "refused" << false << false << WriteFailure::Row;
        QTest::newRow("sqlite mismatch") << "20" << "datatype mismatch" << false << false << WriteFailure::Row;
        QTest::newRow("fast rows locked") << "" << "database is locked (database is locked)" << false << false << WriteFailure::Locked;
        QTest::newRow("a commit with no code") << "" << "Unable to commit transaction" << false << false << WriteFailure::Store;
        QTest::newRow("unknown run") << "" << "unknown run 20261206-x" << false << false << WriteFailure::Row;
        QTest::newRow("pg connection lost") << "" << "server closed the connection" << true << true << WriteFailure::Unreachable;
        QTest::newRow("pg connection class") << "08006" << "connection failure" << false << true << WriteFailure::Unreachable;
        QTest::newRow("pg unique") << "23505" << "duplicate key" << false << true << WriteFailure::Row;
        QTest::newRow("pg data exception") << "22P02" << "invalid input syntax" << false << true << WriteFailure::Row;
        QTest::newRow("pg deadlock") << "40P01" << "deadlock detected" << false << true << WriteFailure::Locked;
        QTest::newRow("pg disk full") << "53100" << "could not extend file" << false << true << WriteFailure::Store;
        QTest::newRow("pg trigger raise") << "P0001" << "refused by a trigger" << false << true << WriteFailure::Store;
        QTest::newRow("pg read-only transaction") << "25006" << "read-only transaction" << false << true << WriteFailure::Store;
        QTest::newRow("pg lost wins over a row code") << "23505" << "duplicate key" << true << true << WriteFailure::Unreachable;
    }
    void classify()
    {
        QFETCH(QString, code);
        QFETCH(QString, text);
        QFETCH(bool, lost);
        QFETCH(bool, postgres);
        QFETCH(WriteFailure, expected);
        QCOMPARE(classifyWriteFailure(code, text, lost, postgres), expected);
    }

    // What giving an operation up loses, per rank.
    void reportsByRankCountsEachRow()
    {
        StepOp steps{QStringLiteral("r"), {}};
        for (int rank : {0, 1, 1, 3}) {
            StepRow row;
            row.rank = rank;
            steps.rows.push_back(row);
        }
        const auto counted = reportsByRank(steps);
        QCOMPARE(counted.size(), std::size_t(3));
        QCOMPARE(counted.at(1), quint64(2));
        QVERIFY(reportsByRank(EventOp{QStringLiteral("r"), {}}).empty());
    }
};

QTEST_GUILESS_MAIN(TstHistoryTransaction)
#include "tst_history_transaction.moc"
