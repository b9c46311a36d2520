// trellis-cli: the headless twin of the workbench. Composition root only; the commands live in
// launcher/cli_commands.
#include "launcher/cli_commands.h"

#include <QCoreApplication>
#include <QGuiApplication>

#include <cstring>
#include <memory>

int main(int argc, char **argv)
{
    // A PDF report lays out text and draws charts: that needs Qt GUI (offscreen, no display).
    // Everything else stays a plain core application.
    bool pdf = false;
    for (int i = 1; i < argc; ++i) {
        const std::size_t n = std::strlen(argv[i]);
        pdf = pdf || (n > 4 && (std::strcmp(argv[i] + n - 4, ".pdf") == 0 || std::strcmp(argv[i] + n - 4, ".PDF") == 0));
    }
    std::unique_ptr<QCoreApplication> app;
    if (pdf) {
        qputenv("QT_QPA_PLATFORM", "offscreen");
        app = std::make_unique<QGuiApplication>(argc, argv);
    } else {
        app = std::make_unique<QCoreApplication>(argc, argv);
    }
    QCoreApplication::setApplicationName(QStringLiteral("trellis"));
    QCoreApplication::setApplicationVersion(QStringLiteral(TRELLIS_VERSION));
    return trellis::launcher::runCli(QCoreApplication::arguments().mid(1));
}
