// See history_engine.h.
#include "launcher/history/history_engine.h"

#include <QMetaType>
#include <QRegularExpression>

#include <libpq-fe.h>

#include <pwd.h>
#include <unistd.h>

namespace trellis::launcher {

HistoryEngine historyEngineOf(const QString &database)
{
    return isServerHistory(database) ? HistoryEngine::Postgres : HistoryEngine::Sqlite;
}

QString parseServerConnection(const QString &url, ServerConnection *out)
{
    char *why = nullptr;
    PQconninfoOption *options = PQconninfoParse(url.toUtf8().constData(), &why);
    if (!options) {
        QString text = why ? QString::fromUtf8(why).trimmed() : QStringLiteral("out of memory");
        PQfreemem(why);
        return QStringLiteral("not a PostgreSQL connection string: %1").arg(text);
    }
    ServerConnection c;
    QString error;
    for (PQconninfoOption *o = options; o->keyword; ++o) {
        if (!o->val || !*o->val)
            continue;
        const QString key = QString::fromUtf8(o->keyword);
        const QString value = QString::fromUtf8(o->val);
        if (key == QLatin1String("password"))
            error = QStringLiteral("the connection string holds a password: give it in ~/.pgpass, PGPASSWORD or a "
                                   "service file (pg_service.conf), never on a command line, in a plan or in a log");
        else if (key == QLatin1String("host"))
            c.host = value;
        else if (key == QLatin1String("port"))
            c.port = value;
        else if (key == QLatin1String("dbname"))
            c.dbname = value;
        else if (key == QLatin1String("user"))
            c.user = value;
        else if (value.contains(QLatin1Char(';')) || value.contains(QLatin1Char(' ')) || value.contains(QLatin1Char('\'')))
            error = QStringLiteral("connection option %1 holds a space, ' or ;, which this connection cannot pass on").arg(key);
        else
            c.options << key + QLatin1Char('=') + value;
    }
    PQconninfoFree(options);
    if (!error.isEmpty())
        return error;
    if (out)
        *out = c;
    return {};
}

QString withoutPassword(const QString &url)
{
    static const QRegularExpression userInfo(QStringLiteral("^(postgres(?:ql)?://[^:/@?]*):[^@/?]*@"), QRegularExpression::CaseInsensitiveOption);
    static const QRegularExpression parameter(QStringLiteral("([?&]password=)[^&]*"), QRegularExpression::CaseInsensitiveOption);
    return QString(url).replace(userInfo, QStringLiteral("\\1:***@")).replace(parameter, QStringLiteral("\\1***"));
}

QString postgresDdl(const QString &sqliteStatement)
{
    QString s = sqliteStatement;
    s.replace(QStringLiteral("INTEGER PRIMARY KEY AUTOINCREMENT"), QStringLiteral("BIGSERIAL PRIMARY KEY"));
    static const QRegularExpression integer(QStringLiteral("\\bINTEGER\\b"));
    static const QRegularExpression real(QStringLiteral("\\bREAL\\b"));
    static const QRegularExpression blob(QStringLiteral("\\bBLOB\\b"));
    s.replace(integer, QStringLiteral("BIGINT"));
    s.replace(real, QStringLiteral("DOUBLE PRECISION"));
    s.replace(blob, QStringLiteral("BYTEA"));
    static const QRegularExpression table(QStringLiteral("^CREATE TABLE (IF NOT EXISTS )?\\w+\\("));
    if (table.match(s).hasMatch() && !s.contains(QLatin1String("BIGSERIAL PRIMARY KEY")) && s.endsWith(QLatin1Char(')')))
        s.insert(s.size() - 1, QStringLiteral(", rowid BIGSERIAL"));
    return s;
}

QString sqlGreatest(HistoryEngine engine, const QString &a, const QString &b)
{
    return QStringLiteral("%1(%2, %3)").arg(engine == HistoryEngine::Postgres ? QStringLiteral("greatest") : QStringLiteral("max"), a, b);
}

QString sqlNewline(HistoryEngine engine)
{
    return engine == HistoryEngine::Postgres ? QStringLiteral("chr(10)") : QStringLiteral("char(10)");
}

QString sqlTagLines(HistoryEngine engine)
{
    if (engine == HistoryEngine::Postgres)
        return QStringLiteral("(SELECT string_agg(tag, chr(10) ORDER BY tag) FROM run_tags t WHERE t.run = r.id)");
    return QStringLiteral("(SELECT group_concat(tag, char(10)) FROM (SELECT tag FROM run_tags t WHERE t.run = r.id ORDER BY tag))");
}

QString sqlOwner(HistoryEngine engine)
{
    if (engine == HistoryEngine::Postgres)
        return QStringLiteral("current_user");
    const passwd *entry = ::getpwuid(::geteuid());
    QString name = entry && entry->pw_name ? QString::fromLocal8Bit(entry->pw_name) : qEnvironmentVariable("USER");
    return QLatin1Char('\'') + name.replace(QLatin1Char('\''), QStringLiteral("''")) + QLatin1Char('\'');
}

QString sqlLikeInsensitive(HistoryEngine engine)
{
    // SQLite's LIKE ignores the case of ASCII letters; PostgreSQL's ILIKE ignores every letter's.
    return engine == HistoryEngine::Postgres ? QStringLiteral("ILIKE") : QStringLiteral("LIKE");
}

namespace {
// A plan field as text: SQLite's json_extract gives numbers as numbers and text as text, which
// SQL's || writes alike; PostgreSQL's #>> gives both as text.
QString fieldText(HistoryEngine engine, const QString &json, const QString &path)
{
    if (engine == HistoryEngine::Postgres)
        return QStringLiteral("((%1)::jsonb #>> '{%2}')").arg(json, QString(path).replace(QLatin1Char('.'), QLatin1Char(',')));
    return QStringLiteral("json_extract(%1, '$.%2')").arg(json, path);
}
} // namespace

QString planNameSql(HistoryEngine engine, const QString &json) { return fieldText(engine, json, QStringLiteral("name")); }

QString planPrecisionSql(HistoryEngine engine, const QString &json)
{
    return fieldText(engine, json, QStringLiteral("parallel.precision"));
}

QString planLayoutSql(HistoryEngine engine, const QString &json)
{
    const bool pg = engine == HistoryEngine::Postgres;
    const auto field = [&](const char *name) {
        return QStringLiteral("coalesce(%1, %2)").arg(fieldText(engine, json, QStringLiteral("parallel.") + QLatin1String(name)),
                                                       pg ? QStringLiteral("'1'") : QStringLiteral("1"));
    };
    const auto above1 = [&](const char *name) {
        return pg ? QStringLiteral("(%1)::numeric > 1").arg(field(name)) : QStringLiteral("%1 > 1").arg(field(name));
    };
    const QString noParallel = pg ? QStringLiteral("(%1)::jsonb -> 'parallel' IS NULL").arg(json)
                                  : QStringLiteral("json_type(%1, '$.parallel') IS NULL").arg(json);
    return QStringLiteral("CASE WHEN %1 THEN NULL ELSE"
                          " 'dp' || %2 || ' tp' || %3 || ' pp' || %4"
                          " || CASE WHEN %5 THEN ' cp' || %6 ELSE '' END"
                          " || CASE WHEN %7 THEN ' ep' || %8 ELSE '' END END")
        .arg(noParallel, field("dp"), field("tp"), field("pp"), above1("cp"), field("cp"), above1("ep"), field("ep"));
}

QString planFieldSql(HistoryEngine engine, const QString &json)
{
    if (engine == HistoryEngine::Sqlite)
        return QStringLiteral("json_extract(%1, ?)").arg(json);
    // jsonb compares numbers as numbers and text as text, as SQLite's json_extract values do;
    // true and false read as 1 and 0, as json_extract gives them.
    return QStringLiteral("(SELECT CASE jsonb_typeof(v) WHEN 'boolean' THEN to_jsonb(CASE WHEN v = 'true'::jsonb THEN 1 ELSE 0 END)"
                          " ELSE v END FROM (SELECT jsonb_path_query_first((%1)::jsonb, CAST(? AS jsonpath)) AS v) f)")
        .arg(json);
}

QString planValueSql(HistoryEngine engine, int metaType)
{
    if (engine == HistoryEngine::Sqlite)
        return QStringLiteral("?");
    switch (metaType) {
    case QMetaType::Int:
    case QMetaType::LongLong:
    case QMetaType::UInt:
    case QMetaType::ULongLong:
    case QMetaType::Double:
    case QMetaType::Bool:
        return QStringLiteral("to_jsonb(CAST(? AS double precision))");
    default:
        return QStringLiteral("to_jsonb(CAST(? AS text))");
    }
}

} // namespace trellis::launcher
