// See memory_ring.h.
#include "backend/trainer/checkpoint/memory_ring.h"

#include "backend/trainer/checkpoint/checkpoint.h"

#include "backend/protocol/curve_keys.h"
#include "backend/protocol/zap_handler.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <zmq.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>
#include <vector>

namespace trellis::trainer {
namespace fs = std::filesystem;
namespace {

constexpr const char *kTag = "trellis.ring/1";
constexpr const char *kSelf = "ring.self", *kNext = "ring.next", *kPrev = "ring.prev", *kAcked = "ring.acked", *kLog = "ring.log";
constexpr auto kAnswerWait = std::chrono::seconds(30);

// `text` into `path` through a fresh 0600 file renamed over it. "" or why not.
std::string writePrivate(const fs::path &path, const std::string &text)
{
    const fs::path tmp = path.string() + ".tmp";
    ::unlink(tmp.c_str());
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0)
        return tmp.string() + ": cannot be written";
    const char *p = text.data();
    std::size_t left = text.size();
    while (left > 0) {
        const ssize_t n = ::write(fd, p, left);
        if (n <= 0) {
            ::close(fd);
            ::unlink(tmp.c_str());
            return tmp.string() + ": write failed";
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    ::close(fd);
    std::error_code ec;
    fs::rename(tmp, path, ec);
    return ec ? path.string() + ": cannot be put in place (" + ec.message() + ")" : std::string();
}

std::map<std::string, std::string> keyValues(const std::string &text)
{
    std::map<std::string, std::string> kv;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        if (const auto eq = line.find('='); eq != std::string::npos)
            kv[line.substr(0, eq)] = line.substr(eq + 1);
    return kv;
}

// The complete step folders (meta.json in place) under `root`, oldest first, with their steps.
std::vector<std::pair<std::uint64_t, fs::path>> completeSteps(const fs::path &root)
{
    static const std::regex name("step-([0-9]{8,18})");
    std::vector<std::pair<std::uint64_t, fs::path>> steps;
    std::error_code ec;
    for (const auto &entry : fs::directory_iterator(root, ec)) {
        std::smatch m;
        const std::string file = entry.path().filename().string();
        if (entry.is_directory(ec) && std::regex_match(file, m, name) && fs::exists(entry.path() / "meta.json", ec))
            steps.emplace_back(std::stoull(m[1].str()), entry.path());
    }
    std::sort(steps.begin(), steps.end());
    return steps;
}

// Whether a TCP connection to address:port is accepted within `ms`.
bool reachable(const std::string &address, int port, int ms)
{
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::inet_pton(AF_INET, address.c_str(), &to.sin_addr) != 1)
        return false;
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    bool ok = ::connect(fd, reinterpret_cast<const sockaddr *>(&to), sizeof to) == 0;
    if (!ok && errno == EINPROGRESS) {
        pollfd p{fd, POLLOUT, 0};
        int error = 0;
        socklen_t length = sizeof error;
        ok = ::poll(&p, 1, ms) == 1 && ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0;
    }
    ::close(fd);
    return ok;
}

std::vector<zmq::message_t> receiveAll(zmq::socket_t &socket)
{
    std::vector<zmq::message_t> parts;
    zmq::message_t part;
    if (!socket.recv(part, zmq::recv_flags::dontwait))
        return parts;
    parts.push_back(std::move(part));
    while (parts.back().more()) {
        zmq::message_t next;
        if (!socket.recv(next, zmq::recv_flags::none))
            break;
        parts.push_back(std::move(next));
    }
    return parts;
}

} // namespace

std::optional<RingEndpoint> readRingSelf(const std::string &store, int waitMs, std::string &error)
{
    const fs::path path = fs::path(store) / kSelf;
    for (int waited = 0;; waited += 20) {
        std::error_code ec;
        if (fs::exists(path, ec))
            break;
        if (waited >= waitMs) {
            error = path.string() + ": the holder did not say where it listens";
            return std::nullopt;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const auto kv = keyValues(readFile(path));
    if (kv.count("error")) {
        error = kv.at("error");
        return std::nullopt;
    }
    RingEndpoint e;
    e.port = kv.count("port") ? std::atoi(kv.at("port").c_str()) : 0;
    e.serverPublic = kv.count("server_public") ? kv.at("server_public") : "";
    e.clientPublic = kv.count("client_public") ? kv.at("client_public") : "";
    if (e.port <= 0 || e.port > 65535 || e.serverPublic.size() != 40 || e.clientPublic.size() != 40) {
        error = path.string() + ": malformed";
        return std::nullopt;
    }
    return e;
}

std::string writeRingNeighbours(const std::string &store, const RingEndpoint &next, const std::string &prevClientPublic, int keep)
{
    const std::string nextText = "addresses=" + next.addresses + "\nport=" + std::to_string(next.port) + "\nserver_public=" +
                                 next.serverPublic + "\nkeep=" + std::to_string(keep) + "\n";
    if (std::string e = writePrivate(fs::path(store) / kNext, nextText); !e.empty())
        return e;
    return writePrivate(fs::path(store) / kPrev, "client_public=" + prevClientPublic + "\n");
}

std::string hostAddresses()
{
    std::vector<std::string> outside, loopback;
    ifaddrs *list = nullptr;
    if (::getifaddrs(&list) == 0) {
        for (ifaddrs *i = list; i; i = i->ifa_next) {
            if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP))
                continue;
            char text[INET_ADDRSTRLEN] = {};
            ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in *>(i->ifa_addr)->sin_addr, text, sizeof text);
            ((i->ifa_flags & IFF_LOOPBACK) ? loopback : outside).push_back(text);
        }
        ::freeifaddrs(list);
    }
    std::string joined;
    for (const auto *group : {&outside, &loopback})
        for (const std::string &a : *group)
            joined += (joined.empty() ? "" : ",") + a;
    return joined;
}

