// SPDX-License-Identifier: BSD-3-Clause
// The expansion operators inside kernels on every execution space, in float and double:
// the treecode and FMM operator chains against the double-precision direct sum, with the
// error held to its truncation bound and falling with the order; serial against team
// variants; and the extreme orders and length scales.
#include <kfmm/Accuracy.hpp>
#include <kfmm/expansions/TeamOperators.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include "Reference.hpp"
#include "TestTypes.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

namespace
{

namespace ex = kfmm::expansions;

struct Vec
{
  double x, y, z;
};

Vec operator+(Vec a, Vec b) { return {a.x + b.x, a.y + b.y, a.z + b.z}; }
Vec operator*(double s, Vec a) { return {s * a.x, s * a.y, s * a.z}; }
double distance(Vec a, Vec b) { return std::hypot(a.x - b.x, a.y - b.y, a.z - b.z); }

/// The operator chains under test.
enum class Chain
{
  treecode,    // P2M -> M2P
  fmm,         // P2M -> M2L -> L2P
  fmm_2_levels // P2M -> M2M -> M2L -> L2L -> L2P
};

char const *chainName(Chain c)
{
  switch (c)
  {
  case Chain::treecode: return "P2M-M2P";
  case Chain::fmm: return "P2M-M2L-L2P";
  default: return "P2M-M2M-M2L-L2L-L2P";
  }
}

/// A hand-built pair of clusters: 50 positive charges uniform in a source leaf cube and 50
/// targets uniform in a target leaf cube. For the two-level chain the leaves are octants of
/// parent cubes twice their size; otherwise the leaves themselves are the expansion
/// centres. Every length is multiplied by `unit` and shifted by `origin`, so the same
/// configuration can be built tiny or huge.
struct Geometry
{
  Vec source_leaf, source_parent, target_leaf, target_parent;
  double leaf_radius;   // the scale argument of leaf expansions
  double parent_radius; // and of parent expansions
  std::vector<Vec> sources, targets;
  std::vector<double> charges;
  Vec far_source; // centre of the expansion that the far-field step reads
  Vec far_target; // centre of the local expansion it makes (FMM chains)
};

Geometry makeGeometry(Chain chain, double unit = 1, Vec origin = {0, 0, 0})
{
  Geometry g;
  // Leaf half-widths 1 and centre distances near 5 (treecode) and 7 (FMM) give geometric
  // ratios close to 0.5; the two-level chain nests leaves of half-width 0.5 in parents of
  // half-width 1 with the parents 7 apart.
  double half = 1;
  Vec const s = origin + unit * Vec{0.3, -0.2, 0.1};
  if (chain == Chain::treecode)
  {
    g.source_leaf = g.source_parent = s;
    g.target_leaf = g.target_parent = s + unit * Vec{3, 3.5, -1.5};
  }
  else if (chain == Chain::fmm)
  {
    g.source_leaf = g.source_parent = s;
    g.target_leaf = g.target_parent = s + unit * Vec{4, 5, -3};
  }
  else
  {
    half = 0.5;
    g.source_parent = s;
    g.target_parent = s + unit * Vec{4, 5, -3};
    g.source_leaf = g.source_parent + unit * Vec{0.5, -0.5, 0.5};
    g.target_leaf = g.target_parent + unit * Vec{-0.5, -0.5, 0.5};
  }
  g.leaf_radius = std::sqrt(3.0) * half * unit;
  g.parent_radius = std::sqrt(3.0) * unit;
  g.far_source = chain == Chain::fmm_2_levels ? g.source_parent : g.source_leaf;
  g.far_target = chain == Chain::fmm_2_levels ? g.target_parent : g.target_leaf;

  std::mt19937 engine(20261122);
  std::uniform_real_distribution<double> offset(-half * unit, half * unit);
  std::uniform_real_distribution<double> charge(0.5, 1.5);
  for (int i = 0; i < 50; ++i)
  {
    g.sources.push_back(g.source_leaf + Vec{offset(engine), offset(engine), offset(engine)});
    g.charges.push_back(charge(engine));
  }
  for (int i = 0; i < 50; ++i)
    g.targets.push_back(g.target_leaf + Vec{offset(engine), offset(engine), offset(engine)});
  return g;
}

/// Truncation bounds (relative L2, potential and field) of a chain at order p.
///
/// The chains' only approximations are the truncations of the far-field step: M2M of a
/// truncated expansion gives exactly the truncated parent expansion, and L2L shifts a
/// polynomial of degree p exactly. With Q the total (positive) charge:
///  - treecode, target at R = |x - c_s| from the expansion centre, sources within a of it:
///    the tail of (H1) gives |e| <= Q sum_{n>p} a^n / R^{n+1} = Q rho^{p+1} / (R - a) and,
///    since the gradient of a degree-n irregular term is at most (n+1)/R times its bound,
///    |grad e| <= Q / R^2 sum_{n>p} (n+1) rho^n, with rho = a / R (the classical
///    multipole truncation bound of Greengard & Rokhlin).
///  - FMM, sources within a of c_s, target within b of c_t, D = |c_t - c_s|: the bi-degree
///    (n, j) term of 1/|x - y| about the two centres is a mixed derivative of order n + j
///    of 1/|D|, so it is at most C(n+j, n) a^n b^j / D^{n+j+1}; every term that the square
///    truncation n, j <= p drops has n + j > p, hence |e| <= Q/D sum_{N>p} rho^N =
///    Q rho^{p+1} / (D - a - b) and |grad e| <= Q / D^2 sum_{N>p} N rho^{N-1}, with
///    rho = (a + b) / D, the theta of the multipole acceptance criterion.
/// Per target these bound the pointwise error, so their L2 norm over the targets divided
/// by the exact norm bounds the relative L2 error.
struct Bound
{
  double rho;   // the largest geometric ratio over the targets
  double phi;   // bound on the relative L2 error of the potential
  double field; // and of the field
};

Bound truncationBound(Chain chain, Geometry const &g, int p, kfmm::test::HostResult const &exact)
{
  double q = 0, a = 0;
  for (std::size_t j = 0; j < g.sources.size(); ++j)
  {
    q += g.charges[j];
    a = std::max(a, distance(g.sources[j], g.far_source));
  }
  double const d = distance(g.far_target, g.far_source);
  double phi2 = 0, field2 = 0, norm_phi2 = 0, norm_field2 = 0, rho_max = 0;
  for (std::size_t i = 0; i < g.targets.size(); ++i)
  {
    double e_phi, e_field, rho;
    if (chain == Chain::treecode)
    {
      double const r = distance(g.targets[i], g.far_source);
      rho = a / r;
      double const tail = std::pow(rho, p + 1);
      e_phi = q * tail / (r - a);
      // sum_{n>p} (n+1) rho^n = rho^{p+1} ((p+2)/(1-rho) + rho/(1-rho)^2)
      e_field = q / (r * r) * tail * ((p + 2) / (1 - rho) + rho / ((1 - rho) * (1 - rho)));
    }
    else
    {
      double const b = distance(g.targets[i], g.far_target);
      rho = (a + b) / d;
      e_phi = q * std::pow(rho, p + 1) / (d - a - b);
      // sum_{N>p} N rho^{N-1} = rho^p ((p+1)/(1-rho) + rho/(1-rho)^2)
      e_field =
          q / (d * d) * std::pow(rho, p) * ((p + 1) / (1 - rho) + rho / ((1 - rho) * (1 - rho)));
    }
    rho_max = std::max(rho_max, rho);
    phi2 += e_phi * e_phi;
    field2 += e_field * e_field;
    norm_phi2 += exact.potential(i) * exact.potential(i);
    for (int c = 0; c < 3; ++c)
      norm_field2 += exact.field(i, c) * exact.field(i, c);
  }
  return {rho_max, std::sqrt(phi2 / norm_phi2), std::sqrt(field2 / norm_field2)};
}

/// Where the rounding of Real stops the error falling: 1e-6 in float, 1e-13 in double
/// (relative L2 over 50 targets of sums of 50 charges and of up to (p+1)^2 terms; measured
/// floors are 1-4e-7 in float and 1e-15 in double).
template <class Real>
constexpr double precisionFloor()
{
  return std::is_same<Real, float>::value ? 1e-6 : 1e-13;
}

/// The device copy of a geometry, in Real, and the outputs.
template <class Space, class Real>
struct DeviceProblem
{
  using Memory = typename Space::memory_space;
  Kokkos::View<Real *[3], Memory> sources;
  Kokkos::View<Real *, Memory> charges;
  Kokkos::View<Real *[3], Memory> targets;
  Kokkos::View<Real *, Memory> potential;
  Kokkos::View<Real *[3], Memory> field;

