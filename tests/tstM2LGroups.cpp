// SPDX-License-Identifier: BSD-3-Clause
// The grouped M2L's building blocks: the regrouped list (same pairs, one class per chunk,
// each entry's class and mirror bits reproduce its offset), the mirror symmetry of the
// translation operator, and the class matrices against the per-pair operator.
#include <kfmm/Options.hpp>
#include <kfmm/expansions/Operators.hpp>
#include <kfmm/farfield/M2LGroups.hpp>
#include <kfmm/farfield/M2LMatrices.hpp>
#include <kfmm/io/Generators.hpp>
#include <kfmm/tree/InteractionLists.hpp>
#include <kfmm/tree/Octree.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <utility>
#include <vector>

#include "TestParticles.hpp"
#include "TestTypes.hpp"

namespace
{

using kfmm::test::onHost;
using Bounds = kfmm::farfield::TranslationClassBounds;

/// Real component i of a coefficient array of order p, and its degree and order.
struct RealIndex
{
  int n, m;
  explicit RealIndex(int i)
  {
    int const c = i / 2;
    n = 0;
    while (kfmm::expansions::coefficientIndex(n + 1, 0) <= c)
      ++n;
    m = c - kfmm::expansions::coefficientIndex(n, 0);
  }
};

} // namespace

