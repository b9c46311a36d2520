// What a supervised run prints to the terminal (run_console.h).
#include "launcher/cli/run_console.h"

#include "launcher/cli/cli_support.h"
#include "launcher/history/history_writer.h"
#include "launcher/supervisor/supervisor.h"

#include <QCoreApplication>

#include <algorithm>

namespace trellis::launcher::cli {
namespace {

QString formatEta(double seconds)
{
    if (!(seconds >= 0) || seconds > 1e7)
        return QStringLiteral("--:--");
    const int s = static_cast<int>(seconds + 0.5);
    return QStringLiteral("%1:%2").arg(s / 60).arg(s % 60, 2, 10, QLatin1Char('0'));
}

// The progress line: redrawn in place on a terminal, else printed once per tenth of the run.
void printProgress(const Supervisor &supervisor, RunConsole &console)
{
    if (console.quiet)
        return;
    const RunProgress p = supervisor.progress();
    if (p.step <= 0)
        return;
    const double fraction = p.totalSteps > 0 ? double(p.step) / p.totalSteps : 0;
    const double eta = p.step > 0 ? console.clock.elapsed() / 1000.0 * (1.0 / std::max(fraction, 1e-9) - 1.0) : -1;
    const int width = 28;
    const int filled = static_cast<int>(fraction * width);
    const QString line = QStringLiteral("[%1%2] step %3/%4  loss %5  %6 tok/s  ETA %7")
                             .arg(QString(filled, QLatin1Char('#')), QString(width - filled, QLatin1Char('.')))
                             .arg(p.step)
                             .arg(p.totalSteps)
                             .arg(p.loss, 0, 'f', 4)
                             .arg(p.tokensPerS, 0, 'f', 0)
                             .arg(formatEta(eta));
    if (console.tty) {
        err() << "\r" << line << "\x1b[K" << Qt::flush;
    } else {
        const int decile = static_cast<int>(fraction * 10);
        if (decile != console.lastPrintedDecile) {
            console.lastPrintedDecile = decile;
            err() << line << Qt::endl;
        }
    }
}

} // namespace

void connectConsole(Supervisor &supervisor, RunConsole &console)
{
    Supervisor *const c = &supervisor;
    RunConsole *const con = &console;
    QObject::connect(c, &Supervisor::stepsArrived, c, [c, con] { printProgress(*c, *con); });
    QObject::connect(c, &Supervisor::finished, c, [](RunState, int, const QString &) { QCoreApplication::quit(); });
    QObject::connect(c, &Supervisor::alert, c, [con](const QString &kind, const QString &message) {
        // Restarts print as they start and failures (hangs included) at the end.
        if (kind != QLatin1String("restart") && kind != QLatin1String("failure") && kind != QLatin1String("hang"))
            err() << (con->tty && !con->quiet ? "\n" : "") << message << Qt::endl;
    });
    QObject::connect(c, &Supervisor::stallEnded, c, [con](const QString &message) {
        err() << (con->tty && !con->quiet ? "\n" : "") << message << Qt::endl;
    });
    QObject::connect(c, &Supervisor::restarting, c, [con](int, const QString &message) {
        err() << (con->tty && !con->quiet ? "\n" : "") << message << Qt::endl;
    });
    QObject::connect(c, &Supervisor::batchJobChanged, c, [con](const QString &, const QString &text) {
        if (!con->quiet)
            err() << (con->tty ? "\n" : "") << text << Qt::endl;
    });
}

bool printRunEnd(const Supervisor &supervisor, HistoryWriter &writer, const RunConsole &console)
{
    if (console.tty && !console.quiet)
        err() << Qt::endl;

    if (!writer.flush(15000))
        err() << "history: rows still wait to be written 15 s after the run (" << writer.lastError().trimmed()
              << "); trying 10 s more" << Qt::endl;
    writer.stop(); // gives up what it still could not write, said by lastError()
    const RunProgress p = supervisor.progress();
    const double seconds = console.clock.elapsed() / 1000.0;
    if (supervisor.firstTelemetryMs() >= 0 && !console.quiet)
        err() << "first telemetry " << supervisor.firstTelemetryMs() << " ms after launch" << Qt::endl;
    if (supervisor.state() == RunState::Completed) {
        out() << "completed " << p.step << " steps in " << QString::number(seconds, 'f', 1) << " s; final loss "
              << QString::number(p.loss, 'f', 4) << "; " << QString::number(p.tokensPerS, 'f', 0) << " tokens/s"
              << Qt::endl;
    } else {
        err() << "run " << supervisor.runId() << " " << toString(supervisor.state()) << ": " << supervisor.failureMessage()
              << Qt::endl;
    }
    const ReceiverStats stats = supervisor.receiverStats();
    if (stats.rejected > 0 || stats.lost > 0)
        err() << "telemetry: " << stats.received << " messages, " << stats.lost << " lost, " << stats.rejected
              << " rejected" << (stats.lastRejection.isEmpty() ? QString() : QStringLiteral(" (") + stats.lastRejection + ')')
              << Qt::endl;
    if (writer.notWritten() == 0)
        return true;
    err() << "history: " << writer.lastError() << Qt::endl;
    return false;
}

} // namespace trellis::launcher::cli