  explicit DeviceProblem(Geometry const &g)
      : sources("kfmm::test::sources", g.sources.size()),
        charges("kfmm::test::charges", g.charges.size()),
        targets("kfmm::test::targets", g.targets.size()),
        potential("kfmm::test::potential", g.targets.size()),
        field("kfmm::test::field", g.targets.size())
  {
    auto hs = Kokkos::create_mirror_view(sources);
    auto hq = Kokkos::create_mirror_view(charges);
    auto ht = Kokkos::create_mirror_view(targets);
    for (std::size_t i = 0; i < g.sources.size(); ++i)
    {
      hs(i, 0) = static_cast<Real>(g.sources[i].x);
      hs(i, 1) = static_cast<Real>(g.sources[i].y);
      hs(i, 2) = static_cast<Real>(g.sources[i].z);
      hq(i) = static_cast<Real>(g.charges[i]);
    }
    for (std::size_t i = 0; i < g.targets.size(); ++i)
    {
      ht(i, 0) = static_cast<Real>(g.targets[i].x);
      ht(i, 1) = static_cast<Real>(g.targets[i].y);
      ht(i, 2) = static_cast<Real>(g.targets[i].z);
    }
    Kokkos::deep_copy(sources, hs);
    Kokkos::deep_copy(charges, hq);
    Kokkos::deep_copy(targets, ht);
  }
};

/// The centres and scales of a geometry in Real, to be captured by kernels.
template <class Real>
struct Centres
{
  Real source_leaf[3], source_parent[3], target_parent[3], target_leaf[3];
  Real leaf_radius, parent_radius;

