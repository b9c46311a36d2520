// `trellis-cli slurm-job`: one launch attempt as a Slurm batch job, followed to its end. See
// slurm_target.h. Runs under the job keeper (its stdout/stderr are the run's); blocking calls are
// fine here: this process does nothing else.
#include "launcher/targets/slurm_target.h"

#include <QDateTime>
#include <QFile>
#include <QProcess>
#include <QThread>

#include <csignal>
#include <cstdio>

namespace trellis::launcher {

namespace {

volatile std::sig_atomic_t g_cancel = 0;
void onSignal(int) { g_cancel = 1; }

QString oneLine(const QByteArray &bytes)
{
    QString s = QString::fromUtf8(bytes).trimmed();
    s.replace(QLatin1Char('\n'), QStringLiteral(" / "));
    return s.left(400);
}

// A value for a "[slurm]" line: one word.
QString word(QString v)
{
    v = v.trimmed();
    if (v.isEmpty())
        return QStringLiteral("-");
    v.replace(QLatin1Char(' '), QLatin1Char('_'));
    return v;
}

void say(FILE *stream, const QString &text)
{
    const QByteArray bytes = text.toUtf8() + '\n';
    std::fwrite(bytes.constData(), 1, static_cast<size_t>(bytes.size()), stream);
    std::fflush(stream);
}

// Copies what a job output file gained since last time to `stream`, whole lines only (the rest
// waits for its newline, or for `flushAll` at the end).
struct Tail {
    QString path;
    FILE *stream;
    qint64 offset = 0;
    QByteArray partial;
    void pump(bool flushAll)
    {
        QFile f(path);
        if (f.open(QIODevice::ReadOnly) && f.size() > offset) {
            f.seek(offset);
            const QByteArray more = f.readAll();
            offset += more.size();
            partial += more;
        }
        const qsizetype end = flushAll ? partial.size() : partial.lastIndexOf('\n') + 1;
        if (end > 0) {
            QByteArray out = partial.left(end);
            if (flushAll && !out.endsWith('\n'))
                out += '\n';
            std::fwrite(out.constData(), 1, static_cast<size_t>(out.size()), stream);
            std::fflush(stream);
            partial.remove(0, end);
        }
    }
};

int usage(const QString &why)
{
    if (!why.isEmpty())
        say(stderr, QStringLiteral("trellis-cli slurm-job: %1").arg(why));
    say(why.isEmpty() ? stdout : stderr,
        QStringLiteral("usage: trellis-cli slurm-job --dir DIR --name NAME --nodes N --tasks-per-node K\n"
                       "         [--partition P] [--account A] [--qos Q] [--time T] [--gres G] [--poll-ms MS]\n"
                       "         -- PROGRAM [ARGS...]\n"
                       "Submits PROGRAM ARGS as a Slurm batch job (script DIR/slurm-job.sh, output DIR/slurm-ID.out/.err),\n"
                       "follows it with scontrol and squeue, prints its output and \"[slurm] job=ID state=...\" lines,\n"
                       "cancels it with scancel on SIGTERM/SIGINT/SIGHUP, and exits as the job ended: 0 completed, its\n"
                       "exit code if it failed, 143 cancelled, 124 time limit, 137 out of memory, 75 node failure.\n"
                       "The run supervisor starts it for plans with launch.target \"slurm\"."));
    return why.isEmpty() ? 0 : 2;
}

// Reads the options before "--" and the program after it into `r`. Returns the exit code when
// the command is done already (--help, or a usage error); nothing when the job should go ahead.
std::optional<int> parseSlurmJobArgs(const QStringList &args, SlurmJobRequest &r)
{
    int i = 0;
    for (; i < args.size(); ++i) {
        const QString &a = args[i];
        if (a == QLatin1String("--help") || a == QLatin1String("-h"))
            return usage({});
        if (a == QLatin1String("--"))
            break;
        if (i + 1 >= args.size())
            return usage(QStringLiteral("%1 needs a value").arg(a));
        const QString v = args[++i];
        bool ok = true;
        if (a == QLatin1String("--dir")) r.dir = v;
        else if (a == QLatin1String("--name")) r.name = v;
        else if (a == QLatin1String("--nodes")) r.nodes = v.toInt(&ok);
        else if (a == QLatin1String("--tasks-per-node")) r.tasksPerNode = v.toInt(&ok);
        else if (a == QLatin1String("--partition")) r.partition = v;
        else if (a == QLatin1String("--account")) r.account = v;
        else if (a == QLatin1String("--qos")) r.qos = v;
        else if (a == QLatin1String("--time")) r.time = v;
        else if (a == QLatin1String("--gres")) r.gres = v;
        else if (a == QLatin1String("--poll-ms")) r.pollMs = v.toInt(&ok);
        else return usage(QStringLiteral("unknown option %1").arg(a));
        if (!ok)
            return usage(QStringLiteral("%1 takes a number, not '%2'").arg(a, v));
    }
    if (i >= args.size() - 1)
        return usage(QStringLiteral("no program after --"));
    r.program = args[i + 1];
    r.arguments = args.mid(i + 2);
    if (r.dir.isEmpty() || r.name.isEmpty() || r.nodes < 1 || r.tasksPerNode < 1)
        return usage(QStringLiteral("--dir, --name, --nodes and --tasks-per-node are needed"));
    for (const QString &v : {r.name, r.partition, r.account, r.qos, r.time, r.gres, r.dir})
        for (QChar ch : v)
            if (ch.unicode() < 0x20 || ch == QLatin1Char(' ') || ch == QLatin1Char('\'') || ch == QLatin1Char('"') || ch == QLatin1Char('\\'))
                return usage(QStringLiteral("'%1' may not hold spaces, quotes, backslashes or control characters").arg(v));
    r.pollMs = std::clamp(r.pollMs, 200, 60000);
    return std::nullopt;
}

bool writeBatchScript(const SlurmJobRequest &r, const QString &script)
{
    QFile f(script);
    if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate) || f.write(slurmBatchScript(r).toUtf8()) < 0) {
        say(stderr, QStringLiteral("slurm-job: cannot write %1: %2").arg(script, f.errorString()));
        return false;
    }
    f.setPermissions(QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner);
    return true;
}