TEMPLATE_LIST_TEST_CASE("grouped M2L list holds the same pairs, one class per chunk",
                        "[m2l][groups]", kfmm::test::Spaces)
{
  typename TestType::execution_space space;
  auto const distribution = GENERATE(kfmm::Distribution::uniform, kfmm::Distribution::plummer);
  // The largest block takes every row: there each class, and the pairs on their own, have
  // exactly one chunk, as many as the chunks' arrays are sized for.
  auto const block_rows = GENERATE(
      1, 7, 64, kfmm::farfield::M2LGroups<typename TestType::memory_space>::max_block_rows);
  auto const min_class_entries = GENERATE(1, 40);
  CAPTURE(kfmm::distributionName(distribution), block_rows, min_class_entries);
  auto const x = kfmm::test::generated<TestType>(distribution, 6000);
  auto const tree = kfmm::tree::buildOctree(space, x, 8);
  auto const lists = kfmm::tree::buildInteractionLists(space, tree, 0.5);
  auto const groups =
      kfmm::farfield::groupM2L(space, tree, lists.m2l, block_rows, min_class_entries);

  auto const offsets = onHost(lists.m2l.offsets);
  auto const list_sources = onHost(lists.m2l.sources);
  auto const sources = onHost(groups.sources);
  auto const entry_rows = onHost(groups.rows);
  auto const class_keys = onHost(groups.class_keys);
  auto const chunk_begin = onHost(groups.chunk_begin);
  auto const chunk_classes = onHost(groups.chunk_classes);
  auto const block_chunks = onHost(groups.block_chunks);
  auto const centre = onHost(tree.centre);
  auto const level = onHost(tree.level);
  int const rows = lists.m2l.numRows();
  REQUIRE(lists.m2l.size > 0);
  REQUIRE(static_cast<std::int64_t>(sources.extent(0)) == lists.m2l.size);
  REQUIRE(static_cast<std::int64_t>(entry_rows.extent(0)) == lists.m2l.size);
  CHECK(groups.num_blocks == (rows + block_rows - 1) / block_rows);
  // The chunks' arrays hold at least the chunks counted on the device.
  std::int64_t const num_chunks = block_chunks(groups.num_blocks);
  CHECK(block_chunks(0) == 0);
  CHECK(groups.numChunks(space) == num_chunks);
  REQUIRE(num_chunks <= static_cast<std::int64_t>(chunk_classes.extent(0)));
  REQUIRE(num_chunks < static_cast<std::int64_t>(chunk_begin.extent(0)));
  CHECK(chunk_begin(num_chunks) == lists.m2l.size);
  if (groups.num_blocks == 1)
    CHECK(num_chunks == groups.num_classes + (groups.perPairEntries(space) > 0 ? 1 : 0));

  // Each entry's target cell and class * 2^image_bits + image bits (-1 per pair), from its
  // block, its row in the block and its chunk's class. Per-entry checks are counted, not
  // asserted one by one (millions of entries).
  using Groups = kfmm::farfield::M2LGroups<typename TestType::memory_space>;
  std::vector<int> targets(sources.extent(0), -1), classes(sources.extent(0), -1);
  std::int64_t bad_row = 0, per_pair_mirror = 0;
  for (int b = 0; b < groups.num_blocks; ++b)
    for (auto c = block_chunks(b); c < block_chunks(b + 1); ++c)
      for (auto e = chunk_begin(c); e < chunk_begin(c + 1); ++e)
      {
        int const row = Groups::targetRow(entry_rows(e));
        int const mirror = Groups::imageBits(entry_rows(e));
        bad_row += row < block_rows && b * block_rows + row < rows ? 0 : 1;
        per_pair_mirror += chunk_classes(c) < 0 && mirror != 0 ? 1 : 0;
        targets[e] = b * block_rows + row;
        classes[e] =
            chunk_classes(c) < 0 ? -1 : (chunk_classes(c) << kfmm::farfield::image_bits) + mirror;
      }
  CHECK(bad_row == 0);
  CHECK(per_pair_mirror == 0);

  // The same (target, source) pairs.
  std::vector<std::pair<int, int>> original, grouped;
  for (int r = 0; r < rows; ++r)
    for (auto e = offsets(r); e < offsets(r + 1); ++e)
      original.emplace_back(r, list_sources(e));
  for (std::size_t e = 0; e < targets.size(); ++e)
    grouped.emplace_back(targets[e], sources(e));
  std::sort(original.begin(), original.end());
  std::sort(grouped.begin(), grouped.end());
  CHECK(original == grouped);

  // Blocks own consecutive chunks that cover the entries in order (so every entry got its
  // target above); a chunk is one class of one block (by construction), its targets in the
  // list's order.
  std::int64_t per_pair = 0, empty_chunks = 0, unordered = 0;
  for (int b = 0; b < groups.num_blocks; ++b)
    for (auto c = block_chunks(b); c < block_chunks(b + 1); ++c)
    {
      empty_chunks += chunk_begin(c) < chunk_begin(c + 1) ? 0 : 1;
      for (auto e = chunk_begin(c); e < chunk_begin(c + 1); ++e)
        unordered += e > chunk_begin(c) && targets[e - 1] > targets[e] ? 1 : 0;
    }
  CHECK(empty_chunks == 0);
  CHECK(unordered == 0);

  // Each entry's class and image bits give back its offset in units of the finer scale;
  // the per-pair entries are exactly those outside the dense classes or in classes of fewer
  // than min_class_entries pairs.
  double const side = tree.cube.side;
  auto const keyOf = [&](std::size_t e) {
    int const t = targets[e], s = sources(e);
    int const finer = std::max(level(t), level(s));
    double const unit = side / static_cast<double>(2ULL << finer);
    int o[3];
    for (int d = 0; d < 3; ++d)
      o[d] = static_cast<int>(std::lround(std::abs(centre(t, d) - centre(s, d)) / unit));
    return Bounds::key(level(t) - level(s), std::max(o[0], o[1]), std::min(o[0], o[1]), o[2]);
  };
  std::map<int, int> class_sizes;
  for (std::size_t e = 0; e < targets.size(); ++e)
    ++class_sizes[keyOf(e)];
  std::int64_t wrong_grouping = 0, wrong_offset = 0;
  for (std::size_t e = 0; e < targets.size(); ++e)
  {
    int const t = targets[e], s = sources(e);
    int const delta = level(t) - level(s);
    int const finer = std::max(level(t), level(s));
    double const unit = side / static_cast<double>(2ULL << finer);
    long o[3];
    for (int d = 0; d < 3; ++d)
      o[d] = std::lround((centre(t, d) - centre(s, d)) / unit);
    bool const inside =
        std::abs(delta) <= Bounds::max_level_delta && std::abs(o[0]) <= Bounds::max_offset &&
        std::abs(o[1]) <= Bounds::max_offset && std::abs(o[2]) <= Bounds::max_offset;
    bool const grouped = inside && class_sizes[keyOf(e)] >= min_class_entries;
    wrong_grouping += inside == (keyOf(e) >= 0) && (classes[e] >= 0) == grouped ? 0 : 1;
    if (classes[e] < 0)
    {
      ++per_pair;
      continue;
    }
    int key_delta, ox, oy, oz;
    Bounds::decode(class_keys(classes[e] >> kfmm::farfield::image_bits), key_delta, ox, oy, oz);
    int const image = classes[e] & ((1 << kfmm::farfield::image_bits) - 1);
    // o = F(S(o_c)): x and y exchanged first, then the reflections.
    if (image & kfmm::farfield::image_exchange_bit)
      std::swap(ox, oy);
    bool const same = key_delta == delta && ((image & 1) ? -ox : ox) == o[0] &&
                      ((image & 2) ? -oy : oy) == o[1] && ((image & 4) ? -oz : oz) == o[2];
    wrong_offset += same ? 0 : 1;
  }
  CHECK(wrong_grouping == 0);
  CHECK(wrong_offset == 0);
  CHECK(per_pair == groups.perPairEntries(space));
}

