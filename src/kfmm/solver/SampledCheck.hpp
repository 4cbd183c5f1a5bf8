// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_SOLVER_SAMPLED_CHECK_HPP
#define KFMM_SOLVER_SAMPLED_CHECK_HPP

// The sampled check (Options::check_samples): after an evaluation, the relative L2 errors of
// the returned potential and field on K targets, evenly strided in the caller's order, against
// the direct sum in double over all sources (Ewald's sum with periodic boundaries), and with
// Options::tolerance the contract that a field error above it throws kfmm::ToleranceError (the
// program's --check and exit status 5 for the API). Everything runs on the device, K x N
// pairs (and Ewald's wave vectors, periodic/EwaldSum.hpp):
//
//   1. the samples' positions, gathered from the sorted targets (already in the solver's units);
//   2. the direct sum in double at them (kernels/DirectSum.hpp's kernel), or Ewald's sum with
//      the trees' cube, the period, as its period, over the sorted sources with the caller's
//      charges read through the sort's permutation, in the charge unit of the evaluation, so
//      that the reference is in the units the solver computed in;
//   3. the largest magnitude of the potentials and of the fields, the returned ones taken into
//      the same units (exact: the units are powers of two);
//   4. the sums of squares of the differences and of the reference, each value first divided
//      by the power of two above that largest magnitude, as kfmm::relativeL2Error does, so
//      that no sum overflows or underflows anywhere in double's range.
//
// The reference sees the positions as the solver holds them: exactly the caller's where they
// are given in the solver's precision, rounded to it (in units of the bounding cube) where a
// float solver is given double positions, whose rounding Stats::precision_limited judges.

#include <kfmm/Exception.hpp>
#include <kfmm/detail/FormatNumber.hpp>
#include <kfmm/detail/UnitFrame.hpp>
#include <kfmm/kernels/DirectSum.hpp>
#include <kfmm/periodic/EwaldSum.hpp>
#include <kfmm/solver/Stage.hpp>
#include <kfmm/solver/State.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>

namespace kfmm::solver
{

/// The caller's index of sample t of k among n targets (k <= n): evenly strided, the first
/// being target 0, so that every part of the caller's order is sampled alike.
KOKKOS_INLINE_FUNCTION std::size_t sampledTarget(std::size_t t, std::size_t k, std::size_t n)
{
  // t < k <= n, so t * n fits in 64 bits for n below 2^32 (the trees' ranks are 32-bit).
  return static_cast<std::size_t>(static_cast<std::uint64_t>(t) * n / k);
}

/// samples(t, :) = the sorted target position of the caller's target sampledTarget(t), in
/// units and in double.
template <class TargetPositions, class Ranks, class Samples>
struct GatherSamples
{
  TargetPositions target_x;
  Ranks target_ranks;
  Samples samples;
  std::size_t num_targets;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t t) const
  {
    auto const sorted = target_ranks(sampledTarget(t, samples.extent(0), num_targets));
    for (int d = 0; d < 3; ++d)
      samples(t, d) = static_cast<double>(target_x(sorted, d));
  }
};

/// The caller's charges in the sources' sorted order, as the direct sum's kernel reads its
/// charges (charges(j) for sorted source j), in double and times `scale` (the direct sum
/// scales them itself; Ewald's sum is given them in the evaluation's charge unit): the sort's
/// gather without its array.
template <class Permutation, class Charges>
struct PermutedCharges
{
  Permutation permutation;
  Charges charges;
  detail::PowerOfTwo<double> scale = {};

  KOKKOS_INLINE_FUNCTION double operator()(int j) const
  {
    return scale(static_cast<double>(charges(permutation(j))));
  }
};

/// Four doubles reduced together: the potential's and the field's largest magnitudes, or
/// their sums of squares of the differences and of the reference.
struct SampledSums
{
  double v[4];
};

/// Kokkos reducer of SampledSums, each entry summed (`maximum` false) or its largest kept.
struct SampledReducer
{
  using reducer = SampledReducer;
  using value_type = SampledSums;
  using result_view_type = Kokkos::View<SampledSums, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>;

  result_view_type value;
  bool maximum;

  SampledReducer(SampledSums &result, bool max) : value(&result), maximum(max) {}