// Submits the script with sbatch and records the job id in DIR/slurm.jobid. Returns the job id,
// or an empty string (said on both streams) when sbatch refused the job.
QString submitBatchScript(const SlurmJobRequest &r, const QString &script)
{
    const SlurmCall submitted = callSlurm(QStringLiteral("sbatch"), {QStringLiteral("--parsable"), script});
    const QString jobId = QString::fromUtf8(submitted.out).trimmed().section(QLatin1Char(';'), 0, 0);
    bool numeric = false;
    jobId.toLongLong(&numeric);
    if (submitted.exitCode != 0 || !numeric) {
        say(stdout, QStringLiteral("[slurm] job=- state=SUBMIT_FAILED | sbatch refused the job: %1")
                        .arg(oneLine(submitted.err.isEmpty() ? submitted.out : submitted.err)));
        say(stderr, QStringLiteral("sbatch refused the job: %1").arg(oneLine(submitted.err.isEmpty() ? submitted.out : submitted.err)));
        return {};
    }
    {
        QFile f(r.dir + QStringLiteral("/slurm.jobid"));
        if (f.open(QIODevice::WriteOnly | QIODevice::Truncate))
            f.write(jobId.toUtf8() + '\n');
    }
    say(stdout, QStringLiteral("[slurm] job=%1 state=SUBMITTED | submitted %2 as Slurm job %1").arg(jobId, script));
    return jobId;
}

// Follows a submitted job to its end: copies its output files, cancels it when a signal asks,
// and says each change of its state as a "[slurm]" line.
class JobFollower
{
public:
    JobFollower(const SlurmJobRequest &r, const QString &jobId)
        : m_r(r), m_jobId(jobId), m_out{r.dir + QStringLiteral("/slurm-%1.out").arg(jobId), stdout, 0, {}},
          m_err{r.dir + QStringLiteral("/slurm-%1.err").arg(jobId), stderr, 0, {}}
    {
    }

