// The ring of memory-store holders (training.checkpoint.memory on several nodes): each node's
// holder sends its node's newest complete in-memory checkpoint — the node's ranks' shards and
// meta.json — to the holder of the next node, which keeps it under peer/ in its own store. Any one
// node can then be lost: its ranks' shards are still in the next node's memory, and a restart
// gathers them from there (memory_restore.h). On one node there is no ring.
//
// Holder to holder: ZeroMQ DEALER (the sender) to ROUTER (the receiver) over TCP, CURVE-encrypted;
// each holder makes its own two keypairs when it starts, keeps the secrets in its memory, and its
// server lets in only the previous node's holder's client key (its ZAP handler refuses any
// other). The public keys and addresses travel between the nodes over the job's own MPI (the ranks
// are the trusted channel): the node's first rank reads its holder's `ring.self` and writes
// `ring.next` and `ring.prev` from what every node's first rank said. Files in a store (0600):
//   ring.self    (the holder's) port=, server_public=, client_public=
//   ring.next    (the node's first rank's) addresses= (comma-separated), port=, server_public=, keep=
//   ring.prev    (the node's first rank's) client_public=
//   ring.acked   (the holder's) the newest own step the next node's holder confirmed it keeps; the
//                writer's pruning keeps that step too, so a peer copy always has its twin
//   ring.log     (the holder's) what the ring did, a line an event
//   peer/step-NNNNNNNN/  the previous node's shards of that step and its meta.json
// Messages (frames): "trellis.ring/1", "file", STEP, NAME, BYTES (one a shard) and then
// "trellis.ring/1", "done", STEP, "meta.json", BYTES, KEEP; the answer "trellis.ring/1", "ack",
// STEP or "trellis.ring/1", "refused", STEP, WHY.
#pragma once

#include <zmq.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

namespace trellis::trainer {

inline constexpr const char *kRingPeerFolder = "peer";

// What a node's first rank tells the others of its holder (and reads back of the next node's).
struct RingEndpoint {
    std::string addresses; // comma-separated IPv4 addresses this host is reached at
    int port = 0;
    std::string serverPublic, clientPublic; // Z85, 40 characters each
};

// The holder's ring.self in `store`, waiting up to `waitMs` for it; nullopt and `error` when it
// is not there in time or says why the holder has no ring ("error=" line).
std::optional<RingEndpoint> readRingSelf(const std::string &store, int waitMs, std::string &error);
// ring.next and ring.prev written (0600, through a fresh file each): "" or why not.
std::string writeRingNeighbours(const std::string &store, const RingEndpoint &next, const std::string &prevClientPublic, int keep);
// This host's IPv4 addresses, loopback last (comma-separated): where the previous node's holder
// may reach this one; it takes the first that accepts a connection.
std::string hostAddresses();
// The step ring.acked names (0: none).
std::uint64_t ringAcked(const std::string &store);

// The holder's side: its server (the previous node sends here) and its client (to the next).
class MemoryRing {
public:
    explicit MemoryRing(std::string store);
    ~MemoryRing();
    MemoryRing(const MemoryRing &) = delete;
    MemoryRing &operator=(const MemoryRing &) = delete;

    // Binds the server (any address, a free port) and writes ring.self: "" or why there is no
    // ring (ring.self then says so, for the node's first rank).
    std::string start();
    // Waits up to `timeoutMs` for the sockets; serves what came, reads ring.next/ring.prev when
    // they changed, and sends the node's newest complete checkpoint when the next holder has
    // confirmed the one before (or gave no answer for 30 s).
    void poll(int timeoutMs);

private:
    void log(const std::string &line);
    void readNeighbours();
    void connectNext();
    void serveIncoming();
    void readAnswers();
    void sendNewest();
    std::string receive(const std::string &kind, const std::string &step, const std::string &name, zmq::message_t &bytes,
                        const std::string &keep);

    std::string m_store;
    zmq::context_t m_context;
    std::optional<zmq::socket_t> m_server, m_client, m_zap;
    std::string m_serverPublic, m_serverSecret, m_clientPublic, m_clientSecret;
    std::string m_allowedKey; // the previous holder's client key, 32 bytes (ZAP compares raw keys)
    std::string m_nextText, m_prevText;   // the files as last read
    std::string m_nextServerPublic, m_nextAddresses;
    int m_nextPort = 0, m_keep = 2;
    std::uint64_t m_acked = 0, m_awaiting = 0;
    std::chrono::steady_clock::time_point m_sentAt{}, m_triedAt{};
};

} // namespace trellis::trainer
