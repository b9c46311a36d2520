// Every field path plan_validate.cpp can put in a diagnostic, read from its source: the literal
// paths ("parallel.tp") and the per-node ones built as "cluster.nodes[" + i + "]" + ".host" (given
// here for node 0). Shared by the tests that check each such path is a plan field and has a control.
#pragma once

#include <QFile>
#include <QRegularExpression>
#include <QStringList>

namespace trellis::test {

inline QStringList validatorFieldPaths()
{
    QFile source(QStringLiteral(TRELLIS_SOURCE_DIR "/backend/plan/plan_validate.cpp"));
    if (!source.open(QIODevice::ReadOnly))
        return {};
    const QString text = QString::fromUtf8(source.readAll());
    QStringList paths;
    static const QRegularExpression literal(
        QStringLiteral("\"((?:model|cluster|parallel|training|telemetry|launch)(?:\\.[a-z_]+)*)\""));
    for (auto it = literal.globalMatch(text); it.hasNext();)
        paths << it.next().captured(1);
    static const QRegularExpression perNode(QStringLiteral("(?:path \\+ \"|\"\\])\\.([a-z_]+)\""));
    for (auto it = perNode.globalMatch(text); it.hasNext();)
        paths << QStringLiteral("cluster.nodes[0].") + it.next().captured(1);
    // The literals include the dynamic paths' own prefixes and a few checked words; keep only paths.
    paths.removeDuplicates();
    paths.sort();
    return paths;
}

} // namespace trellis::test
