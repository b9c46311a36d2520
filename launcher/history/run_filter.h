// What the runs list is narrowed to: one line typed in the History filter bar or given to
// `trellis-cli runs --filter`. Words are matched, case-insensitively, against a run's id, name,
// note and tags; the rest are terms:
//   status:failed[,stopped…]   the run's status (launching, running, completed, failed, stopped)
//   kind:collected[,…]         how the run came to be (launched, simulated, collected, adopted)
//   tag:NAME                   runs carrying the tag
//   owner:NAME, owner:me       runs NAME (a database role, or a user for a file) recorded; me:
//                              whoever reads (the role connected, this user)
//   after:YYYY-MM-DD           started on or after that day (local time)
//   before:YYYY-MM-DD          started before that day
//   archived:yes|no|any        archived runs are left out unless asked for
//   PATH OP VALUE              a field of the run's recorded plan, with OP one of = != < <= > >=:
//                              parallel.tp=2, model.preset=llama2-70b, training.steps>=1000
// "double quotes" keep spaces in a word or a value. parseRunFilter() never touches the history;
// the workbench calls it as the text is typed to say what does not parse.
#pragma once

#include "launcher/history/history_engine.h"

#include <QDate>
#include <QList>
#include <QString>
#include <QStringList>
#include <QVariant>

namespace trellis::launcher {

struct PlanFieldCondition {
    QString path;   // as plan_fields.h names fields: "parallel.tp", "cluster.nodes[0].slots"
    QString op;     // = != < <= > >=
    QVariant value; // a number, a string, or true/false as 1/0
};

struct RunFilter {
    QStringList words;     // free text, every word must match
    QStringList statuses;  // any of them; empty: all
    QStringList kinds;     // any of them (run_types.h RunKind, as written); empty: all
    QStringList tags;      // every one of them
    QStringList owners;    // any of them; "me": whoever reads; empty: all
    QDate after, before;   // invalid: open
    enum class Archived { No, Yes, Any } archived = Archived::No;
    QList<PlanFieldCondition> fields;
    bool isEmpty() const
    {
        return words.isEmpty() && statuses.isEmpty() && kinds.isEmpty() && tags.isEmpty() && owners.isEmpty() && !after.isValid() && !before.isValid() &&
               archived == Archived::No && fields.isEmpty();
    }
};

struct RunFilterParse {
    RunFilter filter;
    QString error;  // empty: parsed; otherwise what does not parse, naming the term
    int errorAt = -1; // the offending term's first character in the text, -1 when none
};

RunFilterParse parseRunFilter(const QString &text);

// The WHERE clause (without the word) over `runs r` and its bound values, in order, in the
// engine's SQL.
struct RunFilterSql {
    QString where;
    QVariantList binds;
};
RunFilterSql runFilterSql(const RunFilter &filter, HistoryEngine engine = HistoryEngine::Sqlite);

// A tag: 1-64 characters of letters, digits and . _ - + : / = @. A note: up to 4,000 characters,
// no control characters but new lines and tabs. A run's name: 1-128 characters, no control
// characters. Each returns "" when the text is acceptable, otherwise why not (with the limit).
QString checkTag(const QString &tag);
QString checkNote(const QString &note);
QString checkRunName(const QString &name);

} // namespace trellis::launcher