std::uint64_t ringAcked(const std::string &store)
{
    const std::string text = readFile(fs::path(store) / kAcked);
    return text.empty() ? 0 : std::strtoull(text.c_str(), nullptr, 10);
}

MemoryRing::MemoryRing(std::string store) : m_store(std::move(store)) {}

MemoryRing::~MemoryRing()
{
    for (auto *s : {&m_client, &m_server, &m_zap})
        if (*s)
            (*s)->set(zmq::sockopt::linger, 0);
}

void MemoryRing::log(const std::string &line)
{
    std::ofstream out(fs::path(m_store) / kLog, std::ios::app);
    char when[32];
    const std::time_t now = std::time(nullptr);
    std::strftime(when, sizeof when, "%H:%M:%S", std::localtime(&now));
    out << when << ' ' << line << '\n';
}

std::string MemoryRing::start()
{
    std::string error;
    const auto keys = proto::generateCurveKeys(error);
    try {
        if (!keys)
            throw std::runtime_error(error);
        m_serverPublic = keys->serverPublic;
        m_serverSecret = keys->serverSecret;
        m_clientPublic = keys->clientPublic;
        m_clientSecret = keys->clientSecret;
        m_zap.emplace(m_context, zmq::socket_type::rep);
        m_zap->set(zmq::sockopt::linger, 0);
        m_zap->bind("inproc://zeromq.zap.01");
        m_server.emplace(m_context, zmq::socket_type::router);
        m_server->set(zmq::sockopt::curve_server, true);
        m_server->set(zmq::sockopt::curve_secretkey, m_serverSecret);
        m_server->set(zmq::sockopt::zap_domain, "trellis-memory-ring");
        m_server->set(zmq::sockopt::rcvhwm, 0); // whole checkpoints in flight: never dropped
        m_server->set(zmq::sockopt::linger, 1000); // the last acknowledgement still goes out
        m_server->bind("tcp://*:0");
        const std::string endpoint = m_server->get(zmq::sockopt::last_endpoint);
        const std::string port = endpoint.substr(endpoint.rfind(':') + 1);
        error = writePrivate(fs::path(m_store) / kSelf,
                             "port=" + port + "\nserver_public=" + m_serverPublic + "\nclient_public=" + m_clientPublic + "\n");
        if (!error.empty())
            throw std::runtime_error(error);
        log("listening on port " + port);
        return {};
    } catch (const std::exception &e) {
        m_server.reset();
        m_zap.reset();
        const std::string why = std::string("no peer copies: the holder cannot listen (") + e.what() + ")";
        writePrivate(fs::path(m_store) / kSelf, "error=" + why + "\n");
        log(why);
        return why;
    }
}

void MemoryRing::readNeighbours()
{
    const std::string prev = readFile(fs::path(m_store) / kPrev);
    if (prev != m_prevText) {
        m_prevText = prev;
        const auto kv = keyValues(prev);
        const std::string key = kv.count("client_public") ? kv.at("client_public") : "";
        std::uint8_t raw[32];
        m_allowedKey = key.size() == 40 && zmq_z85_decode(raw, key.c_str()) ? std::string(reinterpret_cast<char *>(raw), 32) : "";
    }
    const std::string next = readFile(fs::path(m_store) / kNext);
    if (next == m_nextText)
        return;
    m_nextText = next;
    const auto kv = keyValues(next);
    m_nextAddresses = kv.count("addresses") ? kv.at("addresses") : "";
    m_nextPort = kv.count("port") ? std::atoi(kv.at("port").c_str()) : 0;
    m_nextServerPublic = kv.count("server_public") ? kv.at("server_public") : "";
    m_keep = std::clamp(kv.count("keep") ? std::atoi(kv.at("keep").c_str()) : 2, 1, 1000);
    m_client.reset(); // a new next holder (a restart): connected afresh
    m_awaiting = 0;
}

