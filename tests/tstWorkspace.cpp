// SPDX-License-Identifier: BSD-3-Clause
// The memory kfmm keeps between solvers (detail/Workspace.hpp, kfmm/CachedMemory.hpp): a
// pooled workspace reuses the blocks given back to it, a direct one allocates; a solver
// built after another finds its memory in the pool, so that the pool does not grow, and
// computes the same results bit for bit; solvers alive at once do not share memory.
#include <kfmm/CachedMemory.hpp>
#include <kfmm/Fmm.hpp>
#include <kfmm/detail/Workspace.hpp>
#include <kfmm/io/Generators.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <cstddef>

#include "TestParticles.hpp"
#include "TestTypes.hpp"

using kfmm::test::onHost;

namespace
{

/// Whether two Views of results hold the same values bit for bit.
template <class View>
bool sameValues(View const &a, View const &b)
{
  auto const ha = onHost(a);
  auto const hb = onHost(b);
  auto const *pa = ha.data();
  auto const *pb = hb.data();
  for (std::size_t i = 0; i < ha.span(); ++i)
    if (!(pa[i] == pb[i]))
      return false;
  return ha.span() == hb.span();
}

/// A pooled workspace with no blocks: the pool's idle ones are released first.
template <class Memory>
auto newPooledWorkspace()
{
  kfmm::releaseCachedMemory<Memory>();
  return kfmm::detail::WorkspacePool<Memory>::shared().lease();
}

/// Potential and field of `p`'s particles from a solver of `options`, into `p`.
template <class Config>
void solve(kfmm::test::Particles<Config> &p, kfmm::Options const &options)
{
  typename Config::execution_space space;
  kfmm::Fmm<typename Config::real_type, typename Config::memory_space> fmm(space, p.x, options);
  fmm.evaluate(space, p.q, p.phi, p.field);
  space.fence();
}

} // namespace

TEMPLATE_LIST_TEST_CASE("a pooled workspace reuses the blocks given back to it", "[workspace]",
                        kfmm::test::Spaces)
{
  using Space = typename TestType::execution_space;
  using Memory = typename Space::memory_space;
  using Ints = Kokkos::View<int *, Memory>;
  Space space;
  auto const lease = newPooledWorkspace<Memory>();
  auto &memory = *lease;
  REQUIRE(memory.pooled());
  REQUIRE(memory.heldBytes() == 0);

  auto a = memory.template take<Ints>(space, "kfmm::test::a", 100000);
  auto b = memory.template take<Ints>(space, "kfmm::test::b", 100000);
  REQUIRE(a.extent(0) == 100000);
  CHECK(a.data() != b.data());
  // Both in use: written and read back whole.
  Kokkos::deep_copy(space, a, 1);
  Kokkos::deep_copy(space, b, 2);
  auto const ha = onHost(a);
  auto const hb = onHost(b);
  CHECK(ha(0) == 1);
  CHECK(ha(99999) == 1);
  CHECK(hb(0) == 2);
  CHECK(hb(99999) == 2);

  int *const a_data = a.data();
  memory.give(a);
  CHECK(a.data() == nullptr);
  std::size_t const held = memory.heldBytes();
  CHECK(held >= 2 * 100000 * sizeof(int));
  // A smaller array fits the free block; a larger one takes a new block.
  auto c = memory.template take<Ints>(space, "kfmm::test::c", 50000);
  CHECK(c.data() == a_data);
  CHECK(memory.heldBytes() == held);
  auto d = memory.template take<Ints>(space, "kfmm::test::d", 400000);
  CHECK(d.data() != a_data);
  CHECK(d.data() != b.data());
  CHECK(memory.heldBytes() > held);
  // Empty arrays take no block.
  auto const e = memory.template take<Ints>(space, "kfmm::test::e", 0);
  CHECK(e.data() == nullptr);
  for (auto *view : {&b, &c, &d})
    memory.give(*view);
}

