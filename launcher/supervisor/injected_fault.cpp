// See injected_fault.h.
#include "launcher/supervisor/injected_fault.h"

#include <QRegularExpression>

#include <algorithm>

namespace trellis::launcher {

std::optional<InjectedFault> parseInjectedFault(const QString &text, QString &error)
{
    static const QRegularExpression syntax(
        QStringLiteral("^(crash|hang|slow|delay|nan|nanloss|throw|stall|pause|stop|nomem|slowcopy)@(\\d{1,9}):(\\d{1,9}(?:,\\d{1,9}){0,63})(?:/(\\d{1,4}|\\*))?$"));
    const auto m = syntax.match(text);
    if (!m.hasMatch()) {
        error = QStringLiteral("--inject expects KIND@RANK:STEP[,STEP...][/ATTEMPT|/*] with KIND one of crash, hang, slow, "
                               "delay, nan, nanloss, throw, stall, pause, stop, nomem, slowcopy (e.g. crash@1:5, pause@3:5,9,13, crash@1:5/2, "
                               "crash@1:5/*), got '%1'")
                    .arg(text);
        return std::nullopt;
    }
    const QStringList steps = m.captured(3).split(QLatin1Char(','));
    if (std::any_of(steps.begin(), steps.end(), [](const QString &s) { return s.toLongLong() < 1; })) {
        error = QStringLiteral("--inject: STEP must be >= 1 in '%1'").arg(text);
        return std::nullopt;
    }
    InjectedFault fault;
    fault.trainerSpec = m.captured(1) + QLatin1Char('@') + m.captured(2) + QLatin1Char(':') + m.captured(3);
    const QString attempt = m.captured(4);
    if (attempt == QLatin1String("*")) {
        fault.attempt = 0;
    } else if (!attempt.isEmpty()) {
        fault.attempt = attempt.toInt();
        if (fault.attempt < 1) {
            error = QStringLiteral("--inject: ATTEMPT must be >= 1 (1 is the first attempt) in '%1'").arg(text);
            return std::nullopt;
        }
    }
    return fault;
}

QStringList trainerArgsForAttempt(const QStringList &extraTrainerArgs, int attempt, QString &error)
{
    QStringList out;
    for (qsizetype i = 0; i < extraTrainerArgs.size(); ++i) {
        if (extraTrainerArgs[i] != QLatin1String("--inject")) {
            out << extraTrainerArgs[i];
            continue;
        }
        if (i + 1 >= extraTrainerArgs.size()) {
            error = QStringLiteral("--inject needs a value (KIND@RANK:STEP[/ATTEMPT|/*])");
            break;
        }
        const auto fault = parseInjectedFault(extraTrainerArgs[++i], error);
        if (fault && fault->firesIn(attempt))
            out << QStringLiteral("--inject") << fault->trainerSpec;
    }
    return out;
}

} // namespace trellis::launcher