// To the first of the next holder's addresses that accepts a connection (tried again every 2 s).
void MemoryRing::connectNext()
{
    if (m_client || m_nextPort <= 0 || m_nextServerPublic.size() != 40 || !m_server)
        return;
    const auto now = std::chrono::steady_clock::now();
    if (now - m_triedAt < std::chrono::seconds(2))
        return;
    m_triedAt = now;
    std::istringstream addresses(m_nextAddresses);
    for (std::string address; std::getline(addresses, address, ',');) {
        if (!reachable(address, m_nextPort, 500))
            continue;
        try {
            m_client.emplace(m_context, zmq::socket_type::dealer);
            m_client->set(zmq::sockopt::curve_serverkey, m_nextServerPublic);
            m_client->set(zmq::sockopt::curve_publickey, m_clientPublic);
            m_client->set(zmq::sockopt::curve_secretkey, m_clientSecret);
            m_client->set(zmq::sockopt::sndhwm, 0);
            m_client->set(zmq::sockopt::sndtimeo, 0); // never blocks: a DEALER with no peer would
            m_client->set(zmq::sockopt::linger, 0);
            m_client->connect("tcp://" + address + ":" + std::to_string(m_nextPort));
            log("sending to the next node's holder at " + address + ":" + std::to_string(m_nextPort));
        } catch (const zmq::error_t &e) {
            m_client.reset();
            log(std::string("cannot connect to ") + address + ": " + e.what());
        }
        return;
    }
}

std::string MemoryRing::receive(const std::string &kind, const std::string &step, const std::string &name, zmq::message_t &bytes,
                                const std::string &keep)
{
    static const std::regex stepText("[0-9]{1,18}"), shard("rank-[0-9]{5,9}\\.bin");
    if (!std::regex_match(step, stepText))
        return std::string("step '").append(step, 0, 20).append("' is not a step number");
    if (kind == "file" ? !std::regex_match(name, shard) : name != "meta.json")
        return std::string("'").append(name, 0, 40).append("' is not a file of a checkpoint"); // (not "'" + …: GCC 12's -Wrestrict misfires)
    const fs::path peer = fs::path(m_store) / kRingPeerFolder;
    const std::uint64_t number = std::stoull(step);
    const fs::path partial = peer / (stepDirName(number) + ".partial");
    std::error_code ec;
    fs::create_directories(partial, ec);
    fs::permissions(peer, fs::perms::owner_all, ec);
    fs::permissions(partial, fs::perms::owner_all, ec);
    if (const std::string e = writePrivate(partial / name, bytes.to_string()); !e.empty())
        return e;
    if (kind == "file")
        return {};
    // meta.json came last: the step in place, the oldest beyond `keep` and stale partial ones gone.
    const fs::path done = peer / stepDirName(number);
    fs::remove_all(done, ec);
    fs::rename(partial, done, ec);
    if (ec)
        return done.string() + ": cannot be put in place (" + ec.message() + ")";
    const int keepSteps = std::clamp(std::atoi(keep.c_str()), 1, 1000);
    auto steps = completeSteps(peer);
    for (std::size_t i = 0; i + static_cast<std::size_t>(keepSteps) < steps.size(); ++i)
        fs::remove_all(steps[i].second, ec);
    for (const auto &entry : fs::directory_iterator(peer, ec))
        if (entry.path().extension() == ".partial" && entry.path() != partial)
            fs::remove_all(entry.path(), ec);
    return {};
}

void MemoryRing::serveIncoming()
{
    for (int round = 0; round < 64; ++round) {
        std::vector<zmq::message_t> parts = receiveAll(*m_server);
        if (parts.empty())
            return;
        // identity, tag, kind, step, name, bytes [, keep]
        if (parts.size() < 6 || parts[1].to_string_view() != kTag)
            continue;
        const std::string kind = parts[2].to_string(), step = parts[3].to_string(), name = parts[4].to_string();
        if (kind != "file" && kind != "done")
            continue;
        const std::string error = receive(kind, step, name, parts[5], parts.size() > 6 ? parts[6].to_string() : "2");
        if (!error.empty())
            log("refused from the previous node: " + error);
        if (kind == "file" && error.empty())
            continue;
        try {
            m_server->send(parts[0], zmq::send_flags::sndmore);
            m_server->send(zmq::buffer(std::string_view(kTag)), zmq::send_flags::sndmore);
            m_server->send(zmq::buffer(std::string_view(error.empty() ? "ack" : "refused")), zmq::send_flags::sndmore);
            m_server->send(zmq::buffer(step), error.empty() ? zmq::send_flags::none : zmq::send_flags::sndmore);
            if (!error.empty())
                m_server->send(zmq::buffer(error), zmq::send_flags::none);
        } catch (const zmq::error_t &) {
        }
    }
}

