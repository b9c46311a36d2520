// See straggler_detector.h.
#include "launcher/detectors/straggler_detector.h"
#include "launcher/statistics.h"

#include <algorithm>
#include <cstdio>

namespace trellis::launcher {

double StragglerDetector::medianOf(int rank) const
{
    const auto it = m_median.find(rank);
    return it == m_median.end() ? 0 : it->second;
}

std::vector<StragglerReport> StragglerDetector::step(int rank, std::int64_t step, double computeMs)
{
    auto &window = m_compute[rank];
    window.push_back(computeMs);
    if (static_cast<int>(window.size()) > m_window)
        window.pop_front();
    m_median[rank] = median({window.begin(), window.end()});
    std::vector<StragglerReport> out;
    // Judge once per round of reports, once every rank has a full window (a fair comparison).
    if (m_compute.size() < 2 || ++m_sinceJudged < m_compute.size())
        return out;
    m_sinceJudged = 0;
    std::vector<double> medians;
    for (const auto &[r, w] : m_compute) {
        if (static_cast<int>(w.size()) < m_window)
            return out;
        medians.push_back(medianOf(r));
    }
    const double typical = median(medians);
    if (!(typical > 0))
        return out;
    for (const auto &[r, w] : m_compute) {
        const double mine = medianOf(r);
        const double ratio = mine / typical;
        if (!m_flagged.count(r) && ratio >= m_ratio && mine - typical >= m_minExcessMs) {
            m_flagged[r] = true;
            StragglerReport report{r, step, mine, typical, ratio, {}};
            const auto host = m_hosts.find(r);
            char text[256];
            std::snprintf(text, sizeof text,
                          "rank %d on %s is a straggler: %.1f ms of compute a step, %.1fx the median rank (%.1f ms) over the last %d steps",
                          r, host == m_hosts.end() ? "an unknown host" : host->second.c_str(), mine, ratio, typical, m_window);
            report.message = text;
            out.push_back(report);
        } else if (m_flagged.count(r) && ratio < 0.8 * m_ratio) {
            m_flagged.erase(r);
        }
    }
    return out;
}

} // namespace trellis::launcher
