// See collector_join.h.
#include "backend/protocol/collector_join.h"

#include "backend/protocol/framing.h"

#include <zmq.hpp>

#include <chrono>
#include <cstdlib>

namespace trellis::proto {
namespace {

const char *read(const EnvironmentReader &env, const char *name)
{
    const char *value = env ? env(name) : std::getenv(name);
    return value && *value ? value : nullptr;
}

} // namespace

Join joinFromEnvironment(const std::string &fallbackName, const EnvironmentReader &env)
{
    Join j;
    j.set_protocol_version(kProtocolVersion);
    const char *name = read(env, "TRELLIS_JOB_NAME");
    if (!name)
        name = read(env, "SLURM_JOB_NAME");
    j.set_job_name(name ? name : fallbackName);
    if (const char *id = read(env, "TRELLIS_JOB_ID")) {
        j.set_job_id(id);
    } else if (const char *slurm = read(env, "SLURM_JOB_ID")) {
        j.set_job_id(slurm);
        j.set_scheduler("slurm");
    } else if (const char *elastic = read(env, "TORCHELASTIC_RUN_ID"); elastic && std::string(elastic) != "none") {
        j.set_job_id(elastic);
        j.set_scheduler("torchrun");
    } else if (const char *addr = read(env, "MASTER_ADDR"), *port = read(env, "MASTER_PORT"); addr && port) {
        j.set_job_id(std::string(addr) + ":" + port);
        j.set_scheduler("torchrun");
    } else if (const char *ns = read(env, "PMIX_NAMESPACE")) {
        j.set_job_id(ns);
        j.set_scheduler("mpirun");
    } else if (const char *ompi = read(env, "OMPI_MCA_ess_base_jobid")) {
        j.set_job_id(ompi);
        j.set_scheduler("mpirun");
    }
    for (const char *variable : {"TRELLIS_RESTART_COUNT", "SLURM_RESTART_COUNT", "TORCHELASTIC_RESTART_COUNT"})
        if (const char *count = read(env, variable)) {
            char *end = nullptr;
            const long n = std::strtol(count, &end, 10);
            if (end && *end == '\0' && n >= 0 && n < 1000000)
                j.set_attempt(static_cast<std::uint32_t>(n));
            break;
        }
    return j;
}

bool collectorRequested(const EnvironmentReader &env) { return read(env, "TRELLIS_COLLECTOR") != nullptr; }

JoinResult joinCollector(const Join &join, int timeoutMs, const EnvironmentReader &env)
{
    JoinResult result;
    const char *address = read(env, "TRELLIS_COLLECTOR");
    const char *keysPath = read(env, "TRELLIS_COLLECTOR_KEYS");
    if (!address) {
        result.error = "TRELLIS_COLLECTOR is not set";
        return result;
    }
    if (!keysPath) {
        result.error = "TRELLIS_COLLECTOR is set but TRELLIS_COLLECTOR_KEYS (the collector's key file for jobs) is not";
        return result;
    }
    std::string error;
    const auto keys = readCurveKeys(keysPath, error);
    if (!keys) {
        result.error = error;
        return result;
    }
    if (!keys->hasClient()) {
        result.error = std::string("TRELLIS_COLLECTOR_KEYS ") + keysPath + ": the file lacks server_public, client_public or client_secret";
        return result;
    }
    result.keys = keys->forRanks();
    try {
        zmq::context_t context(1);
        zmq::socket_t socket(context, zmq::socket_type::req);
        socket.set(zmq::sockopt::linger, 0);
        socket.set(zmq::sockopt::curve_serverkey, keys->serverPublic);
        socket.set(zmq::sockopt::curve_publickey, keys->clientPublic);
        socket.set(zmq::sockopt::curve_secretkey, keys->clientSecret);
        socket.set(zmq::sockopt::maxmsgsize, int64_t{65536});
        socket.connect(address);
        const std::string request = join.SerializeAsString();
        socket.send(zmq::buffer(request), zmq::send_flags::none);
        zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
        zmq::poll(&item, 1, std::chrono::milliseconds(timeoutMs));
        if (!(item.revents & ZMQ_POLLIN)) {
            result.error = std::string("no answer from the collector at ") + address + " within " + std::to_string(timeoutMs / 1000) +
                           " s (is it running, is the address right, and is this the key file it gave out? a wrong key is refused "
                           "without an answer)";
            return result;
        }
        zmq::message_t answer;
        (void)socket.recv(answer, zmq::recv_flags::none);
        JoinReply reply;
        if (!reply.ParseFromArray(answer.data(), static_cast<int>(answer.size()))) {
            result.error = std::string("the collector at ") + address + " sent an answer that is not a JoinReply";
            return result;
        }
        if (!reply.error().empty()) {
            result.error = "the collector refused this rank: " + reply.error();
            return result;
        }
        if (reply.run_id().empty() || reply.endpoint().rfind("tcp://", 0) != 0) {
            result.error = std::string("the collector at ") + address + " answered without a run id or a tcp:// endpoint";
            return result;
        }
        result.runId = reply.run_id();
        result.endpoint = reply.endpoint();
    } catch (const zmq::error_t &e) {
        result.error = std::string("cannot reach the collector at ") + address + ": " + e.what();
    }
    return result;
}

} // namespace trellis::proto
