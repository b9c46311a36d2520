// See lighthouse.h.
#include "launcher/supervisor/lighthouse.h"

#include "backend/protocol/lighthouse.pb.h"

#include <zmq.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

namespace trellis::launcher {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t msSince(Clock::time_point t) { return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t).count(); }

std::string groupList(const std::vector<int> &groups)
{
    std::string s;
    for (const int g : groups)
        s += (s.empty() ? "" : ", ") + std::to_string(g);
    return s;
}

} // namespace

struct Lighthouse::State {
    State(Lighthouse &owner_, LighthouseConfig config_) : owner(owner_), config(config_) {}
    Lighthouse &owner;
    LighthouseConfig config;
    zmq::context_t context{1};
    zmq::socket_t socket{context, zmq::socket_type::router};

    struct Waiting { // a request answered later
        std::string peer;
        std::uint64_t nonce = 0;
    };
    struct Rank {
        bool seen = false;
        Clock::time_point lastBeat{};
        std::optional<std::uint64_t> askStep; // asking for a quorum at this step
        std::optional<Waiting> ask;
    };
    struct Group {
        std::vector<Rank> ranks;
        bool out = false;   // out of the next quorum
        bool healing = false; // refused for asking at an older step: not waited for until it asks again
    };
    std::vector<Group> groups;

    struct Round { // the current quorum's step: its votes
        bool open = false;
        bool decided = false;
        bool commit = false;
        std::string why;
        std::uint64_t step = 0;
        Clock::time_point formedAt{};
        std::map<std::pair<int, int>, bool> votes; // (group, rank) -> ok
        std::vector<Waiting> waiting;
    };
    std::uint64_t quorumId = 0;
    std::vector<int> quorumGroups;
    bool forming = false; // a group of the quorum left: the next one will have another id
    Round round;
    std::optional<Clock::time_point> firstAsk; // of the step being gathered
    Clock::time_point startedAt = Clock::now();
    bool saidWaiting = false;
    std::map<std::string, std::string> store;

    void publish(LighthouseEvent e);
    void verdictTo(const Waiting &w, bool commit, const std::string &why);
    // The current step decided: every vote waiting answered.
    void decide(bool commit, const std::string &why);
    // Group g out of the next quorum; the current step dropped if it was in it.
    void takeOut(int g, const std::string &why);
    void handle(const std::string &peer, const proto::LighthouseRequest &q);
    // A quorum from the groups whose every rank asks, once every live group does.
    void formQuorum();
    // Group g asks for an older step than the quorum's: refused, said why.
    void refuseBehind(int g, std::uint64_t step);
    // The quorum of `members` at `step` answered to each of their ranks.
    void announce(const std::vector<int> &members, std::uint64_t step, bool first);

    void reply(const std::string &peer, const proto::LighthouseReply &r)
    {
        std::string bytes;
        r.SerializeToString(&bytes);
        try {
            socket.send(zmq::buffer(peer), zmq::send_flags::sndmore | zmq::send_flags::dontwait);
            socket.send(zmq::buffer(bytes), zmq::send_flags::dontwait);
        } catch (const zmq::error_t &) {
        }
    }
};

Lighthouse::Lighthouse(LighthouseConfig config) : m_state(std::make_unique<State>(*this, config))
{
    m_state->groups.resize(static_cast<std::size_t>(std::max(1, config.groups)));
    for (auto &g : m_state->groups)
        g.ranks.resize(static_cast<std::size_t>(std::max(1, config.groupRanks)));
}

Lighthouse::~Lighthouse() { stop(); }

std::string Lighthouse::start(const std::string &endpoint)
{
    try {
        m_state->socket.set(zmq::sockopt::linger, 0);
        m_state->socket.set(zmq::sockopt::router_mandatory, 0);
        m_state->socket.set(zmq::sockopt::maxmsgsize, static_cast<int64_t>(1 << 20));
        m_state->socket.bind(endpoint);
        m_endpoint = m_state->socket.get(zmq::sockopt::last_endpoint);
    } catch (const zmq::error_t &e) {
        return "the lighthouse cannot listen on " + endpoint + ": " + e.what();
    }
    m_state->startedAt = Clock::now();
    m_thread = std::thread([this] { run(); });
    return {};
}

void Lighthouse::stop()
{
    m_stop = true;
    if (m_thread.joinable())
        m_thread.join();
}

