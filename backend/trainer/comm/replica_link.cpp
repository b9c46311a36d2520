// See replica_link.h.
#include "backend/trainer/comm/replica_link.h"

#include "backend/protocol/lighthouse.pb.h"

#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>

#include <zmq.hpp>

#include <algorithm>
#include <stdexcept>

namespace trellis::trainer {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t msSince(Clock::time_point t) { return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count(); }

} // namespace

// A DEALER to the lighthouse; one request at a time, its answer matched by nonce (a late answer to
// an earlier request that timed out is dropped).
struct ReplicaLink::Channel {
    zmq::context_t context{1};
    zmq::socket_t socket{context, zmq::socket_type::dealer};
    proto::Member from;
    std::uint64_t nonce = 0;

    std::string open(const std::string &endpoint, int group, int rank)
    {
        from.set_group(static_cast<std::uint32_t>(group));
        from.set_rank(static_cast<std::uint32_t>(rank));
        try {
            socket.set(zmq::sockopt::linger, 0);
            socket.connect(endpoint);
        } catch (const zmq::error_t &e) {
            return "cannot connect to the lighthouse " + endpoint + ": " + e.what();
        }
        return {};
    }

    // Sends `q` and waits up to `limit` for its answer, giving up early when `stop` is set. "" or why not.
    std::string ask(proto::LighthouseRequest &q, proto::LighthouseReply &r, std::chrono::milliseconds limit, const std::atomic<bool> *stop = nullptr)
    {
        q.set_nonce(++nonce);
        *q.mutable_from() = from;
        std::string bytes;
        q.SerializeToString(&bytes);
        try {
            if (!socket.send(zmq::buffer(bytes), zmq::send_flags::dontwait))
                return "the lighthouse's socket is full";
        } catch (const zmq::error_t &e) {
            return std::string("cannot send to the lighthouse: ") + e.what();
        }
        const Clock::time_point sent = Clock::now();
        while (msSince(sent) < limit.count()) {
            if (stop && *stop)
                return "stopped";
            zmq::pollitem_t item{static_cast<void *>(socket), 0, ZMQ_POLLIN, 0};
            try {
                zmq::poll(&item, 1, std::chrono::milliseconds(100));
                if (!(item.revents & ZMQ_POLLIN))
                    continue;
                zmq::message_t body;
                if (!socket.recv(body, zmq::recv_flags::dontwait))
                    continue;
                if (r.ParseFromArray(body.data(), static_cast<int>(body.size())) && r.nonce() == nonce)
                    return {};
            } catch (const zmq::error_t &e) {
                return std::string("the lighthouse's socket failed: ") + e.what();
            }
        }
        return "no answer from the lighthouse in " + std::to_string(limit.count() / 1000) + " s";
    }
};

