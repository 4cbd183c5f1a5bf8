// SPDX-License-Identifier: BSD-3-Clause
// The radix sort (kfmm/tree/RadixSort.hpp) against std::stable_sort on the host: keys must
// come out in order and values in the stable order of their keys.
#include <kfmm/Exception.hpp>
#include <kfmm/io/Generators.hpp>
#include <kfmm/tree/Morton.hpp>
#include <kfmm/tree/RadixSort.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include "TestTypes.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

namespace
{

using kfmm::tree::detail::SortAlgorithm;
using kfmm::tree::detail::SortOptions;
using Catch::Matchers::ContainsSubstring;

enum class Pattern
{
  random,      ///< 64 random bits
  equal,       ///< one key for all
  sorted,      ///< ascending, with pairs of duplicates
  reversed,    ///< descending
  low_bits,    ///< random in [0, 256): long runs of equal keys, the test of stability
  sparse_bits, ///< random bits in two separate bytes only: the digits between are skipped
  high_bits    ///< random top byte, the rest zero
};

char const *patternName(Pattern p)
{
  switch (p)
  {
  case Pattern::random: return "random";
  case Pattern::equal: return "equal";
  case Pattern::sorted: return "sorted";
  case Pattern::reversed: return "reversed";
  case Pattern::low_bits: return "low_bits";
  case Pattern::sparse_bits: return "sparse_bits";
  case Pattern::high_bits: return "high_bits";
  }
  return "?";
}

std::vector<std::uint64_t> makeKeys(Pattern pattern, std::size_t n, std::uint64_t seed = 1)
{
  std::mt19937_64 random(seed);
  std::vector<std::uint64_t> keys(n);
  for (std::size_t i = 0; i < n; ++i)
  {
    switch (pattern)
    {
    case Pattern::random: keys[i] = random(); break;
    case Pattern::equal: keys[i] = 0x0123456789abcdefULL; break;
    case Pattern::sorted: keys[i] = 1000 + 3 * (i / 2); break;
    case Pattern::reversed: keys[i] = 0xffffffffffULL - 7 * i; break;
    case Pattern::low_bits: keys[i] = random() & 0xff; break;
    case Pattern::sparse_bits: keys[i] = random() & 0x00f0000000ff0000ULL; break;
    case Pattern::high_bits: keys[i] = random() & 0xff00000000000000ULL; break;
    }
  }
  return keys;
}

template <class Key>
Key lowBits(int key_bits)
{
  return key_bits >= static_cast<int>(8 * sizeof(Key)) ? static_cast<Key>(~Key(0))
                                                       : static_cast<Key>((Key(1) << key_bits) - 1);
}

/// Sorts (keys, values(i) = i) on the config's execution space with `sort(space, keys,
/// values, key_bits)`, and returns the first position where the result differs from
/// std::stable_sort by the low key_bits bits, or -1.
template <class Config, class Value, class Key, class Sort>
std::int64_t firstMismatchOf(std::vector<Key> const &keys, int key_bits, Sort const &sort)
{
  using Memory = typename Config::memory_space;
  typename Config::execution_space space;
  std::size_t const n = keys.size();
  Kokkos::View<Key *, Memory> k("kfmm::test::keys", n);
  Kokkos::View<Value *, Memory> v("kfmm::test::values", n);
  auto kh = Kokkos::create_mirror_view(k);
  auto vh = Kokkos::create_mirror_view(v);
  for (std::size_t i = 0; i < n; ++i)
  {
    kh(i) = keys[i];
    vh(i) = static_cast<Value>(i);
  }
  Kokkos::deep_copy(k, kh);
  Kokkos::deep_copy(v, vh);
  sort(space, k, v, key_bits);
  Kokkos::deep_copy(kh, k);
  Kokkos::deep_copy(vh, v);

  Key const mask = lowBits<Key>(key_bits);
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return (keys[a] & mask) < (keys[b] & mask);
  });
  for (std::size_t i = 0; i < n; ++i)
    if (kh(i) != keys[order[i]] || vh(i) != static_cast<Value>(order[i]))
      return static_cast<std::int64_t>(i);
  return -1;
}

