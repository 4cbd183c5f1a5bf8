// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_CALIBRATE_HPP
#define KFMM_CALIBRATE_HPP

// kfmm::calibrate: the order and theta for Options::tolerance, measured on the caller's own
// problem.
//
// The backend's accuracy table (tuning/AccuracyTable.hpp) gives each row the worst error
// measured over three distributions at 2e4 and 5e4 particles; a given problem reaches between
// that and a thousandth of it, so the table's choice alone is safe and often far more
// accurate, and slower, than asked (docs/ACCURACY.md). calibrate evaluates the problem at
// rows of the table and estimates each one's field error:
//
//   1. the row the table chooses for a tolerance calibration_reference_factor times smaller
//      (its most accurate row where it serves none such) and,
//      while none meets, more accurate rows: each measured on sampled targets against the
//      direct sum in double, computed once. The first that meets is the reference row; its
//      error is taken as the larger of the samples' and the table's, which bounds it where
//      samples miss the few targets where a clustered problem's error gathers.
//   2. faster rows than the reference: each one's error estimated as the relative L2
//      difference of its field from the reference's over every target, plus the reference's
//      error (an upper bound by the triangle inequality). Over every target, so that no
//      target is missed.
//   3. The next row: the problem's error at each row between the most accurate one known to
//      miss and the fastest one known to meet is predicted as the row's table error times the
//      ratio of estimated to table error measured at those two (interpolated between them,
//      or the one known), and the fastest row predicted to meet is evaluated next, until none
//      is.
//
// A row meets when its estimated error is within the tolerance with calibration_margin on the
// parts that are not measured over every target: the reference row's sampled error times the
// margin; a faster row's difference from the reference plus the margin times the reference's
// error. The rows left between the two known ones shrink at every evaluation, so the search
// ends.

#include <kfmm/Accuracy.hpp>
#include <kfmm/Exception.hpp>
#include <kfmm/Fmm.hpp>
#include <kfmm/Options.hpp>
#include <kfmm/Stats.hpp>
#include <kfmm/detail/FormatNumber.hpp>
#include <kfmm/detail/StaticChecks.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/kernels/DirectSum.hpp>
#include <kfmm/solver/SampledCheck.hpp>
#include <kfmm/tuning/AccuracyTable.hpp>
#include <kfmm/tuning/Tuning.hpp>

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

namespace kfmm
{

/// What kfmm::calibrate chose and measured.
struct Calibration
{
  /// The caller's options with the chosen row's order and theta and no tolerance: for
  /// kfmm::Fmm, kfmm::evaluate or kfmm::distributed::DistributedFmm on this problem and on
  /// problems like it (the next time steps of a simulation).
  Options options;
  /// The relative L2 field error estimated for them: for the reference row (the file
  /// comment), measured on `samples` targets against the direct sum in double; for a faster
  /// row, its difference from the reference's field over every target plus that error.
  double field_error = 0;
  std::size_t samples = 0;
  /// Rows evaluated, the chosen one included, and the seconds of the whole calibration (the
  /// reference's direct sum included).
  int evaluations = 0;
  double seconds = 0;
  /// The row the accuracy table alone chooses for the tolerance (order 0 where it serves
  /// none).
  int table_order = 0;
  double table_theta = 0;
  /// No row met the tolerance (with Options::allow_missed_tolerance; without it, calibrate
  /// throws kfmm::ToleranceError): options, results and error are those of the least error
  /// measured on the samples.
  bool tolerance_missed = false;
  /// What the chosen row's evaluation did.
  Stats stats;
};

/// The margin on what the samples measure: the reference row meets the tolerance when its
/// field error on the samples times this margin is within it, a faster row when its difference
/// from the reference plus this margin times the reference's error is (the file comment).
constexpr double calibration_margin = 2;
/// The reference row is the one the table chooses for the tolerance divided by this factor
/// (its most accurate row where it serves none such), so that its error, which samples may
/// underestimate, is a small part of the tolerance.
constexpr double calibration_reference_factor = 10;
/// Targets sampled where Options::check_samples does not say how many.
constexpr int default_calibration_samples = 512;

namespace detail
{

/// samples(t, :) = rows(solver::sampledTarget(t, k, n), :) in double: the sampled targets'
/// positions, or a candidate's field at them.
template <class Rows, class Samples>
struct GatherSampledRows
{
  Rows rows;
  Samples samples;
  std::size_t n;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t t) const
  {
    std::size_t const i = solver::sampledTarget(t, samples.extent(0), n);
    for (int d = 0; d < 3; ++d)
      samples(t, d) = static_cast<double>(rows(i, d));
  }
};

/// Over every target, the sums of |a - b|^2 and |b|^2 of two fields (v[0], v[1]), each value
/// first multiplied by `scale`, a power of two near the largest |b| (so that no sum over- or
/// underflows); or, `maximum`, the largest |b| (v[0]).
template <class FieldA, class FieldB>
struct FieldDifferenceSums
{
  FieldA a;
  FieldB b;
  PowerOfTwo<double> scale;
  bool maximum;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i, solver::SampledSums &sums) const
  {
    for (int d = 0; d < 3; ++d)
    {
      double const x = static_cast<double>(a(i, d)), y = static_cast<double>(b(i, d));
      if (maximum)
      {
        double const m = y < 0 ? -y : y;
        sums.v[0] = m > sums.v[0] ? m : sums.v[0];
        continue;
      }
      double const sx = scale(x), sy = scale(y);
      sums.v[0] += (sx - sy) * (sx - sy);
      sums.v[1] += sy * sy;
    }
  }
};

