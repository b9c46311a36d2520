// The simulator: N simulated ranks that speak the real protocol (one RankLink each, all
// on one thread, protocol/rank_link.h) to a real supervisor, so the receiver, the detectors, the
// history, the live feed and the dashboards can be driven at 1024 ranks on one machine.
// `trellis-cli simulate` supervises a run whose job (under the job keeper, like mpirun) is
// `trellis-cli simulate-ranks`, which runs simulateRanks().
#pragma once

#include "backend/plan/plan.h"

#include <QString>
#include <QStringList>

namespace trellis::launcher::simulator {

struct SimulationOptions {
    int ranks = 8;
    double hz = 10;          // steps per second of every rank
    double seconds = 10;
    int slowRank = -1;       // from step slowFromStep on, this rank computes 2x as long
    qint64 slowFromStep = 5;
    int silentRank = -1;     // stops sending anything (as if SIGSTOP'ed) after silentAfterS
    double silentAfterS = 0;
    int crashRank = -1;      // the job ends like mpirun after a rank's SIGKILL, after crashAfterS
    double crashAfterS = 0;
    int pp = 1;              // pipeline stages (dividing ranks): rank r is on stage r / (ranks / pp)
    int microBatches = 8;    // per step, for the pipeline's bubble and timeline
    int traceEvery = 10;     // with pp > 1: every so many steps the first rank of each stage sends spans
    int relays = 0;          // the first so many nodes' ranks send through real relay processes (trellis-trainer --relay)
    // The simulated ranks (and their relays) run this much nicer than the supervisor and the
    // workbench: they stand for other machines, whose cores a real run's supervisor and workbench
    // never compete for. 0 runs them at the simulator's own priority.
    int nice = 10;
    qint64 steps() const { return std::max<qint64>(1, static_cast<qint64>(hz * seconds + 0.5)); }
};

// Parses simulate's options (--ranks, --hz, --seconds, --pp P, --slow R[@STEP], --silent R@SEC,
// --crash R@SEC, --relays K, --nice N) into `out`; "" or what is wrong, naming the option.
QString parseSimulation(const QMap<QString, QString> &options, SimulationOptions &out);
// The arguments simulate-ranks takes for these options.
QStringList simulationArguments(const SimulationOptions &options);
// A plan for the simulated world: `ranks` ranks on nodes of 8 ("sim-node-000", …), pp pipeline
// stages of ranks / pp data-parallel ranks each (1f1b over microBatches).
plan::Plan simulatedPlan(const SimulationOptions &options);

// simulate-ranks: runs the ranks until the last step, then says Goodbye for each and waits (at
// most 120 s) for everything to be acknowledged. Returns the process exit code. The ranks of a
// node share one connection (a NodeLink: the relay's connection pattern, in-process), except on the
// first `relays` nodes: there each rank has its own connection to a real relay process started for
// the node (trellis-trainer --relay beside this program), as a trainer's ranks do.
int simulateRanks(const QStringList &args);

// Raises this process's open-file limit to its hard limit (a socket per rank needs descriptors:
// the generator holds one per simulated rank, a supervisor one per connected rank).
void raiseOpenFileLimit();

} // namespace trellis::launcher::simulator
