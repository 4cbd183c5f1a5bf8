// SPDX-License-Identifier: BSD-3-Clause
// Views in a memory space other than the execution space's own, but accessible from it
// (Kokkos::SpaceAccessibility), are taken by every entry point and give the same results, to
// the last bit, as Views in the execution space's memory space. The other space is
// CudaUVMSpace for Cuda and, for the host spaces, AnonymousSpace (memory whose space a
// library is not told, the only other memory space a host-only Kokkos has). Views that an
// execution space cannot access are refused at compile time (tests/compile_fail).
#include <kfmm/Accuracy.hpp>
#include <kfmm/Fmm.hpp>
#include <kfmm/io/Generators.hpp>
#include <kfmm/kernels/DirectSum.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <string>
#include <type_traits>

#include "TestParticles.hpp"
#include "TestTypes.hpp"

using kfmm::test::onHost;

namespace
{

template <class ExecutionSpace>
struct OtherSpace
{
  using type = Kokkos::AnonymousSpace;
};

#if defined(KOKKOS_ENABLE_CUDA)
template <>
struct OtherSpace<Kokkos::Cuda>
{
  using type = Kokkos::CudaUVMSpace;
};
#endif

/// A View of `Other` memory holding the values of `view`: `view` itself seen through an
/// AnonymousSpace View, or a copy in memory of `Other`'s own.
template <class Other, class View>
auto inOtherSpace(View const &view)
{
  using Result = Kokkos::View<typename View::data_type, typename View::array_layout, Other>;
  static_assert(!std::is_same<typename Result::memory_space, typename View::memory_space>::value,
                "the test needs a memory space other than the execution space's");
  if constexpr (std::is_same<Other, Kokkos::AnonymousSpace>::value)
    return Result(view);
  else
  {
    Result copy(Kokkos::view_alloc(Kokkos::WithoutInitializing, "kfmm::test::" + view.label()),
                view.extent(0));
    Kokkos::deep_copy(copy, view);
    return copy;
  }
}

} // namespace

TEMPLATE_LIST_TEST_CASE("Views in another accessible memory space give the same results",
                        "[fmm][kernels][memory]", kfmm::test::Spaces)
{
  using Space = typename TestType::execution_space;
  using Memory = typename TestType::memory_space;
  using Real = typename TestType::real_type;
  using Other = typename OtherSpace<Space>::type;
  Space space;
  std::size_t const n = 2000;
  kfmm::test::Particles<TestType> expected(n), got(n);
  kfmm::generate(space, kfmm::Distribution::plummer, 9, expected.x, expected.q);
  auto const x = inOtherSpace<Other>(expected.x);
  auto const q = inOtherSpace<Other>(expected.q);
  auto const phi = inOtherSpace<Other>(got.phi);
  auto const field = inOtherSpace<Other>(got.field);
  kfmm::Options options;
  options.order = 6;
  options.leaf_size = 32;

  SECTION("kfmm::evaluate")
  {
    kfmm::evaluate(space, expected.x, expected.q, expected.phi, expected.field, options);
    kfmm::evaluate(space, x, q, phi, field, options);
  }
  SECTION("kfmm::Fmm")
  {
    kfmm::Fmm<Real, Memory> own(space, expected.x, options);
    own.evaluate(space, expected.q, expected.phi, expected.field);
    kfmm::Fmm<Real, Memory> other(space, x, options);
    other.evaluate(space, q, phi, field);
  }
  SECTION("kfmm::directSum, both overloads")
  {
    kfmm::directSum(space, expected.x, expected.q, expected.phi, expected.field);
    kfmm::directSum(space, x, q, phi, field);
    kfmm::directSum(space, expected.x, expected.x, expected.q, expected.phi, expected.field);
    kfmm::directSum(space, x, x, q, phi, field);
  }

  // The results where the solver wrote them, gathered into the execution space's memory.
  Kokkos::parallel_for(
      "kfmm::test::gather_results", Kokkos::RangePolicy<Space>(space, 0, n),
      KOKKOS_LAMBDA(std::size_t i) {
        got.phi(i) = phi(i);
        for (int c = 0; c < 3; ++c)
          got.field(i, c) = field(i, c);
      });
  auto const expected_phi = onHost(expected.phi);
  CHECK(kfmm::relativeL2Error(onHost(got.phi), expected_phi) == 0);
  CHECK(kfmm::relativeL2Error(onHost(got.field), onHost(expected.field)) == 0);
  // Not two sets of zeros: the charges are positive, and so is every potential.
  CHECK(expected_phi(0) > 0);
}