  explicit Centres(Geometry const &g)
  {
    auto set = [](Real *c, Vec v) {
      c[0] = static_cast<Real>(v.x);
      c[1] = static_cast<Real>(v.y);
      c[2] = static_cast<Real>(v.z);
    };
    set(source_leaf, g.source_leaf);
    set(source_parent, g.source_parent);
    set(target_parent, g.target_parent);
    set(target_leaf, g.target_leaf);
    leaf_radius = static_cast<Real>(g.leaf_radius);
    parent_radius = static_cast<Real>(g.parent_radius);
  }
};

template <class Real, class Memory>
using Coefficients = Kokkos::View<Kokkos::complex<Real> *, Memory>;

/// Intermediate expansions of a chain, kept for the serial/team comparisons.
template <class Real, class Memory>
struct Expansions
{
  Coefficients<Real, Memory> m_leaf, m_parent, l_parent, l_leaf;

  explicit Expansions(int p)
      : m_leaf("kfmm::test::m_leaf", ex::coefficientCount(p)),
        m_parent("kfmm::test::m_parent", ex::coefficientCount(p)),
        l_parent("kfmm::test::l_parent", ex::coefficientCount(p)),
        l_leaf("kfmm::test::l_leaf", ex::coefficientCount(p))
  {
  }
};

/// Runs a chain at order p with the serial operators inside kernels on Space: one thread
/// builds the expansions, then one thread per target evaluates them.
template <class Space, class Real>
Expansions<Real, typename Space::memory_space> runChain(Chain chain, int p, Geometry const &g,
                                                        DeviceProblem<Space, Real> const &d)
{
  using Memory = typename Space::memory_space;
  Expansions<Real, Memory> e(p);
  Centres<Real> const c(g);
  auto const sources = d.sources;
  auto const charges = d.charges;
  auto const targets = d.targets;
  auto const potential = d.potential;
  auto const field = d.field;
  auto const m_leaf = e.m_leaf;
  auto const m_parent = e.m_parent;
  auto const l_parent = e.l_parent;
  auto const l_leaf = e.l_leaf;
  int const ns = static_cast<int>(sources.extent(0));
  int const kind = static_cast<int>(chain);
  Kokkos::deep_copy(potential, Real(0));
  Kokkos::deep_copy(field, Real(0));
  Kokkos::parallel_for(
      "kfmm::test::expansions_upward", Kokkos::RangePolicy<Space>(0, 1), KOKKOS_LAMBDA(int) {
        for (int i = 0; i < ns; ++i)
          ex::p2m(p, sources(i, 0) - c.source_leaf[0], sources(i, 1) - c.source_leaf[1],
                  sources(i, 2) - c.source_leaf[2], charges(i), m_leaf.data(), c.leaf_radius);
        if (kind == static_cast<int>(Chain::fmm))
          ex::m2l(p, c.target_leaf[0] - c.source_leaf[0], c.target_leaf[1] - c.source_leaf[1],
                  c.target_leaf[2] - c.source_leaf[2], m_leaf.data(), l_leaf.data(), c.leaf_radius,
                  c.leaf_radius);
        if (kind == static_cast<int>(Chain::fmm_2_levels))
        {
          ex::m2m(p, c.source_leaf[0] - c.source_parent[0], c.source_leaf[1] - c.source_parent[1],
                  c.source_leaf[2] - c.source_parent[2], m_leaf.data(), m_parent.data(),
                  c.leaf_radius, c.parent_radius);
          ex::m2l(p, c.target_parent[0] - c.source_parent[0],
                  c.target_parent[1] - c.source_parent[1], c.target_parent[2] - c.source_parent[2],
                  m_parent.data(), l_parent.data(), c.parent_radius, c.parent_radius);
          ex::l2l(p, c.target_leaf[0] - c.target_parent[0], c.target_leaf[1] - c.target_parent[1],
                  c.target_leaf[2] - c.target_parent[2], l_parent.data(), l_leaf.data(),
                  c.parent_radius, c.leaf_radius);
        }
      });
  Kokkos::parallel_for(
      "kfmm::test::expansions_evaluate",
      Kokkos::RangePolicy<Space>(0, static_cast<int>(targets.extent(0))), KOKKOS_LAMBDA(int i) {
        Real phi = Real(0), gx = Real(0), gy = Real(0), gz = Real(0);
        if (kind == static_cast<int>(Chain::treecode))
          ex::m2p(p, targets(i, 0) - c.source_leaf[0], targets(i, 1) - c.source_leaf[1],
                  targets(i, 2) - c.source_leaf[2], m_leaf.data(), phi, gx, gy, gz, c.leaf_radius);
        else
          ex::l2p(p, targets(i, 0) - c.target_leaf[0], targets(i, 1) - c.target_leaf[1],
                  targets(i, 2) - c.target_leaf[2], l_leaf.data(), phi, gx, gy, gz, c.leaf_radius);
        potential(i) += phi;
        field(i, 0) += gx;
        field(i, 1) += gy;
        field(i, 2) += gz;
      });
  return e;
}

kfmm::test::HostResult reference(Geometry const &g)
{
  Kokkos::View<double *[3], Kokkos::HostSpace> x("kfmm::test::ref_sources", g.sources.size());
  Kokkos::View<double *, Kokkos::HostSpace> q("kfmm::test::ref_charges", g.charges.size());
  Kokkos::View<double *[3], Kokkos::HostSpace> t("kfmm::test::ref_targets", g.targets.size());
  for (std::size_t i = 0; i < g.sources.size(); ++i)
  {
    x(i, 0) = g.sources[i].x;
    x(i, 1) = g.sources[i].y;
    x(i, 2) = g.sources[i].z;
    q(i) = g.charges[i];
  }
  for (std::size_t i = 0; i < g.targets.size(); ++i)
  {
    t(i, 0) = g.targets[i].x;
    t(i, 1) = g.targets[i].y;
    t(i, 2) = g.targets[i].z;
  }
  return kfmm::test::referenceDirectSum(t, x, q);
}

struct Errors
{
  double phi, field;
  bool finite;
};

template <class Space, class Real>
Errors chainErrors(DeviceProblem<Space, Real> const &d, kfmm::test::HostResult const &exact)
{
  auto const phi = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, d.potential);
  auto const field = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, d.field);
  bool finite = true;
  for (std::size_t i = 0; i < phi.extent(0); ++i)
    finite = finite && std::isfinite(phi(i)) && std::isfinite(field(i, 0)) &&
             std::isfinite(field(i, 1)) && std::isfinite(field(i, 2));
  return {kfmm::relativeL2Error(phi, exact.potential), kfmm::relativeL2Error(field, exact.field),
          finite};
}

