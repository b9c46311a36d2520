// --inject as the run's owner takes it, for tests of supervision and recovery: a fault fires in
// the attempt the syntax names, so a run with restarts allowed gets past a fault injected once.
//   KIND@RANK:STEP      the first attempt only
//   KIND@RANK:STEP/N    attempt N only (1 is the first; a restart is attempt 2, 3, ...)
//   KIND@RANK:STEP/*    every attempt (the same failure each time: a budget that runs out)
// The trainer is given the plain KIND@RANK:STEP in the attempts it fires in, nothing otherwise.
#pragma once

#include <QString>
#include <QStringList>

#include <optional>

namespace trellis::launcher {

struct InjectedFault {
    QString trainerSpec; // KIND@RANK:STEP, as trellis-trainer --inject takes it
    int attempt = 1;     // the attempt it fires in (1-based); 0: every attempt
    bool firesIn(int n) const { return attempt == 0 || attempt == n; }
};

// nullopt and `error` naming what is wrong for anything else.
std::optional<InjectedFault> parseInjectedFault(const QString &text, QString &error);

// extraTrainerArgs for attempt `attempt` (1-based): each "--inject SPEC" pair becomes
// "--inject KIND@RANK:STEP" where it fires in that attempt and is left out where it does not;
// other arguments pass unchanged. A malformed SPEC sets `error` (and is left out).
QStringList trainerArgsForAttempt(const QStringList &extraTrainerArgs, int attempt, QString &error);

} // namespace trellis::launcher
