// What the feed thread of a RunFeed keeps while it follows a run (run_feed.h): shared by its steps
// in run_feed.cpp (the live feed) and run_feed_history.cpp (the backfill and the refills). Private
// to launcher/feed/. Threading: the feed thread only.
#pragma once

#include "backend/protocol/feed.pb.h"
#include "launcher/feed/run_feed.h"
#include "launcher/history/history_database.h"
#include "launcher/ingest/arena_batch.h"

#include <QElapsedTimer>

#include <zmq.hpp>

#include <map>
#include <memory>
#include <set>

namespace trellis::launcher {

// Waits up to `timeoutMs` for feed messages and appends what came (up to 4 MiB, the ones that
// parse) to `into`; without a socket it only waits (run_feed.cpp).
void receiveFeed(zmq::socket_t *socket, int timeoutMs, ArenaBatch<proto::FeedMessage> &into);

inline bool isFinal(RunState s) { return s == RunState::Completed || s == RunState::Failed || s == RunState::Stopped; }

// run()'s state, kept on the feed thread and shared by its steps.
struct RunFeed::FeedState {
    FeedState(QString id, QString db) : runId(std::move(id)), database(std::move(db)) {}

    QString runId;
    QString database;
    zmq::context_t context{1};
    std::unique_ptr<zmq::socket_t> socket; // null: history only
    ArenaBatch<proto::FeedMessage> pending;

    telemetry::SnapshotBuilder builder{64}; // sized for the real world once it is known
    quint64 feedGapsSeen = 0;
    QElapsedTimer sinceSnapshot;
    quint64 snapshotVersion = ~0ull;
    int snapshotHeat = -1;
    bool snapshotDirty = true;

    bool predicted = false;        // the prediction is made once, from the plan the history holds
    std::map<int, qint64> maxStep; // per rank, the newest step shown
    std::map<int, StepRow> latest;
    int newSteps = 0;
    // Steps the live feed skipped (its publisher's queue overflowed for this subscriber): noted
    // per rank when a later step arrives, then read from the history (committed by then).
    bool live = false;
    std::map<int, std::set<qint64>> missing;
    std::size_t missingCount = 0;
    QElapsedTimer sinceRefill, missingProgress;
    std::unique_ptr<HistoryDatabase> refillDb;
    qint64 refillRunId = -1;

    quint64 lastSeq = 0;
    bool haveSeq = false;
};

} // namespace trellis::launcher