template <class Real, class Memory>
bool allFinite(Coefficients<Real, Memory> const &coefficients)
{
  auto const h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, coefficients);
  for (std::size_t i = 0; i < h.extent(0); ++i)
    if (!std::isfinite(h(i).real()) || !std::isfinite(h(i).imag()))
      return false;
  return true;
}

constexpr Chain all_chains[] = {Chain::treecode, Chain::fmm, Chain::fmm_2_levels};

} // namespace

TEMPLATE_LIST_TEST_CASE("expansions: harmonics have the documented normalisation", "[expansions]",
                        kfmm::test::Configs)
{
  // R_n^m = n!/(n+|m|)! r^n P_n^|m| e^{i m phi} and I_n^m = (n-|m|)!/n! P_n^|m| e^{i m phi} /
  // r^{n+1} (no Condon-Shortley phase), checked on closed forms of low degree and on the
  // expansion (H1) of 1/|x - y|, inside a kernel.
  using Space = typename TestType::execution_space;
  using Real = typename TestType::real_type;
  using Complex = Kokkos::complex<Real>;
  Kokkos::View<Complex *, typename Space::memory_space> values("kfmm::test::harmonics", 12);
  Kokkos::parallel_for(
      "kfmm::test::harmonics", Kokkos::RangePolicy<Space>(0, 1), KOKKOS_LAMBDA(int) {
        Real const x = Real(0.3), y = Real(-0.4), z = Real(1.2);
        values(0) = ex::regularHarmonic(1, 0, x, y, z);
        values(1) = ex::regularHarmonic(1, 1, x, y, z);
        values(2) = ex::regularHarmonic(1, -1, x, y, z);
        values(3) = ex::regularHarmonic(2, 0, x, y, z);
        values(4) = ex::regularHarmonic(2, 2, x, y, z);
        values(5) = ex::irregularHarmonic(0, 0, x, y, z);
        values(6) = ex::irregularHarmonic(1, 0, x, y, z);
        values(7) = ex::irregularHarmonic(1, 1, x, y, z);
        values(8) = ex::irregularHarmonic(2, 2, x, y, z);
        values(9) = ex::regularHarmonic(0, 0, Real(0), Real(0), Real(0));
        // (H1) at |y| / |x| = 0.3, truncated at degree 2 max_order (error 0.3^49).
        Real const sx = Real(1.1), sy = Real(-2.0), sz = Real(2.4);
        Real const tx = Real(0.3) * Real(-0.5), ty = Real(0.3) * Real(0.9),
                   tz = Real(0.3) * Real(2.9);
        Complex sum(Real(0), Real(0));
        for (int n = 0; n <= 2 * ex::max_order; ++n)
          for (int m = -n; m <= n; ++m)
            sum += Kokkos::conj(ex::regularHarmonic(n, m, tx, ty, tz)) *
                   ex::irregularHarmonic(n, m, sx, sy, sz);
        values(10) = sum;
        values(11) =
            Complex(Real(1) / kfmm::detail::sqrt((sx - tx) * (sx - tx) + (sy - ty) * (sy - ty) +
                                                 (sz - tz) * (sz - tz)),
                    Real(0));
      });
  auto const h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, values);
  double const x = 0.3, y = -0.4, z = 1.2, r2 = x * x + y * y + z * z, r = std::sqrt(r2);
  double const tolerance = 8 * std::numeric_limits<Real>::epsilon();
  auto near = [&](int i, double re, double im) {
    CAPTURE(i, h(i).real(), h(i).imag(), re, im);
    double const scale = std::max(1.0, std::hypot(re, im));
    CHECK(std::abs(h(i).real() - re) <= tolerance * scale);
    CHECK(std::abs(h(i).imag() - im) <= tolerance * scale);
  };
  near(0, z, 0);                               // R_1^0 = z
  near(1, x / 2, y / 2);                       // R_1^1 = (x + i y) / 2
  near(2, x / 2, -y / 2);                      // R_1^-1 = conj(R_1^1)
  near(3, (3 * z * z - r2) / 2, 0);            // R_2^0 = r^2 P_2(cos theta)
  near(4, (x * x - y * y) / 4, 2 * x * y / 4); // R_2^2 = 2!/4! 3 (x + i y)^2
  near(5, 1 / r, 0);                           // I_0^0 = 1/r
  near(6, z / (r2 * r), 0);                    // I_1^0 = z / r^3
  near(7, x / (r2 * r), y / (r2 * r));         // I_1^1 = (x + i y) / r^3
  near(8, 1.5 * (x * x - y * y) / (r2 * r2 * r), 1.5 * 2 * x * y / (r2 * r2 * r)); // 0!/2! 3
  near(9, 1, 0); // R_0^0 = 1, also at the origin
  CHECK(std::abs(h(10).real() - h(11).real()) <= 64 * tolerance * h(11).real());
  CHECK(std::abs(h(10).imag()) <= 64 * tolerance * h(11).real());
}