/// firstMismatchOf for sortPairs, by the default launch parameters or by `options`.
template <class Config, class Value = std::uint32_t, class Key>
std::int64_t firstMismatch(std::vector<Key> const &keys, int key_bits,
                           SortOptions const *options = nullptr)
{
  return firstMismatchOf<Config, Value>(
      keys, key_bits, [&](auto const &space, auto const &k, auto const &v, int bits) {
        if (options != nullptr)
          kfmm::tree::detail::sortPairs(space, k, v, bits, *options);
        else
          kfmm::tree::sortPairs(space, k, v, bits);
      });
}

/// Onesweep team shapes the space supports: one-thread teams, and with warp primitives
/// teams of 1 to 8 warps and narrower digits.
template <class ExecutionSpace>
std::vector<SortOptions> onesweepVariants()
{
  std::vector<SortOptions> variants{{SortAlgorithm::onesweep, 8, 1, 1}};
  if constexpr (kfmm::tuning::Tuning<ExecutionSpace>::has_warp_primitives)
  {
    for (int team_size : {32, 64, 128, 256})
      variants.push_back({SortAlgorithm::onesweep, 8, team_size, 1});
    for (int bits : {3, 5})
      variants.push_back({SortAlgorithm::onesweep, bits, 256, 1});
  }
  return variants;
}

/// Launch parameters other than the defaults that the space supports: both algorithms,
/// several digit widths, groups of one tile and of many, and other team shapes.
template <class ExecutionSpace>
std::vector<SortOptions> optionVariants()
{
  using Tune = kfmm::tuning::Tuning<ExecutionSpace>;
  constexpr auto onesweep = SortAlgorithm::onesweep;
  constexpr auto reduce_then_scan = SortAlgorithm::reduce_then_scan;
  std::vector<SortOptions> variants;
  // One-thread teams, which every space runs.
  for (int bits : {1, 3, 5, 8})
    for (auto algorithm : {reduce_then_scan, onesweep})
      variants.push_back({algorithm, bits, 1, 4});
  variants.push_back({reduce_then_scan, 11, 1, 4});
  variants.push_back({reduce_then_scan, 8, 1, 1});
  variants.push_back({reduce_then_scan, 8, 1, 1000});
  if constexpr (Tune::has_warp_primitives)
  {
    // Reduce-then-scan with per-thread counters on the device.
    variants.push_back({reduce_then_scan, 4, 64, 4});
  }
  else if (ExecutionSpace().concurrency() >= 2)
  {
    // Teams of two host threads: reduce-then-scan with per-thread counters.
    for (int bits : {4, 8})
      variants.push_back({reduce_then_scan, bits, 2, 4});
  }
  return variants;
}

} // namespace

TEMPLATE_LIST_TEST_CASE("sortPairs matches std::stable_sort", "[tree][sort]", kfmm::test::Spaces)
{
  auto const n = GENERATE(as<std::size_t>{}, 0, 1, 2, 3, 1000, 4097, 100000, std::size_t(1) << 20);
  auto const pattern = GENERATE(Pattern::random, Pattern::equal, Pattern::sorted, Pattern::reversed,
                                Pattern::low_bits, Pattern::sparse_bits, Pattern::high_bits);
  CAPTURE(n, patternName(pattern));
  CHECK(firstMismatch<TestType>(makeKeys(pattern, n), 64) == -1);
}

TEMPLATE_LIST_TEST_CASE("sortPairs sorts by the low key_bits bits only", "[tree][sort]",
                        kfmm::test::Spaces)
{
  auto const key_bits = GENERATE(1, 7, 8, 9, 20, 37, 63);
  auto const n = GENERATE(as<std::size_t>{}, 4097, 100000);
  CAPTURE(key_bits, n);
  auto keys = makeKeys(Pattern::random, n, 3);
  SECTION("keys below 2^key_bits")
  {
    for (auto &key : keys)
      key &= lowBits<std::uint64_t>(key_bits);
    CHECK(firstMismatch<TestType>(keys, key_bits) == -1);
  }
  SECTION("higher bits are ignored and kept")
  {
    CHECK(firstMismatch<TestType>(keys, key_bits) == -1);
  }
}

