// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DETAIL_VALIDATION_HPP
#define KFMM_DETAIL_VALIDATION_HPP

#include <kfmm/Exception.hpp>

#include <kfmm/detail/FormatNumber.hpp>
#include <kfmm/detail/Math.hpp>
#include <kfmm/detail/Streaming.hpp>

#include <Kokkos_Core.hpp>

#include <array>

#include <cstdint>
#include <string>
#include <type_traits>

namespace kfmm::detail
{

/// The public function the caller called, as messages name it ("kfmm::evaluate"): an entry
/// point that works through another one passes its own name down, so that what the other
/// finds wrong is reported in the caller's terms.
struct EntryPoint
{
  char const *name;
};

/// Throws kfmm::Exception("<where>: <what>") when `condition` is false.
inline void require(bool condition, std::string const &where, std::string const &what)
{
  if (!condition)
    throw Exception(where + ": " + what);
}

inline void requireExtent(std::string const &where, std::string const &name, std::size_t actual,
                          std::size_t expected)
{
  require(actual == expected, where,
          "argument '" + name + "' has extent " + formatNumber(actual) + ", expected " +
              formatNumber(expected));
}

/// values(i, c) of a rank-2 View, values(i) of a rank-1 one.
template <class View>
KOKKOS_INLINE_FUNCTION double entry(View const &values, std::int64_t i, int c)
{
  if constexpr (View::rank == 2)
    return static_cast<double>(values(i, c));
  else
    return static_cast<double>(values(i));
}

/// Whether row i of a rank-1 or rank-2 View is finite in every column.
template <class View>
KOKKOS_INLINE_FUNCTION bool rowIsFinite(View const &values, std::int64_t i)
{
  int const columns = View::rank == 2 ? static_cast<int>(values.extent(1)) : 1;
  for (int c = 0; c < columns; ++c)
    if (!isfinite(entry(values, i, c)))
      return false;
  return true;
}

/// One step of firstIndexWhere: result becomes i when i is below it and bad(i).
template <class Predicate>
struct FirstIndexWhere
{
  using Index = std::int64_t;

  Predicate bad;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i, Index &result) const
  {
    auto const index = static_cast<Index>(i);
    if (index < result && bad(index))
      result = index;
  }
};

/// The smallest i in [0, n) with bad(i), or -1. One parallel min-reduction on the
/// execution space (streamReduce); only the index comes back.
template <class ExecutionSpace, class Predicate>
std::int64_t firstIndexWhere(ExecutionSpace const &space, std::int64_t n, Predicate const &bad)
{
  using Index = std::int64_t;
  constexpr Index none = Kokkos::reduction_identity<Index>::min();
  Index first = none;
  streamReduce("kfmm::validation::first_index_where", space, static_cast<std::size_t>(n),
               FirstIndexWhere<Predicate>{bad}, Kokkos::Min<Index>(first));
  return first == none ? -1 : first;
}

/// Whether row i of `values` holds a NaN or infinity.
template <class View>
struct RowNotFinite
{
  View values;

  KOKKOS_INLINE_FUNCTION bool operator()(std::int64_t i) const { return !rowIsFinite(values, i); }
};

/// Index of the first row of a rank-1 or rank-2 View that holds a NaN or infinity, or -1.
template <class ExecutionSpace, class View>
std::int64_t firstNonFinite(ExecutionSpace const &space, View const &values)
{
  return firstIndexWhere(space, static_cast<std::int64_t>(values.extent(0)),
                         RowNotFinite<View>{values});
}

/// Whether row i of `a` or of `b` holds a NaN or infinity.
template <class ViewA, class ViewB>
struct RowsNotFinite
{
  ViewA a;
  ViewB b;

  KOKKOS_INLINE_FUNCTION bool operator()(std::int64_t i) const
  {
    return !(rowIsFinite(a, i) && rowIsFinite(b, i));
  }
};

/// Index of the first row that holds a NaN or infinity in either of two Views of as many
/// rows (a particle's potential and field), or -1: one pass over both.
template <class ExecutionSpace, class ViewA, class ViewB>
std::int64_t firstNonFinite(ExecutionSpace const &space, ViewA const &a, ViewB const &b)
{
  return firstIndexWhere(space, static_cast<std::int64_t>(a.extent(0)),
                         RowsNotFinite<ViewA, ViewB>{a, b});
}

/// values = a(row) and b(row, 0..2) as doubles.
template <class MemorySpace, class ViewA, class ViewB>
struct ReadRowValues
{
  Kokkos::View<double[4], MemorySpace> values;
  ViewA a;
  ViewB b;
  std::int64_t row;

  KOKKOS_INLINE_FUNCTION void operator()(int) const
  {
    values(0) = static_cast<double>(a(row));
    for (int c = 0; c < 3; ++c)
      values(1 + c) = static_cast<double>(b(row, c));
  }
};

/// Row `row` of a rank-1 and a rank-2 View of 3 columns (a particle's potential and field)
/// as doubles. A kernel reads them: the Views may be in any memory space the execution space
/// can access, including ones a host copy cannot read from (e.g. Kokkos::AnonymousSpace).
template <class ExecutionSpace, class ViewA, class ViewB>
std::array<double, 4> rowValues(ExecutionSpace const &space, ViewA const &a, ViewB const &b,
                                std::int64_t row)
{
  using MemorySpace = typename ExecutionSpace::memory_space;
  Kokkos::View<double[4], MemorySpace> values(Kokkos::view_alloc(space, "kfmm::row_values"));
  Kokkos::parallel_for("kfmm::read_row", Kokkos::RangePolicy<ExecutionSpace>(space, 0, 1),
                       ReadRowValues<MemorySpace, ViewA, ViewB>{values, a, b, row});
  auto const host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, values);
  return {host(0), host(1), host(2), host(3)};
}

/// values = view(row, 0..2) as doubles.
template <class MemorySpace, class View>
struct ReadRow
{
  Kokkos::View<double[3], MemorySpace> values;
  View view;
  std::int64_t row;

  KOKKOS_INLINE_FUNCTION void operator()(int) const
  {
    for (int c = 0; c < 3; ++c)
      values(c) = static_cast<double>(view(row, c));
  }
};

/// Row `row` of a rank-2 View of 3 columns as doubles, read by a kernel (see rowValues).
template <class ExecutionSpace, class View>
std::array<double, 3> rowOf(ExecutionSpace const &space, View const &view, std::int64_t row)
{
  using MemorySpace = typename ExecutionSpace::memory_space;
  Kokkos::View<double[3], MemorySpace> values(Kokkos::view_alloc(space, "kfmm::row_of"));
  Kokkos::parallel_for("kfmm::read_row", Kokkos::RangePolicy<ExecutionSpace>(space, 0, 1),
                       ReadRow<MemorySpace, View>{values, view, row});
  auto const host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, values);
  return {host(0), host(1), host(2)};
}

template <class ExecutionSpace, class View>
void requireFinite(ExecutionSpace const &space, std::string const &where, std::string const &name,
                   View const &values)
{
  auto const bad = firstNonFinite(space, values);
  require(bad < 0, where,
          "argument '" + name + "' holds a NaN or infinite value at index " + formatNumber(bad));
}

} // namespace kfmm::detail

#endif
