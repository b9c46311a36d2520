// See collector.h.
#include "launcher/collector/collector.h"

#include "backend/protocol/zap_handler.h"
#include "backend/protocol/framing.h"
#include "launcher/history/history_database.h"

#include <QFileInfo>
#include <QHostInfo>
#include <QMetaObject>
#include <QRegularExpression>
#include <QSysInfo>

#include <zmq.hpp>

#include <sys/eventfd.h>
#include <pthread.h>
#include <unistd.h>

#include <chrono>
#include <future>

namespace trellis::launcher {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kMaxWorld = 65536;
constexpr int kMaxJoinBytes = 65536;

// "tcp://HOST:PORT" -> HOST ("" when it is not that form).
std::string hostOf(const std::string &endpoint)
{
    const auto scheme = endpoint.find("://");
    const auto colon = endpoint.rfind(':');
    if (scheme == std::string::npos || colon == std::string::npos || colon <= scheme + 3)
        return {};
    return endpoint.substr(scheme + 3, colon - scheme - 3);
}

QString printable(const std::string &text) { return QString::fromUtf8(text.data(), static_cast<qsizetype>(std::min<std::size_t>(text.size(), 200))); }

} // namespace

Collector::Collector(HistoryWriter *writer, QObject *parent)
    : QObject(parent), m_writer(writer), m_wake(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC))
{
}

Collector::~Collector()
{
    close();
    if (m_wake >= 0)
        ::close(m_wake);
}

QString Collector::jobKeysPathFor(const QString &keysPath)
{
    QString base = keysPath;
    if (base.endsWith(QStringLiteral(".keys")))
        base.chop(5);
    return base + QStringLiteral(".jobs.keys");
}

// The collector's keys, read or (at the first start) made, and the jobs' file beside them.
QString Collector::readOrMakeKeys(const QString &keysPath)
{
    std::string error;
    if (!QFileInfo::exists(keysPath)) {
        const auto made = proto::generateCurveKeys(error);
        if (!made)
            return QString::fromStdString(error);
        if (const std::string e = proto::writeCurveKeys(keysPath.toStdString(), *made); !e.empty())
            return QString::fromStdString(e);
        m_keys = *made;
    } else {
        const auto read = proto::readCurveKeys(keysPath.toStdString(), error);
        if (!read)
            return QString::fromStdString(error);
        if (!read->hasServer() || read->clientPublic.size() != 40)
            return QStringLiteral("collector keys %1: the file lacks server_public, server_secret or client_public").arg(keysPath);
        m_keys = *read;
    }
    // What jobs are handed: the server's public key and the jobs' own pair, never the server's secret.
    if (m_keys.clientSecret.size() == 40 || !QFileInfo::exists(m_jobKeysPath)) {
        if (m_keys.clientSecret.size() != 40)
            return QStringLiteral("collector keys %1: the jobs' key file %2 is missing and the client secret is not here to make it")
                .arg(keysPath, m_jobKeysPath);
        if (const std::string e = proto::writeCurveKeys(m_jobKeysPath.toStdString(), m_keys.forRanks()); !e.empty())
            return QString::fromStdString(e);
    }
    return {};
}

QString Collector::listen(const CollectorOptions &options)
{
    close();
    m_options = options;
    if (!proto::curveAvailable())
        return QStringLiteral("collector: this libzmq has no CURVE, and a collector never listens unencrypted");
    if (options.keysPath.isEmpty())
        return QStringLiteral("collector: no key file given");
    m_jobKeysPath = jobKeysPathFor(options.keysPath);
    if (const QString e = readOrMakeKeys(options.keysPath); !e.isEmpty())
        return e;
    m_bindHost = hostOf(options.bind);
    if (m_bindHost.empty() || options.bind.rfind("tcp://", 0) != 0)
        return QStringLiteral("collector: --bind '%1' is not tcp://HOST:PORT").arg(QString::fromStdString(options.bind));
    m_stop = false;
    std::promise<QString> ready;
    auto bound = ready.get_future();
    std::string endpoint;
    m_thread = std::thread([this, &ready, &endpoint] {
        pthread_setname_np(pthread_self(), "trellis-collect");
        serve(ready, endpoint);
    });
    if (const QString e = bound.get(); !e.isEmpty()) {
        m_thread.join();
        return e;
    }
    QString host = options.advertise;
    if (host.isEmpty())
        host = m_bindHost == "0.0.0.0" || m_bindHost == "*" ? QHostInfo::localHostName() : QString::fromStdString(m_bindHost);
    const std::string port = endpoint.substr(endpoint.rfind(':') + 1);
    m_address = QStringLiteral("tcp://%1:%2").arg(host, QString::fromStdString(port));
    resumeJobs();
    return {};
}

