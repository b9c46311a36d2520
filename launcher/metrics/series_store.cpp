// See series_store.h.
#include "launcher/metrics/series_store.h"

namespace trellis::launcher {

void SeriesStore::clear()
{
    std::lock_guard lock(m_mutex);
    m_rows.clear();
    m_log.clear();
    ++m_version;
}

void SeriesStore::append(const StepRow &row)
{
    std::lock_guard lock(m_mutex);
    auto &rows = m_rows[row.rank];
    rows.push_back(row);
    if (rows.size() > m_capacity)
        rows.pop_front();
    m_log.emplace_back(++m_version, row);
    if (m_log.size() > m_capacity)
        m_log.pop_front();
}

void SeriesStore::appendAll(const QList<StepRow> &rows)
{
    for (const auto &r : rows)
        append(r);
}

QList<StepRow> SeriesStore::rowsSince(quint64 sinceVersion, quint64 *version) const
{
    std::lock_guard lock(m_mutex);
    QList<StepRow> out;
    for (auto it = m_log.rbegin(); it != m_log.rend() && it->first > sinceVersion; ++it)
        out.prepend(it->second);
    if (version)
        *version = m_version;
    return out;
}

QList<StepRow> SeriesStore::rowsOf(int rank) const
{
    std::lock_guard lock(m_mutex);
    QList<StepRow> out;
    if (auto it = m_rows.find(rank); it != m_rows.end())
        for (const auto &r : it->second)
            out.append(r);
    return out;
}

QList<int> SeriesStore::ranks() const
{
    std::lock_guard lock(m_mutex);
    QList<int> out;
    for (const auto &[rank, rows] : m_rows)
        out.append(rank);
    return out;
}

quint64 SeriesStore::version() const
{
    std::lock_guard lock(m_mutex);
    return m_version;
}

std::size_t SeriesStore::size() const
{
    std::lock_guard lock(m_mutex);
    std::size_t n = 0;
    for (const auto &[rank, rows] : m_rows)
        n += rows.size();
    return n;
}

} // namespace trellis::launcher
