// Text helpers shared by the ssh target's two files (ssh_target.cpp, ssh_preflight.cpp).
#pragma once

#include <QByteArray>
#include <QString>

namespace trellis::launcher::ssh {

QString firstLine(const QByteArray &bytes); // a program's output: its first line, trimmed
QString remotePath(const QString &path);    // "~/x" as the remote shell sees it (relative to the login folder)
QString expandHome(const QString &path);    // "~/x" here

} // namespace trellis::launcher::ssh