// The listening thread's sockets: made, used and closed on that thread.
struct Collector::Sockets {
    zmq::context_t context{1};
    zmq::socket_t socket{context, zmq::socket_type::router};
    zmq::socket_t zap{context, zmq::socket_type::rep};
    zmq::socket_t monitor{context, zmq::socket_type::pair};
    std::string allowed = std::string(32, '\0'); // the jobs' public key, raw
    // A refused client retries every few hundred milliseconds: say so once, then count.
    Clock::time_point lastTold{};
    int untold = 0;
};

QString Collector::openSockets(Sockets &s, std::string &endpoint)
{
    try {
        zmq_z85_decode(reinterpret_cast<std::uint8_t *>(s.allowed.data()), m_keys.clientPublic.c_str());
        s.zap.set(zmq::sockopt::linger, 0);
        s.zap.bind("inproc://zeromq.zap.01");
        s.socket.set(zmq::sockopt::linger, 0);
        s.socket.set(zmq::sockopt::maxmsgsize, int64_t{kMaxJoinBytes});
        s.socket.set(zmq::sockopt::curve_server, 1);
        s.socket.set(zmq::sockopt::curve_secretkey, m_keys.serverSecret);
        s.socket.set(zmq::sockopt::zap_domain, "trellis-collector");
        s.socket.bind(m_options.bind);
        endpoint = s.socket.get(zmq::sockopt::last_endpoint);
    } catch (const zmq::error_t &e) {
        return QStringLiteral("collector: cannot listen on %1 (%2)").arg(QString::fromStdString(m_options.bind), QString::fromUtf8(e.what()));
    }
    // Handshakes that fail before the key check (a client holding another collector's key cannot
    // even be decrypted) are seen through the socket's monitor; they carry no address.
    try {
        zmq_socket_monitor(s.socket.handle(), "inproc://trellis-collector-monitor",
                           ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL | ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL);
        s.monitor.connect("inproc://trellis-collector-monitor");
    } catch (const zmq::error_t &) {
    }
    return {};
}

void Collector::tell(Sockets &s, const QString &message)
{
    ++s.untold;
    if (Clock::now() - s.lastTold < std::chrono::seconds(5))
        return;
    const QString text = s.untold > 1 ? QStringLiteral("%1 (%2 refusals since the last report)").arg(message).arg(s.untold) : message;
    s.untold = 0;
    s.lastTold = Clock::now();
    QMetaObject::invokeMethod(this, [this, text] { emit refused(text); }, Qt::QueuedConnection);
}

void Collector::serve(std::promise<QString> &ready, std::string &endpoint)
{
    Sockets s;
    const QString error = openSockets(s, endpoint);
    ready.set_value(error);
    if (!error.isEmpty())
        return;
    zmq::pollitem_t items[4] = {{s.socket.handle(), 0, ZMQ_POLLIN, 0},
                                {s.zap.handle(), 0, ZMQ_POLLIN, 0},
                                {nullptr, m_wake, ZMQ_POLLIN, 0},
                                {s.monitor.handle(), 0, ZMQ_POLLIN, 0}};
    while (!m_stop.load()) {
        try {
            zmq::poll(items, 4, std::chrono::milliseconds(200));
        } catch (const zmq::error_t &) {
            continue;
        }
        if (items[1].revents & ZMQ_POLLIN)
            proto::answerZapRequests(s.zap, s.allowed, [&](const std::string &address) {
                tell(s, QStringLiteral("a client at %1 with a key that is not this collector's was refused").arg(QString::fromStdString(address)));
            });
        while (items[3].revents & ZMQ_POLLIN) {
            zmq::message_t event, address;
            if (!s.monitor.recv(event, zmq::recv_flags::dontwait))
                break;
            if (event.more())
                (void)s.monitor.recv(address, zmq::recv_flags::none);
            tell(s, QStringLiteral("a connection failed the CURVE handshake and was refused (a client holding another "
                                   "collector's keys, or one that does not encrypt)"));
        }
        if (items[2].revents & ZMQ_POLLIN) {
            std::uint64_t n = 0;
            (void)::read(m_wake, &n, sizeof n);
        }
        if (items[0].revents & ZMQ_POLLIN)
            takeRequests(s);
        sendReplies(s);
    }
    zmq_socket_monitor(s.socket.handle(), nullptr, 0);
}

