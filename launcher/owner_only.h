// What a run writes for its owner — the history database, run folders, rank logs, plans, the
// supervisor's logs, and (through the processes it starts) checkpoints — is owner-only: files
// 0600, folders 0700, whatever the umask. On a shared login or compute node they hold plans, host
// names, output and weights that others should not read. Shared by every launcher folder.
#pragma once

#include <QFileDevice>
#include <QString>

namespace trellis::launcher {

// QDir::mkpath, with every folder it creates made 0700 as it is created (folders that already
// exist keep their mode).
bool makeOwnerOnlyPath(const QString &dir);
// Before a file is written: created empty at 0600, or an existing one made 0600, so what is
// written next is never readable by others (writers that truncate keep the mode).
bool prepareOwnerOnlyFile(const QString &file);
inline constexpr auto kOwnerOnlyFile = QFileDevice::ReadOwner | QFileDevice::WriteOwner; // for QFile::open
// umask 077 for this process and everything it starts (the job keeper, mpirun, the ranks and their
// checkpoints): called where a session of a run begins (Supervisor::start and adopt), so only
// the processes that own a run set it — trellis-cli run and adopt; the workbench starts those as
// supervisors and keeps its own umask for the files a person saves.
void ownerOnlyUmask();

} // namespace trellis::launcher
