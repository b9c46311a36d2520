// See fault_injection.h.
#include "backend/trainer/faults/fault_injection.h"

#include "backend/protocol/exit_codes.h"
#include "backend/trainer/telemetry/telemetry_publisher.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

// The whole process stopped (every thread, the telemetry's too), as SIGSTOP does: for `ms`, after
// which a child forked for it sends SIGCONT (and is reaped), or for good (ms < 0).
void stopSelf(int ms)
{
    if (ms >= 0) {
        const pid_t parent = getpid();
        const pid_t child = fork();
        if (child == 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(ms));
            kill(parent, SIGCONT);
            std::_Exit(0);
        }
        raise(SIGSTOP);
        if (child > 0)
            waitpid(child, nullptr, 0);
        return;
    }
    raise(SIGSTOP);
}

} // namespace

bool FaultInjection::firesAt(std::uint64_t step) const
{
    for (int s : steps)
        if (static_cast<std::uint64_t>(s) == step)
            return true;
    return false;
}

bool FaultInjection::parse(const std::string &text, FaultInjection &out, std::string &error)
{
    const auto at = text.find('@');
    const auto colon = text.find(':', at == std::string::npos ? 0 : at);
    if (at == std::string::npos || colon == std::string::npos) {
        error = "--inject expects KIND@RANK:STEP[,STEP...] (e.g. crash@1:5), got '" + text + "'";
        return false;
    }
    static const std::pair<const char *, FaultKind> kinds[] = {
        {"crash", FaultKind::Crash}, {"hang", FaultKind::Hang},     {"slow", FaultKind::Slow},   {"delay", FaultKind::Delay},
        {"nan", FaultKind::Nan},     {"nanloss", FaultKind::NanLoss}, {"throw", FaultKind::Throw}, {"stall", FaultKind::Stall},
        {"pause", FaultKind::Pause}, {"stop", FaultKind::Stop},     {"nomem", FaultKind::NoMemory},
        {"slowcopy", FaultKind::SlowCopy}};
    const std::string kind = text.substr(0, at);
    out.kind = FaultKind::None;
    for (const auto &[name, k] : kinds)
        if (kind == name)
            out.kind = k;
    if (out.kind == FaultKind::None) {
        error = "--inject: unknown fault '" + kind +
                "' (expected crash, hang, slow, delay, nan, nanloss, throw, stall, pause, stop, nomem or slowcopy)";
        return false;
    }
    out.steps.clear();
    try {
        out.rank = std::stoi(text.substr(at + 1, colon - at - 1));
        std::size_t from = colon + 1;
        while (from <= text.size()) {
            const std::size_t comma = std::min(text.find(',', from), text.size());
            std::size_t used = 0;
            const std::string part = text.substr(from, comma - from);
            out.steps.push_back(std::stoi(part, &used));
            if (used != part.size())
                throw std::invalid_argument(part);
            from = comma + 1;
        }
    } catch (const std::exception &) {
        error = "--inject: RANK and STEP must be integers in '" + text + "'";
        return false;
    }
    if (out.rank < 0 || std::any_of(out.steps.begin(), out.steps.end(), [](int s) { return s < 1; })) {
        error = "--inject: RANK must be >= 0 and STEP >= 1 in '" + text + "'";
        return false;
    }
    return true;
}

void FaultInjector::beforeStep(std::uint64_t step, TelemetryPublisher &telemetry)
{
    if (m_fault.kind == FaultKind::None || m_fault.rank != m_rank || !m_fault.firesAt(step))
        return;
    const int at = static_cast<int>(step);
    if (m_fault.kind == FaultKind::Crash) {
        std::fprintf(stderr, "%s rank %d: injected crash at step %d\n", hostName().c_str(), m_rank, at);
        std::fflush(stderr);
        std::_Exit(proto::kExitInjectedCrash);
    }
    if (m_fault.kind == FaultKind::Hang) {
        std::fprintf(stderr, "%s rank %d: injected hang at step %d\n", hostName().c_str(), m_rank, at);
        std::fflush(stderr);
        telemetry.setProgress(step, "forward");
        for (;;)
            std::this_thread::sleep_for(std::chrono::seconds(1));
    }
    if (m_fault.kind == FaultKind::Slow)
        m_slow = true;
    if (m_fault.kind == FaultKind::Stall) {
        std::fprintf(stderr, "%s rank %d: injected stall of %d ms at step %d\n", hostName().c_str(), m_rank, kStallMs, at);
        std::fflush(stderr);
        telemetry.holdFor(std::chrono::milliseconds(kStallMs));
        std::this_thread::sleep_for(std::chrono::milliseconds(kStallMs));
    }
    if (m_fault.kind == FaultKind::Pause || m_fault.kind == FaultKind::Stop) {
        std::fprintf(stderr, "%s rank %d: injected %s at step %d\n", hostName().c_str(), m_rank,
                     m_fault.kind == FaultKind::Pause ? "pause of 2500 ms" : "stop (SIGSTOP for good)", at);
        std::fflush(stderr);
        stopSelf(m_fault.kind == FaultKind::Pause ? kPauseMs : -1);
    }
    if (m_fault.kind == FaultKind::Throw)
        throw std::runtime_error("injected exception at step " + std::to_string(at));
}

void FaultInjector::afterCompute(std::uint64_t step) const
{
    if (m_slow)
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
    if (m_fault.kind == FaultKind::Delay && m_fault.rank == m_rank && m_fault.firesAt(step)) {
        std::fprintf(stderr, "%s rank %d: injected delay of %d ms in step %llu\n", hostName().c_str(), m_rank, kDelayMs,
                     static_cast<unsigned long long>(step));
        std::fflush(stderr);
        std::this_thread::sleep_for(std::chrono::milliseconds(kDelayMs));
    }
}


} // namespace trellis::trainer