void Lighthouse::setEventHandler(std::function<void(const LighthouseEvent &)> handler)
{
    std::lock_guard lock(m_mutex);
    m_handler = std::move(handler);
}

void Lighthouse::markOut(int group, const std::string &why)
{
    std::lock_guard lock(m_mutex);
    m_outs.emplace_back(group, why);
}

Lighthouse::Counts Lighthouse::counts() const
{
    std::lock_guard lock(m_mutex);
    return m_counts;
}

void Lighthouse::State::publish(LighthouseEvent e)
{
    owner.published(e, quorumId, quorumGroups);
}

void Lighthouse::State::verdictTo(const Waiting &w, bool commit, const std::string &why)
{
    proto::LighthouseReply r;
    r.set_nonce(w.nonce);
    r.mutable_verdict()->set_commit(commit);
    r.mutable_verdict()->set_why(why);
    reply(w.peer, r);
}

void Lighthouse::State::decide(bool commit, const std::string &why)
{
    if (!round.open || round.decided)
        return;
    round.decided = true;
    round.commit = commit;
    round.why = why;
    if (!commit)
        forming = true; // the ranks' cross-group communicators may be broken: the next quorum has a new id
    for (const auto &w : round.waiting)
        verdictTo(w, commit, why);
    round.waiting.clear();
    LighthouseEvent e;
    e.kind = commit ? LighthouseEvent::Kind::Commit : LighthouseEvent::Kind::Drop;
    e.step = round.step;
    e.quorumId = quorumId;
    e.groups = quorumGroups;
    e.durationMs = msSince(round.formedAt);
    e.message = commit ? "step " + std::to_string(round.step + 1) + " committed by groups " + groupList(quorumGroups)
                       : "step " + std::to_string(round.step + 1) + " dropped by groups " + groupList(quorumGroups) + ": " + why;
    publish(e);
}

void Lighthouse::State::takeOut(int g, const std::string &why)
{
    if (g < 0 || g >= static_cast<int>(groups.size()) || groups[static_cast<std::size_t>(g)].out)
        return;
    Group &group = groups[static_cast<std::size_t>(g)];
    group.out = true;
    for (auto &rank : group.ranks) { // its pending asks are dropped: it is not in the next quorum
        rank.askStep.reset();
        rank.ask.reset();
    }
    const bool inQuorum = std::find(quorumGroups.begin(), quorumGroups.end(), g) != quorumGroups.end();
    if (inQuorum) {
        forming = true;
        decide(false, "group " + std::to_string(g) + " left (" + why + ")");
    }
    LighthouseEvent e;
    e.kind = LighthouseEvent::Kind::Out;
    e.groups = {g};
    e.quorumId = quorumId;
    e.step = round.step;
    e.message = "replica group " + std::to_string(g) + " out of the quorum: " + why;
    publish(e);
}

