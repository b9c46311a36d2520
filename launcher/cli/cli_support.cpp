// See cli_support.h.
#include "launcher/cli/cli_support.h"

#include "launcher/history/history_database.h"
#include "launcher/history_location.h"
#include "backend/plan/hostfile.h"
#include "backend/plan/plan_json.h"
#include "backend/plan/plan_validate.h"

#include <cstdio>

namespace trellis::launcher::cli {
namespace {

const char *kUsage =
    "usage: trellis-cli [--db PATH] COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  plan new [--model PRESET] [--cluster PRESET] [--nodes N] [--name NAME] [--out FILE]\n"
    "                                     a new plan: every slot a data-parallel rank (default: tiny on\n"
    "                                     cpu-local); printed, or written to FILE\n"
    "  plan set PLAN FIELD=VALUE... [--out FILE] [--check]\n"
    "                                     set fields by path (parallel.tp=2, cluster.node_count=16,\n"
    "                                     model.preset=gpt2-124m, parallel.bucket_mb=null); prints what\n"
    "                                     changed and any problem; writes PLAN (or FILE) unless a value is\n"
    "                                     refused, or --check and the result would not be valid\n"
    "  plan get PLAN FIELD...             the fields' values as JSON\n"
    "  plan diff PLAN PLAN                the fields that differ (exit 1 when any does, as diff)\n"
    "  validate PLAN                      check a plan; errors name the field\n"
    "  estimate PLAN [--json] [--calibration FILE] [--no-calibrate]\n"
    "                                     predicted memory per rank, step time, tokens/s, MFU, cost; a\n"
    "                                     CPU plan run here measures this machine first, once\n"
    "  convert PLAN --to deepspeed|megatron\n"
    "                                     the plan as a DeepSpeed config or a Megatron-LM argument line\n"
    "  convert --from deepspeed|megatron FILE --base PLAN [--out PLAN]\n"
    "                                     a DeepSpeed config or Megatron-LM arguments read into a plan\n"
    "  calibrate [--ranks 1,2,4] [--out FILE]\n"
    "                                     measure this machine's compute rate and links for estimates\n"
    "                                     (replacing the file's entries of those world sizes)\n"
    "  search --model PRESET --cluster PRESET --nodes N [--global-batch B] [--top K] [--exhaustive]\n"
    "  search PLAN [--top K]              the fastest plans that fit, with why; --exhaustive: every plan\n"
    "                                     kept and ranked at the end (the reference the fast search equals)\n"
    "  preflight PLAN [--hostfile FILE] [--accept-host-key HOST[=SHA256:FP],...] [--json]\n"
    "                                     check the plan's launch target before anything starts: for ssh,\n"
    "                                     every node in parallel (host key, key login, trainer build, Open\n"
    "                                     MPI, cores, clock, disk); for slurm, the controller, partition,\n"
    "                                     shared folder and trainer; exit 1 when a check fails. With\n"
    "                                     --accept-host-key, first add those hosts' keys to known_hosts;\n"
    "                                     --hostfile: cluster.nodes from a hostfile (\"host slots=N ...\")\n"
    "  run PLAN [--report FILE] [--quiet] [--hang-timeout S] [--hang-confirm S] [--metrics-port P]\n"
    "           [--inject KIND@RANK:STEP[,STEP...][/ATTEMPT|/*]] [--run-id ID] [--hostfile FILE] [--name NAME]\n"
    "                                     supervise the plan under mpirun on its launch.target (local;\n"
    "                                     ssh: preflight, staging, then mpirun over ssh; slurm: preflight,\n"
    "                                     then a batch job followed to its end), restarting it as\n"
    "                                     launch.restart says; prints the run id first (and the\n"
    "                                     Prometheus endpoint); SIGTERM/SIGINT stop the run cleanly;\n"
    "                                     --name: the run's name instead of the plan's; recorded in\n"
    "                                     --db, else the plan's telemetry.history, else the default\n"
    "  run PLAN --detach [OPTIONS]        the same in a process of its own session, which owns the run\n"
    "                                     and outlives this shell; prints the run id and returns\n"
    "  run --command [--ranks N] [--name NAME] [--max-restarts N] [OPTIONS] -- PROGRAM [ARGS]\n"
    "                                     a job with its own trainer (a torchrun-style PyTorch script)\n"
    "                                     without a plan file: N ranks here under mpirun, each running\n"
    "                                     PROGRAM in this folder with RANK, WORLD_SIZE, LOCAL_RANK,\n"
    "                                     MASTER_ADDR, MASTER_PORT and the telemetry variables set\n"
    "                                     (docs/pytorch.md); no shell is involved\n"
    "  attach RUN                         follow a run live (what the history holds, then its\n"
    "                                     supervisor's feed) until it ends; leaving changes nothing\n"
    "  adopt RUN [--quiet]                supervise a run whose supervisor died while its job went on\n"
    "                                     (the ranks resend the telemetry it never stored)\n"
    "  collect [--bind tcp://HOST:PORT] [--keys FILE] [--advertise HOST] [--hang-timeout S]\n"
    "          [--hang-confirm S] [--quiet]\n"
    "                                     watch jobs Trellis did not launch (sbatch, torchrun, mpirun by\n"
    "                                     hand) until SIGTERM/SIGINT: each job whose ranks carry\n"
    "                                     TRELLIS_COLLECTOR and TRELLIS_COLLECTOR_KEYS (printed at start)\n"
    "                                     becomes a run, live and in the history; --bind defaults to\n"
    "                                     tcp://0.0.0.0:7700, --keys to collector/collector.keys beside\n"
    "                                     the history (made when missing, with collector.jobs.keys for\n"
    "                                     the jobs); it cannot stop or restart the jobs it watches;\n"
    "                                     started again (same keys and history), it takes up the jobs it\n"
    "                                     had not seen end, their ranks resending what they kept\n"
    "  simulate [--ranks N] [--hz H] [--seconds S] [--pp P] [--slow R[@STEP]] [--silent R@SEC] [--crash R@SEC]\n"
    "           [--relays K] [--nice N] [--run-id ID] [--hang-timeout S] [--hang-confirm S] [--quiet] [--detach]\n"
    "                                     a supervised run of N simulated ranks sending realistic telemetry\n"
    "                                     (H steps/s each) through the real protocol, receiver, detectors,\n"
    "                                     history and live feed; a rank made slow, stopped (as by SIGSTOP,\n"
    "                                     the others waiting for it in an all-reduce) or crashing;\n"
    "                                     nodes of 8 ranks, one connection each; the first K nodes through\n"
    "                                     real relay processes (trellis-trainer --relay), a socket per rank;\n"
    "                                     the simulated ranks run N nicer (10; 0: not) than the supervisor\n"
    "                                     and the workbench, as ranks on other machines would not compete\n"
    "  simulate-ranks --endpoint E --run-id ID [SIMULATE OPTIONS]\n"
    "                                     (started by simulate) the simulated ranks themselves\n"
    "  compare RUN RUN... [--report FILE] runs side by side: throughput, step-time breakdown, bubble,\n"
    "                                     bandwidth, final loss, memory, and the plan fields that differ;\n"
    "                                     the report (HTML or PDF by extension) adds their curves by step\n"
    "  ps                                 the runs a supervisor owns now, and jobs without one\n"
    "  job-keeper DIR -- PROGRAM [ARGS]   (started by a supervisor) run the job, its output to the\n"
    "                                     supervisor and DIR/job.out|err, its end to DIR/job.status\n"
    "  slurm-job --dir DIR --name NAME --nodes N --tasks-per-node K [SBATCH OPTIONS] -- PROGRAM [ARGS]\n"
    "                                     (started by a supervisor) one launch attempt as a Slurm batch\n"
    "                                     job: submit, follow, cancel on SIGTERM, exit as the job ended\n"
    "  stop RUN                           ask a run's supervisor to stop it\n"
    "  runs [--limit N] [--filter EXPR]  list recorded runs, newest first, with their kind; EXPR: words,\n"
    "                                     status:failed, kind:launched|simulated|collected|adopted,\n"
    "                                     tag:NAME, owner:NAME|me, after:/before:YYYY-MM-DD, archived:yes|any, plan\n"
    "                                     fields (parallel.tp=2 model.preset=llama2-70b; = != < <= > >=)\n"
    "  runs RUN                           one run's record: status, steps, figures, note, tags, error,\n"
    "                                     each attempt's launch command\n"
    "  runs tag RUN TAG...                tag a run (untag RUN TAG... takes tags off)\n"
    "  runs note RUN TEXT                 the run's note (\"\" clears it)\n"
    "  runs rename RUN NAME               the run's name\n"
    "  runs archive RUN                   hide a run from the list (unarchive RUN brings it back)\n"
    "  runs delete RUN [--yes]            delete a run's rows and its folder; without --yes, say what goes\n"
    "  history copy [--from HISTORY] [--to HISTORY] [RUN...]\n"
    "                                     copy ended runs (default: every one) between histories, a file\n"
    "                                     and a PostgreSQL database either way (each defaults to --db);\n"
    "                                     a run already there is left as it is, so copying again is safe\n"
    "  export RUN --format csv|json [--table NAME] [--out FILE]\n"
    "                                     one row per rank per step (csv) or everything (json); with\n"
    "                                     --table one table: steps, memory, collectives, events, spans, ranks\n"
    "  export-model RUN|CHECKPOINT_DIR --out DIR [--dtype fp32|bf16|fp16]\n"
    "                                     the run's newest checkpoint (any dp, tp, pp, ZeRO) as one model\n"
    "                                     in Hugging Face transformers' layout: model.safetensors and\n"
    "                                     config.json (GPT-2 for arch gpt, Llama for llama), in the\n"
    "                                     precision the run trained in unless --dtype says otherwise\n"
    "  experts RUN [--step N] [--json]   a mixture-of-experts run's routing: per layer the tokens each\n"
    "                                     expert got (summed over ranks, the last step or step N), its\n"
    "                                     load imbalance (busiest / mean), drops and load-balancing loss\n"
    "  report RUN --out FILE.html|FILE.pdf\n"
    "                                     the run's report (plan, prediction and measurement, charts,\n"
    "                                     ranks, collectives, telemetry, events), HTML or PDF by extension\n"
    "  trace RUN --out FILE               write the sampled timeline (telemetry.trace_every) as a\n"
    "                                     Chrome/Perfetto trace, one track per rank\n"
    "\n"
    "RUN is a run id, a row number from 'runs', or 'last'.\n"
    "run, simulate and adopt exit 0 when the run completed and its history holds all of it, 1 when\n"
    "the run did not complete, 2 on a usage error, 3 when it completed but its history could not\n"
    "take all of it (what was not written is said, never acknowledged as stored).\n"
    "--db PATH is a history file, or a team's PostgreSQL history: postgresql://USER@HOST[:PORT]/DBNAME[?sslmode=...]\n"
    "(the password from ~/.pgpass, PGPASSWORD or a service file, never in the string; docs/history.md).\n"
    "--db defaults to $TRELLIS_HISTORY when set, else %1\n"
    "(run PLAN: a plan's telemetry.history comes before $TRELLIS_HISTORY, --db before both).\n";

} // namespace

QString usageText() { return QString::fromUtf8(kUsage).arg(defaultHistoryFile()); }

QTextStream &out()
{
    static QTextStream s(stdout);
    return s;
}
QTextStream &err()
{
    static QTextStream s(stderr);
    return s;
}

int fail(const QString &message)
{
    err() << "trellis-cli: " << message << Qt::endl;
    return 1;
}

int usageError(const QString &message)
{
    err() << "trellis-cli: " << message << "\n" << usageText() << Qt::flush;
    return 2;
}

Args parseArgs(const QStringList &in, const QSet<QString> &valued, const QSet<QString> &flags)
{
    Args a;
    for (int i = 0; i < in.size(); ++i) {
        const QString &s = in[i];
        if (s == QLatin1String("--")) {
            a.trailing = in.mid(i + 1);
            return a;
        }
        if (s.startsWith(QLatin1String("--"))) {
            if (valued.contains(s)) {
                if (i + 1 >= in.size()) {
                    a.error = s + QStringLiteral(" needs a value");
                    return a;
                }
                a.options[s] = in[++i];
            } else if (flags.contains(s)) {
                a.flags.insert(s);
            } else {
                a.error = QStringLiteral("unknown option %1").arg(s);
                return a;
            }
        } else {
            a.positional << s;
        }
    }
    return a;
}

// Loads and validates a plan for a command; prints the problems and returns nullopt if invalid.
std::optional<plan::Plan> loadValidPlan(const QString &path, const QString &hostfile)
{
    auto loaded = plan::loadPlanFile(path.toStdString());
    if (!loaded) {
        for (const auto &e : loaded.errors())
            err() << path << ": " << QString::fromStdString(e.toString()) << "\n";
        err().flush();
        return std::nullopt;
    }
    if (!hostfile.isEmpty()) {
        if (const std::string why = plan::applyHostfile(loaded.value(), hostfile.toStdString()); !why.empty()) {
            err() << "--hostfile: " << QString::fromStdString(why) << "\n";
            err().flush();
            return std::nullopt;
        }
    }
    const auto diagnostics = plan::validatePlan(loaded.value());
    for (const auto &d : diagnostics)
        err() << path << ": " << QString::fromStdString(d.toString()) << "\n";
    err().flush();
    if (plan::hasErrors(diagnostics))
        return std::nullopt;
    return std::move(loaded).value();
}

QString mb(std::uint64_t bytes) { return QString::number(static_cast<double>(bytes) / (1024.0 * 1024.0), 'f', 2); }

} // namespace trellis::launcher::cli
