// Tests for launcher/supervisor/injected_fault.h: which attempts an injected fault fires in, what the
// trainer is given, and the errors bad --inject values get.
#include "launcher/supervisor/injected_fault.h"

#include <QTest>

using namespace trellis::launcher;

class TstInjectedFault : public QObject {
    Q_OBJECT
private slots:
    void firesInTheAttemptsItNames_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("trainerSpec");
        QTest::addColumn<QList<int>>("firing"); // of attempts 1..4
        QTest::newRow("first only") << "crash@1:5" << "crash@1:5" << QList<int>{1};
        QTest::newRow("second") << "hang@0:12/2" << "hang@0:12" << QList<int>{2};
        QTest::newRow("every") << "nanloss@3:1/*" << "nanloss@3:1" << QList<int>{1, 2, 3, 4};
        QTest::newRow("fourth") << "throw@7:100/4" << "throw@7:100" << QList<int>{4};
        QTest::newRow("stall") << "stall@1:4" << "stall@1:4" << QList<int>{1};
        QTest::newRow("pauses at three steps") << "pause@3:8,20,32/2" << "pause@3:8,20,32" << QList<int>{2};
        QTest::newRow("stop") << "stop@2:10" << "stop@2:10" << QList<int>{1};
        QTest::newRow("delay") << "delay@1:6/*" << "delay@1:6" << QList<int>{1, 2, 3, 4};
    }
    void firesInTheAttemptsItNames()
    {
        QFETCH(QString, spec);
        QFETCH(QString, trainerSpec);
        QFETCH(QList<int>, firing);
        QString error;
        const auto fault = parseInjectedFault(spec, error);
        QVERIFY2(fault, qPrintable(error));
        QCOMPARE(fault->trainerSpec, trainerSpec);
        for (int attempt = 1; attempt <= 4; ++attempt) {
            QCOMPARE(fault->firesIn(attempt), firing.contains(attempt));
            const QStringList args = trainerArgsForAttempt({QStringLiteral("--inject"), spec, QStringLiteral("--other")}, attempt, error);
            QVERIFY(error.isEmpty());
            const QStringList want = firing.contains(attempt)
                                         ? QStringList{QStringLiteral("--inject"), trainerSpec, QStringLiteral("--other")}
                                         : QStringList{QStringLiteral("--other")};
            QCOMPARE(args, want);
        }
    }

    void badValuesAreNamed_data()
    {
        QTest::addColumn<QString>("spec");
        QTest::addColumn<QString>("why");
        QTest::newRow("attempt 0") << "crash@1:5/0" << "ATTEMPT must be >= 1";
        QTest::newRow("attempt word") << "crash@1:5/x" << "KIND@RANK:STEP[,STEP...][/ATTEMPT|/*]";
        QTest::newRow("a step of a list 0") << "pause@1:5,0,9" << "STEP must be >= 1";
        QTest::newRow("an empty step in a list") << "pause@1:5,,9" << "got 'pause@1:5,,9'";
        QTest::newRow("kind") << "boom@1:5" << "KIND one of crash";
        QTest::newRow("step 0") << "crash@1:0" << "STEP must be >= 1";
        QTest::newRow("negative rank") << "crash@-1:5" << "got 'crash@-1:5'";
        QTest::newRow("shell") << "crash@1:5;reboot" << "got 'crash@1:5;reboot'";
        QTest::newRow("empty") << "" << "got ''";
    }
    void badValuesAreNamed()
    {
        QFETCH(QString, spec);
        QFETCH(QString, why);
        QString error;
        QVERIFY(!parseInjectedFault(spec, error));
        QVERIFY2(error.contains(why), qPrintable(error));
        error.clear();
        QCOMPARE(trainerArgsForAttempt({QStringLiteral("--inject"), spec}, 1, error), QStringList());
        QVERIFY2(error.contains(why), qPrintable(error));
    }

    void missingValue()
    {
        QString error;
        trainerArgsForAttempt({QStringLiteral("--inject")}, 1, error);
        QVERIFY2(error.contains(QStringLiteral("needs a value")), qPrintable(error));
    }
};

QTEST_GUILESS_MAIN(TstInjectedFault)
#include "tst_injected_fault.moc"