  KOKKOS_INLINE_FUNCTION void join(SampledSums &dest, SampledSums const &src) const
  {
    combine(dest, src);
  }
  KOKKOS_INLINE_FUNCTION void join(SampledSums volatile &dest,
                                   SampledSums const volatile &src) const
  {
    combine(dest, src);
  }
  KOKKOS_INLINE_FUNCTION void init(SampledSums &s) const
  {
    for (int c = 0; c < 4; ++c)
      s.v[c] = 0;
  }
  KOKKOS_INLINE_FUNCTION SampledSums &reference() const { return *value.data(); }
  KOKKOS_INLINE_FUNCTION result_view_type view() const { return value; }
  KOKKOS_INLINE_FUNCTION bool references_scalar() const { return true; }

private:
  template <class Dest, class Src>
  KOKKOS_INLINE_FUNCTION void combine(Dest &dest, Src const &src) const
  {
    for (int c = 0; c < 4; ++c)
      dest.v[c] = maximum ? (src.v[c] > dest.v[c] ? src.v[c] : dest.v[c]) : dest.v[c] + src.v[c];
  }
};

/// Sample t's returned and reference values in units, and the reductions over them: the
/// largest magnitudes (`maximum`: v[0] the potential's, v[1] the field's; NaN is passed
/// over as kfmm::relativeL2Error passes it over), or the scaled sums of squares (v[0], v[1]
/// the potential's difference and reference, v[2], v[3] the field's).
template <class Potential, class Field, class ExactPotential, class ExactField>
struct SampledErrorSums
{
  Potential potential; ///< the caller's results, in the caller's units
  Field field;
  ExactPotential exact_potential; ///< the reference at the samples, in units
  ExactField exact_field;
  std::size_t num_targets;
  detail::PowerOfTwo<double> potential_to_unit; ///< 2^(k - j)
  detail::PowerOfTwo<double> field_to_unit;     ///< 2^(2k - j)
  bool maximum;
  detail::PowerOfTwo<double> potential_scale; ///< 2^-(exponent above the largest potential)
  detail::PowerOfTwo<double> field_scale;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t t, SampledSums &sums) const
  {
    std::size_t const k = exact_potential.extent(0);
    std::size_t const i = sampledTarget(t, k, num_targets);
    double const phi = potential_to_unit(static_cast<double>(potential(i)));
    double const phi_exact = exact_potential(t);
    if (maximum)
    {
      sums.v[0] = larger(sums.v[0], larger(magnitude(phi), magnitude(phi_exact)));
      for (int d = 0; d < 3; ++d)
        sums.v[1] =
            larger(sums.v[1], larger(magnitude(field_to_unit(static_cast<double>(field(i, d)))),
                                     magnitude(exact_field(t, d))));
      return;
    }
    double const a = potential_scale(phi), e = potential_scale(phi_exact);
    sums.v[0] += (a - e) * (a - e);
    sums.v[1] += e * e;
    for (int d = 0; d < 3; ++d)
    {
      double const ga = field_scale(field_to_unit(static_cast<double>(field(i, d))));
      double const ge = field_scale(exact_field(t, d));
      sums.v[2] += (ga - ge) * (ga - ge);
      sums.v[3] += ge * ge;
    }
  }

  KOKKOS_INLINE_FUNCTION static double magnitude(double v) { return v < 0 ? -v : v; }
  /// The larger of m and v, m where v is NaN.
  KOKKOS_INLINE_FUNCTION static double larger(double m, double v) { return v > m ? v : m; }
};

/// The relative L2 error of sums of squares of the differences and of the reference, as
/// kfmm::relativeL2Error gives it (0 for none, infinite against a zero reference).
inline double relativeError(double difference2, double reference2)
{
  if (reference2 == 0)
    return difference2 == 0 ? 0.0 : INFINITY;
  return std::sqrt(difference2 / reference2);
}

/// The exponent of the power of two above `largest` (0 for 0 or a value that is not finite,
/// whose sums then give NaN or infinity as kfmm::relativeL2Error's do).
inline int scaleExponent(double largest)
{
  int exponent = 0;
  if (largest > 0 && std::isfinite(largest))
    std::frexp(largest, &exponent);
  return exponent;
}

/// The sampled check's measurement (the file comment) of the results `potential` and `field`
/// of `charges` just returned, into Stats::sampled_targets, sampled_potential_error and
/// sampled_field_error. Waits for the device.
template <class ExecutionSpace, class Real, class MemorySpace, class Charges, class Potential,
          class Field>
