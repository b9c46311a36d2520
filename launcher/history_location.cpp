// See history_location.h.
#include "launcher/history_location.h"

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

} // namespace trellis::launcher

namespace trellis::launcher {

QString defaultHistory()
{
    const QString fromEnvironment = qEnvironmentVariable("TRELLIS_HISTORY").trimmed();
    return fromEnvironment.isEmpty() ? defaultHistoryFile() : fromEnvironment;
}

} // namespace trellis::launcher