namespace
{

/// Checks that two groupings of one M2L list are the same entry for entry.
template <class MemorySpace>
void checkSameGroups(kfmm::farfield::M2LGroups<MemorySpace> const &a,
                     kfmm::farfield::M2LGroups<MemorySpace> const &b)
{
  typename MemorySpace::execution_space const space;
  CHECK(a.num_classes == b.num_classes);
  std::int64_t const num_chunks = a.numChunks(space);
  CHECK(num_chunks == b.numChunks(space));
  CHECK(a.perPairEntries(space) == b.perPairEntries(space));
  using kfmm::test::sameContents;
  CHECK(sameContents(a.class_keys, b.class_keys));
  CHECK(sameContents(a.sources, b.sources));
  CHECK(sameContents(a.rows, b.rows));
  // The chunks' arrays are compared as far as they are used.
  auto const used = [&](auto const &chunk_array, std::int64_t count) {
    return Kokkos::subview(chunk_array, Kokkos::make_pair(std::int64_t(0), count));
  };
  CHECK(sameContents(used(a.chunk_begin, num_chunks + 1), used(b.chunk_begin, num_chunks + 1)));
  CHECK(sameContents(used(a.chunk_classes, num_chunks), used(b.chunk_classes, num_chunks)));
  CHECK(sameContents(a.block_chunks, b.block_chunks));
}

} // namespace

TEMPLATE_LIST_TEST_CASE("grouped M2L list is the same with 32- and 64-bit sort keys",
                        "[m2l][groups]", kfmm::test::Spaces)
{
  // The lists of this size take 32-bit keys; 64-bit ones, which large trees need, must give
  // the same groups entry for entry.
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  auto const distribution = GENERATE(kfmm::Distribution::uniform, kfmm::Distribution::plummer);
  auto const block_rows = GENERATE(1, 16, 64);
  CAPTURE(kfmm::distributionName(distribution), block_rows);
  auto const x = kfmm::test::generated<TestType>(distribution, 6000);
  auto const tree = kfmm::tree::buildOctree(space, x, 8);
  auto const lists = kfmm::tree::buildInteractionLists(space, tree, 0.5);
  auto &memory = kfmm::detail::Workspace<Memory>::direct();
  using kfmm::farfield::SortKeyWidth;
  auto const fitted = kfmm::farfield::groupM2LIn(space, memory, tree, tree, lists.m2l, block_rows,
                                                 4, SortKeyWidth::fitted);
  auto const wide = kfmm::farfield::groupM2LIn(space, memory, tree, tree, lists.m2l, block_rows, 4,
                                               SortKeyWidth::wide);
  REQUIRE(lists.m2l.size > 0);
  checkSameGroups(fitted, wide);
}

TEMPLATE_LIST_TEST_CASE("classes counted on the traversal's far entries give the same groups",
                        "[m2l][groups]", kfmm::test::Spaces)
{
  // kfmm::Fmm counts the classes on the traversal's far entries, before the lists' read
  // (farfield::M2LClassCount), where groupM2L counts them on the M2L list. Both must give
  // the same groups, also when the traversal overflows its first capacities and runs again
  // (a capacity factor of 1e-3), which must count afresh.
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  auto const distribution = GENERATE(kfmm::Distribution::uniform, kfmm::Distribution::plummer);
  double const capacity_factor = GENERATE(1.0, 1e-3);
  int const min_class_entries = GENERATE(1, 4, 40);
  CAPTURE(kfmm::distributionName(distribution), capacity_factor, min_class_entries);
  int const block_rows = 16;
  auto const x = kfmm::test::generated<TestType>(distribution, 6000);
  auto const tree = kfmm::tree::buildOctree(space, x, 8);
  auto &memory = kfmm::detail::Workspace<Memory>::direct();
  using kfmm::farfield::SortKeyWidth;
  auto const lists = kfmm::tree::buildInteractionLists(space, tree, 0.5);
  auto const own = kfmm::farfield::groupM2LIn(space, memory, tree, tree, lists.m2l, block_rows,
                                              min_class_entries);
  kfmm::farfield::M2LClassCount<Memory> classes(space, memory, tree, tree, min_class_entries);
  auto const counted_lists = kfmm::tree::detail::buildInteractionListsIn(
      space, memory, tree, tree, 0.5, kfmm::Method::fmm, kfmm::Acceptance::theta, 0, false, {},
      capacity_factor, &classes);
  auto const counted = kfmm::farfield::groupM2LIn(space, memory, tree, tree, counted_lists.m2l,
                                                  block_rows, min_class_entries,
                                                  SortKeyWidth::fitted, &classes);
  REQUIRE(lists.m2l.size > 0);
  CHECK(classes.num_classes == own.num_classes);
  checkSameGroups(counted, own);
}

