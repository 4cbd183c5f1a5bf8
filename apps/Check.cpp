// SPDX-License-Identifier: BSD-3-Clause
#include "Check.hpp"

#include <kfmm/Accuracy.hpp>
#include <kfmm/io/Generators.hpp>
#include <kfmm/io/Progress.hpp>
#include <kfmm/kernels/DirectSum.hpp>
#include <kfmm/periodic/EwaldSum.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <numeric>
#include <unordered_set>
#include <utility>

namespace kfmm::app
{

std::vector<std::size_t> sampleIndices(std::size_t n, std::size_t k, std::uint64_t seed)
{
  std::vector<std::size_t> chosen;
  if (k >= n)
  {
    chosen.resize(n);
    std::iota(chosen.begin(), chosen.end(), std::size_t(0));
    return chosen;
  }
  // Floyd's sampling without replacement: k draws, no rejection loop. The counter-based
  // generator of the particle distributions, on a stream of its own, keeps the sample
  // independent of the standard library.
  std::unordered_set<std::size_t> set;
  set.reserve(2 * k);
  std::uint64_t counter = detail::splitMix64(seed ^ 0x636865636b000000ULL);
  for (std::size_t j = n - k; j < n; ++j)
  {
    auto const t = static_cast<std::size_t>(detail::splitMix64(counter++) % (j + 1));
    if (!set.insert(t).second)
      set.insert(j);
  }
  chosen.assign(set.begin(), set.end());
  std::sort(chosen.begin(), chosen.end());
  return chosen;
}

// The reference runs in double: double charges are used as they are, float ones are widened
// once (the positions are double already, Problem.hpp).
// (Overloads rather than `if constexpr`, which device lambdas may not first capture in.)
inline Kokkos::View<double *, Memory> inDouble(Space const &,
                                               Kokkos::View<double *, Memory> const &q)
{
  return q;
}

inline Kokkos::View<double *, Memory> inDouble(Space const &space,
                                               Kokkos::View<float *, Memory> const &q)
{
  Kokkos::View<double *, Memory> wide(
      Kokkos::view_alloc(Kokkos::WithoutInitializing, "kfmm::app::check_charges"), q.extent(0));
  Kokkos::parallel_for(
      "kfmm::app::check_widen_charges", Kokkos::RangePolicy<Space>(space, 0, q.extent(0)),
      KOKKOS_LAMBDA(std::size_t i) { wide(i) = q(i); });
  return wide;
}

template <class Real>
CheckResult checkAccuracy(Space const &space, Particles<Real> const &particles,
                          Positions const &targets, Results<Real> const &results,
                          std::size_t samples, std::uint64_t seed, double softening, double period,
                          bool progress)
{
  Kokkos::Timer timer;
  std::size_t const n = particles.size();
  auto const chosen = sampleIndices(targets.extent(0), samples, seed);
  std::size_t const k = chosen.size();

  Kokkos::View<std::size_t *, Memory> index("kfmm::app::check_index", k);
  {
    auto index_h = Kokkos::create_mirror_view(index);
    for (std::size_t t = 0; t < k; ++t)
      index_h(t) = chosen[t];
    Kokkos::deep_copy(index, index_h);
  }
  Kokkos::View<double *[3], Memory> target_x("kfmm::app::check_targets", k);
  Kokkos::View<Real *, Memory> approx_phi("kfmm::app::check_approx_potential", k);
  Kokkos::View<Real *[3], Memory> approx_g("kfmm::app::check_approx_field", k);
  auto const x = targets;
  auto const phi = results.potential;
  auto const g = results.field;
  Kokkos::parallel_for(
      "kfmm::app::check_gather", Kokkos::RangePolicy<Space>(space, 0, k),
      KOKKOS_LAMBDA(std::size_t t) {
        std::size_t const i = index(t);
        approx_phi(t) = phi(i);
        for (int c = 0; c < 3; ++c)
        {
          target_x(t, c) = x(i, c);
          approx_g(t, c) = g(i, c);
        }
      });

  auto const sources = particles.positions;
  auto const charges = inDouble(space, particles.charges);
  Kokkos::View<double *, Memory> exact_phi("kfmm::app::check_exact_potential", k);
  Kokkos::View<double *[3], Memory> exact_g("kfmm::app::check_exact_field", k);
  Kokkos::View<double *, Memory> part_phi("kfmm::app::check_part_potential", k);
  Kokkos::View<double *[3], Memory> part_g("kfmm::app::check_part_field", k);

  // A long comparison goes through the sources in twenty slices to show its progress; each
  // slice still uses every target, so the device stays as busy as with one call.
  double const interactions = static_cast<double>(k) * static_cast<double>(n);
  bool const show = progress && interactions >= 2e9;
  std::size_t const slices = show ? std::min<std::size_t>(20, n) : 1;
  io::Progress bar(period > 0 ? "checking against Ewald's sum" : "checking against the direct sum",
                   static_cast<double>(n), show);
  for (std::size_t s = 0; s < slices; ++s)
  {
    std::size_t const begin = n * s / slices, end = n * (s + 1) / slices;
    if (begin == end)
      continue;
    auto const slice = std::make_pair(begin, end);
    if (period > 0)
    {
      Kokkos::deep_copy(space, part_phi, 0.0);
      Kokkos::deep_copy(space, part_g, 0.0);
      periodic::ewaldSum(space, period, target_x, Kokkos::subview(sources, slice, Kokkos::ALL),
                         Kokkos::subview(charges, slice), part_phi, part_g);
    }
    else
      directSum(space, target_x, Kokkos::subview(sources, slice, Kokkos::ALL),
                Kokkos::subview(charges, slice), part_phi, part_g, softening);
    Kokkos::parallel_for(
        "kfmm::app::check_accumulate", Kokkos::RangePolicy<Space>(space, 0, k),
        KOKKOS_LAMBDA(std::size_t t) {
          exact_phi(t) += part_phi(t);
          for (int c = 0; c < 3; ++c)
            exact_g(t, c) += part_g(t, c);
        });
    space.fence();
    bar.update(static_cast<double>(end));
  }
  bar.finish();

  CheckResult result;
  result.targets = k;
  auto const approx_phi_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, approx_phi);
  auto const approx_g_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, approx_g);
  auto const exact_phi_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, exact_phi);
  auto const exact_g_h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace{}, exact_g);
  result.potential_error = relativeL2Error(approx_phi_h, exact_phi_h);
  result.field_error = relativeL2Error(approx_g_h, exact_g_h);
  result.seconds = timer.seconds();
  return result;
}

template CheckResult checkAccuracy<float>(Space const &, Particles<float> const &,
                                          Positions const &, Results<float> const &, std::size_t,
                                          std::uint64_t, double, double, bool);
template CheckResult checkAccuracy<double>(Space const &, Particles<double> const &,
                                           Positions const &, Results<double> const &, std::size_t,
                                           std::uint64_t, double, double, bool);

} // namespace kfmm::app