// Gloo's rendezvous: keys and values kept by the lighthouse, scoped by the quorum being connected.
// get() and wait() ask again every 2 ms until the key is there, the timeout passes, or the link
// learns of a newer quorum (then the connection is pointless: it throws).
class ReplicaLink::Store : public gloo::rendezvous::Store {
public:
    Store(Channel &channel, std::string prefix, std::chrono::milliseconds timeout, const std::atomic<std::uint64_t> &newest, std::uint64_t id)
        : m_channel(channel), m_prefix(std::move(prefix)), m_timeout(timeout), m_newest(newest), m_id(id)
    {
    }
    void set(const std::string &key, const std::vector<char> &data) override
    {
        proto::LighthouseRequest q;
        q.mutable_store_set()->set_key(m_prefix + key);
        q.mutable_store_set()->set_value(std::string(data.begin(), data.end()));
        proto::LighthouseReply r;
        if (const std::string e = m_channel.ask(q, r, m_timeout); !e.empty())
            throw std::runtime_error(e);
    }
    std::vector<char> get(const std::string &key) override
    {
        std::vector<char> out;
        if (!fetch(key, m_timeout, &out))
            throw std::runtime_error("the rendezvous key " + key + " never came (a group of the quorum is gone)");
        return out;
    }
    void wait(const std::vector<std::string> &keys) override { wait(keys, m_timeout); }
    void wait(const std::vector<std::string> &keys, const std::chrono::milliseconds &timeout) override
    {
        for (const std::string &key : keys)
            if (!fetch(key, timeout, nullptr))
                throw std::runtime_error("the rendezvous key " + key + " never came (a group of the quorum is gone)");
    }

private:
    bool fetch(const std::string &key, std::chrono::milliseconds limit, std::vector<char> *out)
    {
        const Clock::time_point start = Clock::now();
        while (msSince(start) < limit.count()) {
            if (m_newest.load() > m_id)
                throw std::runtime_error("the quorum changed while connecting");
            proto::LighthouseRequest q;
            q.mutable_store_get()->set_key(m_prefix + key);
            proto::LighthouseReply r;
            if (const std::string e = m_channel.ask(q, r, m_timeout); !e.empty())
                throw std::runtime_error(e);
            if (r.store_value().found()) {
                if (out)
                    out->assign(r.store_value().value().begin(), r.store_value().value().end());
                return true;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
        return false;
    }

    Channel &m_channel;
    std::string m_prefix;
    std::chrono::milliseconds m_timeout;
    const std::atomic<std::uint64_t> &m_newest;
    std::uint64_t m_id;
};

ReplicaLink::ReplicaLink(ReplicaLinkOptions options) : m_options(std::move(options)) {}

ReplicaLink::~ReplicaLink()
{
    m_stop = true;
    if (m_beat.joinable())
        m_beat.join();
}

std::string ReplicaLink::start()
{
    m_requests = std::make_unique<Channel>();
    if (const std::string e = m_requests->open(m_options.endpoint, m_options.group, m_options.rank); !e.empty())
        return e;
    try {
        gloo::transport::tcp::attr attr;
        attr.hostname = m_options.address;
        m_device = gloo::transport::tcp::CreateDevice(attr);
    } catch (const std::exception &e) {
        return "cannot listen for the other replica groups on " + m_options.address + ": " + e.what();
    }
    m_beat = std::thread([this] { beat(); });
    return {};
}

void ReplicaLink::beat()
{
    Channel channel;
    if (!channel.open(m_options.endpoint, m_options.group, m_options.rank).empty())
        return;
    while (!m_stop) {
        proto::LighthouseRequest q;
        q.mutable_beat();
        proto::LighthouseReply r;
        if (channel.ask(q, r, std::chrono::milliseconds(2000), &m_stop).empty() && r.has_beat()) {
            const std::uint64_t newest = r.beat().quorum_id();
            if (newest > m_newest.load())
                m_newest = newest;
            if (newest > m_inUse.load() && m_inUse.load() != 0)
                abortCollective("the quorum changed (quorum " + std::to_string(newest) + ")");
        }
        for (auto slept = std::chrono::milliseconds(0); slept < m_options.beatEvery && !m_stop; slept += std::chrono::milliseconds(20))
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

void ReplicaLink::abortCollective(const std::string &why)
{
    std::lock_guard lock(m_contextMutex);
    if (!m_context || m_aborted)
        return;
    m_aborted = true;
    m_abortWhy = why;
    // Gloo's abort of the collective's pending sends and receives: each wait on them returns at
    // once; the communicator is not used again.
    for (gloo::transport::UnboundBuffer *buffer : m_buffers) {
        buffer->abortWaitRecv();
        buffer->abortWaitSend();
    }
}

namespace {

// Where chunk `c` of `n` elements split `parts` ways starts, and its length.
std::size_t chunkStart(std::size_t n, int parts, int c) { return n / parts * c + std::min<std::size_t>(c, n % parts); }
std::size_t chunkLength(std::size_t n, int parts, int c) { return n / parts + (static_cast<std::size_t>(c) < n % parts ? 1 : 0); }

} // namespace

void ReplicaLink::ringAllreduce(gloo::Context &context, float *data, std::size_t n)
{
    // The ring all-reduce over Gloo's pairs (a reduce-scatter, then an all-gather; 2(P-1) steps,
    // each a chunk to the right neighbour and one from the left), on buffers this link holds so
    // that abortCollective() can end their waits: Gloo's own all-reduce waits on buffers of its
    // own, which nothing outside it can abort (libgloo 0.5; docs/architecture.md).
    const int size = context.size, rank = context.rank;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    std::size_t widest = 0;
    for (int c = 0; c < size; ++c)
        widest = std::max(widest, chunkLength(n, size, c));
    std::vector<float> incoming(std::max<std::size_t>(1, widest));
    std::unique_ptr<gloo::transport::UnboundBuffer> out = context.createUnboundBuffer(data, n * sizeof(float));
    std::unique_ptr<gloo::transport::UnboundBuffer> in = context.createUnboundBuffer(incoming.data(), incoming.size() * sizeof(float));
    {
        std::lock_guard lock(m_contextMutex);
        if (m_aborted)
            throw std::runtime_error("aborted: " + m_abortWhy);
        m_buffers = {out.get(), in.get()};
    }
    struct Forget {
        ReplicaLink &link;
        ~Forget()
        {
            std::lock_guard lock(link.m_contextMutex);
            link.m_buffers.clear();
        }
    } forget{*this};
    // The same on every member, whenever it joined: the quorum, its step, the call in the step.
    const std::uint64_t slot = (m_quorum.id << 40) | ((m_quorum.step & 0xffffff) << 16) | (m_callInStep++ & 0xffff);
    auto waitFor = [&](gloo::transport::UnboundBuffer &buffer, bool recv) {
        const bool done = recv ? buffer.waitRecv(m_options.timeout) : buffer.waitSend(m_options.timeout);
        if (!done) {
            std::lock_guard lock(m_contextMutex);
            throw std::runtime_error("aborted: " + m_abortWhy);
        }
    };
    for (int s = 0; s + 1 < size; ++s) { // reduce-scatter: rank r ends with the sum of chunk r+1
        const int send = (rank - s + size) % size, recv = (rank - s - 1 + 2 * size) % size;
        const std::size_t sendLength = chunkLength(n, size, send), recvLength = chunkLength(n, size, recv);
        if (sendLength > 0)
            out->send(right, slot, chunkStart(n, size, send) * sizeof(float), sendLength * sizeof(float));
        if (recvLength > 0)
            in->recv(left, slot, 0, recvLength * sizeof(float));
        if (recvLength > 0)
            waitFor(*in, true);
        if (sendLength > 0)
            waitFor(*out, false);
        float *target = data + chunkStart(n, size, recv);
        for (std::size_t i = 0; i < recvLength; ++i)
            target[i] += incoming[i];
    }
    for (int s = 0; s + 1 < size; ++s) { // all-gather of the summed chunks
        const int send = (rank + 1 - s + size) % size, recv = (rank - s + size) % size;
        const std::size_t sendLength = chunkLength(n, size, send), recvLength = chunkLength(n, size, recv);
        if (sendLength > 0)
            out->send(right, slot, chunkStart(n, size, send) * sizeof(float), sendLength * sizeof(float));
        if (recvLength > 0)
            out->recv(left, slot, chunkStart(n, size, recv) * sizeof(float), recvLength * sizeof(float));
        if (recvLength > 0)
            waitFor(*out, true);
        if (sendLength > 0)
            waitFor(*out, false);
    }
}

std::string ReplicaLink::connectQuorum(const ReplicaQuorum &q)
{
    {
        std::lock_guard lock(m_contextMutex);
        m_context.reset();
        m_aborted = false;
        m_inUse = 0;
    }
    if (q.groups.size() < 2) {
        m_inUse = q.id;
        return {}; // alone: nothing to average with
    }
    const Clock::time_point start = Clock::now();
    try {
        auto context = std::make_shared<gloo::rendezvous::Context>(q.position, static_cast<int>(q.groups.size()));
        context->setTimeout(m_options.timeout);
        const std::string prefix = std::string("q").append(std::to_string(q.id)).append("/r").append(std::to_string(m_options.rank)).append("/");
        Store store(*m_requests, prefix, m_options.timeout, m_newest, q.id); // (not "q" + …: GCC 12's -Wrestrict misfires)
        context->connectFullMesh(store, m_device);
        std::lock_guard lock(m_contextMutex);
        m_context = std::move(context);
        m_inUse = q.id;
    } catch (const std::exception &e) {
        return std::string("cannot connect to the quorum's other groups: ") + e.what();
    }
    m_connectMs = msSince(start);
    return {};
}

ReplicaQuorum ReplicaLink::beginStep(std::uint64_t committed)
{
    ReplicaQuorum out;
    proto::LighthouseRequest q;
    q.mutable_quorum()->set_step(committed);
    proto::LighthouseReply r;
    // No limit of its own: the lighthouse answers when a quorum forms (it may wait for groups).
    if (const std::string e = m_requests->ask(q, r, std::chrono::hours(24 * 365), &m_stop); !e.empty()) {
        out.error = e;
        return out;
    }
    if (r.has_refusal()) {
        out.refused = r.refusal().why();
        return out;
    }
    out.id = r.quorum().id();
    out.step = r.quorum().step();
    for (const std::uint32_t g : r.quorum().groups())
        out.groups.push_back(static_cast<int>(g));
    const auto me = std::find(out.groups.begin(), out.groups.end(), m_options.group);
    out.position = me == out.groups.end() ? -1 : static_cast<int>(me - out.groups.begin());
    if (out.id > m_newest.load())
        m_newest = out.id;
    m_connectMs = 0;
    m_callInStep = 0;
    if (out.id != m_quorum.id || m_aborted)
        if (const std::string e = connectQuorum(out); !e.empty())
            out.error = e;
    m_quorum = out;
    return out;
}

bool ReplicaLink::allreduceMean(float *data, std::size_t n, std::string &why)
{
    if (!allreduceSum(data, n, why))
        return false;
    const float scale = 1.0f / static_cast<float>(std::max<std::size_t>(1, m_quorum.groups.size()));
    for (std::size_t i = 0; i < n; ++i)
        data[i] *= scale;
    return true;
}

bool ReplicaLink::allreduceSum(float *data, std::size_t n, std::string &why)
{
    std::shared_ptr<gloo::Context> context;
    {
        std::lock_guard lock(m_contextMutex);
        context = m_context;
    }
    if (m_quorum.groups.size() < 2)
        return true;
    if (!context || m_aborted) {
        why = "no communicator for quorum " + std::to_string(m_quorum.id);
        return false;
    }
    try {
        ringAllreduce(*context, data, n);
    } catch (const std::exception &e) {
        why = e.what();
        std::lock_guard lock(m_contextMutex);
        m_aborted = true; // broken: the next quorum connects afresh
        return false;
    }
    if (m_aborted) {
        why = "aborted: the quorum changed";
        return false;
    }
    return true;
}

ReplicaVerdict ReplicaLink::endStep(std::uint64_t committed, bool ok, const std::string &why)
{
    proto::LighthouseRequest q;
    q.mutable_vote()->set_step(committed);
    q.mutable_vote()->set_quorum_id(m_quorum.id);
    q.mutable_vote()->set_ok(ok);
    q.mutable_vote()->set_why(why);
    proto::LighthouseReply r;
    ReplicaVerdict out;
    if (const std::string e = m_requests->ask(q, r, std::chrono::hours(24 * 365), &m_stop); !e.empty()) {
        out.why = e;
        return out;
    }
    out.answered = true;
    out.commit = r.has_verdict() && r.verdict().commit();
    out.why = r.has_verdict() ? r.verdict().why() : r.refusal().why();
    return out;
}

} // namespace trellis::trainer