TEMPLATE_LIST_TEST_CASE("sortPairs of the Morton keys of a Plummer sphere", "[tree][sort]",
                        kfmm::test::Spaces)
{
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  auto const n = GENERATE(as<std::size_t>{}, 1000, 300000);
  CAPTURE(n);
  Kokkos::View<double *[3], Memory> x("kfmm::test::positions", n);
  Kokkos::View<double *, Memory> q("kfmm::test::charges", n);
  kfmm::generate(space, kfmm::Distribution::plummer, 29, x, q);
  auto const cube = kfmm::tree::boundingCube(space, x);
  Kokkos::View<kfmm::tree::MortonKey *, Memory> keys("kfmm::test::keys", n);
  kfmm::tree::computeMortonKeys(space, cube, x, keys);
  auto const h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, keys);
  std::vector<std::uint64_t> const host_keys(h.data(), h.data() + n);
  CHECK(firstMismatch<TestType>(host_keys, 3 * kfmm::tree::max_level) == -1);
}

TEMPLATE_LIST_TEST_CASE("sortPairs with other key and value types", "[tree][sort]",
                        kfmm::test::Spaces)
{
  auto const n = GENERATE(as<std::size_t>{}, 3, 4097, 100000);
  auto const pattern = GENERATE(Pattern::random, Pattern::low_bits, Pattern::high_bits);
  CAPTURE(n, patternName(pattern));
  auto const keys = makeKeys(pattern, n, 5);
  SECTION("64-bit keys, 64-bit values")
  {
    CHECK(firstMismatch<TestType, std::uint64_t>(keys, 64) == -1);
  }
  SECTION("64-bit keys, double values") { CHECK(firstMismatch<TestType, double>(keys, 64) == -1); }
  SECTION("32-bit keys, 16-bit values")
  {
    // Values are indices modulo 2^16; the comparison converts the same way.
    std::vector<std::uint32_t> keys32(n);
    for (std::size_t i = 0; i < n; ++i)
      keys32[i] = static_cast<std::uint32_t>(keys[i] >> 32 ^ keys[i]);
    CHECK(firstMismatch<TestType, std::uint16_t>(keys32, 32) == -1);
    CHECK(firstMismatch<TestType, std::uint16_t>(keys32, 13) == -1);
  }
}

TEMPLATE_LIST_TEST_CASE("sortPairs on strided Views", "[tree][sort]", kfmm::test::Spaces)
{
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  std::size_t const n = 5000;
  auto const keys = makeKeys(Pattern::low_bits, n, 9);
  // Keys in column 1 and values in column 0 of N x 2 arrays: both non-contiguous.
  Kokkos::View<std::uint64_t *[2], Kokkos::LayoutRight, Memory> k2("kfmm::test::keys", n);
  Kokkos::View<std::uint32_t *[2], Kokkos::LayoutRight, Memory> v2("kfmm::test::values", n);
  auto kh = Kokkos::create_mirror_view(k2);
  auto vh = Kokkos::create_mirror_view(v2);
  for (std::size_t i = 0; i < n; ++i)
  {
    kh(i, 0) = 77;
    kh(i, 1) = keys[i];
    vh(i, 0) = static_cast<std::uint32_t>(i);
    vh(i, 1) = 99;
  }
  Kokkos::deep_copy(k2, kh);
  Kokkos::deep_copy(v2, vh);
  auto const k = Kokkos::subview(k2, Kokkos::ALL, 1);
  auto const v = Kokkos::subview(v2, Kokkos::ALL, 0);
  REQUIRE(!k.span_is_contiguous());
  kfmm::tree::sortPairs(space, k, v);
  // Whole arrays to the host (strided device subviews cannot be copied across spaces).
  Kokkos::deep_copy(kh, k2);
  Kokkos::deep_copy(vh, v2);
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), std::size_t(0));
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return keys[a] < keys[b]; });
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < n; ++i)
    wrong += kh(i, 1) != keys[order[i]] || vh(i, 0) != order[i] || kh(i, 0) != 77 || vh(i, 1) != 99;
  CHECK(wrong == 0);
}

TEMPLATE_LIST_TEST_CASE("sortPairs with other launch parameters", "[tree][sort]",
                        kfmm::test::Spaces)
{
  using Space = typename TestType::execution_space;
  auto const n = GENERATE(as<std::size_t>{}, 2, 5000, 100000);
  auto const pattern = GENERATE(Pattern::random, Pattern::low_bits);
  auto const keys = makeKeys(pattern, n, 13);
  for (SortOptions const &options : optionVariants<Space>())
  {
    CAPTURE(n, patternName(pattern), options.algorithm == SortAlgorithm::onesweep,
            options.digit_bits, options.team_size, options.tiles_per_team);
    CHECK(firstMismatch<TestType>(keys, 64, &options) == -1);
  }
}

