// trellis-cli's subcommands: validate, run, runs, export, report. Lives in the launcher so the
// executable in app/ is only a composition root. Output conventions: results on stdout, errors on
// stderr as "trellis-cli: <what>: <why>", exit 0 on success, 1 on failure, 2 on bad usage.
#pragma once

#include <QStringList>

namespace trellis::launcher {

// `arguments` excludes the program name. Needs a Q(Core)Application to exist.
int runCli(const QStringList &arguments);

} // namespace trellis::launcher
