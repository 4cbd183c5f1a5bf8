// SPDX-License-Identifier: BSD-3-Clause
// The rotation M2L's building blocks (expansions/Rotation.hpp): the rotation of the regular
// harmonics of one degree by the documented matrix W, and the rotation - coaxial
// translation - rotation M2L against the direct (T2) of m2lTeam, on every execution space
// in float and double.
#include <kfmm/expansions/Rotation.hpp>
#include <kfmm/expansions/TeamOperators.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include "TestTypes.hpp"

#include <array>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace
{

namespace ex = kfmm::expansions;

/// Offsets on the tree's grid that the rotation M2L meets: both poles (theta 0 and pi, where
/// the half-angle forms switch), the equator, and oblique ones in every octant.
std::vector<std::array<int, 3>> const lattice_offsets = {
    {0, 0, 3},   {0, 0, -2}, {2, 0, 0},    {0, -3, 0}, {1, 1, 0},  {3, -2, 1},
    {-2, 1, -3}, {1, -1, 5}, {-4, -4, -1}, {5, 3, -6}, {-1, 2, 2}, {31, 30, -31}};

/// The relative L2 error of (W) over the orders of degree n: sum_m' W_{m m'} R_n^m'(y)
/// against R_n^m(Q y), for y and Q = R_y(-theta), over the norm of the latter.
double rotationResidual(int n, double theta, double const y[3])
{
  double const c = std::cos(theta), s = std::sin(theta);
  double const qy[3] = {c * y[0] - s * y[2], y[1], s * y[0] + c * y[2]};
  double const sin_half = std::sin(theta / 2), cos_half = std::cos(theta / 2);
  double difference = 0, norm = 0;
  for (int m = -n; m <= n; ++m)
  {
    Kokkos::complex<double> sum(0, 0);
    for (int m_prime = -n; m_prime <= n; ++m_prime)
      sum += ex::rotationElement(n, m, m_prime, c, sin_half, cos_half) *
             ex::regularHarmonic<double>(n, m_prime, y[0], y[1], y[2]);
    auto const expected = ex::regularHarmonic<double>(n, m, qy[0], qy[1], qy[2]);
    difference += std::pow(Kokkos::abs(sum - expected), 2);
    norm += std::pow(Kokkos::abs(expected), 2);
  }
  return std::sqrt(difference / norm);
}

} // namespace

TEST_CASE("rotation: W rotates the regular harmonics of each degree", "[expansions][rotation]")
{
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> uniform(-1, 1);
  double const pi = std::acos(-1.0);
  double worst = 0;
  for (double theta : {0.0, pi, pi / 2, 0.3, 2.9, 1e-9, pi - 1e-9})
    for (int trial = 0; trial < 3; ++trial)
    {
      double const y[3] = {uniform(rng), uniform(rng), uniform(rng)};
      for (int n = 0; n <= ex::max_order; ++n)
        worst = std::max(worst, rotationResidual(n, theta, y));
    }
  // Double rounding over at most 49 terms, each with a Jacobi recurrence of at most 48
  // steps, and in the reference harmonics' own recurrences: well below 1e-13.
  CAPTURE(worst);
  CHECK(worst <= 1e-13);
}

