// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TUNING_LEAF_SIZE_TABLE_HPP
#define KFMM_TUNING_LEAF_SIZE_TABLE_HPP

// The leaf size behind Options::leaf_size = 0. With s particles per leaf the FMM costs about
// N (A + B / s + C s): the far field's work per particle falls as 1/s (fewer cells), the near
// field's grows as s, and the fastest s = (B / C)^(1/2) (Gumerov & Duraiswami 2008, the
// optimal cluster size s_opt). B grows with the order, and B and C differ per backend and
// precision, so each backend's tuning (tuning/Tuning.hpp and backends/<name>/) holds a table
// per precision of the fastest leaf size measured at a set of orders; perf/tune_leaf_size.py
// measures it and writes it (docs/TUNING.md).

#include <cstddef>

namespace kfmm::tuning
{

struct LeafSizeRow
{
  int order;
  int leaf_size; ///< the fastest measured at this order
};

/// The leaf size of the row whose order is nearest `order` (the lower one on a tie): rows
/// sorted by order, at least one.
template <std::size_t N>
constexpr int tunedLeafSize(LeafSizeRow const (&rows)[N], int order)
{
  // std::abs is constexpr only from C++23.
  auto const distance = [order](LeafSizeRow const &row) {
    return row.order > order ? row.order - order : order - row.order;
  };
  LeafSizeRow nearest = rows[0];
  for (auto const &row : rows)
    if (distance(row) < distance(nearest))
      nearest = row;
  return nearest.leaf_size;
}

} // namespace kfmm::tuning

#endif
