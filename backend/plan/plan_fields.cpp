#include "backend/plan/plan_fields.h"

#include "backend/plan/plan_json.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <variant>

namespace trellis::plan {
namespace {

using json = nlohmann::ordered_json;
using Step = std::variant<std::string, std::size_t>; // object key or list index

// "cluster.nodes[2].slots" → cluster, nodes, 2, slots. Empty on a malformed path.
std::vector<Step> parsePath(const std::string &path)
{
    std::vector<Step> steps;
    std::size_t i = 0;
    while (i < path.size()) {
        std::string key;
        while (i < path.size() && (std::islower(static_cast<unsigned char>(path[i])) || std::isdigit(static_cast<unsigned char>(path[i])) ||
                                   path[i] == '_'))
            key += path[i++];
        if (key.empty())
            return {};
        steps.emplace_back(key);
        while (i < path.size() && path[i] == '[') {
            std::size_t close = path.find(']', i);
            if (close == std::string::npos || close == i + 1 || close - i > 8)
                return {};
            std::size_t index = 0;
            for (std::size_t k = i + 1; k < close; ++k) {
                if (!std::isdigit(static_cast<unsigned char>(path[k])))
                    return {};
                index = index * 10 + static_cast<std::size_t>(path[k] - '0');
            }
            steps.emplace_back(index);
            i = close + 1;
        }
        if (i < path.size()) {
            if (path[i] != '.' || i + 1 == path.size())
                return {};
            ++i;
        }
    }
    return steps;
}

json documentOf(const Plan &plan) { return json::parse(planToJson(plan, -1)); }

// A plan with every optional field present: the shape every path is checked against.
const json &fullShape()
{
    static const json shape = [] {
        Plan p;
        p.model.preset = "tiny";
        p.model.moe = {2, 1, 1.0, 0.01};
        p.cluster.preset = "cpu-local";
        p.cluster.nodes = {{"localhost", 1, DeviceKind::Cuda, "h100", {}, 0, {}, {}}};
        p.cluster.intraNode = {1, 1};
        p.cluster.interNode = {1, 1};
        p.cluster.hostMemoryGB = 1; // written only when known
        p.training.checkpoint.modeGiven = true; // written only when given
        p.training.checkpoint.memory.given = true; // written only when given
        p.parallel.bucketMb = 25;
        p.parallel.firstBucketMb = 25;
        p.parallel.precision = Precision::Fp16; // writes parallel.loss_scale
        p.parallel.dpSync.mode = DpSyncMode::DiLoCo; // writes parallel.dp_sync
        p.parallel.gradCompression.kind = GradCompression::PowerSgd; // writes parallel.grad_compression
        p.ownTrainer.command = {"python3"};
        p.ownTrainer.env = {{"NAME", "value"}};
        p.ownTrainer.dir = "dir";
        p.telemetry.history = "history.sqlite"; // written only when set
        json j = documentOf(p);
        j["cluster"]["node_count"] = 1; // read by the loader with a preset, never written
        return j;
    }();
    return shape;
}

bool fitsShape(const std::vector<Step> &steps)
{
    const json *at = &fullShape();
    for (const Step &s : steps) {
        if (const auto *key = std::get_if<std::string>(&s)) {
            if (!at->is_object() || !at->contains(*key))
                return false;
            at = &(*at)[*key];
        } else {
            if (!at->is_array() || at->empty() || !(*at)[0].is_object())
                return false;
            at = &(*at)[0];
        }
    }
    return true;
}

std::string pathText(const std::vector<Step> &steps, std::size_t count)
{
    std::string text;
    for (std::size_t i = 0; i < count && i < steps.size(); ++i) {
        if (const auto *key = std::get_if<std::string>(&steps[i]))
            text += (text.empty() ? "" : ".") + *key;
        else
            text += "[" + std::to_string(std::get<std::size_t>(steps[i])) + "]";
    }
    return text;
}

void collectLeaves(const json &j, const std::string &prefix, std::vector<std::pair<std::string, std::string>> &out)
{
    if (j.is_object() && prefix != "own_trainer.env") { // own_trainer.env's keys are the user's: one field
        for (auto it = j.begin(); it != j.end(); ++it)
            collectLeaves(it.value(), prefix.empty() ? it.key() : prefix + "." + it.key(), out);
    } else if (j.is_array() && !j.empty() && j[0].is_object()) {
        for (std::size_t i = 0; i < j.size(); ++i)
            collectLeaves(j[i], prefix + "[" + std::to_string(i) + "]", out);
    } else {
        out.emplace_back(prefix, j.dump());
    }
}

Result<Plan> reload(const json &j, const std::string &path)
{
    auto parsed = parsePlan(j.dump(), path);
    if (!parsed)
        return parsed.errors();
    return parsed;
}

// cluster.node_count: cut from the end or copy the last node under new names.
Result<Plan> withNodeCount(const Plan &plan, const json &value)
{
    if (!value.is_number_integer() || value.get<long long>() < 1 || value.get<long long>() > 100000)
        return Result<Plan>::failure("cluster.node_count", "expected a whole number from 1 to 100000, got " + value.dump());
    const std::size_t count = static_cast<std::size_t>(value.get<long long>());
    Plan out = plan;
    auto &nodes = out.cluster.nodes;
    if (nodes.empty())
        nodes.push_back({"localhost", 1, DeviceKind::Cpu, "", {}, 0, {}, {}});
    std::set<std::string> hosts;
    for (const auto &n : nodes)
        hosts.insert(n.host);
    if (count < nodes.size())
        nodes.resize(count);
    int next = static_cast<int>(nodes.size());
    while (nodes.size() < count) {
        NodeSpec node = nodes.back();
        do
            node.host = "node" + std::to_string(next++);
        while (hosts.count(node.host));
        hosts.insert(node.host);
        nodes.push_back(node);
    }
    return out;
}

} // namespace

bool isPlanFieldPath(const std::string &path)
{
    const auto steps = parsePath(path);
    return !steps.empty() && fitsShape(steps);
}

Result<std::string> planField(const Plan &plan, const std::string &path)
{
    const auto steps = parsePath(path);
    if (steps.empty() || !fitsShape(steps))
        return Result<std::string>::failure(path, "no such field in a trellis.plan/1 document");
    if (path == "cluster.node_count")
        return std::to_string(plan.cluster.nodes.size());
    const json doc = documentOf(plan);
    const json *at = &doc;
    for (std::size_t i = 0; i < steps.size(); ++i) {
        if (const auto *key = std::get_if<std::string>(&steps[i])) {
            if (!at->contains(*key))
                return std::string("null"); // an optional field (or section) left out
            at = &(*at)[*key];
        } else {
            const std::size_t index = std::get<std::size_t>(steps[i]);
            if (index >= at->size())
                return Result<std::string>::failure(pathText(steps, i + 1),
                                                    "no such entry: the list has " + std::to_string(at->size()));
            at = &(*at)[index];
        }
    }
    return at->dump();
}

Result<Plan> withPlanField(const Plan &plan, const std::string &path, const std::string &valueText)
{
    const auto steps = parsePath(path);
    if (steps.empty() || !fitsShape(steps))
        return Result<Plan>::failure(path, "no such field in a trellis.plan/1 document");
    json value = json::parse(valueText, nullptr, false);
    if (value.is_discarded())
        value = valueText; // a bare word: the string itself
    if (path == "cluster.node_count")
        return withNodeCount(plan, value);

    json doc = documentOf(plan);
    if (path == "model.preset" && value.is_string()) {
        // The preset's architecture, not just its name: explicit fields would override it.
        doc["model"] = json{{"preset", value}};
        return reload(doc, path);
    }
    if (path == "cluster.preset" && value.is_string()) {
        doc["cluster"] = json{{"preset", value}, {"node_count", std::max<std::size_t>(1, plan.cluster.nodes.size())}};
        return reload(doc, path);
    }
    json *at = &doc;
    for (std::size_t i = 0; i + 1 < steps.size(); ++i) {
        if (const auto *key = std::get_if<std::string>(&steps[i])) {
            if (!at->contains(*key)) {
                if (value.is_null())
                    return plan; // removing what is not there
                (*at)[*key] = json::object();
            }
            at = &(*at)[*key];
        } else {
            const std::size_t index = std::get<std::size_t>(steps[i]);
            if (index >= at->size())
                return Result<Plan>::failure(pathText(steps, i + 1), "no such entry: the list has " + std::to_string(at->size()) +
                                                                        " (set cluster.node_count to add nodes)");
            at = &(*at)[index];
        }
    }
    const Step &last = steps.back();
    if (const auto *key = std::get_if<std::string>(&last)) {
        if (value.is_null())
            at->erase(*key);
        else
            (*at)[*key] = value;
        // In-memory checkpoints' `every` removed: none (the section goes, not back to its default of 1).
        if (path == "training.checkpoint.memory.every" && value.is_null())
            doc["training"]["checkpoint"].erase("memory");
        // The last field of the own_trainer section removed: the plan trains with trellis-trainer again.
        if (steps.size() == 2 && std::get_if<std::string>(&steps[0]) && std::get<std::string>(steps[0]) == "own_trainer" &&
            (at->empty() || !at->contains("command")))
            doc.erase("own_trainer");
    } else {
        const std::size_t index = std::get<std::size_t>(last);
        if (index >= at->size())
            return Result<Plan>::failure(path, "no such entry: the list has " + std::to_string(at->size()));
        if (value.is_null())
            return Result<Plan>::failure(path, "an entry of a list cannot be removed this way");
        (*at)[index] = value;
    }
    return reload(doc, path);
}

std::vector<std::string> planFieldPaths(const Plan &plan)
{
    std::vector<std::pair<std::string, std::string>> leaves;
    collectLeaves(documentOf(plan), "", leaves);
    std::vector<std::string> paths;
    for (auto &[path, value] : leaves)
        paths.push_back(path);
    return paths;
}

std::vector<FieldDifference> planDifferences(const Plan &a, const Plan &b)
{
    std::vector<std::pair<std::string, std::string>> left, right;
    collectLeaves(documentOf(a), "", left);
    collectLeaves(documentOf(b), "", right);
    // In the order of b's document; a field only a has sits after the one before it in a.
    std::map<std::string, std::pair<double, std::string>> rightAt; // path → (position, value)
    for (std::size_t i = 0; i < right.size(); ++i)
        rightAt[right[i].first] = {static_cast<double>(i), right[i].second};
    std::vector<std::pair<double, FieldDifference>> keyed;
    std::set<std::string> seen;
    double position = -1;
    for (const auto &[path, value] : left) {
        seen.insert(path);
        const auto other = rightAt.find(path);
        if (other != rightAt.end()) {
            position = other->second.first;
            if (other->second.second != value)
                keyed.push_back({position, {path, value, other->second.second}});
        } else {
            position += 1e-6;
            keyed.push_back({position, {path, value, "null"}});
        }
    }
    for (std::size_t i = 0; i < right.size(); ++i)
        if (!seen.count(right[i].first))
            keyed.push_back({static_cast<double>(i), {right[i].first, "null", right[i].second}});
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto &x, const auto &y) { return x.first < y.first; });
    std::vector<FieldDifference> out;
    for (auto &[key, difference] : keyed)
        out.push_back(std::move(difference));
    return out;
}

} // namespace trellis::plan
