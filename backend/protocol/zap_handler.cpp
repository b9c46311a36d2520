// See zap_handler.h.
#include "backend/protocol/zap_handler.h"

#include <string_view>
#include <vector>

namespace trellis::proto {

// ZAP request: version, request id, domain, address, identity, mechanism, credentials; the reply
// is version, request id, status code, status text, user id, metadata.
void answerZapRequests(zmq::socket_t &zap, const std::string &allowedKey,
                       const std::function<void(const std::string &address)> &refused)
{
    for (int round = 0; round < 100; ++round) {
        std::vector<zmq::message_t> request;
        try {
            zmq::message_t part;
            if (!zap.recv(part, zmq::recv_flags::dontwait))
                return;
            request.push_back(std::move(part));
            while (request.back().more()) {
                zmq::message_t next;
                (void)zap.recv(next, zmq::recv_flags::none);
                request.push_back(std::move(next));
            }
        } catch (const zmq::error_t &) {
            return;
        }
        const bool wellFormed = request.size() >= 7 && request[5].to_string_view() == "CURVE";
        const bool allowed = wellFormed && request[6].to_string_view() == allowedKey;
        if (!allowed && refused)
            refused(request.size() > 3 ? request[3].to_string() : std::string("?"));
        try {
            const std::string id = request.size() > 1 ? request[1].to_string() : std::string();
            zap.send(zmq::buffer(std::string_view("1.0")), zmq::send_flags::sndmore);
            zap.send(zmq::buffer(id), zmq::send_flags::sndmore);
            zap.send(zmq::buffer(std::string_view(allowed ? "200" : "400")), zmq::send_flags::sndmore);
            zap.send(zmq::buffer(std::string_view(allowed ? "OK" : "unknown key")), zmq::send_flags::sndmore);
            zap.send(zmq::buffer(std::string_view()), zmq::send_flags::sndmore);
            zap.send(zmq::buffer(std::string_view()), zmq::send_flags::none);
        } catch (const zmq::error_t &) {
            return;
        }
    }
}

} // namespace trellis::proto
