// trellis-cli plan new | set | get | diff: the editor's headless twin. Real trellis-cli processes on
// real files; a refused edit leaves the file as it was, byte for byte.
#include "tests/support/cli_test_support.h"

#include <QTest>

using namespace trellis::test;

namespace {
QByteArray bytesOf(const QString &path)
{
    QFile f(path);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
}
} // namespace

class TestPlanCli : public QObject {
    Q_OBJECT
private slots:
    void newPlansValidate()
    {
        QTemporaryDir dir;
        const QString small = dir.filePath(QStringLiteral("small.json"));
        Result r = cli({QStringLiteral("plan"), QStringLiteral("new"), QStringLiteral("--out"), small});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        r = cli({QStringLiteral("validate"), small});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QVERIFY2(r.out.contains(QStringLiteral("valid — 4 ranks")), qPrintable(r.out));

        // 16 DGX H100 nodes: 128 data-parallel ranks of GPT-2 124M, printed when no --out is given.
        r = cli({QStringLiteral("plan"), QStringLiteral("new"), QStringLiteral("--model"), QStringLiteral("gpt2-124m"),
                 QStringLiteral("--cluster"), QStringLiteral("dgx-h100"), QStringLiteral("--nodes"), QStringLiteral("16")});
        QCOMPARE(r.code, 0);
        auto parsed = trellis::plan::parsePlan(r.out.toStdString());
        QVERIFY2(parsed, parsed.errorText().c_str());
        QCOMPARE(parsed->parallel.dp, 128);
        QCOMPARE(parsed->cluster.nodes.size(), std::size_t{16});

        r = cli({QStringLiteral("plan"), QStringLiteral("new"), QStringLiteral("--model"), QStringLiteral("gpt-17")});
        QCOMPARE(r.code, 2);
        QVERIFY2(r.err.contains(QStringLiteral("--model: unknown preset 'gpt-17' (known: ")), qPrintable(r.err));
    }

    void setGetAndDiff()
    {
        QTemporaryDir dir;
        const QString a = dir.filePath(QStringLiteral("a.json")), b = dir.filePath(QStringLiteral("b.json"));
        QCOMPARE(cli({QStringLiteral("plan"), QStringLiteral("new"), QStringLiteral("--model"), QStringLiteral("gpt2-124m"),
                      QStringLiteral("--cluster"), QStringLiteral("dgx-h100"), QStringLiteral("--nodes"), QStringLiteral("16"),
                      QStringLiteral("--out"), a})
                     .code,
                 0);
        Result r = cli({QStringLiteral("plan"), QStringLiteral("set"), a, QStringLiteral("parallel.tp=4"), QStringLiteral("parallel.dp=32"),
                        QStringLiteral("parallel.schedule=gpipe"), QStringLiteral("model.vocab=50304"), QStringLiteral("--out"), b});
        QVERIFY2(r.code == 0, qPrintable(r.err));
        QCOMPARE(r.out, QStringLiteral("model.vocab: 50257 → 50304\nparallel.dp: 128 → 32\nparallel.tp: 1 → 4\n"
                                      "parallel.schedule: \"1f1b\" → \"gpipe\"\n"));
        QVERIFY2(r.err.isEmpty(), qPrintable(r.err)); // a valid plan: nothing to report

        r = cli({QStringLiteral("plan"), QStringLiteral("get"), b, QStringLiteral("parallel.tp"), QStringLiteral("cluster.node_count")});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out, QStringLiteral("parallel.tp=4\ncluster.node_count=16\n"));

        r = cli({QStringLiteral("plan"), QStringLiteral("diff"), a, b});
        QCOMPARE(r.code, 1);
        QCOMPARE(r.out.count(QLatin1Char('\n')), 4);
        QCOMPARE(cli({QStringLiteral("plan"), QStringLiteral("diff"), a, a}).code, 0);

        // An invalid result is written (an edit in progress) and its problems named...
        r = cli({QStringLiteral("plan"), QStringLiteral("set"), b, QStringLiteral("parallel.tp=5")});
        QCOMPARE(r.code, 0);
        QVERIFY2(r.err.contains(QStringLiteral("parallel.tp: 5 does not divide model.heads (12)")), qPrintable(r.err));
        QCOMPARE(cli({QStringLiteral("plan"), QStringLiteral("get"), b, QStringLiteral("parallel.tp")}).out, QStringLiteral("5\n"));
        // ...unless --check, which writes nothing.
        const QByteArray before = bytesOf(b);
        r = cli({QStringLiteral("plan"), QStringLiteral("set"), b, QStringLiteral("parallel.tp=3"), QStringLiteral("--check")});
        QCOMPARE(r.code, 1);
        QCOMPARE(bytesOf(b), before);
    }

    void refusedEditsChangeNothing_data()
    {
        QTest::addColumn<QStringList>("assignments");
        QTest::addColumn<QString>("message");
        QTest::newRow("wrong type") << QStringList{QStringLiteral("parallel.tp=two")} << "parallel.tp: expected an integer, got string";
        QTest::newRow("unknown field") << QStringList{QStringLiteral("parallel.tensor=2")} << "parallel.tensor: no such field";
        QTest::newRow("second of two refused") << QStringList{QStringLiteral("parallel.dp=2"), QStringLiteral("parallel.zero=\"x\"")}
                                             << "parallel.zero";
        QTest::newRow("not an assignment") << QStringList{QStringLiteral("parallel.tp")} << "'parallel.tp' is not FIELD=VALUE";
        QTest::newRow("unknown preset") << QStringList{QStringLiteral("model.preset=gpt-17")} << "model.preset: unknown preset 'gpt-17'";
    }
    void refusedEditsChangeNothing()
    {
        QFETCH(QStringList, assignments);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const QString a = dir.filePath(QStringLiteral("a.json"));
        QCOMPARE(cli({QStringLiteral("plan"), QStringLiteral("new"), QStringLiteral("--out"), a}).code, 0);
        const QByteArray before = bytesOf(a);
        const Result r = cli(QStringList{QStringLiteral("plan"), QStringLiteral("set"), a} + assignments);
        QVERIFY(r.code != 0);
        QVERIFY2(r.err.contains(message), qPrintable(r.err));
        QCOMPARE(bytesOf(a), before);
        QVERIFY(!QFile::exists(a + QStringLiteral(".tmp")));
    }
};

QTEST_GUILESS_MAIN(TestPlanCli)
#include "tst_plan_cli.moc"
