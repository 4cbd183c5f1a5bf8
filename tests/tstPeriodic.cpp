// SPDX-License-Identifier: BSD-3-Clause
// Periodic boundaries (Options::periodic): Ewald's sum, the reference, reproduces known
// lattice constants; the far lattice's expansion reproduces the function it expands; and the
// FMM's potential and field match Ewald's sum in double within the tolerance asked for, on
// uniform, clustered (balls, some across the box's faces) and Plummer-like particles,
// charge-neutral or not, on every execution space in float and double; the results do not
// depend on where the box is nor on which image of a particle is in it, and the particles' own
// cube, asked for by sides 0, is the box it is when given; the sampled check measures against
// Ewald's sum; bad boxes and options are refused.
#include <kfmm/Accuracy.hpp>
#include <kfmm/Exception.hpp>
#include <kfmm/Fmm.hpp>
#include <kfmm/io/Generators.hpp>
#include <kfmm/periodic/EwaldSum.hpp>
#include <kfmm/periodic/LatticeCoefficients.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_approx.hpp>
#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/generators/catch_generators.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "TestParticles.hpp"
#include "TestTypes.hpp"

namespace
{

using kfmm::test::isFloat;
using kfmm::test::onHost;

/// The simple cubic lattice's constant: the potential of a unit charge at its own position
/// due to its images and the neutralising background, times the period (zero-mean
/// convention; e.g. Nijboer & De Wette 1957, the "Wigner" constant of the sc lattice).
constexpr double self_constant = -2.837297479480620;
/// The rock salt structure's Madelung constant (nearest-neighbour distance as the length).
constexpr double madelung_nacl = 1.747564594633182;

/// Ewald's sum (double) at every particle of (x, q), period `period`.
template <class Space, class Memory>
void ewaldAtParticles(Space const &space, double period, Kokkos::View<double *[3], Memory> const &x,
                      Kokkos::View<double *, Memory> const &q, Kokkos::View<double *, Memory> &phi,
                      Kokkos::View<double *[3], Memory> &field, double alpha_period = 0)
{
  phi = Kokkos::View<double *, Memory>("kfmm::test::ewald_phi", x.extent(0));
  field = Kokkos::View<double *[3], Memory>("kfmm::test::ewald_field", x.extent(0));
  kfmm::periodic::ewaldSum(space, period, x, x, q, phi, field, alpha_period);
}

enum class Charges
{
  positive, ///< all 1 / n: a net charge (gravity-like, with the background)
  neutral   ///< +-1 / n alternating: charge-neutral, with a dipole
};

enum class Layout
{
  uniform,  ///< uniform in the box
  plummer,  ///< a Plummer sphere of scale 0.1 L about the box's centre, wrapped
  clustered ///< eight uniform balls of radius 0.04 L at random centres, some across faces
};

/// n particles in the box [lower, lower + side)^3, on the host, in double.
struct HostSet
{
  std::vector<double> x, q;
};

HostSet makeSet(std::size_t n, Layout layout, Charges charges, double const lower[3], double side,
                std::uint64_t seed)
{
  HostSet s;
  s.x.resize(3 * n);
  s.q.resize(n);
  Kokkos::View<double *[3], Kokkos::HostSpace> plummer("kfmm::test::plummer", n);
  Kokkos::View<double *, Kokkos::HostSpace> unused("kfmm::test::plummer_q", n);
  if (layout == Layout::plummer)
    kfmm::generate(Kokkos::DefaultHostExecutionSpace{}, kfmm::Distribution::plummer, seed, plummer,
                   unused);
  for (std::size_t i = 0; i < n; ++i)
  {
    // A point of a ball of radius 0.04 (the ball's cube, rejected outside it).
    double ball[3] = {0, 0, 0};
    for (int attempt = 0; layout == Layout::clustered; ++attempt)
    {
      double r2 = 0;
      for (int d = 0; d < 3; ++d)
      {
        ball[d] = 0.08 * (kfmm::detail::uniform01(seed + 1 + attempt, i, d) - 0.5);
        r2 += ball[d] * ball[d];
      }
      if (r2 <= 0.04 * 0.04)
        break;
    }
    for (int d = 0; d < 3; ++d)
    {
      double u = 0;
      if (layout == Layout::uniform)
        u = kfmm::detail::uniform01(seed, i, d);
      else if (layout == Layout::plummer)
        u = 0.5 + 0.1 * plummer(i, d);
      else // the ball's centre: one of eight, the same for every eighth particle
        u = kfmm::detail::uniform01(seed + 100, i % 8, d) + ball[d];
      u -= std::floor(u); // wrapped into [0, 1)
      s.x[3 * i + d] = lower[d] + side * u;
    }
    s.q[i] = (charges == Charges::neutral && i % 2 == 1 ? -1.0 : 1.0) / static_cast<double>(n);
  }
  if (charges == Charges::neutral && n % 2 == 1)
    s.q[n - 1] = 0;
  return s;
}

/// The set as a test problem of Config (positions and charges rounded to its precision) and
/// in double at exactly those values, for the reference.
template <class Config>
struct Problem
{
  using Memory = typename Config::memory_space;
  kfmm::test::Particles<Config> p;
  Kokkos::View<double *[3], Memory> x64;
  Kokkos::View<double *, Memory> q64;

