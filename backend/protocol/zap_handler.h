// ZeroMQ's authentication hook (ZAP, RFC 27) for a CURVE server socket: the telemetry receiver's
// the collector's and the memory stores' holders' (backend/trainer/checkpoint/memory_ring.h). A client holding the one allowed public key is let in; any other key, or
// another mechanism, is refused and `refused` hears the peer's address. Runs on the thread that
// owns the sockets (the ZAP socket is bound to inproc://zeromq.zap.01 in that socket's context).
#pragma once

#include <zmq.hpp>

#include <functional>
#include <string>

namespace trellis::proto {

// Answers every request waiting on `zap` (at most 100 a call; never waits).
void answerZapRequests(zmq::socket_t &zap, const std::string &allowedKey,
                       const std::function<void(const std::string &address)> &refused);

} // namespace trellis::proto
