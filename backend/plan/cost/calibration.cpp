// See calibration.h.
#include "backend/plan/cost/calibration.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>

namespace trellis::plan {
namespace {

nlohmann::ordered_json entryJson(const CalibrationEntry &e)
{
    return {{"ranks", e.ranks},
            {"gflops_per_rank", e.gflopsPerRank},
            {"latency_us", e.latencyUs},
            {"bandwidth_gbps", e.bandwidthGBps},
            {"gradient_ns_per_parameter", e.gradientNsPerParameter},
            {"optimizer_ns_per_parameter", e.optimizerNsPerParameter},
            {"host_copy_gbps", e.hostCopyGBps},
            {"disk_write_gbps", e.diskWriteGBps}};
}

} // namespace

Result<std::vector<CalibrationEntry>> parseCalibration(const std::string &text)
{
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const std::exception &e) {
        return Result<std::vector<CalibrationEntry>>::failure("calibration", std::string("not valid JSON: ") + e.what());
    }
    if (!j.is_object() || j.value("format", "") != kCalibrationFormat)
        return Result<std::vector<CalibrationEntry>>::failure("calibration.format", std::string("expected '") + kCalibrationFormat + "'");
    if (!j.contains("entries") || !j["entries"].is_array() || j["entries"].empty())
        return Result<std::vector<CalibrationEntry>>::failure("calibration.entries", "expected a non-empty array");
    std::vector<CalibrationEntry> out;
    for (std::size_t i = 0; i < j["entries"].size(); ++i) {
        const auto &e = j["entries"][i];
        const std::string path = "calibration.entries[" + std::to_string(i) + "]";
        if (!e.is_object() || !e.contains("ranks") || !e["ranks"].is_number_integer() || !e.contains("gflops_per_rank") ||
            !e["gflops_per_rank"].is_number())
            return Result<std::vector<CalibrationEntry>>::failure(path, "expected ranks (integer) and gflops_per_rank (number)");
        CalibrationEntry c;
        c.ranks = e["ranks"].get<int>();
        c.gflopsPerRank = e["gflops_per_rank"].get<double>();
        c.latencyUs = e.value("latency_us", 0.0);
        c.bandwidthGBps = e.value("bandwidth_gbps", 0.0);
        c.gradientNsPerParameter = e.value("gradient_ns_per_parameter", 0.0); // absent in older files
        c.optimizerNsPerParameter = e.value("optimizer_ns_per_parameter", 0.0);
        c.hostCopyGBps = e.value("host_copy_gbps", 0.0); // absent in older files: the defaults
        c.diskWriteGBps = e.value("disk_write_gbps", 0.0);
        if (!(c.hostCopyGBps >= 0) || !(c.diskWriteGBps >= 0) || !std::isfinite(c.hostCopyGBps) || !std::isfinite(c.diskWriteGBps))
            return Result<std::vector<CalibrationEntry>>::failure(path, "host_copy_gbps and disk_write_gbps must be finite and not negative");
        if (c.ranks < 1 || !(c.gflopsPerRank > 0) || !std::isfinite(c.gflopsPerRank) || c.latencyUs < 0 || c.bandwidthGBps < 0 ||
            !(c.gradientNsPerParameter >= 0) || !(c.optimizerNsPerParameter >= 0) || !std::isfinite(c.gradientNsPerParameter) ||
            !std::isfinite(c.optimizerNsPerParameter))
            return Result<std::vector<CalibrationEntry>>::failure(
                path, "ranks and gflops_per_rank must be positive; latency, bandwidth and the ns-per-parameter figures finite and not negative");
        out.push_back(c);
    }
    return out;
}

std::string calibrationEntryJson(const CalibrationEntry &entry) { return entryJson(entry).dump(); }

std::string calibrationJson(const std::vector<CalibrationEntry> &entries)
{
    nlohmann::ordered_json j;
    j["format"] = kCalibrationFormat;
    j["entries"] = nlohmann::ordered_json::array();
    for (const auto &e : entries)
        j["entries"].push_back(entryJson(e));
    return j.dump(2) + "\n";
}

void applyCalibration(const std::vector<CalibrationEntry> &entries, Plan &plan, DeviceSpec &device)
{
    if (entries.empty() || plan.cluster.nodes.empty() || plan.cluster.nodes.front().device != DeviceKind::Cpu)
        return;
    const int world = plan.parallel.worldSize();
    const CalibrationEntry *best = &entries.front();
    for (const auto &e : entries)
        if (std::abs(e.ranks - world) < std::abs(best->ranks - world))
            best = &e;
    device.peakTflopsFp32 = device.peakTflopsBf16 = best->gflopsPerRank / 1000.0;
    device.efficiency = 1.0;
    device.gradientNsPerParameter = best->gradientNsPerParameter;
    device.optimizerNsPerParameter = best->optimizerNsPerParameter;
    device.hostCopyGBps = best->hostCopyGBps;
    device.diskWriteGBps = best->diskWriteGBps;
    if (best->bandwidthGBps > 0)
        plan.cluster.intraNode = {best->bandwidthGBps, best->latencyUs};
}

} // namespace trellis::plan