TEMPLATE_LIST_TEST_CASE("a reclaimed workspace serves the next build and drops what it left "
                        "untaken",
                        "[workspace]", kfmm::test::Spaces)
{
  using Space = typename TestType::execution_space;
  using Memory = typename Space::memory_space;
  using Ints = Kokkos::View<int *, Memory>;
  Space space;
  auto const lease = newPooledWorkspace<Memory>();
  auto &memory = *lease;
  // A first build: two arrays.
  auto a = memory.template take<Ints>(space, "kfmm::test::a", 100000);
  auto b = memory.template take<Ints>(space, "kfmm::test::b", 300000);
  int *const a_data = a.data();
  int *const b_data = b.data();
  std::size_t const held = memory.heldBytes();
  memory.give(a);
  memory.give(b);
  space.fence();
  // The next build, of slightly other sizes, takes the same blocks and allocates nothing.
  memory.releaseUntaken(); // both were taken: nothing to release
  memory.reclaim();
  CHECK(memory.heldBytes() == held);
  auto c = memory.template take<Ints>(space, "kfmm::test::c", 101000);
  auto d = memory.template take<Ints>(space, "kfmm::test::d", 299000);
  CHECK(c.data() == a_data);
  CHECK(d.data() == b_data);
  CHECK(memory.heldBytes() == held);
  // A build that needs one array leaves the other block untaken, and it is released.
  memory.give(c);
  memory.give(d);
  space.fence();
  memory.reclaim();
  auto e = memory.template take<Ints>(space, "kfmm::test::e", 200000);
  CHECK(e.data() == b_data); // the smallest block that fits
  memory.give(e);
  space.fence();
  memory.releaseUntaken();
  CHECK(memory.heldBytes() < held);
  CHECK(memory.heldBytes() >= 300000 * sizeof(int));
  memory.reclaim();
  auto f = memory.template take<Ints>(space, "kfmm::test::f", 250000);
  CHECK(f.data() == b_data);
  memory.give(f);
}

TEMPLATE_LIST_TEST_CASE("a direct workspace allocates Views that own their memory", "[workspace]",
                        kfmm::test::Spaces)
{
  using Space = typename TestType::execution_space;
  using Memory = typename Space::memory_space;
  Space space;
  auto &memory = kfmm::detail::Workspace<Memory>::direct();
  REQUIRE_FALSE(memory.pooled());
  auto a = memory.template take<Kokkos::View<double *[3], Memory>>(space, "kfmm::test::a", 1000);
  CHECK(a.use_count() == 1);
  CHECK(a.label() == "kfmm::test::a");
  CHECK(memory.heldBytes() == 0);
  memory.give(a);
  CHECK(a.data() == nullptr);
}

TEMPLATE_LIST_TEST_CASE("a solver built after another reuses its memory, with the same results",
                        "[workspace][fmm]", kfmm::test::Configs)
{
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  kfmm::Options options;
  options.leaf_size = 32;
  options.order = 5;
  kfmm::test::Particles<TestType> first(20000);
  kfmm::generate(space, kfmm::Distribution::plummer, 7, first.x, first.q);
  solve(first, options);
  std::size_t const cached = kfmm::cachedMemoryBytes<Memory>();
  CHECK(cached > 0);

  kfmm::test::Particles<TestType> again(20000);
  Kokkos::deep_copy(space, again.x, first.x);
  Kokkos::deep_copy(space, again.q, first.q);
  solve(again, options);
  CHECK(kfmm::cachedMemoryBytes<Memory>() == cached);
  CHECK(sameValues(again.phi, first.phi));
  CHECK(sameValues(again.field, first.field));

  // Two solvers alive at once lease two workspaces: the second one's build, on other
  // particles, writes none of the first one's arrays.
  {
    kfmm::test::Particles<TestType> other(30000);
    kfmm::generate(space, kfmm::Distribution::uniform, 8, other.x, other.q);
    kfmm::Fmm<typename TestType::real_type, Memory> one(space, first.x, options);
    kfmm::Fmm<typename TestType::real_type, Memory> two(space, other.x, options);
    kfmm::test::Particles<TestType> by_one(20000);
    one.evaluate(space, first.q, by_one.phi, by_one.field);
    two.evaluate(space, other.q, other.phi, other.field);
    space.fence();
    CHECK(sameValues(by_one.phi, first.phi));
    CHECK(sameValues(by_one.field, first.field));
  }

  kfmm::releaseCachedMemory<Memory>();
  CHECK(kfmm::cachedMemoryBytes<Memory>() == 0);
}