TEMPLATE_LIST_TEST_CASE("expansions: operator chains converge geometrically to the direct sum",
                        "[expansions]", kfmm::test::Configs)
{
  using Space = typename TestType::execution_space;
  using Real = typename TestType::real_type;
  double const floor = precisionFloor<Real>();
  for (Chain chain : all_chains)
  {
    Geometry const g = makeGeometry(chain);
    DeviceProblem<Space, Real> const d(g);
    auto const exact = reference(g);
    std::vector<Errors> errors;
    for (int p = 0; p <= ex::max_order; ++p)
    {
      runChain(chain, p, g, d);
      errors.push_back(chainErrors(d, exact));
      Bound const bound = truncationBound(chain, g, p, exact);
      CAPTURE(chainName(chain), p, bound.rho, bound.phi, bound.field, errors[p].phi,
              errors[p].field);
      // The configurations are built with rho near 0.5.
      CHECK(bound.rho < 0.55);
      CHECK(errors[p].finite);
      CHECK(errors[p].phi <= bound.phi + 2 * floor);
      CHECK(errors[p].field <= bound.field + 2 * floor);
    }
    // Geometric decay: from p to p + 2 the error falls until it reaches the rounding floor.
    for (int p = 0; p + 2 <= ex::max_order; ++p)
    {
      CAPTURE(chainName(chain), p, errors[p].phi, errors[p + 2].phi, errors[p].field,
              errors[p + 2].field);
      if (errors[p].phi > 10 * floor)
        CHECK(errors[p + 2].phi < errors[p].phi);
      if (errors[p].field > 10 * floor)
        CHECK(errors[p + 2].field < errors[p].field);
    }
    // Float reaches 1e-6 by a moderate order (p = 12 at rho ~ 0.43); double goes on below
    // 1e-9 by p = 20.
    double const best = std::is_same<Real, float>::value ? 1e-6 : 1e-9;
    int const moderate = std::is_same<Real, float>::value ? 12 : 20;
    CAPTURE(chainName(chain), errors[moderate].phi, errors[moderate].field);
    CHECK(errors[moderate].phi <= best);
    CHECK(errors[moderate].field <= best);
  }
}