    // Returns the exit code of `trellis-cli slurm-job` once the job has ended.
    int run()
    {
        while (true) {
            const qint64 now = QDateTime::currentMSecsSinceEpoch();
            if (g_cancel && !m_cancelSent)
                if (const std::optional<int> code = cancelJob(now))
                    return *code;
            m_out.pump(false);
            m_err.pump(false);
            if (now >= m_nextPoll)
                if (const std::optional<int> code = pollJob(now))
                    return *code;
            QThread::msleep(150);
        }
    }

private:
    // Asks scancel to cancel the job; gives up (exit 143) when that has failed for 60 s.
    std::optional<int> cancelJob(qint64 now)
    {
        if (m_cancelAsked == 0)
            m_cancelAsked = now;
        if (now - m_cancelAsked > 60000) {
            say(stderr, QStringLiteral("gave up cancelling Slurm job %1 after 60 s; it may still run: scancel %1").arg(m_jobId));
            return 143;
        }
        const SlurmCall c = callSlurm(QStringLiteral("scancel"), {m_jobId});
        if (c.exitCode == 0) {
            m_cancelSent = true;
            m_cancelAt = now;
            say(stdout, QStringLiteral("[slurm] job=%1 state=CANCELLING | cancelling Slurm job %1 (scancel %1)").arg(m_jobId));
            m_nextPoll = 0;
        } else if (now - m_cancelAt > 30000) {
            say(stderr, QStringLiteral("cannot cancel Slurm job %1: %2 (cancel it with: scancel %1)").arg(m_jobId, oneLine(c.err)));
            m_cancelAt = now;
        }
        return std::nullopt;
    }

    // Reads the job's state with scontrol (sacct once Slurm has forgotten it) and reports it.
    // Returns the exit code once the job has ended or can no longer be found.
    std::optional<int> pollJob(qint64 now)
    {
        m_nextPoll = now + (m_cancelSent ? 500 : m_r.pollMs);
        const SlurmCall shown = callSlurm(QStringLiteral("scontrol"), {QStringLiteral("show"), QStringLiteral("job"), QStringLiteral("-o"), m_jobId});
        QString error;
        std::optional<QMap<QString, QString>> fields;
        if (shown.exitCode == 0)
            fields = parseScontrolJob(shown.out, error);
        if (!fields && shown.err.contains("Invalid job id")) {
            fields = accountedEnd();
            if (!fields) {
                say(stdout, QStringLiteral("[slurm] job=%1 state=UNKNOWN | Slurm no longer knows job %1 and sacct has no record of it").arg(m_jobId));
                say(stderr, QStringLiteral("Slurm no longer knows job %1 and sacct has no record of how it ended").arg(m_jobId));
                m_out.pump(true);
                m_err.pump(true);
                return 1;
            }
        }
        if (!fields) {
            // The controller is away (restarting, overloaded) or said something unexpected: keep asking.
            if (m_unreachableSince == 0) {
                m_unreachableSince = now;
                say(stderr, QStringLiteral("cannot read Slurm job %1's state: %2").arg(m_jobId, error.isEmpty() ? oneLine(shown.err) : error));
            }
            return std::nullopt;
        }
        m_unreachableSince = 0;
        return reportState(*fields);
    }

    // Slurm forgot the job (MinJobAge passed): accounting may still know how it ended.
    std::optional<QMap<QString, QString>> accountedEnd() const
    {
        const SlurmCall acct = callSlurm(QStringLiteral("sacct"), {QStringLiteral("-j"), m_jobId, QStringLiteral("-n"), QStringLiteral("-P"), QStringLiteral("-X"),
                                                       QStringLiteral("-o"), QStringLiteral("State,ExitCode,NodeList")});
        const QStringList f = QString::fromUtf8(acct.out).trimmed().section(QLatin1Char('\n'), 0, 0).split(QLatin1Char('|'));
        if (acct.exitCode == 0 && f.size() >= 2 && isFinalSlurmState(f[0]))
            return QMap<QString, QString>{{QStringLiteral("JobId"), m_jobId}, {QStringLiteral("JobState"), f[0].section(QLatin1Char(' '), 0, 0)},
                                          {QStringLiteral("ExitCode"), f[1]}, {QStringLiteral("NodeList"), f.value(2)}};
        return std::nullopt;
    }

