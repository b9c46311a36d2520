// See hostfile.h.
#include "backend/plan/hostfile.h"

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

namespace trellis::plan {

namespace {

// 'text', built by appending (GCC 12 warns falsely on "'" + std::string).
std::string inQuotes(const std::string &text)
{
    std::string out(1, '\'');
    out.append(text).push_back('\'');
    return out;
}

bool toInt(const std::string &text, int &out)
{
    const char *end = text.data() + text.size();
    const auto [at, ec] = std::from_chars(text.data(), end, out);
    return ec == std::errc() && at == end;
}

// The line's first word, [user@]host[:port], into `n`; an address with more than one ':' is IPv6
// and has no port here. Returns "" or what is wrong.
std::string parseAddress(const std::string &first, NodeSpec &n)
{
    std::string host = first;
    if (const auto at = host.find('@'); at != std::string::npos) {
        n.user = host.substr(0, at);
        host = host.substr(at + 1);
    }
    if (std::count(host.begin(), host.end(), ':') == 1) {
        const auto colon = host.find(':');
        if (!toInt(host.substr(colon + 1), n.port) || n.port < 1 || n.port > 65535)
            return inQuotes(host.substr(colon + 1)) + " is not a port (1 to 65535)";
        host.resize(colon);
    }
    if (host.empty())
        return inQuotes(first) + " names no host";
    n.host = host;
    return {};
}

// One field=value word into `h` (slots=N sets `slotsGiven`). Returns "" or what is wrong.
std::string parseField(const std::string &word, HostfileNode &h, bool &slotsGiven)
{
    NodeSpec &n = h.node;
    const auto eq = word.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == word.size())
        return inQuotes(word) + " is not a field=value pair (slots=N, user=, port=, identity=, remote_dir=, device=, gpu=)";
    const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    if (key == "slots") {
        slotsGiven = true;
        if (!toInt(value, n.slotCount) || n.slotCount < 1)
            return "slots=" + inQuotes(value) + " is not a positive whole number";
    } else if (key == "max_slots") {
        int ignored = 0;
        if (!toInt(value, ignored) || ignored < 1)
            return "max_slots=" + inQuotes(value) + " is not a positive whole number";
    } else if (key == "user") {
        n.user = value;
    } else if (key == "port") {
        if (!toInt(value, n.port) || n.port < 1 || n.port > 65535)
            return "port=" + inQuotes(value) + " is not a port (1 to 65535)";
    } else if (key == "identity" || key == "identity_file") {
        n.identityFile = value;
    } else if (key == "remote_dir") {
        n.remoteDir = value;
    } else if (key == "device") {
        if (value != "cpu" && value != "cuda")
            return "device=" + inQuotes(value) + " is not cpu or cuda";
        n.device = value == "cuda" ? DeviceKind::Cuda : DeviceKind::Cpu;
        h.deviceGiven = true;
    } else if (key == "gpu" || key == "gpu_model") {
        n.gpuModel = value;
    } else {
        return "unknown field " + inQuotes(key) + " (slots, max_slots, user, port, identity, remote_dir, device, gpu)";
    }
    return {};
}

// One line without its comment: a node, or nullopt and why not in `error` (empty for a blank line).
std::optional<HostfileNode> parseHostLine(const std::string &line, std::string &error)
{
    std::istringstream words(line);
    std::string first;
    if (!(words >> first))
        return std::nullopt;
    HostfileNode h;
    if ((error = parseAddress(first, h.node)).empty()) {
        bool slotsGiven = false;
        std::string word;
        while (error.empty() && words >> word)
            error = parseField(word, h, slotsGiven);
        if (error.empty() && !slotsGiven)
            error = h.node.host + " has no slots=N (how many ranks it runs)";
    }
    if (!error.empty())
        return std::nullopt;
    return h;
}

} // namespace

Result<std::vector<HostfileNode>> parseHostfile(const std::string &text, const std::string &sourceName)
{
    std::vector<HostfileNode> out;
    Diagnostics d;
    std::map<std::string, int> seen; // host -> line
    std::istringstream in(text);
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
        ++number;
        const std::string where = sourceName + ":" + std::to_string(number) + ": ";
        auto fail = [&](const std::string &why) { d.push_back({Severity::Error, "cluster.hostfile", where + why}); };
        if (const auto hash = line.find('#'); hash != std::string::npos)
            line.erase(hash);
        std::string error;
        std::optional<HostfileNode> h = parseHostLine(line, error);
        if (!h) {
            if (!error.empty())
                fail(error);
            continue;
        }
        if (const auto [it, fresh] = seen.emplace(h->node.host, number); !fresh) {
            fail(h->node.host + " is listed already on line " + std::to_string(it->second) + " (give it once, with all its slots)");
            continue;
        }
        out.push_back(std::move(*h));
    }
    if (d.empty() && out.empty())
        d.push_back({Severity::Error, "cluster.hostfile", sourceName + ": lists no hosts"});
    if (!d.empty())
        return Result<std::vector<HostfileNode>>(d);
    return out;
}

Result<std::vector<HostfileNode>> readHostfile(const std::string &path)
{
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
        return Result<std::vector<HostfileNode>>::failure("cluster.hostfile", path + ": no such file");
    if (std::filesystem::file_size(path, ec) > 4 * 1024 * 1024)
        return Result<std::vector<HostfileNode>>::failure("cluster.hostfile", path + ": larger than 4 MiB, not a hostfile");
    std::ifstream in(path, std::ios::binary);
    if (!in)
        return Result<std::vector<HostfileNode>>::failure("cluster.hostfile", path + ": cannot be read");
    std::ostringstream text;
    text << in.rdbuf();
    return parseHostfile(text.str(), path);
}

std::string applyHostfile(Plan &plan, const std::string &path)
{
    auto read = readHostfile(path);
    if (!read) {
        std::string why;
        for (const auto &e : read.errors())
            why += (why.empty() ? "" : "\n") + e.message;
        return why;
    }
    const NodeSpec model = plan.cluster.nodes.empty() ? NodeSpec{} : plan.cluster.nodes.front();
    plan.cluster.nodes.clear();
    for (HostfileNode &h : read.value()) {
        if (!h.deviceGiven) {
            h.node.device = model.device;
            if (h.node.gpuModel.empty())
                h.node.gpuModel = model.gpuModel;
        }
        plan.cluster.nodes.push_back(std::move(h.node));
    }
    return {};
}

} // namespace trellis::plan