namespace
{

/// A random multipole expansion of order p, its order-0 coefficients real (as real charges
/// give).
std::vector<Kokkos::complex<double>> randomMultipole(int p, unsigned seed)
{
  std::mt19937 random(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<Kokkos::complex<double>> M(kfmm::expansions::coefficientCount(p));
  for (auto &c : M)
    c = Kokkos::complex<double>(uniform(random), uniform(random));
  for (int c = 0; c <= p; ++c)
    M[kfmm::expansions::coefficientIndex(c, 0)].imag(0);
  return M;
}

/// The sign of real component i under the reflections `mirror` (expansions::mirrorSign).
int reflectionSign(int mirror, int i)
{
  RealIndex const r(i);
  return kfmm::expansions::mirrorSign(mirror, kfmm::expansions::mirrorParities(r.n, r.m, i));
}

/// D_S (expansions::exchangeCode) of the real vector `in` of n components.
std::vector<double> exchanged(double const *in, int n)
{
  std::vector<double> out(n);
  for (int i = 0; i < n; ++i)
  {
    int const code = kfmm::expansions::exchangeCode(RealIndex(i).m, i & 1);
    double const v = in[code & 1 ? i ^ 1 : i];
    out[i] = code & 2 ? -v : v;
  }
  return out;
}

/// max_i |a_i - sign(i) b_i| over max_i |a_i|, for real vectors of n components.
template <class Sign>
double relativeMaxDifference(double const *a, double const *b, int n, Sign const &sign)
{
  double error = 0, norm = 0;
  for (int i = 0; i < n; ++i)
  {
    error = std::max(error, std::abs(a[i] - sign(i) * b[i]));
    norm = std::max(norm, std::abs(a[i]));
  }
  return norm > 0 ? error / norm : 1.0;
}

} // namespace

TEST_CASE("the M2L of a mirrored offset is the mirrored M2L", "[m2l][mirror]")
{
  // T(F o) = D_F T(o) D_F for each of the 8 reflections F (expansions::mirrorSign). Required:
  // agreement to 1e-14 of the largest coefficient, in double.
  int const p = 7;
  int const count = kfmm::expansions::coefficientCount(p);
  int const n = 2 * count;
  auto const M = randomMultipole(p, 3);
  double const o[3] = {3, 1, 2};
  for (int mirror = 0; mirror < 8; ++mirror)
  {
    CAPTURE(mirror);
    auto const sign = [&](int i) { return reflectionSign(mirror, i); };
    double const f[3] = {(mirror & 1) ? -o[0] : o[0], (mirror & 2) ? -o[1] : o[1],
                         (mirror & 4) ? -o[2] : o[2]};
    std::vector<Kokkos::complex<double>> direct(count), mirrored_in(count), via_class(count);
    kfmm::expansions::m2l(p, f[0], f[1], f[2], M.data(), direct.data(), 0.5, 0.5);
    auto *in = reinterpret_cast<double *>(mirrored_in.data());
    auto const *m_real = reinterpret_cast<double const *>(M.data());
    for (int i = 0; i < n; ++i)
      in[i] = sign(i) * m_real[i];
    kfmm::expansions::m2l(p, o[0], o[1], o[2], mirrored_in.data(), via_class.data(), 0.5, 0.5);
    CHECK(relativeMaxDifference(reinterpret_cast<double const *>(direct.data()),
                                reinterpret_cast<double const *>(via_class.data()), n,
                                sign) <= 1e-14);
  }
}

TEST_CASE("the M2L of an offset with x and y exchanged is the exchanged M2L", "[m2l][mirror]")
{
  // T(F S o) = D_F D_S T(o) D_S D_F for the exchange S of x and y (expansions::exchangeCode)
  // followed by each of the 8 reflections F. Required: agreement to 1e-14 of the largest
  // coefficient, in double.
  int const p = 7;
  int const count = kfmm::expansions::coefficientCount(p);
  int const n = 2 * count;
  auto const M = randomMultipole(p, 5);
  double const o[3] = {3, 1, 2};
  for (int mirror = 0; mirror < 8; ++mirror)
  {
    CAPTURE(mirror);
    auto const sign = [&](int i) { return reflectionSign(mirror, i); };
    double const f[3] = {(mirror & 1) ? -o[1] : o[1], (mirror & 2) ? -o[0] : o[0],
                         (mirror & 4) ? -o[2] : o[2]};
    std::vector<Kokkos::complex<double>> direct(count), in(count), via_class(count);
    kfmm::expansions::m2l(p, f[0], f[1], f[2], M.data(), direct.data(), 0.5, 0.5);
    // D_S D_F M, translated by o, then D_S (and D_F by relativeMaxDifference's sign).
    std::vector<double> flipped(n);
    auto const *m_real = reinterpret_cast<double const *>(M.data());
    for (int i = 0; i < n; ++i)
      flipped[i] = sign(i) * m_real[i];
    auto const in_real = exchanged(flipped.data(), n);
    std::copy(in_real.begin(), in_real.end(), reinterpret_cast<double *>(in.data()));
    kfmm::expansions::m2l(p, o[0], o[1], o[2], in.data(), via_class.data(), 0.5, 0.5);
    auto const back = exchanged(reinterpret_cast<double const *>(via_class.data()), n);
    CHECK(relativeMaxDifference(reinterpret_cast<double const *>(direct.data()), back.data(), n,
                                sign) <= 1e-14);
  }
}

TEMPLATE_LIST_TEST_CASE("class matrices apply the per-pair M2L", "[m2l][matrices]",
                        kfmm::test::Configs)
{
  // Every class matrix of a small tree, applied to a random multipole, against m2l of the
  // class's offset in units of the finer scale (relative max error at rounding level).
  using Real = typename TestType::real_type;
  typename TestType::execution_space space;
  int const p = GENERATE(1, 4, 9);
  CAPTURE(p);
  auto const x = kfmm::test::generated<TestType>(kfmm::Distribution::plummer, 3000);
  auto const tree = kfmm::tree::buildOctree(space, x, 8);
  auto const lists = kfmm::tree::buildInteractionLists(space, tree, 0.5);
  auto const groups = kfmm::farfield::groupM2L(space, tree, lists.m2l, 16);
  REQUIRE(groups.num_classes > 0);
  auto const matrices = onHost(kfmm::farfield::buildM2LMatrices<Real>(
      space, kfmm::detail::Workspace<typename TestType::execution_space::memory_space>::direct(),
      groups, p, 1));
  auto const class_keys = onHost(groups.class_keys);
  int const count = kfmm::expansions::coefficientCount(p);
  int const n = 2 * count;
  REQUIRE(static_cast<int>(matrices.extent(1)) == n);
  REQUIRE(static_cast<int>(matrices.extent(2)) ==
          kfmm::farfield::paddedRealCount<typename TestType::execution_space, Real>(p));
  std::mt19937 random(5);
  std::uniform_real_distribution<double> uniform(-1, 1);
  for (int cls = 0; cls < groups.num_classes; ++cls)
  {
    std::vector<Kokkos::complex<double>> M(count), L(count);
    for (auto &c : M)
      c = Kokkos::complex<double>(uniform(random), uniform(random));
    int delta, ox, oy, oz;
    Bounds::decode(class_keys(cls), delta, ox, oy, oz);
    double const coarser = std::ldexp(1.0, std::abs(delta));
    kfmm::expansions::m2l(p, double(ox), double(oy), double(oz), M.data(), L.data(),
                          delta >= 0 ? coarser : 1.0, delta >= 0 ? 1.0 : coarser);
    auto const *m_real = reinterpret_cast<double const *>(M.data());
    auto const *l_real = reinterpret_cast<double const *>(L.data());
    double error = 0, norm = 0;
    for (int i = 0; i < n; ++i)
    {
      double product = 0;
      for (int k = 0; k < n; ++k)
        product += double(matrices(cls, k, i)) * m_real[k];
      error = std::max(error, std::abs(product - l_real[i]));
      norm = std::max(norm, std::abs(l_real[i]));
    }
    CAPTURE(cls, delta, ox, oy, oz);
    REQUIRE(error <= (std::is_same<Real, float>::value ? 1e-5 : 1e-13) * norm);
    int nonzero_padding = 0;
    for (int k = 0; k < n; ++k)
      for (int i = n; i < static_cast<int>(matrices.extent(2)); ++i)
        nonzero_padding += matrices(cls, k, i) == 0 ? 0 : 1;
    REQUIRE(nonzero_padding == 0);
  }
}