void MemoryRing::readAnswers()
{
    for (;;) {
        std::vector<zmq::message_t> parts = receiveAll(*m_client);
        if (parts.empty())
            return;
        if (parts.size() < 3 || parts[0].to_string_view() != kTag)
            continue;
        const std::uint64_t step = std::strtoull(parts[2].to_string().c_str(), nullptr, 10);
        if (step != m_awaiting)
            continue;
        m_awaiting = 0;
        if (parts[1].to_string_view() == "ack") {
            if (m_acked == 0)
                log("the next node's holder keeps this node's step " + std::to_string(step) + " (the first it confirmed)");
            m_acked = step;
            writePrivate(fs::path(m_store) / kAcked, std::to_string(step) + "\n");
        } else {
            log("the next node's holder refused step " + std::to_string(step) + (parts.size() > 3 ? ": " + parts[3].to_string() : ""));
        }
    }
}

// The newest complete step of this node (not the one confirmed already) to the next holder, once
// the step before it has been answered (or went unanswered for kAnswerWait: then afresh, on a
// new connection — the next node may have been replaced).
void MemoryRing::sendNewest()
{
    if (!m_client)
        return;
    if (m_awaiting) {
        if (std::chrono::steady_clock::now() - m_sentAt < kAnswerWait)
            return;
        log("no answer from the next node's holder for step " + std::to_string(m_awaiting) + " in 30 s: connecting again");
        m_client.reset();
        m_awaiting = 0;
        return;
    }
    const auto steps = completeSteps(m_store);
    if (steps.empty() || steps.back().first <= m_acked)
        return;
    const auto &[step, dir] = steps.back();
    std::vector<std::pair<std::string, std::string>> files; // name, bytes: read whole first (the writer may prune it)
    std::error_code ec;
    for (const auto &entry : fs::directory_iterator(dir, ec))
        if (const std::string name = entry.path().filename().string(); name.rfind("rank-", 0) == 0 && entry.path().extension() == ".bin")
            files.emplace_back(name, readFile(entry.path()));
    const std::string meta = readFile(dir / "meta.json");
    if (meta.empty() || files.empty() || !fs::exists(dir / "meta.json", ec))
        return; // pruned under it: the next one
    const std::string number = std::to_string(step);
    // Each message's parts queued whole or not at all (no peer yet: not at all); never waiting.
    const auto more = zmq::send_flags::sndmore | zmq::send_flags::dontwait, last = zmq::send_flags::dontwait;
    auto message = [&](std::initializer_list<std::string_view> parts) {
        std::size_t i = 0;
        for (const std::string_view part : parts)
            if (!m_client->send(zmq::buffer(part), ++i < parts.size() ? more : last))
                return false;
        return true;
    };
    bool queued = true;
    try {
        for (const auto &[name, bytes] : files)
            queued = queued && message({kTag, "file", number, name, bytes});
        queued = queued && message({kTag, "done", number, "meta.json", meta, std::to_string(m_keep)});
    } catch (const zmq::error_t &e) {
        log(std::string("cannot send to the next node's holder: ") + e.what());
        queued = false;
    }
    if (!queued) { // not connected (or no longer): afresh in a while, the newest then
        m_client.reset();
        return;
    }
    m_awaiting = step;
    m_sentAt = std::chrono::steady_clock::now();
}

void MemoryRing::poll(int timeoutMs)
{
    if (!m_server) {
        std::this_thread::sleep_for(std::chrono::milliseconds(timeoutMs));
        return;
    }
    // A connection's key is judged only once the previous holder's is known (ring.prev, written by
    // the node's first rank moments after this holder started): until then its ZAP request waits.
    std::vector<zmq::pollitem_t> items = {{m_server->handle(), 0, ZMQ_POLLIN, 0}};
    if (!m_allowedKey.empty())
        items.push_back({m_zap->handle(), 0, ZMQ_POLLIN, 0});
    if (m_client)
        items.push_back({m_client->handle(), 0, ZMQ_POLLIN, 0});
    try {
        zmq::poll(items.data(), items.size(), std::chrono::milliseconds(timeoutMs));
        readNeighbours();
        if (!m_allowedKey.empty())
            proto::answerZapRequests(*m_zap, m_allowedKey, [this](const std::string &address) {
                log("refused a connection from " + address + " (not the previous node's holder's key)");
            });
        serveIncoming();
        if (m_client)
            readAnswers();
        connectNext();
        sendNewest();
    } catch (const std::exception &e) { // a file pruned under it, a socket's error: the next round tries again
        log(std::string("ring: ") + e.what());
    }
}

} // namespace trellis::trainer
