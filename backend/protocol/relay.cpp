// See relay.h.
#include "backend/protocol/relay.h"

#include "backend/protocol/detached.h"
#include "backend/protocol/framing.h"
#include "backend/protocol/rank_link.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <iterator>

namespace trellis::proto {

namespace {
constexpr std::size_t kBatchBytes = 64 * 1024;
constexpr std::size_t kMaxPending = 256; // batches waiting for the supervisor's connection
constexpr std::size_t kMaxSocketPath = 107;

std::string ranksText(const std::set<std::uint32_t> &ranks)
{
    std::string s;
    for (std::uint32_t r : ranks) {
        if (s.size() > 60) {
            s += ", …";
            break;
        }
        if (!s.empty())
            s += ", ";
        s += std::to_string(r);
    }
    return s;
}
} // namespace

Relay::Relay(zmq::context_t &context, RelayOptions options)
    : m_options(std::move(options)), m_ranks(context, zmq::socket_type::router), m_upstream(context, zmq::socket_type::dealer),
      m_onNode(m_options.ranks.begin(), m_options.ranks.end())
{
}

std::string Relay::open()
{
    if (m_onNode.empty())
        return "no ranks given for this node";
    try {
        m_ranks.set(zmq::sockopt::rcvhwm, 10000);
        m_ranks.set(zmq::sockopt::sndhwm, 10000);
        m_ranks.set(zmq::sockopt::linger, 1000); // the last acknowledgements still reach their ranks
        m_ranks.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(kMaxFrameBytes));
        m_ranks.bind(m_options.listen);
    } catch (const zmq::error_t &e) {
        return "cannot listen on " + m_options.listen + ": " + e.what();
    }
    if (!connectTelemetryDealer(m_upstream, m_options.upstream, m_options.curve))
        return "cannot connect to the supervisor at '" + m_options.upstream + "' (a tcp:// or ipc:// address, with usable keys)";
    m_upstream.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(64 * 1024));
    m_upstream.set(zmq::sockopt::linger, 1000);
    m_lastFromRank = Clock::now();
    return {};
}

void Relay::refuse(const std::string &kind, const std::string &reason)
{
    ++m_stats.refused;
    ++m_stats.refusedBy[kind];
    m_stats.lastRefusal = reason;
    if (m_onRefusal)
        m_onRefusal(reason);
}

// Whether the envelope may go on: its run, a rank of this node, and the connection that speaks for
// that rank (the first one; another only once the first has been silent for claimTimeoutMs).
bool Relay::admit(std::string_view identity, const Envelope &e)
{
    if (e.run_id() != m_options.runId) {
        refuse("other run", "a message of run '" + e.run_id().substr(0, 64) + "', not of this relay's run '" + m_options.runId + "'");
        return false;
    }
    if (!m_onNode.contains(e.rank())) {
        refuse("not on this node", "rank " + std::to_string(e.rank()) + " is not on this node (its ranks: " + ranksText(m_onNode) + ")");
        return false;
    }
    const auto now = Clock::now();
    auto [it, fresh] = m_claims.try_emplace(e.rank(), Claim{std::string(identity), now});
    if (!fresh && it->second.identity != identity) {
        if (now - it->second.last < std::chrono::milliseconds(m_options.claimTimeoutMs)) {
            refuse("claimed", "rank " + std::to_string(e.rank()) + " is already connected to this relay from another process");
            return false;
        }
        it->second.identity = std::string(identity); // the rank restarted: its new connection takes over
    }
    it->second.last = now;
    return true;
}

void Relay::fromRank(std::string_view identity, std::string_view frame)
{
    ++m_stats.framesIn;
    m_lastFromRank = Clock::now();
    const DecodeResult split = splitFrame(frame, m_parts);
    if (!split.ok) {
        refuse("malformed", "a frame that is not telemetry: " + split.error);
        return;
    }
    for (std::string_view part : m_parts) {
        const DecodeResult d = decodeEnvelope(part, m_envelope);
        if (!d.ok) {
            refuse("malformed", "a message that is not telemetry: " + d.error);
            continue;
        }
        if (!admit(identity, m_envelope))
            continue;
        if (m_envelope.has_goodbye())
            m_goodbyeSeq[m_envelope.rank()] = m_envelope.seq();
        appendUp(part);
    }
}

