// Live series for the dashboards: per-rank ring buffers of step metrics, appended by the live
// feed (supervisor/run_feed.h, from the run's supervisor) and read by charts. Threading: all methods are thread-safe (one mutex); readers
// copy what they need since a version they remember, so a replot never holds the lock long.
#pragma once

#include "launcher/run_types.h"

#include <QList>

#include <deque>
#include <map>
#include <mutex>

namespace trellis::launcher {

class SeriesStore {
public:
    explicit SeriesStore(std::size_t capacityPerRank = 100000) : m_capacity(capacityPerRank) {}

    void clear();
    void append(const StepRow &row);
    void appendAll(const QList<StepRow> &rows);
    // Rows appended after `sinceVersion` (all rows when 0); returns the current version through `version`.
    QList<StepRow> rowsSince(quint64 sinceVersion, quint64 *version) const;
    QList<StepRow> rowsOf(int rank) const;
    QList<int> ranks() const;
    quint64 version() const;
    std::size_t size() const;

private:
    std::size_t m_capacity;
    mutable std::mutex m_mutex;
    std::map<int, std::deque<StepRow>> m_rows;
    std::deque<std::pair<quint64, StepRow>> m_log; // (version, row), bounded
    quint64 m_version = 0;
};

} // namespace trellis::launcher
