// The one median of the launcher: the detectors, the metric store, reports and comparisons all
// take it from here, so a figure reads the same wherever it is shown. For an even count it is the
// mean of the two middle values (the textbook median: over 2 ranks, halfway between them).
#pragma once

#include <algorithm>
#include <cstddef>
#include <iterator>
#include <vector>

namespace trellis::launcher {

// The median of [first, last) by key(element); 0 for an empty range. Reorders the range.
template <typename It, typename Key>
double medianInPlace(It first, It last, Key key)
{
    const auto n = std::distance(first, last);
    if (n <= 0)
        return 0;
    const It mid = first + n / 2;
    auto less = [&key](const auto &a, const auto &b) { return key(a) < key(b); };
    std::nth_element(first, mid, last, less);
    const double upper = static_cast<double>(key(*mid));
    if (n % 2 == 1)
        return upper;
    const double lower = static_cast<double>(key(*std::max_element(first, mid, less)));
    return (lower + upper) / 2;
}

inline double median(std::vector<double> values)
{
    return medianInPlace(values.begin(), values.end(), [](double v) { return v; });
}

} // namespace trellis::launcher
