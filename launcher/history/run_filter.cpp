// See run_filter.h.
#include "launcher/history/run_filter.h"
#include "launcher/run_types.h"

#include "backend/plan/plan_fields.h"

#include <QDateTime>
#include <QRegularExpression>

namespace trellis::launcher {
namespace {

struct Token {
    QString text;
    int at = 0;
};

// Splits on white space outside double quotes; the quotes themselves are dropped.
bool tokenize(const QString &text, QList<Token> &tokens, QString &error, int &errorAt)
{
    Token current;
    bool inQuotes = false, inToken = false;
    int quoteAt = -1;
    for (int i = 0; i < text.size(); ++i) {
        const QChar c = text[i];
        if (c == QLatin1Char('"')) {
            if (!inToken) {
                current = Token{QString(), i};
                inToken = true;
            }
            inQuotes = !inQuotes;
            quoteAt = i;
            continue;
        }
        if (c.isSpace() && !inQuotes) {
            if (inToken)
                tokens.append(current);
            inToken = false;
            continue;
        }
        if (!inToken) {
            current = Token{QString(), i};
            inToken = true;
        }
        current.text += c;
    }
    if (inQuotes) {
        error = QStringLiteral("a double quote at %1 is not closed").arg(quoteAt + 1);
        errorAt = quoteAt;
        return false;
    }
    if (inToken)
        tokens.append(current);
    return true;
}

const QStringList &knownStatuses()
{
    static const QStringList statuses = {QStringLiteral("launching"), QStringLiteral("running"), QStringLiteral("completed"),
                                         QStringLiteral("failed"), QStringLiteral("stopped")};
    return statuses;
}

QVariant typedValue(const QString &value)
{
    bool number = false;
    const double d = value.toDouble(&number);
    if (number)
        return d;
    if (value == QLatin1String("true"))
        return 1;
    if (value == QLatin1String("false"))
        return 0;
    if (value == QLatin1String("null"))
        return QVariant();
    return value;
}

QString likePattern(const QString &word)
{
    QString escaped = word;
    escaped.replace(QLatin1Char('\\'), QStringLiteral("\\\\"));
    escaped.replace(QLatin1Char('%'), QStringLiteral("\\%"));
    escaped.replace(QLatin1Char('_'), QStringLiteral("\\_"));
    return QLatin1Char('%') + escaped + QLatin1Char('%');
}

QString dayStartUtc(const QDate &day)
{
    return QDateTime(day, QTime(0, 0)).toUTC().toString(Qt::ISODateWithMs);
}

// key:value terms. Returns false with error set when the key is known and the value is not.
// `handled` is false for a word that is not such a term.
bool takeKeyTerm(const QString &key, const QString &value, RunFilter &f, QString &error, bool &handled)
{
    handled = true;
    if (key == QLatin1String("status")) {
        for (const QString &s : value.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            if (!knownStatuses().contains(s.toLower())) {
                error = QStringLiteral("status:%1: no such status (%2)").arg(s, knownStatuses().join(QStringLiteral(", ")));
                return false;
            }
            f.statuses << s.toLower();
        }
        if (f.statuses.isEmpty()) {
            error = QStringLiteral("status: needs a status (%1)").arg(knownStatuses().join(QStringLiteral(", ")));
            return false;
        }
    } else if (key == QLatin1String("kind")) {
        const QString known = QStringLiteral("launched, simulated, collected, adopted");
        for (const QString &k : value.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
            RunKind kind;
            if (!runKindFromString(k.toLower(), &kind)) {
                error = QStringLiteral("kind:%1: no such kind (%2)").arg(k, known);
                return false;
            }
            f.kinds << toString(kind);
        }
        if (f.kinds.isEmpty()) {
            error = QStringLiteral("kind: needs a kind (%1)").arg(known);
            return false;
        }
    } else if (key == QLatin1String("tag")) {
        if (const QString why = checkTag(value); !why.isEmpty()) {
            error = QStringLiteral("tag:%1: %2").arg(value, why);
            return false;
        }
        f.tags << value;
    } else if (key == QLatin1String("owner")) {
        for (const QString &o : value.split(QLatin1Char(','), Qt::SkipEmptyParts))
            f.owners << o;
        if (f.owners.isEmpty()) {
            error = QStringLiteral("owner: needs a name (a database role, a user) or me");
            return false;
        }
    } else if (key == QLatin1String("after") || key == QLatin1String("before")) {
        const QDate day = QDate::fromString(value, Qt::ISODate);
        if (!day.isValid()) {
            error = QStringLiteral("%1:%2: not a date (YYYY-MM-DD)").arg(key, value);
            return false;
        }
        (key == QLatin1String("after") ? f.after : f.before) = day;
    } else if (key == QLatin1String("archived")) {
        if (value == QLatin1String("yes"))
            f.archived = RunFilter::Archived::Yes;
        else if (value == QLatin1String("no"))
            f.archived = RunFilter::Archived::No;
        else if (value == QLatin1String("any"))
            f.archived = RunFilter::Archived::Any;
        else {
            error = QStringLiteral("archived:%1: say yes, no or any").arg(value);
            return false;
        }
    } else {
        handled = false;
    }
    return true;
}

// PATH OP VALUE. `handled` is false when the word holds no operator.
bool takeFieldTerm(const QString &word, RunFilter &f, QString &error, bool &handled)
{
    static const QRegularExpression op(QStringLiteral("(!=|<=|>=|=|<|>)"));
    const QRegularExpressionMatch m = op.match(word);
    handled = m.hasMatch();
    if (!handled)
        return true;
    const QString path = word.left(m.capturedStart()).trimmed();
    const QString value = word.mid(m.capturedEnd()).trimmed();
    if (path.isEmpty()) {
        error = QStringLiteral("%1: a plan field is needed before '%2' (e.g. parallel.tp=2)").arg(word, m.captured());
        return false;
    }
    if (!plan::isPlanFieldPath(path.toStdString())) {
        error = QStringLiteral("%1: no plan field '%2' (fields as `trellis-cli plan get` names them, e.g. parallel.tp or model.preset)")
                    .arg(word, path);
        return false;
    }
    if (value.isEmpty()) {
        error = QStringLiteral("%1: a value is needed after '%2'").arg(word, m.captured());
        return false;
    }
    f.fields.append({path, m.captured(), typedValue(value)});
    return true;
}

} // namespace

RunFilterParse parseRunFilter(const QString &text)
{
    RunFilterParse out;
    QList<Token> tokens;
    if (!tokenize(text, tokens, out.error, out.errorAt))
        return out;
    static const QRegularExpression keyTerm(QStringLiteral("^([a-z]+):(.*)$"));
    for (const Token &t : tokens) {
        bool handled = false;
        bool ok = true;
        if (const QRegularExpressionMatch m = keyTerm.match(t.text); m.hasMatch())
            ok = takeKeyTerm(m.captured(1), m.captured(2), out.filter, out.error, handled);
        if (ok && !handled)
            ok = takeFieldTerm(t.text, out.filter, out.error, handled);
        if (!ok) {
            out.errorAt = t.at;
            out.filter = RunFilter();
            return out;
        }
        if (!handled)
            out.filter.words << t.text;
    }
    return out;
}

RunFilterSql runFilterSql(const RunFilter &f, HistoryEngine engine)
{
    const QString like = sqlLikeInsensitive(engine);
    RunFilterSql out;
    QStringList clauses;
    for (const QString &word : f.words) {
        clauses << QStringLiteral("(r.run_id %1 ? ESCAPE '\\' OR coalesce(r.name, '') %1 ? ESCAPE '\\'"
                                  " OR coalesce(r.note, '') %1 ? ESCAPE '\\'"
                                  " OR EXISTS(SELECT 1 FROM run_tags t WHERE t.run = r.id AND t.tag %1 ? ESCAPE '\\'))")
                       .arg(like);
        for (int i = 0; i < 4; ++i)
            out.binds << likePattern(word);
    }
    // "column IN (?,…)" for any of the values, each bound.
    const auto anyOf = [&](const char *column, const QStringList &values) {
        if (values.isEmpty())
            return;
        QStringList marks;
        for (const QString &v : values) {
            marks << QStringLiteral("?");
            out.binds << v;
        }
        clauses << QStringLiteral("%1 IN (%2)").arg(QLatin1String(column), marks.join(QLatin1Char(',')));
    };
    anyOf("r.status", f.statuses);
    anyOf("r.kind", f.kinds);
    if (!f.owners.isEmpty()) {
        QStringList marks;
        for (const QString &o : f.owners) {
            if (o == QLatin1String("me")) {
                marks << sqlOwner(engine);
            } else {
                marks << QStringLiteral("?");
                out.binds << o;
            }
        }
        clauses << QStringLiteral("r.owner IN (%1)").arg(marks.join(QLatin1Char(',')));
    }
    for (const QString &tag : f.tags) {
        clauses << QStringLiteral("EXISTS(SELECT 1 FROM run_tags t WHERE t.run = r.id AND t.tag = ?)");
        out.binds << tag;
    }
    if (f.after.isValid()) {
        clauses << QStringLiteral("r.started_at >= ?");
        out.binds << dayStartUtc(f.after);
    }
    if (f.before.isValid()) {
        clauses << QStringLiteral("r.started_at < ?");
        out.binds << dayStartUtc(f.before);
    }
    if (f.archived != RunFilter::Archived::Any)
        clauses << (f.archived == RunFilter::Archived::Yes ? QStringLiteral("r.archived != 0") : QStringLiteral("r.archived = 0"));
    for (const PlanFieldCondition &c : f.fields) {
        // SQLite's IS and IS NOT compare with NULL too; PostgreSQL says IS [NOT] DISTINCT FROM.
        const bool pg = engine == HistoryEngine::Postgres;
        const QString is = pg ? QStringLiteral("IS NOT DISTINCT FROM") : QStringLiteral("IS");
        const QString isNot = pg ? QStringLiteral("IS DISTINCT FROM") : QStringLiteral("IS NOT");
        const QString op = c.value.isNull() ? (c.op == QLatin1String("!=") ? isNot : is)
                                            : (c.op == QLatin1String("!=") ? isNot : c.op);
        clauses << QStringLiteral("%1 %2 %3")
                       .arg(planFieldSql(engine, QStringLiteral("r.plan_json")), op, planValueSql(engine, c.value.typeId()));
        out.binds << QStringLiteral("$.") + c.path << c.value;
    }
    out.where = clauses.join(QStringLiteral(" AND "));
    return out;
}

QString checkTag(const QString &tag)
{
    static const QRegularExpression allowed(QStringLiteral("^[A-Za-z0-9._+:/=@-]+$"));
    if (tag.isEmpty())
        return QStringLiteral("a tag cannot be empty");
    if (tag.size() > 64)
        return QStringLiteral("a tag holds at most 64 characters (this one %1)").arg(tag.size());
    if (!allowed.match(tag).hasMatch())
        return QStringLiteral("a tag holds letters, digits and . _ - + : / = @ only");
    return {};
}

QString checkNote(const QString &note)
{
    if (note.size() > 4000)
        return QStringLiteral("a note holds at most 4000 characters (this one %1)").arg(note.size());
    for (const QChar c : note)
        if (c.category() == QChar::Other_Control && c != QLatin1Char('\n') && c != QLatin1Char('\t'))
            return QStringLiteral("a note cannot hold control characters (U+%1) but new lines and tabs")
                .arg(c.unicode(), 4, 16, QLatin1Char('0'));
    return {};
}

QString checkRunName(const QString &name)
{
    if (name.trimmed().isEmpty())
        return QStringLiteral("a run's name cannot be empty");
    if (name.size() > 128)
        return QStringLiteral("a run's name holds at most 128 characters (this one %1)").arg(name.size());
    for (const QChar c : name)
        if (c.category() == QChar::Other_Control)
            return QStringLiteral("a run's name cannot hold control characters (U+%1)").arg(c.unicode(), 4, 16, QLatin1Char('0'));
    return {};
}

} // namespace trellis::launcher
