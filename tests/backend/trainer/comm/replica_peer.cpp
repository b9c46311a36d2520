// One rank of a replica group, for tst_replica_link: a real process with a real ReplicaLink. Each
// step it asks the lighthouse for the quorum, fills a vector with values that say its group and
// step, averages it with the quorum's other groups through Gloo, votes, and on the verdict writes
// one line to OUT (appended, flushed):
//   commit STEP QUORUM_ID GROUPS(g,g,..) FIRST LAST CONNECT_MS UNIX_MS
//   drop STEP QUORUM_ID WHY… UNIX_MS
//   refused STEP WHY…   (then it stops)
// usage: replica_peer ENDPOINT GROUP RANK STEPS OUT [ELEMENTS] [STEP_MS] [START]
// START: the steps already committed when it starts (a group back from a checkpoint of that step).
#include "backend/trainer/comm/replica_link.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

namespace {

long long unixMs()
{
    return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

} // namespace

int main(int argc, char **argv)
{
    if (argc < 6) {
        std::fprintf(stderr, "usage: replica_peer ENDPOINT GROUP RANK STEPS OUT [ELEMENTS] [STEP_MS] [START]\n");
        return 2;
    }
    trellis::trainer::ReplicaLinkOptions options;
    options.endpoint = argv[1];
    options.group = std::atoi(argv[2]);
    options.rank = std::atoi(argv[3]);
    const int steps = std::atoi(argv[4]);
    const std::string out = argv[5];
    const std::size_t elements = argc > 6 ? static_cast<std::size_t>(std::atol(argv[6])) : 1000;
    const int stepMs = argc > 7 ? std::atoi(argv[7]) : 50;
    trellis::trainer::ReplicaLink link(options);
    if (const std::string e = link.start(); !e.empty()) {
        std::fprintf(stderr, "replica_peer: %s\n", e.c_str());
        return 1;
    }
    auto say = [&](const std::string &line) {
        if (std::FILE *f = std::fopen(out.c_str(), "a")) {
            std::fprintf(f, "%s\n", line.c_str());
            std::fclose(f);
        }
    };
    std::vector<float> data(elements);
    std::uint64_t committed = argc > 8 ? static_cast<std::uint64_t>(std::atoll(argv[8])) : 0;
    while (committed < static_cast<std::uint64_t>(steps)) {
        const trellis::trainer::ReplicaQuorum q = link.beginStep(committed);
        if (!q.refused.empty()) {
            say("refused " + std::to_string(committed) + " " + q.refused);
            return 3;
        }
        // Values whose sums are exact in float: the group, the step, the place.
        for (std::size_t j = 0; j < elements; ++j)
            data[j] = static_cast<float>((options.group + 1) * 1000 + static_cast<int>(committed)) + 0.5f * static_cast<float>(j % 64);
        std::this_thread::sleep_for(std::chrono::milliseconds(stepMs)); // the step's compute
        std::string why = q.error;
        const bool ok = q.error.empty() && link.allreduceMean(data.data(), data.size(), why);
        const trellis::trainer::ReplicaVerdict v = link.endStep(committed, ok, why);
        if (v.commit) {
            std::string groups;
            for (const int g : q.groups)
                groups.append(groups.empty() ? "" : ",").append(std::to_string(g));
            char line[512];
            std::snprintf(line, sizeof line, "commit %llu %llu %s %.4f %.4f %lld %lld", static_cast<unsigned long long>(committed),
                          static_cast<unsigned long long>(q.id), groups.c_str(), static_cast<double>(data.front()),
                          static_cast<double>(data.back()), static_cast<long long>(link.lastConnectMs()), unixMs());
            say(line);
            ++committed;
        } else {
            say(std::string("drop ").append(std::to_string(committed)).append(" ").append(std::to_string(q.id)).append(" ").append(v.why).append(" ").append(
                std::to_string(unixMs()))); // (not "drop " + …: GCC 12's -Wrestrict misfires)
        }
    }
    return 0;
}