void measureSampledError(ExecutionSpace const &space, State<Real, MemorySpace> &state,
                         std::string const &where, Charges const &charges,
                         Potential const &potential, Field const &field)
{
  auto &stats = state.stats;
  std::size_t const n = state.numTargets();
  std::size_t const k = static_cast<std::size_t>(state.options.check_samples) < n
                            ? static_cast<std::size_t>(state.options.check_samples)
                            : n;
  stats.sampled_targets = k;
  stats.sampled_potential_error = 0;
  stats.sampled_field_error = 0;
  // Without sources, or with every pair at distance zero, every result is exactly zero, and
  // so is the reference.
  if (k == 0 || !state.computes())
    return;

  // The caller's charges are finite here: the evaluation checked them.
  int const charge_exponent = detail::chargeExponent(space, where, "charges", charges);
  int const length_exponent = state.frame.length_exponent;

  using Samples = Kokkos::View<double *[3], MemorySpace>;
  Samples samples(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::Fmm::sampled_check::targets"),
      k);
  Kokkos::parallel_for(
      "kfmm::Fmm::sampled_check::gather", Kokkos::RangePolicy<ExecutionSpace>(space, 0, k),
      GatherSamples<decltype(state.target_x), decltype(state.target_ranks), Samples>{
          state.target_x, state.target_ranks, samples, n});

  Kokkos::View<double *, MemorySpace> exact_potential(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                         "kfmm::Fmm::sampled_check::exact_potential"),
      k);
  Kokkos::View<double *[3], MemorySpace> exact_field(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing,
                         "kfmm::Fmm::sampled_check::exact_field"),
      k);
  // Positions in units already (the identity frame), charges into the evaluation's unit, and
  // the sums left in units.
  using SortedCharges = PermutedCharges<decltype(state.source_tree.permutation), Charges>;
  if (state.options.periodic.enabled)
  {
    // Ewald's sum adds to its results; its period is the trees' cube, in units (the
    // options refuse a softening here: Ewald's sum is unsoftened).
    Kokkos::deep_copy(space, exact_potential, 0.0);
    Kokkos::deep_copy(space, exact_field, 0.0);
    periodic::ewaldSum(space, state.source_tree.cube.side, samples, state.x,
                       SortedCharges{state.source_tree.permutation, charges,
                                     detail::PowerOfTwo<double>::of(-charge_exponent)},
                       exact_potential, exact_field);
  }
  else
    kernels::launchDirectSumInUnits(
        "kfmm::Fmm::sampled_check::direct_sum", space, samples, state.x,
        SortedCharges{state.source_tree.permutation, charges}, exact_potential, exact_field,
        detail::UnitFrame{}, detail::PowerOfTwo<double>::of(-charge_exponent),
        detail::ResultScale<double>::of(0, 0), state.frame.length(state.options.softening));

  using Sums = SampledErrorSums<Potential, Field, decltype(exact_potential), decltype(exact_field)>;
  Sums sums{potential,
            field,
            exact_potential,
            exact_field,
            n,
            detail::PowerOfTwo<double>::of(length_exponent - charge_exponent),
            detail::PowerOfTwo<double>::of(2 * length_exponent - charge_exponent),
            true,
            {},
            {}};
  SampledSums largest{};
  Kokkos::parallel_reduce("kfmm::Fmm::sampled_check::largest",
                          Kokkos::RangePolicy<ExecutionSpace>(space, 0, k), sums,
                          SampledReducer(largest, true));
  sums.maximum = false;
  sums.potential_scale = detail::PowerOfTwo<double>::of(-scaleExponent(largest.v[0]));
  sums.field_scale = detail::PowerOfTwo<double>::of(-scaleExponent(largest.v[1]));
  SampledSums squares{};
  Kokkos::parallel_reduce("kfmm::Fmm::sampled_check::sums",
                          Kokkos::RangePolicy<ExecutionSpace>(space, 0, k), sums,
                          SampledReducer(squares, false));
  stats.sampled_potential_error = relativeError(squares.v[0], squares.v[1]);
  stats.sampled_field_error = relativeError(squares.v[2], squares.v[3]);
}

/// Throws kfmm::ToleranceError, naming `where`, when the sampled check measured a field error
/// above Options::tolerance (or not a number), unless Options::allow_missed_tolerance;
/// Stats::tolerance_missed says whether it did either way.
template <class Real, class MemorySpace>
void requireTolerance(State<Real, MemorySpace> &state, std::string const &where)
{
  auto &stats = state.stats;
  double const tolerance = state.options.tolerance;
  stats.tolerance_missed = tolerance > 0 && stats.sampled_targets > 0 &&
                           !(stats.sampled_field_error <= tolerance);
  if (!stats.tolerance_missed || state.options.allow_missed_tolerance)
    return;
  char error[32];
  std::snprintf(error, sizeof error, "%.3g", stats.sampled_field_error);
  throw ToleranceError(
      where + ": the relative L2 field error measured on " +
          detail::formatNumber(stats.sampled_targets) + " sampled targets against " +
          (state.options.periodic.enabled ? "Ewald's sum" : "the direct sum") +
          " in double (option 'check_samples') is " + error + ", above option 'tolerance' " +
          detail::formatNumber(tolerance) +
          ": the solver does not reach the tolerance on this input (docs/ACCURACY.md, "
          "\"Limits\"); a smaller tolerance may, or set option 'allow_missed_tolerance' to "
          "take such results",
      stats.sampled_field_error, tolerance, stats.sampled_targets);
}

} // namespace kfmm::solver

#endif
