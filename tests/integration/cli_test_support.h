// What the trellis-cli integration tests share: the programs, the quick 4-rank plan, and running
// trellis-cli to completion with its exit code and output.
#pragma once

#include <QProcess>
#include <QString>
#include <QStringList>

namespace trellis::test {

inline const QString kCli = QStringLiteral(TRELLIS_BINARY_DIR "/bin/trellis-cli");
inline const QString kPlan = QStringLiteral(TRELLIS_SOURCE_DIR "/tests/data/plans/dp4_short.json");

struct Result {
    int code = -1;
    QString out, err;
};

inline Result cli(const QStringList &args, int timeoutMs = 240000)
{
    QProcess p;
    p.start(kCli, args);
    Result r;
    if (!p.waitForFinished(timeoutMs)) {
        p.kill();
        p.waitForFinished();
        r.err = QStringLiteral("timed out");
        return r;
    }
    r.code = p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1;
    r.out = QString::fromUtf8(p.readAllStandardOutput());
    r.err = QString::fromUtf8(p.readAllStandardError());
    return r;
}


} // namespace trellis::test
