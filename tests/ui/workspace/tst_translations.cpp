// The workbench's translations: every message lupdate finds in the sources today (ui/,
// launcher/document) is in the German and the Simplified Chinese catalogue, finished, with the
// source's placeholders; no user-visible text in ui/ is written outside tr() (a scan of the string
// literals: text outside tr/translate/QT_TRANSLATE_NOOP that reads like words is an error unless
// its line says `notr`); and the workbench really comes up in German and in Chinese.
#include "ui/workspace/language.h"
#include "ui/workspace/main_window.h"

#include <QDirIterator>
#include <QFile>
#include <QMenuBar>
#include <QProcess>
#include <QRegularExpression>
#include <QSet>
#include <QTemporaryDir>
#include <QTest>
#include <QXmlStreamReader>

#include <map>
#include <stack>

using namespace trellis;

namespace {

struct Message {
    QString type; // "", "unfinished", "vanished", "obsolete"
    QStringList translations;
};
using Key = std::tuple<QString, QString, QString>; // context, source, comment

std::map<Key, Message> readCatalogue(const QString &path)
{
    std::map<Key, Message> out;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("cannot read %s", qPrintable(path));
    QXmlStreamReader xml(&file);
    QString context, source, comment;
    Message message;
    while (!xml.atEnd()) {
        xml.readNext();
        if (xml.isStartElement()) {
            const auto name = xml.name();
            if (name == QLatin1String("name"))
                context = xml.readElementText();
            else if (name == QLatin1String("message")) {
                source.clear();
                comment.clear();
                message = {};
            } else if (name == QLatin1String("source"))
                source = xml.readElementText();
            else if (name == QLatin1String("comment"))
                comment = xml.readElementText();
            else if (name == QLatin1String("translation")) {
                message.type = xml.attributes().value(QLatin1String("type")).toString();
                QString plain;
                while (!xml.atEnd() && !(xml.isEndElement() && xml.name() == QLatin1String("translation"))) {
                    xml.readNext();
                    if (xml.isCharacters())
                        plain += xml.text();
                    else if (xml.isStartElement() && xml.name() == QLatin1String("numerusform"))
                        message.translations << xml.readElementText();
                }
                if (message.translations.isEmpty())
                    message.translations << plain;
            }
        } else if (xml.isEndElement() && xml.name() == QLatin1String("message")) {
            out[{context, source, comment}] = message;
        }
    }
    if (xml.hasError())
        qFatal("%s: %s", qPrintable(path), qPrintable(xml.errorString()));
    return out;
}

QStringList translatableSources()
{
    QStringList files;
    for (const char *dir : {"ui", "launcher/document"}) {
        QDirIterator it(QStringLiteral(TRELLIS_SOURCE_DIR "/") + QLatin1String(dir), {QStringLiteral("*.cpp"), QStringLiteral("*.h")},
                        QDir::Files, QDirIterator::Subdirectories);
        while (it.hasNext())
            files << it.next();
    }
    files.sort();
    return files;
}

QSet<QString> placeholders(const QString &text)
{
    static const QRegularExpression re(QStringLiteral("%(L?\\d+|n)"));
    QSet<QString> out;
    for (auto it = re.globalMatch(text); it.hasNext();)
        out.insert(it.next().captured(0));
    return out;
}

// --- The scan for untranslated text ---------------------------------------------------------

struct Literal {
    int line;
    QString text;
    QString call; // the function or macro whose argument list holds it ("" at none)
};

std::vector<Literal> literalsOf(const QString &code)
{
    std::vector<Literal> out;
    std::stack<QString> calls;
    QString identifier;
    int line = 1;
    auto isIdent = [](QChar c) { return c.isLetterOrNumber() || c == QLatin1Char('_'); };
    for (qsizetype i = 0; i < code.size(); ++i) {
        const QChar c = code[i];
        if (c == QLatin1Char('\n')) {
            ++line;
            continue;
        }
        if (c == QLatin1Char('/') && i + 1 < code.size() && code[i + 1] == QLatin1Char('/')) {
            while (i < code.size() && code[i] != QLatin1Char('\n'))
                ++i;
            --i;
            continue;
        }
        if (c == QLatin1Char('/') && i + 1 < code.size() && code[i + 1] == QLatin1Char('*')) {
            for (i += 2; i + 1 < code.size() && !(code[i] == QLatin1Char('*') && code[i + 1] == QLatin1Char('/')); ++i)
                line += code[i] == QLatin1Char('\n');
            ++i;
            continue;
        }
        if (c == QLatin1Char('#') && (code.mid(i, 8) == QLatin1String("#include") || code.mid(i, 7) == QLatin1String("#pragma"))) {
            while (i < code.size() && code[i] != QLatin1Char('\n'))
                ++i;
            --i;
            continue;
        }
        if (c == QLatin1Char('\'')) { // a character literal
            for (++i; i < code.size() && code[i] != QLatin1Char('\''); ++i)
                if (code[i] == QLatin1Char('\\'))
                    ++i;
            identifier.clear();
            continue;
        }
        if (c == QLatin1Char('"')) {
            const int at = line;
            QString text;
            for (++i; i < code.size() && code[i] != QLatin1Char('"'); ++i) {
                if (code[i] == QLatin1Char('\\') && i + 1 < code.size()) {
                    ++i;
                    text += code[i] == QLatin1Char('n') ? QStringLiteral("\n") : QString(code[i]);
                    continue;
                }
                text += code[i];
            }
            out.push_back({at, text, calls.empty() ? QString() : calls.top()});
            identifier.clear();
            continue;
        }
        if (isIdent(c)) {
            if (i > 0 && !isIdent(code[i - 1]))
                identifier.clear();
            identifier += c;
            continue;
        }
        if (c == QLatin1Char('(')) {
            calls.push(identifier);
            identifier.clear();
        } else if (c == QLatin1Char(')')) {
            if (!calls.empty())
                calls.pop();
            identifier.clear();
        } else if (!c.isSpace()) {
            identifier.clear();
        }
    }
    return out;
}

// Whether a literal reads like words a person would see: markup, placeholders and entities
// removed, two words in a row or a capitalised word.
bool readsAsText(QString text)
{
    static const QRegularExpression markup(QStringLiteral("<[^>]*>|&[a-z]+;|%L?\\d+|%n"));
    static const QRegularExpression words(QStringLiteral("[A-Za-z]{2,}[,.!?]? +[A-Za-z]{2,}"));
    static const QRegularExpression capitalised(QStringLiteral("^\\W*[A-Z][a-z]{2,}"));
    text.replace(markup, QStringLiteral(" "));
    return text.contains(words) || text.contains(capitalised);
}

} // namespace

