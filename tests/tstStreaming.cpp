// SPDX-License-Identifier: BSD-3-Clause
// The launch shapes of passes over arrays (kfmm/detail/Streaming.hpp): several elements per
// work item, chunks of elements per team of a reduction. Sizes around the backend's item and
// chunk sizes check that every element is taken exactly once, and the reductions built on
// them (the first bad index, the bounding box) that the answer does not depend on which
// chunk holds it.
#include <kfmm/detail/Streaming.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/tree/Octree.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "TestTypes.hpp"

namespace
{

/// counts(i) += 1.
template <class Counts>
struct CountVisit
{
  Counts counts;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const { Kokkos::atomic_add(&counts(i), 1); }
};

/// sum += i.
struct AddIndex
{
  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i, std::int64_t &sum) const
  {
    sum += static_cast<std::int64_t>(i);
  }
};

/// Whether i is one of the three marked indices.
struct IsMarked
{
  std::int64_t a, b, c;

  KOKKOS_INLINE_FUNCTION bool operator()(std::int64_t i) const
  {
    return i == a || i == b || i == c;
  }
};

/// Sizes around one work item and one reduction chunk of the space, and a larger one.
template <class ExecutionSpace>
std::vector<std::size_t> testSizes()
{
  using Tune = kfmm::tuning::Tuning<ExecutionSpace>;
  std::size_t const item = Tune::stream_elements_per_item;
  std::size_t const chunk =
      static_cast<std::size_t>(Tune::stream_team_size) * Tune::stream_elements_per_thread;
  return {0,     1,         item - 1 > 0 ? item - 1 : 1,
          item,  item + 1,  chunk - 1,
          chunk, chunk + 1, 3 * chunk + 17,
          100003};
}

} // namespace

TEMPLATE_LIST_TEST_CASE("streamFor takes every element exactly once", "[streaming]",
                        kfmm::test::Spaces)
{
  using ExecutionSpace = typename TestType::execution_space;
  using Memory = typename TestType::memory_space;
  ExecutionSpace space;
  for (std::size_t const n : testSizes<ExecutionSpace>())
  {
    CAPTURE(n);
    Kokkos::View<int *, Memory> counts("counts", n + 1);
    kfmm::detail::streamFor("kfmm::test::count_visits", space, n,
                            CountVisit<decltype(counts)>{counts});
    auto const host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, counts);
    std::size_t wrong = 0;
    for (std::size_t i = 0; i < n; ++i)
      wrong += host(i) != 1;
    CHECK(wrong == 0);
    CHECK(host(n) == 0); // nothing past the end
  }
}

TEMPLATE_LIST_TEST_CASE("streamReduce adds every element once and finds the first marked one",
                        "[streaming]", kfmm::test::Spaces)
{
  using ExecutionSpace = typename TestType::execution_space;
  ExecutionSpace space;
  for (std::size_t const n : testSizes<ExecutionSpace>())
  {
    CAPTURE(n);
    std::int64_t sum = -1;
    kfmm::detail::streamReduce("kfmm::test::add_indices", space, n, AddIndex{},
                               Kokkos::Sum<std::int64_t>(sum));
    auto const count = static_cast<std::int64_t>(n);
    CHECK(sum == count * (count - 1) / 2);
    // Marks in the last chunk, in a middle one and in the first: the smallest wins wherever
    // it is, and nothing marked gives -1.
    CHECK(kfmm::detail::firstIndexWhere(space, count, IsMarked{-1, count, count + 5}) == -1);
    if (n == 0)
      continue;
    std::int64_t const last = count - 1;
    std::int64_t const middle = count / 2;
    std::int64_t const first = count / 7;
    CHECK(kfmm::detail::firstIndexWhere(space, count, IsMarked{last, last, last}) == last);
    CHECK(kfmm::detail::firstIndexWhere(space, count, IsMarked{last, middle, last}) == middle);
    CHECK(kfmm::detail::firstIndexWhere(space, count, IsMarked{middle, last, first}) == first);
  }
}

TEMPLATE_LIST_TEST_CASE("the bounding box is the extent of every chunk's positions",
                        "[streaming][morton]", kfmm::test::Spaces)
{
  using ExecutionSpace = typename TestType::execution_space;
  using Memory = typename TestType::memory_space;
  ExecutionSpace space;
  std::size_t const n = testSizes<ExecutionSpace>()[8]; // three chunks and a part
  Kokkos::View<double *[3], Memory> x("x", n);
  auto host = Kokkos::create_mirror_view(x);
  std::mt19937_64 random(7);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (std::size_t i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d)
      host(i, d) = uniform(random);
  // Each extreme in a chunk of its own, the last one in the partial chunk.
  host(n - 1, 0) = 3.5;
  host(n / 2, 1) = -2.25;
  host(1, 2) = 5.125;
  host(n / 3, 0) = -4.0;
  double lo[3], hi[3];
  for (int d = 0; d < 3; ++d)
  {
    lo[d] = hi[d] = host(0, d);
    for (std::size_t i = 1; i < n; ++i)
    {
      lo[d] = std::min(lo[d], host(i, d));
      hi[d] = std::max(hi[d], host(i, d));
    }
  }
  Kokkos::deep_copy(x, host);
  auto const box = kfmm::tree::boundingBox(space, x);
  CHECK_FALSE(box.empty);
  for (int d = 0; d < 3; ++d)
  {
    CHECK(box.lo[d] == lo[d]);
    CHECK(box.hi[d] == hi[d]);
  }
  CHECK(lo[0] == -4.0);
  CHECK(hi[0] == 3.5);
  CHECK(lo[1] == -2.25);
  CHECK(hi[2] == 5.125);

  SECTION("a NaN or an infinity makes the box infinite, and the check names the first")
  {
    double const inf = std::numeric_limits<double>::infinity();
    std::size_t const nan_row = n - 5;
    host(nan_row, 1) = std::numeric_limits<double>::quiet_NaN();
    host(n / 2 + 3, 2) = -inf;
    Kokkos::deep_copy(x, host);
    auto const bad = kfmm::tree::boundingBox(space, x);
    CHECK(bad.hi[1] == inf);
    CHECK(bad.lo[2] == -inf);
    CHECK(bad.lo[0] == lo[0]);
    CHECK_THROWS_WITH(
        kfmm::tree::detail::checkedBoundingBox(space, "kfmm::test", x, "positions"),
        Catch::Matchers::Equals("kfmm::test: argument 'positions' holds a NaN or infinite "
                                "value at index " +
                                std::to_string(n / 2 + 3)));
  }
}
