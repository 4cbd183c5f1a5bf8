// SPDX-License-Identifier: BSD-3-Clause
// The merges of mostly sorted pairs (kfmm/tree/MergeSorted.hpp) against std::stable_sort on
// the host: keys in order, equal keys in the order of their values, as the radix sort gives.
#include <kfmm/Exception.hpp>
#include <kfmm/detail/Workspace.hpp>
#include <kfmm/tree/MergeSorted.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include "TestTypes.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

namespace
{

using kfmm::tree::MortonKey;

/// Keys of `runs` runs with the given lengths, each sorted; few distinct values (`spread`)
/// make long stretches of equal keys within and across runs.
std::vector<MortonKey> sortedRuns(std::vector<std::int64_t> const &runs, MortonKey spread,
                                  std::uint64_t seed)
{
  std::mt19937_64 random(seed);
  std::vector<MortonKey> keys;
  for (auto const length : runs)
  {
    std::vector<MortonKey> run(static_cast<std::size_t>(length));
    for (auto &k : run)
      k = random() % spread;
    std::sort(run.begin(), run.end());
    keys.insert(keys.end(), run.begin(), run.end());
  }
  return keys;
}

template <class Memory, class T>
Kokkos::View<T *, Memory> toView(std::vector<T> const &values)
{
  Kokkos::View<T *, Memory> view("kfmm::test::values", values.size());
  auto host = Kokkos::create_mirror_view(view);
  for (std::size_t i = 0; i < values.size(); ++i)
    host(i) = values[i];
  Kokkos::deep_copy(view, host);
  return view;
}

template <class View>
std::vector<typename View::non_const_value_type> toVector(View const &view)
{
  auto host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, view);
  return std::vector<typename View::non_const_value_type>(host.data(), host.data() + host.size());
}

/// The stable order of `keys` by key: the index of each sorted key.
std::vector<std::uint32_t> stableOrder(std::vector<MortonKey> const &keys)
{
  std::vector<std::uint32_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return keys[a] < keys[b]; });
  return order;
}

} // namespace

TEMPLATE_LIST_TEST_CASE("sortRuns orders sorted runs as the stable radix sort does",
                        "[tree][sort][merge]", kfmm::test::Spaces)
{
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  // The longest run first, last, in the middle; runs of one; empty runs; one run; no keys.
  auto const runs = GENERATE(std::vector<std::int64_t>{100000, 300, 0, 2000},
                             std::vector<std::int64_t>{5, 70000, 1, 0, 4000},
                             std::vector<std::int64_t>{3000, 3000, 90000},
                             std::vector<std::int64_t>{50000, 50000},
                             std::vector<std::int64_t>{1, 1, 1}, std::vector<std::int64_t>{40000},
                             std::vector<std::int64_t>{0, 0}, std::vector<std::int64_t>{});
  auto const spread = GENERATE(MortonKey(7), MortonKey(1) << 40);
  CAPTURE(runs, spread);
  auto const keys = sortedRuns(runs, spread, 5);
  auto const device_keys = toView<Memory>(keys);
  Kokkos::View<MortonKey *, Memory> sorted("kfmm::test::sorted", keys.size());
  Kokkos::View<std::uint32_t *, Memory> order("kfmm::test::order", keys.size());
  kfmm::detail::Workspace<Memory> memory;
  kfmm::tree::sortRuns(space, device_keys, runs, sorted, order, memory);
  auto const expected = stableOrder(keys);
  auto const got_keys = toVector(sorted);
  auto const got_order = toVector(order);
  bool same = got_order == expected;
  for (std::size_t i = 0; same && i < keys.size(); ++i)
    same = got_keys[i] == keys[expected[i]];
  CHECK(same);
  CHECK(toVector(device_keys) == keys); // the input is kept
}

TEMPLATE_LIST_TEST_CASE("sortRuns refuses runs that do not cover the keys", "[tree][sort][merge]",
                        kfmm::test::Spaces)
{
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  Kokkos::View<MortonKey *, Memory> keys("kfmm::test::keys", 10), sorted("kfmm::test::sorted", 10);
  Kokkos::View<std::uint32_t *, Memory> order("kfmm::test::order", 10);
  kfmm::detail::Workspace<Memory> memory;
  CHECK_THROWS_AS(kfmm::tree::sortRuns(space, keys, {4, 5}, sorted, order, memory),
                  kfmm::Exception);
}

TEMPLATE_LIST_TEST_CASE("mergeSortedPairs merges by key, then value", "[tree][sort][merge]",
                        kfmm::test::Spaces)
{
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  auto const sizes = GENERATE(std::pair<std::int64_t, std::int64_t>{60000, 500},
                              std::pair<std::int64_t, std::int64_t>{500, 60000},
                              std::pair<std::int64_t, std::int64_t>{0, 300},
                              std::pair<std::int64_t, std::int64_t>{300, 0},
                              std::pair<std::int64_t, std::int64_t>{20000, 20000});
  auto const spread = GENERATE(MortonKey(3), MortonKey(1) << 50);
  CAPTURE(sizes.first, sizes.second, spread);
  // Both sequences' values are a random split of 0 .. n - 1, each sorted by (key, value):
  // equal keys from both sides interleave by value.
  std::size_t const n = static_cast<std::size_t>(sizes.first + sizes.second);
  std::mt19937_64 random(11);
  std::vector<MortonKey> keys(n);
  for (auto &k : keys)
    k = random() % spread;
  std::vector<std::uint32_t> indices(n);
  std::iota(indices.begin(), indices.end(), 0u);
  std::shuffle(indices.begin(), indices.end(), random);
  auto const side = [&](std::size_t begin, std::size_t end) {
    std::vector<std::uint32_t> values(indices.begin() + begin, indices.begin() + end);
    std::sort(values.begin(), values.end(), [&](std::uint32_t a, std::uint32_t b) {
      return keys[a] < keys[b] || (keys[a] == keys[b] && a < b);
    });
    std::vector<MortonKey> side_keys;
    for (auto const v : values)
      side_keys.push_back(keys[v]);
    return std::make_pair(toView<Memory>(side_keys), toView<Memory>(values));
  };
  auto const [long_keys, long_values] = side(0, static_cast<std::size_t>(sizes.first));
  auto const [few_keys, few_values] = side(static_cast<std::size_t>(sizes.first), n);
  Kokkos::View<MortonKey *, Memory> merged("kfmm::test::merged", n);
  Kokkos::View<std::uint32_t *, Memory> values("kfmm::test::merged_values", n);
  kfmm::detail::Workspace<Memory> memory;
  kfmm::tree::mergeSortedPairs(space, long_keys, long_values, few_keys, few_values, merged, values,
                               memory);
  auto const expected = stableOrder(keys);
  auto const got_keys = toVector(merged);
  auto const got_values = toVector(values);
  bool same = got_values == expected;
  for (std::size_t i = 0; same && i < n; ++i)
    same = got_keys[i] == keys[expected[i]];
  CHECK(same);
}