void Lighthouse::State::handle(const std::string &peer, const proto::LighthouseRequest &q)
{
    proto::LighthouseReply r;
    r.set_nonce(q.nonce());
    const int g = static_cast<int>(q.from().group()), k = static_cast<int>(q.from().rank());
    if (g >= static_cast<int>(groups.size()) || k >= config.groupRanks) {
        r.mutable_refusal()->set_why("no replica group " + std::to_string(g) + " rank " + std::to_string(k) + " in this run (" +
                                     std::to_string(groups.size()) + " groups of " + std::to_string(config.groupRanks) + ")");
        reply(peer, r);
        return;
    }
    Group &group = groups[static_cast<std::size_t>(g)];
    Rank &rank = group.ranks[static_cast<std::size_t>(k)];
    rank.seen = true;
    rank.lastBeat = Clock::now(); // any request is a sign of life
    switch (q.kind_case()) {
    case proto::LighthouseRequest::kBeat:
        r.mutable_beat()->set_quorum_id(forming ? quorumId + 1 : quorumId);
        reply(peer, r);
        return;
    case proto::LighthouseRequest::kStoreSet:
        store[q.store_set().key()] = q.store_set().value();
        r.mutable_store_value()->set_found(true);
        reply(peer, r);
        return;
    case proto::LighthouseRequest::kStoreGet: {
        const auto it = store.find(q.store_get().key());
        r.mutable_store_value()->set_found(it != store.end());
        if (it != store.end())
            r.mutable_store_value()->set_value(it->second);
        reply(peer, r);
        return;
    }
    case proto::LighthouseRequest::kQuorum:
        if (group.out) { // back: every rank asks again
            group.out = false;
            LighthouseEvent e;
            e.kind = LighthouseEvent::Kind::Back;
            e.groups = {g};
            e.message = "replica group " + std::to_string(g) + " asks to join at step " + std::to_string(q.quorum().step() + 1);
            publish(e);
        }
        rank.askStep = q.quorum().step();
        rank.ask = Waiting{peer, q.nonce()};
        group.healing = false;
        if (!firstAsk)
            firstAsk = Clock::now();
        return;
    case proto::LighthouseRequest::kVote: {
        const bool member = std::find(quorumGroups.begin(), quorumGroups.end(), g) != quorumGroups.end();
        if (!round.open || q.vote().quorum_id() != quorumId || q.vote().step() != round.step || !member) {
            verdictTo({peer, q.nonce()}, false, "the quorum changed (this vote: quorum " + std::to_string(q.vote().quorum_id()) + ")");
            return;
        }
        if (round.decided) {
            verdictTo({peer, q.nonce()}, round.commit, round.why);
            return;
        }
        round.votes[{g, k}] = q.vote().ok();
        round.waiting.push_back({peer, q.nonce()});
        if (!q.vote().ok()) {
            decide(false, "group " + std::to_string(g) + " rank " + std::to_string(k) + ": " + q.vote().why());
            return;
        }
        if (round.votes.size() == quorumGroups.size() * static_cast<std::size_t>(config.groupRanks))
            decide(true, {});
        return;
    }
    default:
        r.mutable_refusal()->set_why("an empty request");
        reply(peer, r);
    }
}

void Lighthouse::State::formQuorum()
{
    if (round.open && !round.decided)
        return; // the current step is still being voted on
    std::vector<int> asking;
    std::optional<std::uint64_t> step;
    int live = 0;
    for (int g = 0; g < static_cast<int>(groups.size()); ++g) {
        Group &group = groups[static_cast<std::size_t>(g)];
        if (group.out || group.healing)
            continue;
        const bool seen = std::all_of(group.ranks.begin(), group.ranks.end(), [](const Rank &r) { return r.seen; });
        if (!seen)
            continue;
        ++live;
        const std::optional<std::uint64_t> asked = group.ranks.front().askStep;
        const bool all = asked && std::all_of(group.ranks.begin(), group.ranks.end(), [&](const Rank &r) { return r.askStep == asked; });
        if (!all)
            continue;
        asking.push_back(g);
        step = std::max(step.value_or(0), *group.ranks.front().askStep);
    }
    if (asking.empty())
        return;
    // A group behind the others (an older checkpoint) cannot train this step with them.
    std::vector<int> members;
    for (const int g : asking) {
        Group &group = groups[static_cast<std::size_t>(g)];
        if (*group.ranks.front().askStep == *step) {
            members.push_back(g);
            continue;
        }
        refuseBehind(g, *step);
    }
    const bool everyLiveAsks = static_cast<int>(asking.size()) == live;
    const bool first = quorumId == 0;
    if (first && static_cast<int>(members.size()) < config.groups && msSince(*firstAsk) < config.joinWaitMs)
        return; // the first quorum waits a while for every group
    if (!first && !everyLiveAsks)
        return; // a live group is still training its step: wait for it (it leaves only by markOut or silence)
    if (static_cast<int>(members.size()) < config.minReplicas) {
        if (!saidWaiting) {
            saidWaiting = true;
            LighthouseEvent e;
            e.kind = LighthouseEvent::Kind::Waiting;
            e.step = *step;
            e.groups = members;
            e.message = "waiting for replica groups: " + std::to_string(members.size()) + " ready, min_replicas " +
                        std::to_string(config.minReplicas);
            publish(e);
        }
        return;
    }
    saidWaiting = false;
    announce(members, *step, first);
}

void Lighthouse::State::refuseBehind(int g, std::uint64_t step)
{
    Group &group = groups[static_cast<std::size_t>(g)];
    const std::string why = "replica group " + std::to_string(g) + " asks for step " + std::to_string(*group.ranks.front().askStep + 1) +
                            " while the quorum is at step " + std::to_string(step + 1) + ": it must load the quorum's state first";
    group.healing = true;
    for (auto &rank : group.ranks) {
        proto::LighthouseReply r;
        r.set_nonce(rank.ask->nonce);
        r.mutable_refusal()->set_why(why);
        reply(rank.ask->peer, r);
        rank.ask.reset();
        rank.askStep.reset();
    }
    LighthouseEvent e;
    e.kind = LighthouseEvent::Kind::Refused;
    e.groups = {g};
    e.message = why;
    publish(e);
}