  explicit Problem(HostSet const &s)
      : p(s.q.size()), x64("kfmm::test::x64", s.q.size()), q64("kfmm::test::q64", s.q.size())
  {
    using Real = typename Config::real_type;
    auto x = Kokkos::create_mirror_view(p.x);
    auto q = Kokkos::create_mirror_view(p.q);
    auto xd = Kokkos::create_mirror_view(x64);
    auto qd = Kokkos::create_mirror_view(q64);
    for (std::size_t i = 0; i < s.q.size(); ++i)
    {
      for (int d = 0; d < 3; ++d)
      {
        x(i, d) = static_cast<Real>(s.x[3 * i + d]);
        xd(i, d) = static_cast<double>(x(i, d));
      }
      q(i) = static_cast<Real>(s.q[i]);
      qd(i) = static_cast<double>(q(i));
    }
    Kokkos::deep_copy(p.x, x);
    Kokkos::deep_copy(p.q, q);
    Kokkos::deep_copy(x64, xd);
    Kokkos::deep_copy(q64, qd);
  }
};

kfmm::Periodic box(double const lower[3], double side)
{
  kfmm::Periodic b;
  b.enabled = true;
  b.lower = {lower[0], lower[1], lower[2]};
  b.side = {side, side, side};
  return b;
}

} // namespace

TEST_CASE("Ewald's sum gives the lattice constants, whatever its splitting", "[periodic][ewald]")
{
  using Space = Kokkos::DefaultExecutionSpace::memory_space;
  Kokkos::DefaultExecutionSpace space;
  // Rock salt: the conventional cell of side 1 holds 4 + 4 ions; nearest neighbours 1/2 apart.
  double const ions[8][4] = {{0, 0, 0, 1},     {0.5, 0.5, 0, 1},   {0.5, 0, 0.5, 1},
                             {0, 0.5, 0.5, 1}, {0.5, 0, 0, -1},    {0, 0.5, 0, -1},
                             {0, 0, 0.5, -1},  {0.5, 0.5, 0.5, -1}};
  Kokkos::View<double *[3], Space> x("kfmm::test::ions", 8);
  Kokkos::View<double *, Space> q("kfmm::test::ion_charges", 8);
  auto xh = Kokkos::create_mirror_view(x);
  auto qh = Kokkos::create_mirror_view(q);
  for (int i = 0; i < 8; ++i)
  {
    for (int d = 0; d < 3; ++d)
      xh(i, d) = ions[i][d] + 0.125; // anywhere: only differences count
    qh(i) = ions[i][3];
  }
  Kokkos::deep_copy(x, xh);
  Kokkos::deep_copy(q, qh);
  for (double const alpha_period : {3.0, 6.0, 11.0})
  {
    Kokkos::View<double *, Space> phi;
    Kokkos::View<double *[3], Space> field;
    ewaldAtParticles(space, 1.0, x, q, phi, field, alpha_period);
    auto const ph = onHost(phi);
    auto const fh = onHost(field);
    CAPTURE(alpha_period);
    for (int i = 0; i < 8; ++i)
    {
      // An ion's potential is -q M / r0, and the field at it vanishes by symmetry.
      CHECK(ph(i) == Catch::Approx(-qh(i) * madelung_nacl / 0.5).epsilon(1e-12));
      for (int d = 0; d < 3; ++d)
        CHECK(std::abs(fh(i, d)) < 1e-12);
    }
  }
  // One charge in a box of side 2: its images and the background give it self_constant / 2.
  Kokkos::View<double *[3], Space> one("kfmm::test::one", 1);
  Kokkos::View<double *, Space> unit_charge("kfmm::test::unit_charge", 1);
  Kokkos::deep_copy(unit_charge, 1.0);
  Kokkos::View<double *, Space> phi;
  Kokkos::View<double *[3], Space> field;
  ewaldAtParticles(space, 2.0, one, unit_charge, phi, field);
  CHECK(onHost(phi)(0) == Catch::Approx(self_constant / 2).epsilon(1e-13));
}