/// A candidate's results into the caller's Views.
template <class FromPotential, class FromField, class ToPotential, class ToField>
struct CopyResults
{
  FromPotential from_potential;
  FromField from_field;
  ToPotential to_potential;
  ToField to_field;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const
  {
    to_potential(i) = from_potential(i);
    for (int d = 0; d < 3; ++d)
      to_field(i, d) = from_field(i, d);
  }
};

/// The rows of the accuracy table of the tuning data `Tuning` in precision Real.
template <class Tuning, class Real>
tuning::AccuracyRows accuracyRows()
{
  // A row read in a constant expression instantiates the table's definition: nvcc's front end
  // may not know the table's bound yet where it is first deduced here.
  static_assert(Tuning::accuracy_float[0].order > 0 && Tuning::accuracy_double[0].order > 0,
                "an accuracy table's rows have orders");
  if constexpr (std::is_same<Real, float>::value)
    return tuning::rowsOf(Tuning::accuracy_float);
  else
    return tuning::rowsOf(Tuning::accuracy_double);
}

/// The ratio of the problem's error to the table's predicted at row j, between the most
/// accurate row known to miss (`missed`, -1 for none) and the fastest known to meet (`met`,
/// the row count for none), from their measured ratios: interpolated in the logarithms of
/// the ratios and the table errors between the two where both are known and positive (the
/// problem's error may fall faster from row to row than the table's), else the one known.
inline double predictedRatio(tuning::AccuracyRow const *rows, std::vector<double> const &ratios,
                             int missed, int met, int j)
{
  bool const low = missed >= 0, high = met < static_cast<int>(ratios.size());
  if (low && high && ratios[missed] > 0 && ratios[met] > 0 && std::isfinite(ratios[missed]) &&
      std::isfinite(ratios[met]))
  {
    double const t = std::log(rows[missed].field_error / rows[j].field_error) /
                     std::log(rows[missed].field_error / rows[met].field_error);
    return std::exp(std::log(ratios[missed]) +
                    t * (std::log(ratios[met]) - std::log(ratios[missed])));
  }
  // A ratio that is not a finite number predicts no row to meet.
  return high ? ratios[met] : ratios[missed];
}

/// calibrate's search (the file comment) for `targets` (the sources themselves for one set),
/// the chosen row's results left in `potential` and `field`; `solve(options, phi, g)`
/// evaluates the problem with `options` into the solver's own Views phi and g and returns
/// its Stats.
template <class ExecutionSpace, class Sources, class Charges, class Targets, class Potential,
          class Field, class Solve>