void Lighthouse::State::announce(const std::vector<int> &members, std::uint64_t step, bool first)
{
    if (members != quorumGroups || forming || first)
        ++quorumId;
    forming = false;
    quorumGroups = members;
    round = {};
    round.open = true;
    round.step = step;
    round.formedAt = Clock::now();
    for (const int g : members)
        for (auto &rank : groups[static_cast<std::size_t>(g)].ranks) {
            proto::LighthouseReply r;
            r.set_nonce(rank.ask->nonce);
            proto::Quorum *qr = r.mutable_quorum();
            qr->set_id(quorumId);
            qr->set_step(step);
            for (const int m : members)
                qr->add_groups(static_cast<std::uint32_t>(m));
            reply(rank.ask->peer, r);
            rank.ask.reset();
            rank.askStep.reset();
        }
    LighthouseEvent e;
    e.kind = LighthouseEvent::Kind::Quorum;
    e.step = step;
    e.quorumId = quorumId;
    e.groups = members;
    e.durationMs = firstAsk ? msSince(*firstAsk) : 0;
    e.message = "quorum " + std::to_string(quorumId) + " at step " + std::to_string(step + 1) + ": groups " + groupList(members);
    firstAsk.reset();
    publish(e);
}

void Lighthouse::published(const LighthouseEvent &e, std::uint64_t quorumId, const std::vector<int> &quorumGroups)
{
    std::function<void(const LighthouseEvent &)> handler;
    {
        std::lock_guard lock(m_mutex);
        if (e.kind == LighthouseEvent::Kind::Commit)
            ++m_counts.committed;
        if (e.kind == LighthouseEvent::Kind::Drop)
            ++m_counts.dropped;
        m_counts.quorumId = quorumId;
        m_counts.quorumGroups = quorumGroups;
        handler = m_handler;
    }
    if (handler)
        handler(e);
}

void Lighthouse::run()
{
    State &st = *m_state;
    while (!m_stop) {
        zmq::pollitem_t item{static_cast<void *>(st.socket), 0, ZMQ_POLLIN, 0};
        try {
            zmq::poll(&item, 1, std::chrono::milliseconds(50));
        } catch (const zmq::error_t &) {
            continue;
        }
        for (int i = 0; (item.revents & ZMQ_POLLIN) && i < 1000; ++i) {
            zmq::message_t peer, body;
            try {
                if (!st.socket.recv(peer, zmq::recv_flags::dontwait))
                    break;
                if (!peer.more() || !st.socket.recv(body, zmq::recv_flags::none))
                    continue;
                for (bool more = body.more(); more;) { // a multi-part body is not ours
                    zmq::message_t rest;
                    more = st.socket.recv(rest, zmq::recv_flags::none) && rest.more();
                }
            } catch (const zmq::error_t &) {
                break;
            }
            proto::LighthouseRequest q;
            if (!q.ParseFromArray(body.data(), static_cast<int>(body.size())) || !q.has_from())
                continue; // not a lighthouse request: no answer (its sender's timeout says so)
            st.handle(peer.to_string(), q);
        }
        std::vector<std::pair<int, std::string>> outs;
        {
            std::lock_guard lock(m_mutex);
            outs.swap(m_outs);
        }
        for (const auto &[g, why] : outs)
            st.takeOut(g, why);
        for (int g = 0; g < static_cast<int>(st.groups.size()); ++g) {
            State::Group &group = st.groups[static_cast<std::size_t>(g)];
            if (group.out)
                continue;
            for (std::size_t k = 0; k < group.ranks.size(); ++k)
                if (group.ranks[k].seen && msSince(group.ranks[k].lastBeat) > st.config.leaveAfterMs) {
                    st.takeOut(g, "rank " + std::to_string(k) + " silent for " + std::to_string(msSince(group.ranks[k].lastBeat) / 1000.0).substr(0, 4) +
                                   " s");
                    break;
                }
        }
        st.formQuorum();
    }
}

} // namespace trellis::launcher
