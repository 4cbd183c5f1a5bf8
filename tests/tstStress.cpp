// SPDX-License-Identifier: BSD-3-Clause
// Random particle sets against the direct sum, from fixed seeds so that every failure
// reproduces: a random scale (1e-15 to 1e15) and offset from the origin (up to 1000 times the
// scale), random clustering (uniform, or up to 8 clusters down to 1e-4 of the scale), random
// charges (magnitude 1e-10 to 1e10, all positive, both signs, or in pairs summing to zero),
// N from 100 to 1e5. Each set, given to the solver in its precision, must either reach the
// required accuracy on sampled targets (where the results are normal numbers of the
// precision) or end in the exception for a result beyond the precision's range, which the
// double solver must then confirm.
//
// "[stress]" runs a few sets per configuration in CI (well under two minutes on two cores);
// "[stress-long]" (hidden, run on request: kfmm_test_solver "[stress-long]") runs many more,
// the mode for a GPU machine (docs/BUILDING.md).
#include <kfmm/Exception.hpp>
#include <kfmm/Fmm.hpp>

#include <Kokkos_Core.hpp>

#include <catch2/catch_template_test_macros.hpp>
#include <catch2/catch_test_macros.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

#include "Adversarial.hpp"
#include "HostParticlesOnDevice.hpp"
#include "Reference.hpp"
#include "TestParticles.hpp"
#include "TestTypes.hpp"