Calibration calibrateRows(ExecutionSpace const &space, Sources const &sources,
                          Charges const &charges, Targets const &targets,
                          Potential const &potential, Field const &field, Options const &options,
                          Solve const &solve)
{
  std::string const where = "kfmm::calibrate";
  using Real = typename Potential::non_const_value_type;
  using Memory = typename ExecutionSpace::memory_space;
  Kokkos::Timer timer;

  validate(options, where);
  require(options.tolerance > 0, where,
          "option 'tolerance' must be > 0: calibrate chooses order and theta for it");
  require(!options.periodic.enabled, where,
          "option 'periodic' cannot be calibrated: the reference is the free-space direct sum "
          "(Options::tolerance alone chooses from the accuracy table for periodic boundaries)");
  // No evaluation in Real reaches a relative error below its rounding; above it, a tolerance
  // below every row of the table is tried at its most accurate row.
  double const rounding = std::numeric_limits<Real>::epsilon();
  require(options.tolerance >= rounding, where,
          "option 'tolerance' " + formatNumber(options.tolerance) + " is below what " +
              (std::is_same<Real, float>::value ? "float" : "double") + " reaches: its rounding, " +
              formatBoundAbove(rounding, 3) +
              (std::is_same<Real, float>::value ? " (compute in double for less)" : ""));
  std::size_t const n = targets.extent(0);
  requireExtent(where, "charges", charges.extent(0), sources.extent(0));
  requireExtent(where, "potential", potential.extent(0), n);
  requireExtent(where, "field", field.extent(0), n);
  double const tolerance = options.tolerance;

  tuning::AccuracyRows const table = accuracyRows<tuning::Tuning<ExecutionSpace>, Real>();
  tuning::AccuracyRow const *const rows = table.rows;
  int const count = table.count;
  Calibration result;
  int const table_choice = tuning::servingRow(table, tolerance);
  if (table_choice >= 0)
  {
    result.table_order = rows[table_choice].order;
    result.table_theta = rows[table_choice].theta;
  }
  int const safer = tuning::servingRow(table, tolerance / calibration_reference_factor);
  int const first = safer >= 0 ? safer : count - 1;

  std::size_t const k = std::min(n, static_cast<std::size_t>(options.check_samples > 0
                                                                 ? options.check_samples
                                                                 : default_calibration_samples));
  result.samples = k;
  using Samples = Kokkos::View<double *[3], Memory>;
  Samples sampled_positions(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::calibrate::sampled_positions"),
      k);
  Samples sampled_field(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::calibrate::sampled_field"), k);
  Kokkos::View<double *, Memory> exact_potential(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::calibrate::exact_potential"),
      k);
  Samples exact_field(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::calibrate::exact_field"), k);
  auto const exact = Kokkos::create_mirror_view(exact_field);
  auto const approx = Kokkos::create_mirror_view(sampled_field);
  Kokkos::View<Real *, Memory> phi(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::calibrate::potential"), n);
  using CandidateField = Kokkos::View<Real *[3], Memory>;
  CandidateField g(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::calibrate::field"),
                   n);
  // The reference row's field (step 2 of the file comment), and its error and scale.
  CandidateField reference;
  double reference_error = 0;
  PowerOfTwo<double> reference_scale;
  bool have_exact = false;

  auto const candidate = [&](int row) {
    Options o = options;
    o.tolerance = 0;
    o.order = rows[row].order;
    o.theta = rows[row].theta;
    return o;
  };
  // The sampled targets' field error against the direct sum.
  auto const sampledError = [&] {
    if (!have_exact)
    {
      // After the first evaluation, which checked the positions and charges in the solver's
      // words.
      Kokkos::parallel_for("kfmm::calibrate::gather_positions",
                           Kokkos::RangePolicy<ExecutionSpace>(space, 0, k),
                           GatherSampledRows<Targets, Samples>{targets, sampled_positions, n});
      kfmm::directSum(space, sampled_positions, sources, charges, exact_potential, exact_field,
                      options.softening);
      Kokkos::deep_copy(space, exact, exact_field);
      have_exact = true;
    }
    Kokkos::parallel_for("kfmm::calibrate::gather_field",
                         Kokkos::RangePolicy<ExecutionSpace>(space, 0, k),
                         GatherSampledRows<CandidateField, Samples>{g, sampled_field, n});
    Kokkos::deep_copy(space, approx, sampled_field);
    space.fence();
    return relativeL2Error(approx, exact);
  };
  using Difference = FieldDifferenceSums<CandidateField, CandidateField>;
  auto const policy = Kokkos::RangePolicy<ExecutionSpace>(space, 0, n);
  // The relative L2 difference from the reference's field over every target.
  auto const referenceDifference = [&] {
    solver::SampledSums sums{};
    Kokkos::parallel_reduce("kfmm::calibrate::difference", policy,
                            Difference{g, reference, reference_scale, false},
                            solver::SampledReducer(sums, false));
    return solver::relativeError(sums.v[0], sums.v[1]);
  };
  auto const becomeReference = [&](double error, int row) {
    reference = CandidateField(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::calibrate::reference"), n);
    Kokkos::deep_copy(space, reference, g);
    // Samples may miss where a clustered problem's error gathers; the table's error of the
    // row, the worst of three distributions, bounds it there.
    reference_error = std::max(error, rows[row].field_error);
    solver::SampledSums largest{};
    Kokkos::parallel_reduce("kfmm::calibrate::largest", policy, Difference{g, reference, {}, true},
                            solver::SampledReducer(largest, true));
    reference_scale = PowerOfTwo<double>::of(-solver::scaleExponent(largest.v[0]));
  };

  // Whether a row meets the tolerance by what is measured of it: its error on the samples
  // where there is no reference row yet, times the margin; else its difference from the
  // reference, plus the margin times the reference's error.
  auto const meetsTolerance = [&](double measured) {
    return reference.data() == nullptr
               ? measured * calibration_margin <= tolerance
               : measured + calibration_margin * reference_error <= tolerance;
  };
  // Rows up to `missed` are known to miss, rows from `met` on known to meet; the ratio of
  // what was measured of each evaluated row to its table error.
  int missed = -1, met = count;
  std::vector<double> ratios(static_cast<std::size_t>(count), 0.0);
  int kept = -1; // the row whose results the caller's Views hold
  double kept_error = 0;
  for (int next = first; next >= 0;)
  {
    Options o = candidate(next);
    o.check_samples = 0;
    Stats const stats = solve(o, phi, g);
    ++result.evaluations;
    bool const sampled = reference.data() == nullptr;
    double const measured = k == 0 ? 0.0 : sampled ? sampledError() : referenceDifference();
    bool const meets = meetsTolerance(measured);
    // The error estimated: for a faster row than the reference, a bound.
    double const error = sampled ? measured : measured + reference_error;
    (meets ? met : missed) = next;
    if (meets && sampled && k > 0)
      becomeReference(measured, next);
    // The Views keep the fastest row that meets, or while none has, the least error.
    if (meets || kept < 0 || (met == count && error < kept_error))
    {
      Kokkos::parallel_for(
          "kfmm::calibrate::keep_results", policy,
          CopyResults<decltype(phi), CandidateField, Potential, Field>{phi, g, potential, field});
      kept = next;
      kept_error = error;
      result.stats = stats;
    }
    if (k == 0)
      break; // no targets to measure: every row's results are empty
    ratios[next] = measured / rows[next].field_error;
    next = -1;
    for (int j = missed + 1; j < met && next < 0; ++j)
      if (meetsTolerance(predictedRatio(rows, ratios, missed, met, j) * rows[j].field_error))
        next = j;
    // Nothing predicted to meet and none met yet: the table's most accurate row, once.
    if (next < 0 && met == count && missed < count - 1)
      next = count - 1;
  }
  space.fence();
  result.options = candidate(kept);
  result.field_error = kept_error;
  result.tolerance_missed = met == count;
  result.seconds = timer.seconds();
  if (result.tolerance_missed && !options.allow_missed_tolerance)
  {
    char error[32];
    std::snprintf(error, sizeof error, "%.3g", kept_error);
    throw ToleranceError(where +
                             ": no row of the backend's accuracy table reaches option "
                             "'tolerance' " +
                             formatNumber(tolerance) +
                             " on this input: the least relative L2 "
                             "field error measured on " +
                             formatNumber(k) + " sampled targets, at order " +
                             formatNumber(rows[kept].order) + " and theta " +
                             formatNumber(rows[kept].theta) + ", is " + error +
                             " (docs/ACCURACY.md, \"Limits\"); set option "
                             "'allow_missed_tolerance' to take those results",
                         kept_error, tolerance, k);
  }
  return result;
}

} // namespace detail

/// The order and theta that reach `options.tolerance` on this problem, measured (the file
/// comment): evaluates the potential and field of `charges` at `positions` (N x 3) at rows of
/// the backend's accuracy table, each row's field error measured on Options::check_samples
/// targets (default_calibration_samples where 0) against the direct sum in double, and
/// returns the fastest row that meets the tolerance by calibration_margin, whose results it
/// leaves in `potential` (N) and `field` (N x 3). The Views are those of kfmm::evaluate. It
/// costs the evaluations (Calibration::evaluations) and the reference, samples x N pairs;
/// for time steps, calibrate once and evaluate with Calibration::options.
/// \throws kfmm::Exception on what kfmm::evaluate refuses, a tolerance of 0, or periodic
/// boundaries; kfmm::ToleranceError where no row meets the tolerance, unless
/// Options::allow_missed_tolerance.
template <class ExecutionSpace, class Positions, class Charges, class Potential, class Field>
Calibration calibrate(ExecutionSpace const &space, Positions const &positions,
                      Charges const &charges, Potential const &potential, Field const &field,
                      Options const &options)
{
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "kfmm::calibrate: the first argument must be a Kokkos execution space");
  KFMM_STATIC_REQUIRE_VIEW("kfmm::calibrate", "positions", Positions, 2, "N x 3", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::calibrate", "charges", Charges, 1, "N", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::calibrate", "potential", Potential, 1, "N", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::calibrate", "field", Field, 2, "N x 3", ExecutionSpace);
  static_assert(detail::holdsWritableReal<Potential>() && detail::holdsWritableReal<Field>(),
                "kfmm::calibrate: arguments 'potential' and 'field' must hold non-const float or "
                "double");
  if constexpr (detail::viewFits<ExecutionSpace, Positions, 2>() &&
                detail::viewFits<ExecutionSpace, Charges, 1>() &&
                detail::viewFits<ExecutionSpace, Potential, 1>() &&
                detail::viewFits<ExecutionSpace, Field, 2>() &&
                detail::holdsWritableReal<Potential>() && detail::holdsWritableReal<Field>())
    return detail::calibrateRows(space, positions, charges, positions, potential, field, options,
                                 [&](Options const &o, auto const &phi, auto const &g) {
                                   return kfmm::evaluate(space, positions, charges, phi, g, o);
                                 });
  else
    return {};
}

/// calibrate at targets that are not the sources: the potential and field at `targets`
/// (N_t x 3) of `charges` (N_s) at `sources` (N_s x 3), as kfmm::evaluate's overload for
/// targets computes them; the samples are strided over the targets.
template <class ExecutionSpace, class Sources, class Charges, class Targets, class Potential,
          class Field, std::enable_if_t<Kokkos::is_view<Field>::value, int> = 0>
Calibration calibrate(ExecutionSpace const &space, Sources const &sources, Charges const &charges,
                      Targets const &targets, Potential const &potential, Field const &field,
                      Options const &options)
{
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "kfmm::calibrate: the first argument must be a Kokkos execution space");
  KFMM_STATIC_REQUIRE_VIEW("kfmm::calibrate", "sources", Sources, 2, "N_s x 3", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::calibrate", "charges", Charges, 1, "N_s", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::calibrate", "targets", Targets, 2, "N_t x 3", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::calibrate", "potential", Potential, 1, "N_t", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::calibrate", "field", Field, 2, "N_t x 3", ExecutionSpace);
  static_assert(detail::holdsWritableReal<Potential>() && detail::holdsWritableReal<Field>(),
                "kfmm::calibrate: arguments 'potential' and 'field' must hold non-const float or "
                "double");
  if constexpr (detail::viewFits<ExecutionSpace, Sources, 2>() &&
                detail::viewFits<ExecutionSpace, Charges, 1>() &&
                detail::viewFits<ExecutionSpace, Targets, 2>() &&
                detail::viewFits<ExecutionSpace, Potential, 1>() &&
                detail::viewFits<ExecutionSpace, Field, 2>() &&
                detail::holdsWritableReal<Potential>() && detail::holdsWritableReal<Field>())
    return detail::calibrateRows(space, sources, charges, targets, potential, field, options,
                                 [&](Options const &o, auto const &phi, auto const &g) {
                                   return kfmm::evaluate(space, sources, charges, targets, phi, g,
                                                         o);
                                 });
  else
    return {};
}

} // namespace kfmm

#endif
