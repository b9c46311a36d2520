// trellis-cli: the headless twin of the workbench. Composition root only; the commands live in
// launcher/cli_commands.
#include "launcher/cli_commands.h"

#include <QCoreApplication>

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("trellis"));
    QCoreApplication::setApplicationVersion(QStringLiteral(TRELLIS_VERSION));
    return trellis::launcher::runCli(app.arguments().mid(1));
}