TEMPLATE_LIST_TEST_CASE("expansions: extreme orders and length scales stay finite and accurate",
                        "[expansions]", kfmm::test::Configs)
{
  using Space = typename TestType::execution_space;
  using Real = typename TestType::real_type;
  // A cell of radius 1e-6 (a 20-level tree in a unit box) and one of 1e6: with the cell
  // radius as the scale, no coefficient over- or underflows, even in float at p = 20
  // (without it, (1e-6)^20 would underflow float).
  for (double unit : {1.0, 1e-6, 1e6})
    for (int p : {1, 20, ex::max_order})
    {
      Chain const chain = Chain::fmm_2_levels;
      Geometry const g = makeGeometry(chain, unit, {unit * 3, -unit, unit * 0.5});
      DeviceProblem<Space, Real> const d(g);
      auto const exact = reference(g);
      auto const e = runChain(chain, p, g, d);
      Errors const errors = chainErrors(d, exact);
      Bound const bound = truncationBound(chain, g, p, exact);
      CAPTURE(unit, p, errors.phi, errors.field, bound.phi, bound.field);
      CHECK(allFinite(e.m_leaf));
      CHECK(allFinite(e.m_parent));
      CHECK(allFinite(e.l_parent));
      CHECK(allFinite(e.l_leaf));
      CHECK(errors.finite);
      // Positions are stored in Real: in float, the shifted configuration carries its
      // rounding (1e-7 relative to the shift) into the comparison with the reference.
      double const floor = 2 * precisionFloor<Real>();
      CHECK(errors.phi <= bound.phi + floor);
      CHECK(errors.field <= bound.field + floor);
      if (p >= 20)
      {
        double const best = std::is_same<Real, float>::value ? 1e-6 : 1e-12;
        CHECK(errors.phi <= best);
        CHECK(errors.field <= best);
      }
    }

  // The treecode at p = max_order with a target far away (distance ratio 1e-3): the high
  // irregular harmonics underflow harmlessly.
  Geometry g = makeGeometry(Chain::treecode);
  for (auto &t : g.targets)
    t = t + 2000 * Vec{1, 1, 1};
  DeviceProblem<Space, Real> const d(g);
  runChain(Chain::treecode, ex::max_order, g, d);
  Errors const far = chainErrors(d, reference(g));
  CAPTURE(far.phi, far.field);
  CHECK(far.finite);
  CHECK(far.phi <= precisionFloor<Real>());
  CHECK(far.field <= precisionFloor<Real>());
}

namespace
{

enum class Op
{
  p2m,
  m2m,
  m2l,
  l2l,
  l2p,
  m2p
};

char const *opName(Op op)
{
  constexpr char const *names[] = {"P2M", "M2M", "M2L", "L2L", "L2P", "M2P"};
  return names[static_cast<int>(op)];
}

/// Scratch elements the team variant of `op` needs in precision Real.
template <class Real>
int teamScratchSize(Op op, int p, int team_size)
{
  switch (op)
  {
  case Op::p2m: return ex::p2mTeamScratchSize<Real>(p, team_size);
  case Op::m2m: return ex::m2mTeamScratchSize(p);
  case Op::m2l: return ex::m2lTeamScratchSize(p);
  case Op::l2l: return ex::l2lTeamScratchSize(p);
  case Op::l2p: return ex::l2pTeamScratchSize(p);
  default: return ex::m2pTeamScratchSize(p);
  }
}

/// One team runs the team variant of an operator on the two-level geometry: the same
/// inputs and offsets as the serial chain in runChain.
template <class Space, class Real>
struct TeamOperator
{
  using Memory = typename Space::memory_space;
  using Member = typename Kokkos::TeamPolicy<Space>::member_type;
  using Scratch = Kokkos::View<Kokkos::complex<Real> *, typename Space::scratch_memory_space,
                               Kokkos::MemoryUnmanaged>;

