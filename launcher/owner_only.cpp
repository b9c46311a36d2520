// See owner_only.h.
#include "launcher/owner_only.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QStringList>

#include <sys/stat.h>

namespace trellis::launcher {

bool makeOwnerOnlyPath(const QString &dir)
{
    // The folders missing from the top down, so each one is made 0700 as it is created.
    QStringList missing;
    for (QString d = QDir::cleanPath(QFileInfo(dir).absoluteFilePath()); !QFileInfo::exists(d); d = QFileInfo(d).path()) {
        missing.prepend(d);
        if (QFileInfo(d).path() == d)
            break;
    }
    for (const QString &d : missing)
        if (!QDir().mkdir(d, QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner) && !QFileInfo(d).isDir())
            return false;
    return QFileInfo(dir).isDir();
}

bool prepareOwnerOnlyFile(const QString &file)
{
    if (QFileInfo::exists(file))
        return QFile::setPermissions(file, kOwnerOnlyFile);
    QFile f(file);
    return f.open(QIODevice::WriteOnly, kOwnerOnlyFile);
}

void ownerOnlyUmask()
{
    ::umask(077);
}

} // namespace trellis::launcher