namespace
{

using kfmm::test::HostParticles;
using kfmm::test::onDevice;
using kfmm::test::onHost;
using kfmm::test::Particles;

/// A random set and what it is, for the log of a failure.
struct RandomSet
{
  HostParticles particles;
  std::string description;
};

/// Set number `index` of the sequence of `seed`: N max_n for set 0, so that every run has
/// one set of the largest size, else at most max_n.
inline RandomSet randomSet(std::uint64_t seed, std::uint64_t index, std::size_t max_n)
{
  using kfmm::detail::uniform01;
  // The set's parameters: eight numbers of entry `index` of two sequences of the seed; then
  // each particle's numbers from a seed of the set's own.
  auto const draw = [&](int k) { return uniform01(seed, index, k); };
  auto const more = [&](int k) { return uniform01(~seed, index, k); };
  std::size_t const n = index == 0 ? max_n
                                   : static_cast<std::size_t>(std::round(std::pow(
                                         10.0, 2 + draw(0) * (std::log10(double(max_n)) - 2))));
  double const scale = std::pow(10.0, -15 + 30 * draw(1));
  double const offset = more(0) < 0.3 ? 0 : std::pow(10.0, 3 * draw(2));
  int const clusters = draw(3) < 0.3 ? 0 : 1 + static_cast<int>(8 * more(1));
  double const charge = std::pow(10.0, -10 + 20 * more(2));
  int const signs = static_cast<int>(3 * more(3)); // 0 positive, 1 both, 2 neutral pairs

  HostParticles p(n);
  std::uint64_t const particle_seed = kfmm::detail::splitMix64(seed + index);
  double centre[8][3], width[8];
  for (int c = 0; c < 8; ++c)
  {
    for (int d = 0; d < 3; ++d)
      centre[c][d] = uniform01(particle_seed ^ 0xc1u, c, d);
    width[c] = std::pow(10.0, -4 * uniform01(particle_seed ^ 0xc1u, c, 3));
  }
  for (std::size_t i = 0; i < n; ++i)
  {
    for (int d = 0; d < 3; ++d)
    {
      double const u = uniform01(particle_seed, i, d);
      double const unit = clusters == 0 ? u
                                        : centre[i % clusters][d] + width[i % clusters] * (u - 0.5);
      p.x(i, d) = scale * (offset + unit);
    }
    double const magnitude = charge * (0.5 + uniform01(particle_seed, i, 3));
    if (signs == 0)
      p.q(i) = magnitude;
    else if (signs == 1)
      p.q(i) = (i % 3 == 0 ? -1 : 1) * magnitude;
    else
      p.q(i) = i % 2 == 0 ? (i + 1 < n ? magnitude : 0) : -p.q(i - 1);
  }
  char text[256];
  std::snprintf(text, sizeof text,
                "set %llu: N %zu, scale %.3g, offset %.3g scales, %d clusters, charges %.3g (%s)",
                static_cast<unsigned long long>(index), n, scale, offset, clusters, charge,
                signs == 0   ? "positive"
                : signs == 1 ? "both signs"
                             : "neutral pairs");
  return {p, text};
}

/// The largest |potential| and |field component| of the double solver on p's particles.
template <class Config>
double largestResultInDouble(Particles<Config> const &p, kfmm::Options const &options)
{
  using Wide = kfmm::test::Config<typename Config::execution_space, double>;
  typename Config::execution_space space;
  Particles<Wide> wide(p.x.extent(0));
  auto const x = onHost(p.x);
  auto const q = onHost(p.q);
  auto wx = Kokkos::create_mirror_view(wide.x);
  auto wq = Kokkos::create_mirror_view(wide.q);
  for (std::size_t i = 0; i < x.extent(0); ++i)
  {
    for (int d = 0; d < 3; ++d)
      wx(i, d) = x(i, d);
    wq(i) = q(i);
  }
  Kokkos::deep_copy(wide.x, wx);
  Kokkos::deep_copy(wide.q, wq);
  kfmm::evaluate(space, wide.x, wide.q, wide.phi, wide.field, options);
  auto const phi = onHost(wide.phi);
  auto const field = onHost(wide.field);
  double largest = 0;
  for (std::size_t i = 0; i < phi.extent(0); ++i)
  {
    largest = std::max(largest, std::abs(phi(i)));
    for (int d = 0; d < 3; ++d)
      largest = std::max(largest, std::abs(field(i, d)));
  }
  return largest;
}

/// The root mean square of a host View's entries.
template <class View>
double rootMeanSquare(View const &v)
{
  double sum = 0;
  std::size_t count = 0;
  for (std::size_t i = 0; i < v.extent(0); ++i)
    for (std::size_t c = 0; c < (View::rank == 2 ? v.extent(1) : 1); ++c, ++count)
      sum += v.access(i, c) * v.access(i, c);
  return count > 0 ? std::sqrt(sum / static_cast<double>(count)) : 0;
}

/// approx - exact, entry by entry, on the host.
template <class Approx, class Exact>
Exact difference(Approx const &approx, Exact const &exact)
{
  Exact d("kfmm::test::difference", exact.extent(0));
  for (std::size_t i = 0; i < d.extent(0); ++i)
    for (std::size_t c = 0; c < (Exact::rank == 2 ? d.extent(1) : 1); ++c)
      d.access(i, c) = approx.access(i, c) - exact.access(i, c);
  return d;
}

/// For each target, the magnitudes of the terms of its potential and field: sum_j |q_j| / r
/// and (in column 0) sum_j |q_j| / r^2 over the sources at non-zero distance r.
template <class Targets, class Sources, class Charges>
kfmm::test::HostResult termMagnitudes(Targets const &targets, Sources const &sources,
                                      Charges const &charges)
{
  auto const nt = targets.extent(0);
  kfmm::test::HostResult m{Kokkos::View<double *, Kokkos::HostSpace>("kfmm::test::phi_terms", nt),
                           Kokkos::View<double *[3], Kokkos::HostSpace>("kfmm::test::g_terms", nt)};
  for (std::size_t i = 0; i < nt; ++i)
    for (std::size_t j = 0; j < sources.extent(0); ++j)
    {
      double r2 = 0;
      for (int d = 0; d < 3; ++d)
      {
        double const dx = double(targets(i, d)) - double(sources(j, d));
        r2 += dx * dx;
      }
      if (r2 == 0)
        continue;
      double const q = std::abs(double(charges(j)));
      m.potential(i) += q / std::sqrt(r2);
      m.field(i, 0) += q / r2;
    }
  return m;
}

/// Runs `sets` random sets of at most max_n particles through the config's solver.
template <class Config>
void stress(std::uint64_t seed, int sets, std::size_t max_n)
{
  using Real = typename Config::real_type;
  constexpr bool single = std::is_same<Real, float>::value;
  typename Config::execution_space space;
  // Order 8 at theta 0.4 (leaves of 64) gives errors near 1e-6 on these sets, in float and
  // double (the largest field error in 150 sets of up to 3000 particles: 3e-6). The
  // requirement leaves room for what the truncation bound theta^(p+1) = 2.6e-4 allows where
  // one source dominates: a float input far from the origin is a lattice of coincident
  // points, and order 7 at theta 0.5 reached 1.1e-4 on one such set.
  kfmm::Options options;
  options.order = 8;
  options.theta = 0.4;
  double const required = 1e-4;
  std::size_t const sampled = 200;
  for (int s = 0; s < sets; ++s)
  {
    auto const set = randomSet(seed, static_cast<std::uint64_t>(s), max_n);
    INFO(set.description);
    auto p = onDevice<Config>(set.particles);
    std::size_t const n = set.particles.size();
    try
    {
      auto const stats = kfmm::evaluate(space, p.x, p.q, p.phi, p.field, options);
      CHECK(stats.results_checked);
    }
    catch (kfmm::Exception const &e)
    {
      INFO(e.what());
      // Legitimate only where a result is beyond the range: the double solver must see one.
      double const largest = largestResultInDouble(p, options);
      CAPTURE(largest);
      CHECK(single);
      CHECK(largest > 0.5 * static_cast<double>(std::numeric_limits<Real>::max()));
      continue;
    }
    // Accuracy on every (n / sampled)-th particle, against the plain double loop over all.
    auto const x = onHost(p.x);
    auto const q = onHost(p.q);
    auto const phi = onHost(p.phi);
    auto const field = onHost(p.field);
    std::size_t const k = std::min(n, sampled);
    Kokkos::View<double *[3], Kokkos::HostSpace> targets("kfmm::test::targets", k);
    Kokkos::View<double *, Kokkos::HostSpace> approx_phi("kfmm::test::approx_phi", k);
    Kokkos::View<double *[3], Kokkos::HostSpace> approx_field("kfmm::test::approx_field", k);
    for (std::size_t t = 0; t < k; ++t)
    {
      std::size_t const i = t * n / k;
      approx_phi(t) = phi(i);
      for (int d = 0; d < 3; ++d)
      {
        targets(t, d) = x(i, d);
        approx_field(t, d) = field(i, d);
      }
    }
    auto const exact = kfmm::test::referenceDirectSum(targets, x, q);
    // The scale errors are measured on: the exact results, the relative L2 error, where the
    // charges have one sign; with both signs the magnitudes of the terms, as the results may
    // cancel to far below the rounding and truncation of their terms (a dipole seen from
    // afar, say).
    bool const one_sign = std::all_of(q.data(), q.data() + n, [&](Real v) { return v >= 0; }) ||
                          std::all_of(q.data(), q.data() + n, [&](Real v) { return v <= 0; });
    auto const scale = one_sign ? exact : termMagnitudes(targets, x, q);
    double const potential_error =
        rootMeanSquare(difference(approx_phi, exact.potential)) / rootMeanSquare(scale.potential);
    double const field_error =
        rootMeanSquare(difference(approx_field, exact.field)) / rootMeanSquare(scale.field);
    CAPTURE(one_sign, potential_error, field_error);
    // Required where the results are normal numbers of the precision with digits to spare:
    // below, they have lost digits to underflow (in float, fields under 1e-34, say).
    double const normal = static_cast<double>(std::numeric_limits<Real>::min()) / required;
    if (rootMeanSquare(exact.potential) >= normal)
      CHECK(potential_error <= required);
    if (rootMeanSquare(exact.field) >= normal)
      CHECK(field_error <= required);
  }
}

} // namespace

TEMPLATE_LIST_TEST_CASE("random sets reach the required accuracy or a justified exception",
                        "[stress]", kfmm::test::Configs)
{
  stress<TestType>(2026, 6, 100000);
}

TEMPLATE_LIST_TEST_CASE("random sets: the long run", "[.][stress-long]", kfmm::test::Configs)
{
  stress<TestType>(11, 300, 100000);
}