TEMPLATE_LIST_TEST_CASE("rotation: the rotation M2L is (T2) to rounding", "[expansions][rotation]",
                        kfmm::test::Configs)
{
  using Space = typename TestType::execution_space;
  using Real = typename TestType::real_type;
  using Memory = typename Space::memory_space;
  using Complex = Kokkos::complex<Real>;
  using Team = typename Kokkos::TeamPolicy<Space>::member_type;
  Space space;
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> uniform(-1, 1);
  int const offsets = static_cast<int>(lattice_offsets.size());
  for (int p : {1, 4, 10, 16, ex::max_order})
  {
    int const count = ex::coefficientCount(p);
    // One multipole per offset, of a source cell of scale 1 translated to a target of scale
    // 2 (the level difference the lists allow), coefficients O(1) with real m = 0 ones.
    Kokkos::View<Complex **, Kokkos::LayoutRight, Memory> M("kfmm::test::M", offsets, count);
    Kokkos::View<Complex **, Kokkos::LayoutRight, Memory> direct("kfmm::test::direct", offsets,
                                                                 count);
    Kokkos::View<Complex **, Kokkos::LayoutRight, Memory> rotated("kfmm::test::rotated", offsets,
                                                                  count);
    Kokkos::View<Real **, Kokkos::LayoutRight, Memory> tables("kfmm::test::tables", offsets,
                                                              ex::rotationTableSize(p));
    Kokkos::View<int *[3], Memory> o("kfmm::test::offsets", offsets);
    {
      auto M_host = Kokkos::create_mirror_view(M);
      auto o_host = Kokkos::create_mirror_view(o);
      for (int i = 0; i < offsets; ++i)
      {
        for (int d = 0; d < 3; ++d)
          o_host(i, d) = lattice_offsets[i][d];
        for (int c = 0; c < count; ++c)
          M_host(i, c) = Complex(Real(uniform(rng)), Real(uniform(rng)));
        for (int n = 0; n <= p; ++n)
        {
          auto &m0 = M_host(i, ex::coefficientIndex(n, 0));
          m0 = Complex(m0.real(), 0);
        }
      }
      Kokkos::deep_copy(M, M_host);
      Kokkos::deep_copy(o, o_host);
    }
    int const entries = ex::rotationEntries(p);
    Kokkos::parallel_for(
        "kfmm::test::rotation_tables", Kokkos::RangePolicy<Space>(space, 0, offsets * entries),
        KOKKOS_LAMBDA(int i) {
          int const k = i / entries;
          double const x = o(k, 0), y = o(k, 1), z = o(k, 2);
          double const r = kfmm::detail::sqrt(x * x + y * y + z * z);
          ex::rotationTableEntry(p, i % entries, z / r, kfmm::detail::sqrt(x * x + y * y) / r,
                                 &tables(k, 0));
        });
    using Scratch =
        Kokkos::View<Complex *, typename Space::scratch_memory_space, Kokkos::MemoryUnmanaged>;
    using ScratchReals =
        Kokkos::View<Real *, typename Space::scratch_memory_space, Kokkos::MemoryUnmanaged>;
    int const work_size = std::max(ex::m2lTeamScratchSize(p), ex::m2lRotatedTeamScratchSize(p));
    int const binomial_count = ex::coaxialBinomialCount(p);
    Kokkos::parallel_for(
        "kfmm::test::rotation_m2l",
        Kokkos::TeamPolicy<Space>(space, offsets, Kokkos::AUTO)
            .set_scratch_size(0, Kokkos::PerTeam(Scratch::shmem_size(work_size) +
                                                 ScratchReals::shmem_size(binomial_count))),
        KOKKOS_LAMBDA(Team const &team) {
          int const k = team.league_rank();
          Scratch work(team.team_scratch(0), work_size);
          ScratchReals binomials(team.team_scratch(0), binomial_count);
          ex::coaxialBinomialsTeam(team, p, binomials.data());
          // The pair's centres are the offset apart in units of the finer (source) scale.
          Real const dx = Real(o(k, 0)), dy = Real(o(k, 1)), dz = Real(o(k, 2));
          ex::m2lTeam(team, p, dx, dy, dz, &M(k, 0), &direct(k, 0), work.data(), Real(1), Real(2));
          ex::m2lRotatedTeam(team, p, dx, dy, dz, &tables(k, 0), binomials.data(), &M(k, 0),
                             &rotated(k, 0), work.data(), Real(1), Real(2));
        });
    auto const direct_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), direct);
    auto const rotated_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), rotated);
    for (int i = 0; i < offsets; ++i)
    {
      double difference = 0, norm = 0;
      for (int c = 0; c < count; ++c)
      {
        difference += std::pow(Kokkos::abs(Kokkos::complex<double>(rotated_host(i, c)) -
                                           Kokkos::complex<double>(direct_host(i, c))),
                               2);
        norm += std::pow(Kokkos::abs(Kokkos::complex<double>(direct_host(i, c))), 2);
      }
      double const relative = std::sqrt(difference / norm);
      CAPTURE(p, lattice_offsets[i][0], lattice_offsets[i][1], lattice_offsets[i][2], relative);
      // Two operators' rounding, each summing up to (p + 1)^2 terms with binomials up to
      // C(2p, p): measured at most 58 float and 121 double epsilons (orders to 24).
      CHECK(relative <= 1000 * std::numeric_limits<Real>::epsilon());
    }
  }
}