TEST_CASE("the far lattice's expansion reproduces the far lattice", "[periodic][lattice]")
{
  int const degree = 40;
  auto const &t = kfmm::periodic::unitLatticeCoefficients(degree);
  // Its constant: the lattice constant less the near images' 1 / |n|.
  double near = 0;
  for (int nx = -2; nx <= 2; ++nx)
    for (int ny = -2; ny <= 2; ++ny)
      for (int nz = -2; nz <= 2; ++nz)
        if (nx != 0 || ny != 0 || nz != 0)
          near += 1 / std::sqrt(double(nx * nx + ny * ny + nz * nz));
  CHECK(t[0].real() == Catch::Approx(self_constant - near).epsilon(1e-14));
  // A cubic lattice has no harmonics of degree 1 to 3.
  for (int index = 1; index < kfmm::expansions::coefficientCount(3); ++index)
    CHECK(std::abs(t[index]) < 1e-12);
  // h(w) = sum_l,m a_l^m R_l^m(w), a_l^m = (-1)^l conj(T_l^m), within |w| <= sqrt(3).
  for (auto const &w : std::vector<std::vector<double>>{
           {0.9, -0.7, 1.1}, {-1, -1, 0.99}, {0.3, 0.2, -0.1}, {0, 0, 0}})
  {
    std::complex<double> sum = 0;
    for (int l = 0; l <= degree; ++l)
      for (int m = -l; m <= l; ++m)
      {
        auto tl = t[kfmm::expansions::coefficientIndex(l, std::abs(m))];
        if (m < 0)
          tl = std::conj(tl);
        auto const r = kfmm::expansions::regularHarmonic<double>(l, m, w[0], w[1], w[2]);
        sum += (l % 2 ? -1.0 : 1.0) * std::conj(tl) * std::complex<double>(r.real(), r.imag());
      }
    CAPTURE(w[0], w[1], w[2]);
    CHECK(sum.real() ==
          Catch::Approx(kfmm::periodic::unitFarLattice(w[0], w[1], w[2])).epsilon(1e-12));
  }
}

TEMPLATE_LIST_TEST_CASE("periodic results match Ewald's sum within the tolerance",
                        "[periodic][accuracy]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  using Memory = typename TestType::memory_space;
  typename TestType::execution_space space;
  auto const layout = GENERATE(Layout::uniform, Layout::plummer, Layout::clustered);
  auto const charges = GENERATE(Charges::positive, Charges::neutral);
  double const lower[3] = {-1, -0.5, 0.25};
  double const side = 2;
  std::size_t const n = 3000;
  Problem<TestType> problem(makeSet(n, layout, charges, lower, side, 11));
  Kokkos::View<double *, Memory> exact_phi;
  Kokkos::View<double *[3], Memory> exact_field;
  ewaldAtParticles(space, side, problem.x64, problem.q64, exact_phi, exact_field);
  auto const phi_ref = onHost(exact_phi);
  auto const field_ref = onHost(exact_field);
  std::vector<double> tolerances{1e-3, 1e-5};
  if (!isFloat<Real>)
    tolerances.insert(tolerances.end(), {1e-8, 1e-10});
  for (double const tolerance : tolerances)
  {
    kfmm::Options options;
    options.tolerance = tolerance;
    options.periodic = box(lower, side);
    auto &p = problem.p;
    auto const stats = kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options);
    double const field_error = kfmm::relativeL2Error(onHost(p.field), field_ref);
    double const potential_error = kfmm::relativeL2Error(onHost(p.phi), phi_ref);
    // In float the potential also carries the rounding of the near images' and the far
    // lattice's monopole sums, about 60 sum|q| / L each, which cancel to the lattice's
    // constant: an absolute error near 1e-7 of that (a relative one where, as for a uniform
    // charge over its background, the potential nearly vanishes).
    double const rms_potential = kfmm::relativeL2Error(onHost(p.phi), phi_ref) * std::sqrt([&] {
                                   double sum = 0;
                                   for (std::size_t i = 0; i < n; ++i)
                                     sum += phi_ref(i) * phi_ref(i);
                                   return sum / n;
                                 }());
    double const float_rounding = isFloat<Real> ? 60 * 1e-6 / side : 0; // sum |q| = 1
    CAPTURE(int(layout), int(charges), tolerance, stats.order, stats.theta, field_error,
            potential_error, rms_potential);
    CHECK(field_error <= tolerance);
    CHECK((potential_error <= 10 * tolerance || rms_potential <= float_rounding));
  }
}

