// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TESTS_TEST_PARTICLES_HPP
#define KFMM_TESTS_TEST_PARTICLES_HPP

// Particles for the tests: positions generated from a distribution or set by hand, and
// the Views of a whole problem (positions, charges, potential, field).

#include <kfmm/io/Generators.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstdint>

namespace kfmm::test
{

template <class Config>
using Positions = Kokkos::View<typename Config::real_type *[3], typename Config::memory_space>;

/// Relative L2 errors of a solver's potential and field against a reference. A struct, not a
/// std::pair, as what function templates return: in kfmm_test_solver's one translation unit
/// nvcc (13.0) wrote std::pair<double, double> in such a signature as gcc's __remove_cv
/// built-in, which gcc refuses.
struct ResultErrors
{
  double potential;
  double field;
};

/// Positions, charges and results of n particles, zero-initialised, in the config's memory.
template <class Config>
struct Particles
{
  using Real = typename Config::real_type;
  using Memory = typename Config::memory_space;
  Kokkos::View<Real *[3], Memory> x;
  Kokkos::View<Real *, Memory> q;
  Kokkos::View<Real *, Memory> phi;
  Kokkos::View<Real *[3], Memory> field;

  explicit Particles(std::size_t n)
      : x("kfmm::test::x", n), q("kfmm::test::q", n), phi("kfmm::test::phi", n),
        field("kfmm::test::field", n)
  {
  }
};

/// A host copy of `v`.
template <class View>
auto onHost(View const &v)
{
  return Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, v);
}

/// Whether two contiguous Views hold the same values (compared on the host), sizes included.
template <class ViewA, class ViewB>
bool sameContents(ViewA const &a, ViewB const &b)
{
  auto const ha = onHost(a);
  auto const hb = onHost(b);
  return ha.size() == hb.size() && std::equal(ha.data(), ha.data() + ha.size(), hb.data());
}

/// N positions of distribution `d` (kfmm::generate, seeded).
template <class Config>
Positions<Config> generated(kfmm::Distribution d, std::size_t n, std::uint64_t seed = 5)
{
  Positions<Config> x("kfmm::test::positions", n);
  Kokkos::View<typename Config::real_type *, typename Config::memory_space> q("kfmm::test::q", n);
  kfmm::generate(typename Config::execution_space{}, d, seed, x, q);
  return x;
}

/// Positions set on the host by `fill(x_host)`.
template <class Config, class Fill>
Positions<Config> handMade(std::size_t n, Fill const &fill)
{
  Positions<Config> x("kfmm::test::positions", n);
  auto h = Kokkos::create_mirror_view(x);
  fill(h);
  Kokkos::deep_copy(x, h);
  return x;
}

/// An ionic lattice: side^3 alternating charges of +-1 on a cubic grid in the unit cube
/// (docs/ACCURACY.md, the limits), whose fields are small differences of large opposite
/// contributions; results zeroed.
template <class Config>
Particles<Config> ionicLattice(std::size_t side)
{
  using Real = typename Config::real_type;
  std::size_t const n = side * side * side;
  Particles<Config> p(n);
  auto hx = Kokkos::create_mirror_view(p.x);
  auto hq = Kokkos::create_mirror_view(p.q);
  for (std::size_t i = 0; i < n; ++i)
  {
    hx(i, 0) = Real(i % side) / side;
    hx(i, 1) = Real(i / side % side) / side;
    hx(i, 2) = Real(i / (side * side)) / side;
    hq(i) = (i % side + i / side % side + i / (side * side)) % 2 == 0 ? 1 : -1;
  }
  Kokkos::deep_copy(p.x, hx);
  Kokkos::deep_copy(p.q, hq);
  return p;
}

} // namespace kfmm::test

#endif