    // A pending job's place in its partition's queue (squeue): appended to `line`, and returned
    // as the detail; empty when squeue does not list it.
    QString queuePosition(const QMap<QString, QString> &job, QString &line) const
    {
        QStringList queue{QStringLiteral("-h"), QStringLiteral("-t"), QStringLiteral("PENDING"), QStringLiteral("-o"), QStringLiteral("%i"),
                          QStringLiteral("--sort=-p,i")};
        if (const QString part = job.value(QStringLiteral("Partition")); !part.isEmpty())
            queue << QStringLiteral("-p") << part;
        const SlurmCall q = callSlurm(QStringLiteral("squeue"), queue);
        const QStringList ids = QString::fromUtf8(q.out).split(QLatin1Char('\n'), Qt::SkipEmptyParts);
        const qsizetype at = ids.indexOf(m_jobId);
        if (q.exitCode != 0 || at < 0)
            return {};
        line += QStringLiteral(" position=%1/%2").arg(at + 1).arg(ids.size());
        const QString reason = job.value(QStringLiteral("Reason"));
        return QStringLiteral("Slurm job %1 pending%2, position %3 of %4 in the queue")
            .arg(m_jobId, reason.isEmpty() || reason == QLatin1String("None") ? QString() : QStringLiteral(" (%1)").arg(reason))
            .arg(at + 1)
            .arg(ids.size());
    }

    // Says the job's state when it changed; returns the exit code once the job has ended.
    std::optional<int> reportState(const QMap<QString, QString> &job)
    {
        const QString state = job.value(QStringLiteral("JobState")).section(QLatin1Char(' '), 0, 0);
        QString line = QStringLiteral("[slurm] job=%1 state=%2 reason=%3").arg(m_jobId, word(state), word(job.value(QStringLiteral("Reason"))));
        QString detail;
        if (state == QLatin1String("PENDING")) {
            detail = queuePosition(job, line);
        } else {
            const QString nodes = job.value(QStringLiteral("NodeList"));
            line += QStringLiteral(" nodes=%1").arg(word(nodes));
            if (state == QLatin1String("RUNNING") && !nodes.isEmpty() && nodes != QLatin1String("(null)"))
                detail = QStringLiteral("Slurm job %1 running on %2").arg(m_jobId, nodes);
        }
        const bool final = isFinalSlurmState(state);
        if (final) {
            line += QStringLiteral(" exit=%1").arg(word(job.value(QStringLiteral("ExitCode"))));
            detail = describeSlurmEnd(job);
        }
        if (line != m_lastSaid) {
            m_lastSaid = line;
            say(stdout, detail.isEmpty() ? line : line + QStringLiteral(" | ") + detail);
        }
        if (!final)
            return std::nullopt;
        // The output files are complete once the job is: copy their ends.
        QThread::msleep(200);
        m_out.pump(true);
        m_err.pump(true);
        if (state != QLatin1String("COMPLETED") && !(m_cancelSent && state == QLatin1String("CANCELLED")))
            say(stderr, detail);
        return slurmExitCode(state, job.value(QStringLiteral("ExitCode")));
    }

    const SlurmJobRequest &m_r;
    const QString m_jobId;
    Tail m_out;
    Tail m_err;
    QString m_lastSaid;
    bool m_cancelSent = false;
    qint64 m_cancelAt = 0;
    qint64 m_cancelAsked = 0;
    qint64 m_nextPoll = 0;
    qint64 m_unreachableSince = 0;
};

} // namespace

int runSlurmJob(const QStringList &args)
{
    SlurmJobRequest r;
    if (const std::optional<int> code = parseSlurmJobArgs(args, r))
        return *code;

    std::signal(SIGTERM, onSignal);
    std::signal(SIGINT, onSignal);
    std::signal(SIGHUP, onSignal);

    const QString script = r.dir + QStringLiteral("/slurm-job.sh");
    if (!writeBatchScript(r, script))
        return 1;
    const QString jobId = submitBatchScript(r, script);
    if (jobId.isEmpty())
        return 1;
    return JobFollower(r, jobId).run();
}

} // namespace trellis::launcher