// Small enough to run under compute-sanitizer: `kfmm_test_sort "[onesweep]"`.
TEMPLATE_LIST_TEST_CASE("onesweep sort with other team shapes", "[tree][sort][onesweep]",
                        kfmm::test::Spaces)
{
  using Space = typename TestType::execution_space;
  auto const n = GENERATE(as<std::size_t>{}, 2, 5000, 70000);
  // Every pass sorted (even count), one (odd), two with skipped digits between, and none:
  // each way the passes' routes can end.
  auto const pattern =
      GENERATE(Pattern::random, Pattern::low_bits, Pattern::sparse_bits, Pattern::equal);
  auto const keys = makeKeys(pattern, n, 17);
  for (SortOptions const &options : onesweepVariants<Space>())
  {
    CAPTURE(n, patternName(pattern), options.digit_bits, options.team_size);
    CHECK(firstMismatch<TestType>(keys, 64, &options) == -1);
  }
}

TEMPLATE_LIST_TEST_CASE("RadixSorter keeps its workspace across sorts", "[tree][sort]",
                        kfmm::test::Spaces)
{
  using Memory = typename TestType::memory_space;
  kfmm::tree::RadixSorter<std::uint64_t, std::uint32_t, Memory> sorter;
  CHECK(sorter.workspaceBytes() == 0);
  auto const sort = [&](auto const &space, auto const &k, auto const &v, int bits) {
    sorter.sort(space, k, v, bits);
  };
  std::size_t largest = 0;
  for (std::size_t n : {100000, 5000, 100000, 1, 70000})
  {
    CAPTURE(n);
    CHECK(firstMismatchOf<TestType, std::uint32_t>(makeKeys(Pattern::random, n, n), 64, sort) ==
          -1);
    if (n == 100000 && largest == 0)
      largest = sorter.workspaceBytes();
    // Buffers of N keys and values at least; smaller sorts reuse them.
    CHECK(sorter.workspaceBytes() >= 100000 * (sizeof(std::uint64_t) + sizeof(std::uint32_t)));
    CHECK(sorter.workspaceBytes() == largest);
  }
}

TEMPLATE_LIST_TEST_CASE("sortPairs rejects bad arguments", "[tree][sort]", kfmm::test::Spaces)
{
  using Space = typename TestType::execution_space;
  using Memory = typename TestType::memory_space;
  Space space;
  Kokkos::View<std::uint64_t *, Memory> keys("kfmm::test::keys", 10);
  Kokkos::View<std::uint32_t *, Memory> values("kfmm::test::values", 10);
  Kokkos::View<std::uint32_t *, Memory> short_values("kfmm::test::values", 9);
  Kokkos::View<std::uint32_t *, Memory> keys32("kfmm::test::keys", 10);

  CHECK_THROWS_AS(kfmm::tree::sortPairs(space, keys, short_values), kfmm::Exception);
  CHECK_THROWS_WITH(kfmm::tree::sortPairs(space, keys, short_values),
                    ContainsSubstring("'values'") && ContainsSubstring("9"));
  for (int key_bits : {-1, 65})
  {
    CAPTURE(key_bits);
    CHECK_THROWS_AS(kfmm::tree::sortPairs(space, keys, values, key_bits), kfmm::Exception);
    CHECK_THROWS_WITH(kfmm::tree::sortPairs(space, keys, values, key_bits),
                      ContainsSubstring("'key_bits'") && ContainsSubstring("[0, 64]"));
  }
  CHECK_THROWS_WITH(kfmm::tree::sortPairs(space, keys32, values, 33),
                    ContainsSubstring("'key_bits'") && ContainsSubstring("[0, 32]"));
  CHECK_NOTHROW(kfmm::tree::sortPairs(space, keys32, values, 32));
  CHECK_NOTHROW(kfmm::tree::sortPairs(space, keys, values, 0));

  auto const base = kfmm::tree::detail::defaultSortOptions<Space>();
  auto bad = [&](SortOptions const &options) {
    kfmm::tree::detail::sortPairs(space, keys, values, 64, options);
  };
  CHECK_THROWS_WITH(bad({base.algorithm, 0, base.team_size, 1}), ContainsSubstring("'digit_bits'"));
  CHECK_THROWS_WITH(bad({base.algorithm, 17, base.team_size, 1}),
                    ContainsSubstring("'digit_bits'"));
  CHECK_THROWS_WITH(bad({base.algorithm, 8, 0, 1}), ContainsSubstring("'team_size'"));
  CHECK_THROWS_WITH(bad({base.algorithm, 8, base.team_size, 0}),
                    ContainsSubstring("'tiles_per_team'"));
  // 2^16 bins of counters do not fit in team scratch.
  CHECK_THROWS_WITH(bad({base.algorithm, 16, base.team_size, 1}),
                    ContainsSubstring("team scratch"));
  // Onesweep teams rank with warp primitives or are one thread.
  CHECK_THROWS_WITH(bad({SortAlgorithm::onesweep, 8, 48, 1}), ContainsSubstring("'team_size'"));
  // Warp ranking votes on at most the tuned digit width.
  if (kfmm::tuning::Tuning<Space>::has_warp_primitives)
    CHECK_THROWS_WITH(bad({SortAlgorithm::onesweep, 9, 128, 1}), ContainsSubstring("'digit_bits'"));
}

