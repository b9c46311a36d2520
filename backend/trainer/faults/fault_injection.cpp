// See fault_injection.h.
#include "backend/trainer/faults/fault_injection.h"

#include "backend/protocol/exit_codes.h"
#include "backend/trainer/telemetry/telemetry_publisher.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <thread>

namespace trellis::trainer {
namespace {

std::string hostName()
{
    char host[256] = {};
    gethostname(host, sizeof host - 1);
    return host;
}

} // namespace

bool FaultInjection::parse(const std::string &text, FaultInjection &out, std::string &error)
{
    const auto at = text.find('@');
    const auto colon = text.find(':', at == std::string::npos ? 0 : at);
    if (at == std::string::npos || colon == std::string::npos) {
        error = "--inject expects KIND@RANK:STEP (e.g. crash@1:5), got '" + text + "'";
        return false;
    }
    const std::string kind = text.substr(0, at);
    if (kind == "crash") out.kind = FaultKind::Crash;
    else if (kind == "hang") out.kind = FaultKind::Hang;
    else if (kind == "slow") out.kind = FaultKind::Slow;
    else if (kind == "nan") out.kind = FaultKind::Nan;
    else if (kind == "nanloss") out.kind = FaultKind::NanLoss;
    else if (kind == "throw") out.kind = FaultKind::Throw;
    else if (kind == "stall") out.kind = FaultKind::Stall;
    else {
        error = "--inject: unknown fault '" + kind + "' (expected crash, hang, slow, nan, nanloss, throw or stall)";
        return false;
    }
    try {
        std::size_t used = 0;
        out.rank = std::stoi(text.substr(at + 1, colon - at - 1), &used);
        out.step = std::stoi(text.substr(colon + 1));
    } catch (const std::exception &) {
        error = "--inject: RANK and STEP must be integers in '" + text + "'";
        return false;
    }
    if (out.rank < 0 || out.step < 1) {
        error = "--inject: RANK must be >= 0 and STEP >= 1 in '" + text + "'";
        return false;
    }
    return true;
}

void FaultInjector::beforeStep(std::uint64_t step, TelemetryPublisher &telemetry)
{
    if (m_fault.kind == FaultKind::None || m_fault.rank != m_rank || static_cast<std::int64_t>(step) != m_fault.step)
        return;
    if (m_fault.kind == FaultKind::Crash) {
        std::fprintf(stderr, "%s rank %d: injected crash at step %d\n", hostName().c_str(), m_rank, m_fault.step);
        std::fflush(stderr);
        std::_Exit(proto::kExitInjectedCrash);
    }
    if (m_fault.kind == FaultKind::Hang) {
        std::fprintf(stderr, "%s rank %d: injected hang at step %d\n", hostName().c_str(), m_rank, m_fault.step);
        std::fflush(stderr);
        telemetry.setProgress(step, "forward");
        for (;;)
            std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    if (m_fault.kind == FaultKind::Slow)
        m_slow = true;
    if (m_fault.kind == FaultKind::Stall) {
        std::fprintf(stderr, "%s rank %d: injected stall of %d ms at step %d\n", hostName().c_str(), m_rank, kStallMs, m_fault.step);
        std::fflush(stderr);
        telemetry.holdFor(std::chrono::milliseconds(kStallMs));
        std::this_thread::sleep_for(std::chrono::milliseconds(kStallMs));
    }
    if (m_fault.kind == FaultKind::Throw)
        throw std::runtime_error("injected exception at step " + std::to_string(m_fault.step));
}

void FaultInjector::afterCompute() const
{
    if (m_slow)
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
}


} // namespace trellis::trainer