void Relay::appendUp(std::string_view envelope)
{
    if (!m_frame.empty() && m_frame.size() + envelope.size() + 12 > kBatchBytes) {
        m_pending.push_back(std::move(m_frame));
        m_frame.clear();
    }
    appendToBatch(m_frame, envelope);
    ++m_stats.envelopesUp;
}

// Sends what waits; what the connection does not take now stays (the ranks' frames are then not
// read, so they keep theirs: memory here stays bounded).
void Relay::flushUp()
{
    if (!m_frame.empty()) {
        m_pending.push_back(std::move(m_frame));
        m_frame.clear();
    }
    while (!m_pending.empty()) {
        bool sent = false;
        try {
            sent = m_upstream.send(zmq::buffer(m_pending.front()), zmq::send_flags::dontwait).has_value();
        } catch (const zmq::error_t &) {
            sent = false;
        }
        if (!sent)
            return;
        m_pending.pop_front();
        ++m_stats.framesUp;
    }
}

void Relay::readRanks()
{
    for (int i = 0; i < 1000 && m_pending.size() < kMaxPending; ++i) {
        zmq::message_t identity, body;
        try {
            if (!m_ranks.recv(identity, zmq::recv_flags::dontwait))
                return;
            if (!identity.more() || !m_ranks.recv(body, zmq::recv_flags::dontwait))
                continue; // a routing id always comes with a body
        } catch (const zmq::error_t &) {
            return;
        }
        while (body.more()) { // a rank sends single-part frames: the rest is not ours to read
            zmq::message_t extra;
            if (!m_ranks.recv(extra, zmq::recv_flags::dontwait))
                break;
            body.rebuild(extra.data(), extra.size());
        }
        fromRank(identity.to_string_view(), body.to_string_view());
    }
}

void Relay::readSupervisor()
{
    for (int i = 0; i < 10000; ++i) {
        zmq::message_t message;
        try {
            if (!m_upstream.recv(message, zmq::recv_flags::dontwait))
                return;
        } catch (const zmq::error_t &) {
            return;
        }
        Ack ack;
        if (!decodeAck(message.to_string_view(), ack, m_options.runId).ok || !ack.has_rank()) {
            ++m_stats.acksUnrouted;
            continue;
        }
        const auto claim = m_claims.find(ack.rank());
        if (claim == m_claims.end()) {
            ++m_stats.acksUnrouted;
            continue;
        }
        try {
            m_ranks.send(zmq::buffer(claim->second.identity), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
            m_ranks.send(zmq::buffer(message.to_string_view()), zmq::send_flags::dontwait);
            ++m_stats.acksDown;
        } catch (const zmq::error_t &) {
            ++m_stats.acksUnrouted; // the rank's connection is gone: it resends on its own when back
        }
        if (const auto bye = m_goodbyeSeq.find(ack.rank()); bye != m_goodbyeSeq.end() && ack.next_seq() > bye->second)
            m_finished.insert(ack.rank());
    }
}

Relay::State Relay::poll(int timeoutMs)
{
    zmq::pollitem_t items[] = {
        {m_ranks.handle(), 0, static_cast<short>(m_pending.size() < kMaxPending ? ZMQ_POLLIN : 0), 0},
        {m_upstream.handle(), 0, static_cast<short>(ZMQ_POLLIN | (m_pending.empty() ? 0 : ZMQ_POLLOUT)), 0},
    };
    try {
        zmq::poll(items, 2, std::chrono::milliseconds(timeoutMs));
    } catch (const zmq::error_t &) {
        // EINTR (a signal): the caller looks at its stop flag and calls again
    }
    readSupervisor();
    readRanks();
    flushUp();
    if (!m_onNode.empty() && m_finished.size() == m_onNode.size())
        return State::Finished;
    if (!m_pending.empty())
        m_lastFromRank = Clock::now(); // held back by the supervisor, not abandoned by the ranks
    if (Clock::now() - m_lastFromRank > std::chrono::milliseconds(m_options.idleExitMs))
        return State::Idle;
    return State::Running;
}

namespace {
// A folder that is this user's own and closed to others, created (0700) when missing.
bool privateFolder(const std::string &path, std::string &error)
{
    if (::mkdir(path.c_str(), 0700) != 0 && errno != EEXIST) {
        error = "cannot create " + path + ": " + std::strerror(errno);
        return false;
    }
    struct stat st {};
    if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
        error = path + " is not a folder";
        return false;
    }
    if (st.st_uid != ::getuid()) {
        error = path + " belongs to another user";
        return false;
    }
    if ((st.st_mode & 077) != 0) {
        error = path + " is open to other users (mode " + std::to_string(st.st_mode & 0777) + " in decimal; it must be 0700)";
        return false;
    }
    return true;
}

bool plainName(const std::string &s)
{
    if (s.empty() || s.size() > 48)
        return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '_' || c == '-'))
            return false;
    return s != "." && s != "..";
}

