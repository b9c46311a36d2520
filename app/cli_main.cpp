// trellis-cli: the headless twin of the workbench. Composition root only; the commands live in
// launcher/cli_commands.
#include "launcher/cli/cli_commands.h"
#include "launcher/history/history_database.h"
#include "launcher/registry/run_registry.h"

#include <QCoreApplication>
#include <QGuiApplication>

#include <cstring>
#include <malloc.h>
#include <memory>

int main(int argc, char **argv)
{
    // Telemetry is decoded on the receiver's thread and freed on others: with glibc's default of
    // an arena per thread (up to 8 per core) a supervisor's resident memory crept up to ~1 GB at
    // 1024 ranks × 20 Hz before levelling off. Two arenas keep it near what is live.
    mallopt(M_ARENA_MAX, 2);
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
    trellis::launcher::HistoryDatabase::setRunLiveness(trellis::launcher::RunRegistry::liveness());
    return trellis::launcher::runCli(QCoreApplication::arguments().mid(1));
}