// A REQ client's request is its routing id, an empty delimiter and the Join: each goes to the
// owner's thread, queued.
void Collector::takeRequests(Sockets &s)
{
    for (int i = 0; i < 1000; ++i) {
        std::vector<zmq::message_t> parts;
        try {
            zmq::message_t part;
            if (!s.socket.recv(part, zmq::recv_flags::dontwait))
                return;
            parts.push_back(std::move(part));
            while (parts.back().more()) {
                zmq::message_t next;
                (void)s.socket.recv(next, zmq::recv_flags::none);
                parts.push_back(std::move(next));
            }
        } catch (const zmq::error_t &) {
            return;
        }
        if (parts.size() != 3 || parts[1].size() != 0)
            continue;
        std::string identity = parts[0].to_string(), body = parts[2].to_string();
        QMetaObject::invokeMethod(
            this, [this, identity = std::move(identity), body = std::move(body)] { handleRequest(identity, body); },
            Qt::QueuedConnection);
    }
}

void Collector::sendReplies(Sockets &s)
{
    std::deque<std::pair<std::string, std::string>> replies;
    {
        std::lock_guard lock(m_mutex);
        replies.swap(m_outbox);
    }
    for (const auto &[identity, reply] : replies) {
        try {
            s.socket.send(zmq::buffer(identity), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
            s.socket.send(zmq::buffer(std::string_view()), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
            s.socket.send(zmq::buffer(reply), zmq::send_flags::dontwait);
        } catch (const zmq::error_t &) {
        }
    }
}

void Collector::close()
{
    m_stop = true;
    if (m_thread.joinable())
        m_thread.join();
    for (Supervisor *run : m_runs)
        if (run->state() == RunState::Running)
            run->stopWatching(QStringLiteral("the collector stopped while the job ran; a collector started again with the same keys "
                                             "and history takes the job up, its ranks sending what they kept meanwhile"));
}

std::vector<Supervisor *> Collector::runs() const { return m_runs; }

int Collector::activeJobs() const
{
    return static_cast<int>(std::count_if(m_runs.begin(), m_runs.end(), [](Supervisor *r) { return r->state() == RunState::Running; }));
}

QString Collector::advertised(const std::string &endpoint) const
{
    const QString port = QString::fromStdString(endpoint.substr(endpoint.rfind(':') + 1));
    return m_address.left(m_address.lastIndexOf(QLatin1Char(':')) + 1) + port;
}

void Collector::handleRequest(const std::string &identity, const std::string &body)
{
    proto::Join join;
    proto::JoinReply reply;
    reply.set_protocol_version(proto::kProtocolVersion);
    if (!join.ParseFromString(body)) {
        reply.set_error("the request is not a Join message of the telemetry protocol");
        emit refused(QStringLiteral("a request that is not a Join (%1 bytes) was refused").arg(body.size()));
    } else {
        reply = joinReply(join);
    }
    {
        std::lock_guard lock(m_mutex);
        m_outbox.emplace_back(identity, reply.SerializeAsString());
    }
    const std::uint64_t one = 1;
    if (m_wake >= 0)
        (void)::write(m_wake, &one, sizeof one);
}

// Why a Join cannot be taken, or "".
QString Collector::validate(const proto::Join &j) const
{
    if (j.protocol_version() != proto::kProtocolVersion)
        return QStringLiteral("this collector speaks telemetry protocol %1 and the client (%2) speaks %3: use the trellis_telemetry "
                              "or trellis-trainer that comes with this Trellis")
            .arg(proto::kProtocolVersion)
            .arg(printable(j.client()))
            .arg(j.protocol_version());
    if (j.world_size() < 1 || j.world_size() > kMaxWorld)
        return QStringLiteral("a world size of %1 (1 to %2)").arg(j.world_size()).arg(kMaxWorld);
    if (j.rank() >= j.world_size())
        return QStringLiteral("rank %1 is beyond the job's world size %2").arg(j.rank()).arg(j.world_size());
    static const QRegularExpression control(QStringLiteral("[\\x00-\\x1f\\x7f]"));
    const QString name = QString::fromStdString(j.job_name()), id = QString::fromStdString(j.job_id());
    if (name.size() > 200 || id.size() > 200 || name.contains(control) || id.contains(control))
        return QStringLiteral("the job's name or id is longer than 200 characters or holds control characters");
    if (id.isEmpty() && j.world_size() > 1)
        return QStringLiteral("job '%1' of %2 ranks has no id to tell it from another job of that name: its launcher set none "
                              "(SLURM_JOB_ID, TORCHELASTIC_RUN_ID, MASTER_ADDR and MASTER_PORT, PMIX_NAMESPACE); set "
                              "TRELLIS_JOB_ID, the same on every rank")
            .arg(name)
            .arg(j.world_size());
    return {};
}

proto::JoinReply Collector::joinReply(const proto::Join &j)
{
    proto::JoinReply reply;
    reply.set_protocol_version(proto::kProtocolVersion);
    const QString who = QStringLiteral("rank %1 on %2").arg(j.rank()).arg(printable(j.host()));
    if (const QString why = validate(j); !why.isEmpty()) {
        reply.set_error(why.toStdString());
        emit refused(who + QStringLiteral(": ") + why);
        return reply;
    }
    QString name = QString::fromStdString(j.job_name()).trimmed();
    if (name.isEmpty())
        name = QStringLiteral("job");
    const QString jobId = j.job_id().empty() ? QStringLiteral("%1:%2").arg(printable(j.host())).arg(j.pid()) : QString::fromStdString(j.job_id());
    const QString key = name + QChar(0x1f) + jobId;
    auto it = m_jobs.find(key);
    if (it != m_jobs.end() && it->second.run->state() == RunState::Running) {
        Job &job = it->second;
        if (static_cast<int>(j.world_size()) != job.worldSize) {
            reply.set_error(QStringLiteral("job '%1' (id %2) is being watched with a world size of %3; this rank says %4: two jobs "
                                           "claim the same name and id (set TRELLIS_JOB_ID apart)")
                                .arg(name, jobId)
                                .arg(job.worldSize)
                                .arg(j.world_size())
                                .toStdString());
            emit refused(who + QStringLiteral(": ") + QString::fromStdString(reply.error()));
            return reply;
        }
        if (static_cast<int>(j.attempt()) < job.run->attempt()) {
            reply.set_error(QStringLiteral("attempt %1 of job '%2' is over: attempt %3 runs now").arg(j.attempt()).arg(name).arg(job.run->attempt()).toStdString());
            emit refused(who + QStringLiteral(": ") + QString::fromStdString(reply.error()));
            return reply;
        }
        if (static_cast<int>(j.attempt()) > job.run->attempt())
            if (const QString e = job.run->watchAttempt(static_cast<int>(j.attempt())); !e.isEmpty()) {
                reply.set_error(e.toStdString());
                return reply;
            }
        job.run->noteJoin(static_cast<int>(j.rank()), printable(j.host()));
        reply.set_run_id(job.run->runId().toStdString());
        reply.set_endpoint(advertised(job.run->telemetryEndpoint()).toStdString());
        return reply;
    }
    // A new job (or a new run of one that ended): its run, watched.
    WatchedJob w;
    w.name = name;
    w.jobId = QString::fromStdString(j.job_id());
    w.scheduler = QString::fromStdString(j.scheduler());
    w.command = printable(j.command());
    w.client = printable(j.client());
    w.hosts = {printable(j.host())};
    w.worldSize = static_cast<int>(j.world_size());
    w.attempt = static_cast<int>(j.attempt());
    w.keys = m_keys;
    w.bind = "tcp://" + m_bindHost + ":*";
    w.collector = QFileInfo(m_options.keysPath).absoluteFilePath();
    w.jobKey = key;
    auto *run = new Supervisor(m_writer, this);
    if (const QString e = run->watch(w, m_options.run); !e.isEmpty()) {
        delete run;
        reply.set_error(("the collector could not start watching the job: " + e).toStdString());
        emit refused(who + QStringLiteral(": ") + QString::fromStdString(reply.error()));
        return reply;
    }
    run->noteJoin(static_cast<int>(j.rank()), printable(j.host()));
    m_runs.push_back(run);
    m_jobs[key] = Job{run, w.worldSize, name, jobId};
    emit jobWatched(run, describe(w));
    reply.set_run_id(run->runId().toStdString());
    reply.set_endpoint(advertised(run->telemetryEndpoint()).toStdString());
    return reply;
}

QString Collector::describe(const WatchedJob &w) const
{
    // One arg() for every field: the job's name, scheduler and id are its own words ("%3" stays).
    return QStringLiteral("job %1%2, %3 rank%4 (%5)")
        .arg(w.name, w.jobId.isEmpty() ? QString() : QStringLiteral(" (%1 %2)").arg(w.scheduler.isEmpty() ? QStringLiteral("id") : w.scheduler, w.jobId),
             QString::number(w.worldSize), w.worldSize == 1 ? QString() : QStringLiteral("s"), w.client);
}

// The jobs a collector with these keys and this history watched and did not see end: collected
// runs (RunKind) whose folder still holds watching.json (removed when a run ends for good),
// running (its collector died), stopped (its collector was stopped) or failed (closed as
// abandoned by the history's next open once its collector's process was gone).
void Collector::resumeJobs()
{
    if (!m_writer)
        return;
    HistoryDatabase db;
    if (const QString e = db.open(m_writer->path(), false); !e.isEmpty()) {
        emit notice(QStringLiteral("cannot look for jobs to take up again: %1").arg(e));
        return;
    }
    RunFilter unfinished;
    unfinished.kinds = {toString(RunKind::Collected)};
    unfinished.statuses = {toString(RunState::Running), toString(RunState::Stopped), toString(RunState::Failed)};
    unfinished.archived = RunFilter::Archived::Any;
    const auto candidates = db.runIds(unfinished);
    if (!candidates) {
        emit notice(QStringLiteral("cannot look for jobs to take up again: %1").arg(db.lastError()));
        return;
    }
    const QString runsDir = Supervisor::runsDirectoryFor(m_options.run, m_writer);
    const QString me = QFileInfo(m_options.keysPath).absoluteFilePath();
    for (const auto &[id, runId] : *candidates) {
        const QString runDir = runsDir + QLatin1Char('/') + runId;
        if (!QFileInfo::exists(runDir + QStringLiteral("/watching.json")))
            continue;
        QString error;
        const std::optional<WatchedJob> job = Supervisor::watchedJobIn(runDir, &error);
        if (!job) {
            emit notice(QStringLiteral("run %1 is not taken up again: %2").arg(runId, error));
            continue;
        }
        if (job->collector != me || (m_options.followedElsewhere && m_options.followedElsewhere(runId)))
            continue; // another collector's job, or one a live collector follows
        const std::optional<RunData> data = db.loadRunForTakeOver(id);
        if (!data) {
            emit notice(QStringLiteral("run %1 is not taken up again: its history cannot be read (%2)").arg(runId, db.lastError()));
            continue;
        }
        auto *run = new Supervisor(m_writer, this);
        if (const QString e = run->resumeWatching(runId, *data, m_keys, m_options.run); !e.isEmpty()) {
            delete run;
            emit notice(QStringLiteral("run %1 (job %2) is not taken up again: %3").arg(runId, job->name, e));
            continue;
        }
        m_runs.push_back(run);
        const QString name = job->name;
        const QString jobId = job->jobKey.section(QChar(0x1f), 1);
        m_jobs[job->jobKey] = Job{run, job->worldSize, name, jobId};
        emit jobWatched(run, describe(*job) + QStringLiteral(", taken up again"));
    }
}

} // namespace trellis::launcher