std::string hexHash(const std::string &s)
{
    char out[17];
    std::snprintf(out, sizeof out, "%016zx", std::hash<std::string>{}(s));
    return out;
}
} // namespace

std::string relayFolder(const std::string &runId, const std::string &nodeKey, std::string &error)
{
    const char *tmp = std::getenv("TMPDIR");
    std::string base = tmp && *tmp == '/' ? tmp : "/tmp";
    while (base.size() > 1 && base.back() == '/')
        base.pop_back();
    const std::string user = base + "/trellis-" + std::to_string(::getuid());
    std::string leaf = (plainName(runId) ? runId : hexHash(runId)) + "-" + (plainName(nodeKey) ? nodeKey : hexHash(nodeKey));
    if (relaySocketPath(user + "/" + leaf).size() > kMaxSocketPath)
        leaf = hexHash(runId + "\n" + nodeKey);
    const std::string folder = user + "/" + leaf;
    if (relaySocketPath(folder).size() > kMaxSocketPath) {
        error = "the relay's socket path under " + base + " would be longer than the 107 bytes an ipc:// path may have (set TMPDIR shorter)";
        return {};
    }
    if (!privateFolder(user, error) || !privateFolder(folder, error))
        return {};
    return folder;
}

int lockRelayFolder(const std::string &folder, int waitMs) { return lockFile(folder + "/relay.lock", waitMs); }

namespace {

// Whether the folder holds nothing but the files named (and . and ..).
template <std::size_t N>
bool onlyRelayFiles(const std::string &path, const char *const (&files)[N])
{
    DIR *dir = ::opendir(path.c_str());
    if (!dir)
        return false;
    bool only = true;
    while (const dirent *entry = ::readdir(dir)) {
        const std::string name = entry->d_name;
        only = only && (name == "." || name == ".." || std::find(std::begin(files), std::end(files), name) != std::end(files));
    }
    ::closedir(dir);
    return only;
}

} // namespace

int sweepOldRelayFolders(const std::string &folder, std::int64_t olderThanS)
{
    const std::size_t slash = folder.find_last_of('/');
    if (slash == std::string::npos || slash == 0)
        return 0;
    const std::string parent = folder.substr(0, slash), own = folder.substr(slash + 1);
    DIR *dir = ::opendir(parent.c_str());
    if (!dir)
        return 0;
    static const char *const kFiles[] = {"relay.log", "relay.pid", "relay.sock", "relay.lock"};
    const std::time_t now = std::time(nullptr);
    int removed = 0;
    while (const dirent *entry = ::readdir(dir)) {
        const std::string name = entry->d_name;
        if (name == "." || name == ".." || name == own)
            continue;
        const std::string path = parent + "/" + name;
        struct stat st {};
        struct stat log {};
        if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::getuid() ||
            ::lstat((path + "/relay.log").c_str(), &log) != 0 || !S_ISREG(log.st_mode) || now - log.st_mtime < olderThanS)
            continue;
        if (!onlyRelayFiles(path, kFiles))
            continue; // something else is kept there: not ours to remove
        const int lock = lockRelayFolder(path);
        if (lock < 0)
            continue; // a relay runs there
        for (const char *file : kFiles)
            ::unlink((path + "/" + file).c_str());
        ::close(lock);
        removed += ::rmdir(path.c_str()) == 0;
    }
    ::closedir(dir);
    return removed;
}

bool relayRunning(const std::string &folder)
{
    const int fd = lockRelayFolder(folder);
    if (fd == -1)
        return true;
    if (fd < 0)
        return false; // no folder (or no lock file can be made there): no relay
    ::close(fd); // the lock goes with it
    return false;
}

} // namespace trellis::proto