namespace
{

// What the Kokkos Tools callbacks saw during one sortPairs call.
std::vector<std::string> tool_kernels;
std::vector<std::string> tool_allocations;
std::vector<std::string> tool_regions;

void recordKernel(char const *name, std::uint32_t, std::uint64_t *)
{
  tool_kernels.emplace_back(name);
}
void recordRegion(char const *name) { tool_regions.emplace_back(name); }
void recordAllocation(Kokkos::Tools::SpaceHandle, char const *label, void const *, std::uint64_t)
{
  tool_allocations.emplace_back(label);
}

} // namespace

TEMPLATE_LIST_TEST_CASE("sortPairs labels its kernels, allocations and region", "[tree][sort]",
                        kfmm::test::Spaces)
{
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  std::size_t const n = 20000;
  auto const host_keys = makeKeys(Pattern::random, n, 21);
  Kokkos::View<std::uint64_t *[2], Kokkos::LayoutRight, Memory> k2("kfmm::test::keys", n);
  Kokkos::View<std::uint32_t *, Memory> v("kfmm::test::values", n);
  auto kh = Kokkos::create_mirror_view(k2);
  for (std::size_t i = 0; i < n; ++i)
    kh(i, 0) = kh(i, 1) = host_keys[i];
  Kokkos::deep_copy(k2, kh);
  // A strided key View takes every code path: gather, passes, scatter back.
  auto const keys = Kokkos::subview(k2, Kokkos::ALL, 0);
  space.fence();

  tool_kernels.clear();
  tool_allocations.clear();
  tool_regions.clear();
  using namespace Kokkos::Tools::Experimental;
  set_begin_parallel_for_callback(recordKernel);
  set_begin_parallel_reduce_callback(recordKernel);
  set_begin_parallel_scan_callback(recordKernel);
  set_push_region_callback(recordRegion);
  set_allocate_data_callback(recordAllocation);
  kfmm::tree::sortPairs(space, keys, v, 63);
  space.fence();
  set_begin_parallel_for_callback(nullptr);
  set_begin_parallel_reduce_callback(nullptr);
  set_begin_parallel_scan_callback(nullptr);
  set_push_region_callback(nullptr);
  set_allocate_data_callback(nullptr);

  auto const starts = [](std::string const &s, std::string const &prefix) {
    return s.compare(0, prefix.size(), prefix) == 0;
  };
  CHECK(!tool_kernels.empty());
  for (auto const &name : tool_kernels)
  {
    CAPTURE(name);
    CHECK(starts(name, "kfmm::sort::"));
  }
  CHECK(!tool_allocations.empty());
  for (auto const &label : tool_allocations)
  {
    CAPTURE(label);
    // Kokkos may allocate its own reduction scratch on first use.
    CHECK((starts(label, "kfmm::sort::") || starts(label, "Kokkos::")));
  }
  REQUIRE(!tool_regions.empty());
  CHECK(tool_regions.front() == "kfmm::sort");
}
