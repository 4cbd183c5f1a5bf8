// SPDX-License-Identifier: BSD-3-Clause
// The near field's units of work (kernels/detail/TargetGroups.hpp): every target of every
// leaf belongs to exactly one group, the groups of a leaf follow one another from its first
// target, and none holds more targets than asked.
#include <kfmm/io/Generators.hpp>
#include <kfmm/kernels/detail/TargetGroups.hpp>
#include <kfmm/tree/Octree.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>

#include <algorithm>
#include <cstddef>

#include "TestParticles.hpp"
#include "TestTypes.hpp"

using kfmm::test::onHost;

TEMPLATE_LIST_TEST_CASE("the near field's groups cover each leaf's targets once, in order",
                        "[p2p][groups]", kfmm::test::Spaces)
{
  using Memory = typename TestType::execution_space::memory_space;
  typename TestType::execution_space space;
  auto const distribution = GENERATE(kfmm::Distribution::uniform, kfmm::Distribution::plummer);
  auto const leaf_size = GENERATE(8, 64);
  auto const targets = GENERATE(1, 5, 8, 32);
  CAPTURE(kfmm::distributionName(distribution), leaf_size, targets);
  auto const x = kfmm::test::generated<TestType>(distribution, 6000);
  auto const tree = kfmm::tree::buildOctree(space, x, leaf_size);
  kfmm::kernels::detail::CellView<Memory> const cells(tree);
  auto const groups = kfmm::kernels::detail::buildTargetGroups(
      space, kfmm::detail::Workspace<Memory>::direct(), cells, tree.numLeaves(),
      tree.numParticles(), targets);
  REQUIRE(groups.targets == targets);
  int const size = onHost(groups.count)(0);
  REQUIRE(size >= tree.numLeaves());
  REQUIRE(size <= groups.bound());

  auto const entries = onHost(groups.entries);
  auto const leaves = onHost(tree.leaves);
  auto const begin = onHost(tree.particle_begin);
  auto const end = onHost(tree.particle_end);
  int g = 0;
  std::size_t covered = 0;
  for (int row = 0; row < tree.numLeaves(); ++row)
  {
    int const n = end(leaves(row)) - begin(leaves(row));
    REQUIRE(n > 0);
    for (int first = 0; first < n; first += targets)
    {
      REQUIRE(g < size);
      CHECK(entries(g, 0) == row);
      CHECK(entries(g, 1) == first);
      covered += static_cast<std::size_t>(std::min(targets, n - first));
      ++g;
    }
  }
  CHECK(g == size);
  CHECK(covered == tree.numParticles());
}