TEMPLATE_LIST_TEST_CASE("the sampled check measures periodic results against Ewald's sum",
                        "[periodic][accuracy]", kfmm::test::Configs)
{
  typename TestType::execution_space space;
  double const lower[3] = {-0.5, 0, 0.5};
  double const side = 1;
  std::size_t const n = 2000;
  auto const charges = GENERATE(Charges::positive, Charges::neutral);
  Problem<TestType> problem(makeSet(n, Layout::uniform, charges, lower, side, 5));
  Kokkos::View<double *, typename TestType::memory_space> exact_phi;
  Kokkos::View<double *[3], typename TestType::memory_space> exact_field;
  ewaldAtParticles(space, side, problem.x64, problem.q64, exact_phi, exact_field);
  auto &p = problem.p;
  kfmm::Options options;
  options.periodic = box(lower, side);
  SECTION("on every particle, the error the test measures itself")
  {
    // An order whose error (about 1e-3) is far above the references' differences: the
    // check's sees the positions in the solver's units.
    options.order = 3;
    options.check_samples = static_cast<int>(n);
    auto const stats = kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options);
    double const field_error = kfmm::relativeL2Error(onHost(p.field), onHost(exact_field));
    double const potential_error = kfmm::relativeL2Error(onHost(p.phi), onHost(exact_phi));
    CAPTURE(int(charges), field_error, potential_error, stats.sampled_field_error,
            stats.sampled_potential_error);
    CHECK(stats.sampled_targets == n);
    CHECK(field_error > 1e-5);
    CHECK(std::abs(stats.sampled_field_error - field_error) <= 0.01 * field_error);
    CHECK(std::abs(stats.sampled_potential_error - potential_error) <= 0.01 * potential_error);
  }
  SECTION("a tolerance, met on the samples")
  {
    options.tolerance = isFloat<typename TestType::real_type> ? 1e-4 : 1e-8;
    options.check_samples = 300;
    auto const stats = kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options);
    CAPTURE(int(charges), stats.order, stats.theta, stats.sampled_field_error);
    CHECK(stats.sampled_targets == 300);
    CHECK(stats.sampled_field_error <= options.tolerance);
    CHECK_FALSE(stats.tolerance_missed);
  }
}