  Op op;
  int p;
  int scratch_size;
  Centres<Real> c;
  Kokkos::View<Real *[3], Memory> sources;
  Kokkos::View<Real *, Memory> charges;
  Kokkos::View<Real *[3], Memory> targets;
  Kokkos::View<Real *, Memory> potential;
  Kokkos::View<Real *[3], Memory> field;
  Coefficients<Real, Memory> in;
  Coefficients<Real, Memory> out;

  KOKKOS_FUNCTION void operator()(Member const &team) const
  {
    Scratch work(team.team_scratch(0), scratch_size);
    int const ns = static_cast<int>(sources.extent(0));
    int const nt = static_cast<int>(targets.extent(0));
    switch (op)
    {
    case Op::p2m:
      ex::p2mTeam(team, p, c.source_leaf[0], c.source_leaf[1], c.source_leaf[2], sources, charges,
                  0, ns, out.data(), work.data(), c.leaf_radius);
      break;
    case Op::m2m:
      ex::m2mTeam(team, p, c.source_leaf[0] - c.source_parent[0],
                  c.source_leaf[1] - c.source_parent[1], c.source_leaf[2] - c.source_parent[2],
                  in.data(), out.data(), work.data(), c.leaf_radius, c.parent_radius);
      break;
    case Op::m2l:
      ex::m2lTeam(team, p, c.target_parent[0] - c.source_parent[0],
                  c.target_parent[1] - c.source_parent[1], c.target_parent[2] - c.source_parent[2],
                  in.data(), out.data(), work.data(), c.parent_radius, c.parent_radius);
      break;
    case Op::l2l:
      ex::l2lTeam(team, p, c.target_leaf[0] - c.target_parent[0],
                  c.target_leaf[1] - c.target_parent[1], c.target_leaf[2] - c.target_parent[2],
                  in.data(), out.data(), work.data(), c.parent_radius, c.leaf_radius);
      break;
    case Op::l2p:
      ex::l2pTeam(team, p, c.target_leaf[0], c.target_leaf[1], c.target_leaf[2], in.data(), targets,
                  0, nt, potential, field, work.data(), c.leaf_radius);
      break;
    case Op::m2p:
      ex::m2pTeam(team, p, c.source_leaf[0], c.source_leaf[1], c.source_leaf[2], in.data(), targets,
                  0, nt, potential, field, work.data(), c.leaf_radius);
      break;
    }
  }
};

/// Largest |a - b| over |b|'s largest element.
template <class Real, class Memory>
double coefficientDifference(Coefficients<Real, Memory> const &a,
                             Coefficients<Real, Memory> const &b)
{
  auto const ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a);
  auto const hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b);
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < ha.extent(0); ++i)
  {
    diff = std::max(diff, double(Kokkos::abs(ha(i) - hb(i))));
    norm = std::max(norm, double(Kokkos::abs(hb(i))));
  }
  return norm > 0 ? diff / norm : diff;
}

template <class View>
double valueDifference(View const &a, View const &b)
{
  auto const ha = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, a);
  auto const hb = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, b);
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < ha.extent(0); ++i)
    for (std::size_t c = 0; c < ha.extent(1); ++c)
    {
      double x, y;
      if constexpr (View::rank == 1)
      {
        x = ha(i);
        y = hb(i);
      }
      else
      {
        x = ha(i, c);
        y = hb(i, c);
      }
      diff = std::max(diff, std::abs(x - y));
      norm = std::max(norm, std::abs(y));
    }
  return norm > 0 ? diff / norm : diff;
}

} // namespace

