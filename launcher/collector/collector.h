// The collector (docs/collector.md): watches jobs Trellis did not launch — started by sbatch,
// torchrun, mpirun or a cluster's own tooling. It listens on one TCP address with CURVE; a job's
// ranks carry that address and the collector's key file for jobs (TRELLIS_COLLECTOR,
// TRELLIS_COLLECTOR_KEYS) and each asks once, at start, which run it belongs to (proto Join). The
// first rank of a job makes its run: a Supervisor in watch mode (supervisor.h, watch()) with its
// own telemetry endpoint, so every job is a run like a launched one — history, live feed,
// detectors, stalls and hangs, alerts, reports — except that nothing here can stop or restart it.
// Ranks of one job name it alike (job name and id, from their launcher's variables); a higher
// attempt of a job being watched continues its run. A client without the key is refused by the
// handshake (its address reported); a Join that cannot be taken is answered with why.
// Threading: a Collector lives on the owner's thread (the CLI's main thread, the GUI's); a thread
// of its own owns the listening socket, decodes requests and sends replies, never waiting on the
// owner: requests reach the owner queued, replies come back through an outbox.
#pragma once

#include "launcher/supervisor/supervisor.h"
#include "backend/protocol/curve_keys.h"
#include "backend/protocol/telemetry.pb.h"

#include <QObject>
#include <QString>

#include <atomic>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace trellis::launcher {

class HistoryWriter;

struct CollectorOptions {
    std::string bind = "tcp://0.0.0.0:7700"; // where jobs join (and, on the same host, their runs' endpoints)
    QString keysPath;  // the collector's keys; made (with the jobs' file beside) when missing
    QString advertise; // the host named in what jobs are told; "": the bind host, or this machine's name
    RunOptions run;    // for every job's run: runs folder, hang settings
    // Whether a live process on this machine follows the run now (the program hands in the run
    // registry's answer): a collector started again leaves such runs alone.
    std::function<bool(const QString &runId)> followedElsewhere;
};

class Collector : public QObject {
    Q_OBJECT
public:
    explicit Collector(HistoryWriter *writer, QObject *parent = nullptr);
    ~Collector() override;

    // Reads or makes the keys and binds; "" or why not (a port in use, a key file others can read).
    // Then takes up the jobs a collector with these keys and this history watched and did not see
    // end (it was stopped, or its process died): each goes on as its run (jobWatched), its ranks
    // sending again what they kept.
    QString listen(const CollectorOptions &options);
    // Stops listening; jobs still being watched end as stopped — until a collector with the same
    // keys and history starts again and takes them up.
    void close();

    QString address() const { return m_address; }         // tcp://HOST:PORT, what jobs are told
    QString jobKeysPath() const { return m_jobKeysPath; } // what jobs' TRELLIS_COLLECTOR_KEYS names
    // The jobs' key file that goes with a collector key file: NAME.keys -> NAME.jobs.keys.
    static QString jobKeysPathFor(const QString &keysPath);
    // Every job's run, oldest first (ended ones too).
    std::vector<Supervisor *> runs() const;
    int activeJobs() const;

signals:
    // A job's first rank joined: its run is being watched (set its feed here).
    void jobWatched(trellis::launcher::Supervisor *run, const QString &description);
    // A client was turned away: an unknown key (with its address), a Join that cannot be taken.
    void refused(const QString &message);
    // Something to tell whoever runs the collector: a job it could not take up again, and why.
    void notice(const QString &message);

private:
    struct Job {
        Supervisor *run = nullptr;
        int worldSize = 0;
        QString name, jobId;
    };
    // The listening thread's work (collector.cpp).
    struct Sockets;
    QString readOrMakeKeys(const QString &keysPath);
    void serve(std::promise<QString> &ready, std::string &endpoint);
    QString openSockets(Sockets &s, std::string &endpoint);
    void takeRequests(Sockets &s);
    void sendReplies(Sockets &s);
    void tell(Sockets &s, const QString &message); // a refusal, at most one report each 5 s
    void handleRequest(const std::string &identity, const std::string &body);
    proto::JoinReply joinReply(const proto::Join &join);
    QString validate(const proto::Join &join) const;
    QString advertised(const std::string &endpoint) const;
    void resumeJobs(); // listen(): the jobs of a collector before this one
    QString describe(const WatchedJob &job) const;

    HistoryWriter *m_writer;
    CollectorOptions m_options;
    proto::CurveKeys m_keys;
    QString m_address, m_jobKeysPath;
    std::string m_bindHost;
    std::map<QString, Job> m_jobs; // job key -> its run being watched (or last watched)
    std::vector<Supervisor *> m_runs;

    // The listening thread and what it shares with the owner.
    std::thread m_thread;
    std::atomic<bool> m_stop{false};
    int m_wake = -1; // eventfd: replies to send
    std::mutex m_mutex;
    std::deque<std::pair<std::string, std::string>> m_outbox; // (identity, reply)
};

} // namespace trellis::launcher
