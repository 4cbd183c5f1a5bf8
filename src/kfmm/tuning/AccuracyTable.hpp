// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TUNING_ACCURACY_TABLE_HPP
#define KFMM_TUNING_ACCURACY_TABLE_HPP

// The parameters behind Options::tolerance. Each backend's tuning (tuning/Tuning.hpp and
// backends/<name>/) holds, per precision, the rows of its accuracy table: an order and a theta
// of the theta rule with the worst relative L2 field error measured with them on uniform,
// Plummer and ellipsoid-surface particles, fastest first on that backend, each more accurate
// than the one before (the time-versus-error front). The error is a property of the
// expansions and the acceptance rule; the order of the rows is the backend's timing.
// perf/accuracy_table.py measures them and docs/ACCURACY.md says how.

#include <cstddef>

namespace kfmm::tuning
{

struct AccuracyRow
{
  int order;
  double theta;
  double field_error; ///< the worst measured relative L2 field error
};

/// A row serves a tolerance when its measured error times this margin is at most the
/// tolerance: the table holds the worst error over three distributions at 2e4 and 5e4
/// particles (which differ by up to 8x), and other sizes and particle sets scatter about it.
constexpr double tolerance_margin = 1.5;

/// The rows of a table, fastest first.
struct AccuracyRows
{
  AccuracyRow const *rows;
  int count;
};

template <std::size_t N>
AccuracyRows rowsOf(AccuracyRow const (&rows)[N])
{
  return {rows, static_cast<int>(N)};
}

/// Whether `table` holds the row of order `order` and theta `theta`.
inline bool holds(AccuracyRows table, int order, double theta)
{
  for (int j = 0; j < table.count; ++j)
    if (table.rows[j].order == order && table.rows[j].theta == theta)
      return true;
  return false;
}

/// The index of the fastest of `table`'s rows that serves `tolerance`, or -1 where none does.
inline int servingRow(AccuracyRows table, double tolerance)
{
  for (int j = 0; j < table.count; ++j)
    if (table.rows[j].field_error * tolerance_margin <= tolerance)
      return j;
  return -1;
}

/// The fastest of `rows` (fastest first) that serves `tolerance`, or null where none does
/// (Options.hpp's withTunedParameters names the smallest tolerance the table serves then).
template <std::size_t N>
AccuracyRow const *servingAccuracyRow(AccuracyRow const (&rows)[N], double tolerance)
{
  int const j = servingRow(rowsOf(rows), tolerance);
  return j < 0 ? nullptr : rows + j;
}

/// The field error to expect of `order` and `theta` from the table `rows`: the least error of
/// the rows that are at most as accurate (an order no higher, a theta no smaller), which
/// bounds the setting's own from above; where no row is, the table's largest error (an
/// order below the table's or a theta above it, whose error is larger still: an estimate
/// that errs on the small side).
template <std::size_t N>
double expectedFieldError(AccuracyRow const (&rows)[N], int order, double theta)
{
  double largest = 0, bound = 0;
  for (auto const &row : rows)
  {
    largest = row.field_error > largest ? row.field_error : largest;
    if (row.order <= order && row.theta >= theta && (bound == 0 || row.field_error < bound))
      bound = row.field_error;
  }
  return bound > 0 ? bound : largest;
}

} // namespace kfmm::tuning

#endif
