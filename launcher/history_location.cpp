// See history_location.h.
#include "launcher/history_location.h"

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>

namespace trellis::launcher {

bool isServerHistory(const QString &database)
{
    return database.startsWith(QLatin1String("postgresql://"), Qt::CaseInsensitive) ||
           database.startsWith(QLatin1String("postgres://"), Qt::CaseInsensitive);
}

QString historyIdentity(const QString &database)
{
    if (database.isEmpty() || isServerHistory(database))
        return database;
    return QFileInfo(database).absoluteFilePath();
}

QString historyLocalFolder(const QString &database)
{
    if (isServerHistory(database) || database.isEmpty())
        return QFileInfo(defaultHistoryFile()).absolutePath();
    return QFileInfo(database).absolutePath();
}

QString defaultHistoryFile()
{
    return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + QStringLiteral("/history.sqlite");
}

QString defaultHistory()
{
    const QString fromEnvironment = qEnvironmentVariable("TRELLIS_HISTORY").trimmed();
    return fromEnvironment.isEmpty() ? defaultHistoryFile() : fromEnvironment;
}

QString planHistory(const QString &named, const QString &planPath)
{
    if (named.isEmpty() || isServerHistory(named))
        return named;
    return QDir::cleanPath(QFileInfo(planPath).absoluteDir().absoluteFilePath(named));
}

QString historyForPlan(const QString &named, const QString &planPath, bool given, const QString &database)
{
    return given || named.isEmpty() ? database : planHistory(named, planPath);
}

} // namespace trellis::launcher