TEMPLATE_LIST_TEST_CASE("periodic results do not depend on the box's place nor on the images",
                        "[periodic]", kfmm::test::Configs)
{
  using Real = typename TestType::real_type;
  typename TestType::execution_space space;
  double const side = 1;
  double const lower[3] = {0, 0, 0};
  std::size_t const n = 2000;
  HostSet const set = makeSet(n, Layout::uniform, Charges::neutral, lower, side, 3);
  double const tolerance = isFloat<Real> ? 1e-4 : 1e-8;
  kfmm::Options options;
  options.tolerance = tolerance;
  auto const solve = [&](HostSet const &s, double const box_lower[3]) {
    Problem<TestType> problem(s);
    options.periodic = box(box_lower, side);
    auto &p = problem.p;
    kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options);
    return std::make_pair(onHost(p.phi), onHost(p.field));
  };
  auto const base = solve(set, lower);
  // The same particles in a box moved by (0.3, -0.45, 0.7) periods, each wrapped into it, is
  // the same lattice.
  double const moved_lower[3] = {0.3, -0.45, 0.7};
  HostSet wrapped = set;
  for (std::size_t i = 0; i < n; ++i)
    for (int d = 0; d < 3; ++d)
    {
      double &x = wrapped.x[3 * i + d];
      x -= side * std::floor((x - moved_lower[d]) / side);
    }
  auto const moved = solve(wrapped, moved_lower);
  CHECK(kfmm::relativeL2Error(moved.second, base.second) <= 2 * tolerance);
  CHECK(kfmm::relativeL2Error(moved.first, base.first) <= 20 * tolerance);

  // Sides 0: the particles' own cube (tree::cubeAround: their longest extent, 1e-6 wider,
  // about their box's centre, of the positions as the solver is given them) is the period,
  // as when that cube is given.
  Problem<TestType> own(set);
  auto const x = onHost(own.x64);
  double lo[3], hi[3];
  for (int d = 0; d < 3; ++d)
  {
    lo[d] = hi[d] = x(0, d);
    for (std::size_t i = 0; i < n; ++i)
    {
      lo[d] = std::min(lo[d], x(i, d));
      hi[d] = std::max(hi[d], x(i, d));
    }
  }
  double const extent = std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]});
  double const own_side = extent * (1 + 1e-6);
  double const own_lower[3] = {0.5 * (lo[0] + hi[0]) - 0.5 * own_side,
                               0.5 * (lo[1] + hi[1]) - 0.5 * own_side,
                               0.5 * (lo[2] + hi[2]) - 0.5 * own_side};
  kfmm::Options own_options;
  own_options.tolerance = tolerance;
  own_options.periodic.enabled = true;
  kfmm::evaluate(space, own.p.x, own.p.q, own.p.phi, own.p.field, own_options);
  Problem<TestType> given(set);
  kfmm::Options given_options = own_options;
  given_options.periodic = box(own_lower, own_side);
  kfmm::evaluate(space, given.p.x, given.p.q, given.p.phi, given.p.field, given_options);
  CHECK(kfmm::relativeL2Error(onHost(own.p.field), onHost(given.p.field)) == 0);
  CHECK(kfmm::relativeL2Error(onHost(own.p.phi), onHost(given.p.phi)) == 0);
}

TEMPLATE_LIST_TEST_CASE("periodic boxes and options out of their range are refused",
                        "[periodic][validation]", kfmm::test::Spaces)
{
  typename TestType::execution_space space;
  double const lower[3] = {0, 0, 0};
  HostSet const set = makeSet(200, Layout::uniform, Charges::positive, lower, 1, 1);
  Problem<TestType> problem(set);
  auto &p = problem.p;
  kfmm::Options options;
  options.periodic = box(lower, 1);
  SECTION("a particle outside the box")
  {
    double const smaller[3] = {0.1, 0, 0};
    options.periodic = box(smaller, 1);
    CHECK_THROWS_WITH(kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options),
                      Catch::Matchers::ContainsSubstring("outside the periodic box"));
  }
  SECTION("a box of unequal sides")
  {
    options.periodic.side = {1, 1, 2};
    CHECK_THROWS_WITH(kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options),
                      Catch::Matchers::ContainsSubstring("the box must be a cube"));
  }
  SECTION("the treecode")
  {
    options.method = kfmm::Method::treecode;
    CHECK_THROWS_WITH(kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options),
                      Catch::Matchers::ContainsSubstring("needs method fmm"));
  }
  SECTION("the sampled check with a softening (Ewald's sum, its reference, is unsoftened)")
  {
    options.check_samples = 10;
    options.softening = 1e-3;
    CHECK_THROWS_WITH(kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options),
                      Catch::Matchers::ContainsSubstring("needs 'softening' 0"));
  }
  SECTION("separate targets")
  {
    CHECK_THROWS_WITH(kfmm::evaluate(space, p.x, p.q, p.x, p.phi, p.field, options),
                      Catch::Matchers::ContainsSubstring("separate targets are not supported"));
  }
}