TEMPLATE_LIST_TEST_CASE("expansions: serial and team variants agree", "[expansions][team]",
                        kfmm::test::Configs)
{
  using Space = typename TestType::execution_space;
  using Real = typename TestType::real_type;
  using Memory = typename Space::memory_space;
  Space space;
  Geometry const g = makeGeometry(Chain::fmm_2_levels);
  DeviceProblem<Space, Real> const d(g);
  // A few ulps of the largest value: the team P2M sums its particle groups in another
  // order; the other operators share the serial code coefficient by coefficient.
  double const tolerance = 64 * std::numeric_limits<Real>::epsilon();
  for (int p : {0, 1, 4, 9, 20, ex::max_order})
  {
    // Serial reference expansions of the two-level chain, and the serial potential/field.
    auto const serial = runChain(Chain::fmm_2_levels, p, g, d);
    Kokkos::View<Real *, Memory> serial_potential("kfmm::test::serial_potential", g.targets.size());
    Kokkos::View<Real *[3], Memory> serial_field("kfmm::test::serial_field", g.targets.size());
    Kokkos::deep_copy(serial_potential, d.potential);
    Kokkos::deep_copy(serial_field, d.field);
    Kokkos::View<Real *, Memory> m2p_potential("kfmm::test::m2p_potential", g.targets.size());
    Kokkos::View<Real *[3], Memory> m2p_field("kfmm::test::m2p_field", g.targets.size());
    {
      Centres<Real> const c(g);
      auto const targets = d.targets;
      auto const m_leaf = serial.m_leaf;
      Kokkos::parallel_for(
          "kfmm::test::serial_m2p", Kokkos::RangePolicy<Space>(space, 0, targets.extent(0)),
          KOKKOS_LAMBDA(int i) {
            ex::m2p(p, targets(i, 0) - c.source_leaf[0], targets(i, 1) - c.source_leaf[1],
                    targets(i, 2) - c.source_leaf[2], m_leaf.data(), m2p_potential(i),
                    m2p_field(i, 0), m2p_field(i, 1), m2p_field(i, 2), c.leaf_radius);
          });
    }

    for (Op op : {Op::p2m, Op::m2m, Op::m2l, Op::l2l, Op::l2p, Op::m2p})
    {
      Coefficients<Real, Memory> out("kfmm::test::team_out", ex::coefficientCount(p));
      Coefficients<Real, Memory> in = op == Op::m2m   ? serial.m_leaf
                                      : op == Op::m2l ? serial.m_parent
                                      : op == Op::l2l ? serial.l_parent
                                      : op == Op::l2p ? serial.l_leaf
                                                      : serial.m_leaf;
      Kokkos::deep_copy(d.potential, Real(0));
      Kokkos::deep_copy(d.field, Real(0));
      TeamOperator<Space, Real> kernel{op,        p,         0,         Centres<Real>(g),
                                       d.sources, d.charges, d.targets, d.potential,
                                       d.field,   in,        out};
      Kokkos::TeamPolicy<Space> probe(space, 1, Kokkos::AUTO);
      int const team_size = std::min(64, probe.team_size_max(kernel, Kokkos::ParallelForTag()));
      kernel.scratch_size = teamScratchSize<Real>(op, p, team_size);
      using Scratch = typename TeamOperator<Space, Real>::Scratch;
      Kokkos::parallel_for("kfmm::test::team_operator",
                           Kokkos::TeamPolicy<Space>(space, 1, team_size)
                               .set_scratch_size(0, Kokkos::PerTeam(static_cast<int>(
                                                        Scratch::shmem_size(kernel.scratch_size)))),
                           kernel);
      double difference = 0;
      switch (op)
      {
      case Op::p2m: difference = coefficientDifference(out, serial.m_leaf); break;
      case Op::m2m: difference = coefficientDifference(out, serial.m_parent); break;
      case Op::m2l: difference = coefficientDifference(out, serial.l_parent); break;
      case Op::l2l: difference = coefficientDifference(out, serial.l_leaf); break;
      case Op::l2p:
        difference = std::max(valueDifference(d.potential, serial_potential),
                              valueDifference(d.field, serial_field));
        break;
      case Op::m2p:
        difference = std::max(valueDifference(d.potential, m2p_potential),
                              valueDifference(d.field, m2p_field));
        break;
      }
      CAPTURE(opName(op), p, team_size, difference);
      CHECK(difference <= tolerance);
    }
  }
}

TEMPLATE_LIST_TEST_CASE("expansions: error table", "[.][expansions][report]", kfmm::test::Configs)
{
  // Not run by default: prints the relative L2 errors and bounds against the order.
  using Space = typename TestType::execution_space;
  using Real = typename TestType::real_type;
  for (Chain chain : all_chains)
  {
    Geometry const g = makeGeometry(chain);
    DeviceProblem<Space, Real> const d(g);
    auto const exact = reference(g);
    std::printf("%s %s %s\n", Space::name(), std::is_same<Real, float>::value ? "float" : "double",
                chainName(chain));
    for (int p = 0; p <= ex::max_order; ++p)
    {
      runChain(chain, p, g, d);
      Errors const e = chainErrors(d, exact);
      Bound const b = truncationBound(chain, g, p, exact);
      std::printf("  p %2d  rho %.3f  phi %.2e (bound %.2e)  field %.2e (bound %.2e)\n", p, b.rho,
                  e.phi, b.phi, e.field, b.field);
    }
  }
}