class TestTranslations : public QObject {
    Q_OBJECT
private slots:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("trellis-tests"));
        QCoreApplication::setApplicationName(QStringLiteral("tst_translations"));
    }

    // lupdate over the sources as they are; each shipped language has every message finished.
    void everyMessageTranslated()
    {
        QTemporaryDir dir;
        const QString fresh = dir.filePath(QStringLiteral("fresh.ts"));
        QStringList arguments{QStringLiteral("-silent"), QStringLiteral("-locations"), QStringLiteral("none"), QStringLiteral("-I"),
                              QStringLiteral(TRELLIS_SOURCE_DIR)};
        arguments << translatableSources() << QStringLiteral("-ts") << fresh;
        QProcess lupdate;
        lupdate.start(QStringLiteral(TRELLIS_LUPDATE), arguments);
        QVERIFY(lupdate.waitForFinished(120000));
        QCOMPARE(lupdate.exitCode(), 0);
        const auto sources = readCatalogue(fresh);
        QVERIFY2(sources.size() > 400, qPrintable(QString::number(sources.size())));

        const QStringList shipped = ui::availableLanguages().mid(1); // English is the source
        QCOMPARE(shipped, (QStringList{QStringLiteral("de"), QStringLiteral("zh_CN")}));
        for (const QString &language : shipped) {
            const auto catalogue = readCatalogue(QStringLiteral(TRELLIS_SOURCE_DIR "/translations/trellis_%1.ts").arg(language));
            QStringList problems;
            for (const auto &[key, unused] : sources) {
                const auto &[context, source, comment] = key;
                const auto it = catalogue.find(key);
                const QString where = QStringLiteral("%1: [%2] \"%3\"").arg(language, context, source.left(60));
                if (it == catalogue.end())
                    problems << where + QStringLiteral(" is missing");
                else if (!it->second.type.isEmpty())
                    problems << where + QStringLiteral(" is ") + it->second.type;
                else if (it->second.translations.isEmpty() ||
                         std::any_of(it->second.translations.begin(), it->second.translations.end(), [](const QString &t) { return t.isEmpty(); }))
                    problems << where + QStringLiteral(" has no translation");
                else
                    for (const QString &t : it->second.translations)
                        if (placeholders(t) != placeholders(source) && !(placeholders(source).contains(QStringLiteral("%n"))))
                            problems << where + QStringLiteral(" changes the placeholders: ") + t;
            }
            QVERIFY2(problems.isEmpty(), qPrintable(QStringLiteral("%1 problem(s) — run the trellis_ui_lupdate target and translate:\n").arg(problems.size()) +
                                                    problems.mid(0, 30).join(QLatin1Char('\n'))));
        }
    }

    // No user-visible text in ui/ outside tr(): every literal that reads like words is an
    // argument of tr(), translate() or a QT_*_NOOP marker, or its line says `notr`.
    void noTextOutsideTr()
    {
        static const QSet<QString> translated{QStringLiteral("tr"), QStringLiteral("translate"), QStringLiteral("QT_TR_NOOP"),
                                              QStringLiteral("QT_TRANSLATE_NOOP"), QStringLiteral("QT_TR_N_NOOP"),
                                              QStringLiteral("QT_TRANSLATE_N_NOOP"), QStringLiteral("qWarning"), QStringLiteral("qDebug"),
                                              QStringLiteral("qCritical"), QStringLiteral("qFatal"), QStringLiteral("qInfo")};
        QStringList found;
        int scanned = 0;
        for (const QString &path : translatableSources()) {
            if (!path.contains(QLatin1String("/ui/")))
                continue;
            QFile file(path);
            QVERIFY(file.open(QIODevice::ReadOnly));
            const QString code = QString::fromUtf8(file.readAll());
            const QStringList lines = code.split(QLatin1Char('\n'));
            for (const Literal &l : literalsOf(code)) {
                ++scanned;
                if (translated.contains(l.call) || !readsAsText(l.text) || lines.value(l.line - 1).contains(QLatin1String("notr")))
                    continue;
                found << QStringLiteral("%1:%2: \"%3\" (in %4)")
                             .arg(path.mid(QStringLiteral(TRELLIS_SOURCE_DIR).size() + 1))
                             .arg(l.line)
                             .arg(l.text, l.call.isEmpty() ? QStringLiteral("no call") : l.call);
            }
        }
        QVERIFY(scanned > 500);
        QVERIFY2(found.isEmpty(), qPrintable(QStringLiteral("text outside tr():\n") + found.join(QLatin1Char('\n'))));
        // The scan itself catches what it must.
        QVERIFY(readsAsText(QStringLiteral("No plan loaded")));
        QVERIFY(readsAsText(QStringLiteral("Loss")));
        QVERIFY(readsAsText(QStringLiteral("%1 × %2 micro-batches and more")));
        QVERIFY(!readsAsText(QStringLiteral("editorDock")));
        QVERIFY(!readsAsText(QStringLiteral("<span style='color:%1'>■</span> %2")));
        QVERIFY(!readsAsText(QStringLiteral("%1 ms")));
        const auto sample = literalsOf(QStringLiteral("x = tr(\"One\");\ny = QStringLiteral(\"Two words\"); // c \"Three\"\nf(g(\"Four\"), \"Five\");"));
        QCOMPARE(int(sample.size()), 4);
        QCOMPARE(sample[0].call, QStringLiteral("tr"));
        QCOMPARE(sample[1].call, QStringLiteral("QStringLiteral"));
        QCOMPARE(sample[1].line, 2);
        QCOMPARE(sample[2].call, QStringLiteral("g"));
        QCOMPARE(sample[3].call, QStringLiteral("f"));
    }

    // The workbench in German and in Chinese: the File menu says so; English again without.
    void workbenchInEachLanguage()
    {
        QTemporaryDir dir;
        const struct {
            const char *code, *file;
        } expected[] = {{"de", "&Datei"}, {"zh_CN", "文件(&F)"}, {"en", "&File"}};
        for (const auto &e : expected) {
            QCOMPARE(ui::installTranslations(QString::fromLatin1(e.code)), QString::fromLatin1(e.code));
            ui::MainWindow window(dir.filePath(QStringLiteral("history.sqlite")));
            QCOMPARE(window.menuBar()->actions().value(0)->text(), QString::fromUtf8(e.file));
        }
        // The setting is what a start uses; empty follows the system.
        ui::setLanguageSetting(QStringLiteral("de"));
        QCOMPARE(ui::languageSetting(), QStringLiteral("de"));
        ui::setLanguageSetting({});
        QCOMPARE(ui::languageSetting(), QString());
    }
};

QTEST_MAIN(TestTranslations)
#include "tst_translations.moc"
