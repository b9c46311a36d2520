// Names a slow rank (docs/architecture.md §7): from each rank's compute time a step — not its wall step time,
// which the collectives equalise (everyone waits for the slowest) — over a sliding window. A
// rank whose median compute over the last `window` steps is at least `ratio` times the median of
// all ranks' medians — and at least `minExcessMs` slower, so scheduling noise on steps of a few
// milliseconds is not an alarm — is flagged once, naming how much slower; it is cleared again
// below 80% of that ratio (hysteresis), so a rank hovering at the threshold does not flap.
// Ranks are judged together once per round of reports (as many as there are ranks), so the work
// per report stays constant at any world size. Pure and deterministic. Threading: one thread
// (the run's supervisor).
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace trellis::launcher {

struct StragglerReport {
    int rank = -1;
    std::int64_t step = 0;
    double computeMs = 0;       // its median over the window
    double typicalMs = 0;       // the median rank's
    double ratio = 0;
    std::string message;
};

class StragglerDetector {
public:
    explicit StragglerDetector(int window = 8, double ratio = 1.5, double minExcessMs = 10.0)
        : m_window(window), m_ratio(ratio), m_minExcessMs(minExcessMs)
    {
    }

    void hello(int rank, const std::string &host) { m_hosts[rank] = host; }
    // A step report; returns the ranks newly flagged by it (usually none).
    std::vector<StragglerReport> step(int rank, std::int64_t step, double computeMs);
    bool flagged(int rank) const { return m_flagged.count(rank) > 0; }

private:
    double medianOf(int rank) const;

    int m_window;
    double m_ratio;
    double m_minExcessMs;
    std::map<int, std::deque<double>> m_compute; // per rank, the last `window` steps
    std::map<int, double> m_median;              // per rank, the median of its window
    std::size_t m_sinceJudged = 0;               // reports since the ranks were last judged
    std::map<int, std::string> m_hosts;
    std::map<int, bool> m_flagged;
};

} // namespace trellis::launcher
