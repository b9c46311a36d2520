// See programs.h.
#include "launcher/programs.h"

#include <QCoreApplication>

namespace trellis::launcher {

QString supervisorProgram()
{
    const QString env = qEnvironmentVariable("TRELLIS_CLI");
    if (!env.isEmpty())
        return env;
    return QCoreApplication::applicationDirPath() + QStringLiteral("/trellis-cli");
}

} // namespace trellis::launcher
