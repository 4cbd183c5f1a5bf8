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
//   1. The reference: the row the table chooses for a tolerance calibration_reference_factor
//      times smaller and, while none meets, more accurate rows, each measured on sampled
//      targets against the direct sum in double, computed once (with periodic boundaries,
//      Ewald's sum in double: periodic/EwaldSum.hpp). The first that meets is the
//      reference; its error is taken as the larger of the samples' and the table's, which
//      bounds it where samples miss the few targets where a clustered problem's error
//      gathers (the samples' alone where no table serves a row for the smaller tolerance:
//      the most accurate row is then the reference, met on its samples alone, and the
//      faster rows are held to that test). Where float's table serves no row for the smaller
//      tolerance, the reference is computed in double from double's table (float's most
//      accurate rows are near its rounding, and their table error would leave faster rows
//      little of the tolerance); where no table serves one, it is the caller's precision's
//      most accurate row.
//   2. Rows faster than the reference: each one's error estimated as the relative L2
//      difference of its field from the reference's over every target, plus the reference's
//      error (an upper bound by the triangle inequality). Over every target, so that no
//      target is missed.
//   3. The next row: each row's error is predicted as its table error times the ratio of
//      measured to table error at the evaluated row nearest in theta (predictedError). The
//      fastest row not yet evaluated, faster than every row that met and not at most as
//      accurate as one that missed, whose prediction is within calibration_probe_factor of
//      what meets, is evaluated next, until none is. Then, once a row met, rows of other
//      backends' fronts (tuning/AccuracyFronts.hpp), which the table's timing of uniform
//      particles left out but which may be faster on this problem (tryBeyondFront): each
//      predicted to meet, not at most as accurate as a row that missed and not of an order no
//      lower and a theta no larger than the kept row's, the least accurate first, at most
//      calibration_beyond_front_trials of them; one that meets in at most
//      calibration_beyond_front_time_factor of the kept row's time is kept.
//   4. The direct sum: the solver with one leaf that holds every particle, which runs the
//      all-pairs kernel alone (solver::fieldStages), exact to the precision's rounding. Its
//      time is predicted from a direct sum in the caller's precision at the samples' count
//      of targets, scaled to every target (or, where that took under half the time below,
//      so that its fixed costs may make up most of it, along the line through it and a
//      direct sum at four times as many targets). Where that is within
//      calibration_probe_factor of the time of the fastest row that met (or, where none met,
//      of the slowest evaluation), that row is timed once more (its one evaluation may have
//      paid for a setting's first allocations), and the direct sum is evaluated and its
//      error measured on the samples. It is chosen where it meets the tolerance and took
//      less time than that row, or where it alone meets it: a tolerance the FMM reaches only
//      more slowly than the direct sum, as on small problems, is served by the direct sum.
//      Not with periodic boundaries, whose lattice sum has no such candidate.
//
// Errors are relative L2 with each target whose |F|^2 is above calibration_bulk_factor times
// the samples' median weighted down to one of that magnitude (its relative error counted as
// a bulk target's): on particles on a surface, the few closest pairs' fields are far above
// the rest and would set the denominator over every target alone (their pairs are computed
// exactly), so that the error over every target falls with N while a sample of targets,
// which rarely holds one of them, sees the error against the bulk of the fields. The cap is
// a multiple of the median, not the samples' largest field: on a surface the fields' tail is
// heavy, so the largest field of one set of samples differs many times from another set's,
// and an error weighted up to it can lie below what a check on other samples measures.
//
// A row meets when its estimated error is within the tolerance with calibration_margin on the
// parts that are not measured over every target: a reference candidate's sampled error times
// the margin; a faster row's difference from the reference plus the margin times the
// reference's error; the direct sum's sampled error times the margin. Every evaluation
// removes a row from those left, so the search ends; the fastest row that met (or the direct
// sum, step 4) is chosen, or where nothing did, the least error measured, whose results stay
// in the caller's Views.
//
// On MPI ranks kfmm::distributed::calibrate (distributed/Calibrate.hpp) runs the same search
// over every rank's particles (detail::calibrateRows with ranks other than OneRank).

#include <kfmm/Calibration.hpp>
#include <kfmm/Exception.hpp>
#include <kfmm/Fmm.hpp>
#include <kfmm/Options.hpp>
#include <kfmm/Stats.hpp>
#include <kfmm/detail/FormatNumber.hpp>
#include <kfmm/detail/StaticChecks.hpp>
#include <kfmm/detail/UnitFrame.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/kernels/DirectSum.hpp>
#include <kfmm/periodic/EwaldSum.hpp>
#include <kfmm/solver/SampledCheck.hpp>
#include <kfmm/tree/Morton.hpp>
#include <kfmm/tuning/AccuracyFronts.hpp>
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
#include <utility>
#include <vector>

namespace kfmm
{

/// The margin on what the samples measure: the reference row meets the tolerance when its
/// field error on the samples times this margin is within it, a faster row when its difference
/// from the reference plus this margin times the reference's error is (the file comment).
constexpr double calibration_margin = 2;
/// The reference row is the one the table chooses for the tolerance divided by this factor
/// (its most accurate row where it serves none such), so that its error, which samples may
/// underestimate, is a small part of the tolerance.
constexpr double calibration_reference_factor = 10;
/// A row faster than the reference is evaluated when its predicted error is within this
/// factor of what would meet the tolerance: the prediction carries the table's ratios from
/// row to row, which a problem need not keep.
constexpr double calibration_probe_factor = 2;
/// At most this many rows of other backends' fronts are evaluated (the file comment, step 3):
/// each costs an evaluation, and the first ones tried are the likeliest to be faster.
constexpr int calibration_beyond_front_trials = 3;
/// A row of another backend's front replaces the kept row where it meets in at most this
/// factor of its time: the front's row stands where the two differ by the runs' spread.
constexpr double calibration_beyond_front_time_factor = 0.9;
/// A target whose |F|^2 is above this factor times the median over the sampled targets counts
/// in an error as one of that magnitude (the file comment).
constexpr double calibration_bulk_factor = 100;
/// Targets sampled where Options::check_samples does not say how many.
constexpr int default_calibration_samples = 512;

namespace detail
{

/// samples(t, :) = rows(solver::sampledTarget(t, k, total) - first, :) in double where this
/// rank holds that target (its `rows` are the targets first to first + rows.extent(0) - 1 of
/// every rank's `total`), else 0: the sampled targets' positions, or a candidate's field at
/// them; summed over the ranks, every sample's.
template <class Rows, class Samples>
struct GatherSampledRows
{
  Rows rows;
  Samples samples;
  std::size_t total;
  std::size_t first;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t t) const
  {
    std::size_t const i = solver::sampledTarget(t, samples.extent(0), total);
    bool const here = i >= first && i - first < rows.extent(0);
    for (int d = 0; d < 3; ++d)
      samples(t, d) = here ? static_cast<double>(rows(i - first, d)) : 0.0;
  }
};

/// The ranks a calibration spans: this process alone. The distributed calibrate
/// (distributed/Calibrate.hpp) passes ranks whose counts, sums and maxima span every rank's
/// targets, so that every rank measures and decides alike.
struct OneRank
{
  /// Whether the direct sum is a candidate (step 4 of the file comment): every source is here.
  static constexpr bool holds_every_source = true;
  /// Every rank's count of targets, and the index of this rank's first among them.
  std::pair<std::size_t, std::size_t> span(std::size_t n) const { return {n, 0}; }
  /// `values` (count) summed over the ranks.
  void sum(double *, int) const {}
  /// The largest `value` of the ranks.
  double largest(double value) const { return value; }
  /// The View `values` (contiguous, on the device) summed over the ranks, elementwise.
  template <class ExecutionSpace, class Values>
  void sumView(ExecutionSpace const &, Values const &) const
  {
  }
};

/// Over every target, the sums of w |a - b|^2 and w |b|^2 of two fields (v[0], v[1]), with
/// w = min(1, cap / |b|^2),
/// each value first multiplied by `scale`, a power of two near the largest |b| (so that no sum
/// over- or underflows; `cap` in those units); or, `maximum`, the largest |b| component (v[0]).
template <class FieldA, class FieldB>
struct FieldDifferenceSums
{
  FieldA a;
  FieldB b;
  PowerOfTwo<double> scale;
  bool maximum;
  double cap = std::numeric_limits<double>::infinity();

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i, solver::SampledSums &sums) const
  {
    double difference = 0, magnitude = 0;
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
      difference += (sx - sy) * (sx - sy);
      magnitude += sy * sy;
    }
    // A target above the cap counts as one of its magnitude: its relative error at the cap.
    double const weight = magnitude > cap ? cap / magnitude : 1.0;
    sums.v[0] += weight * difference;
    sums.v[1] += weight * magnitude;
  }
};

/// to(i, :) = from(i, :) in to's precision.
template <class From, class To>
struct CopyRows
{
  From from;
  To to;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const
  {
    for (int d = 0; d < 3; ++d)
      to(i, d) = static_cast<typename To::non_const_value_type>(from(i, d));
  }
};

/// to(i) = from(i) in to's precision.
template <class From, class To>
struct CopyValues
{
  From from;
  To to;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i) const
  {
    to(i) = static_cast<typename To::non_const_value_type>(from(i));
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

/// Whether Views A and B hold values of one type.
template <class A, class B>
constexpr bool sameValues()
{
  return std::is_same<typename std::decay_t<A>::non_const_value_type,
                      typename std::decay_t<B>::non_const_value_type>::value;
}

/// The caller's sources, charges and targets in double, copied on first use: a float
/// problem's reference evaluated in double (the file comment, step 1).
template <class ExecutionSpace, class Sources, class Charges, class Targets>
struct InDouble
{
  using Memory = typename ExecutionSpace::memory_space;
  using Rows = Kokkos::View<double *[3], Memory>;

  ExecutionSpace space;
  Sources given_sources;
  Charges given_charges;
  Targets given_targets;
  Rows sources_d, targets_d;
  Kokkos::View<double *, Memory> charges_d;

  Rows const &sources()
  {
    if (sources_d.data() == nullptr)
      sources_d = copy(given_sources, "kfmm::calibrate::sources_d");
    return sources_d;
  }
  Rows const &targets()
  {
    if (targets_d.data() == nullptr)
      targets_d = copy(given_targets, "kfmm::calibrate::targets_d");
    return targets_d;
  }
  Kokkos::View<double *, Memory> const &charges()
  {
    if (charges_d.data() == nullptr)
    {
      charges_d = Kokkos::View<double *, Memory>(
          Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::calibrate::charges_d"),
          given_charges.extent(0));
      Kokkos::parallel_for(
          "kfmm::calibrate::charges_in_double",
          Kokkos::RangePolicy<ExecutionSpace>(space, 0, given_charges.extent(0)),
          CopyValues<Charges, Kokkos::View<double *, Memory>>{given_charges, charges_d});
    }
    return charges_d;
  }

private:
  template <class Given>
  Rows copy(Given const &given, char const *label) const
  {
    Rows rows(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, std::string(label)),
              given.extent(0));
    Kokkos::parallel_for("kfmm::calibrate::rows_in_double",
                         Kokkos::RangePolicy<ExecutionSpace>(space, 0, given.extent(0)),
                         CopyRows<Given, Rows>{given, rows});
    return rows;
  }
};

/// sqrt(calibration_bulk_factor) times the median |exact(t, :)| over the k targets of the host
/// View `exact` (k x 3): the largest field magnitude an error counts in full (infinity where
/// the median is 0).
template <class Exact>
double bulkFieldMagnitude(Exact const &exact)
{
  std::vector<double> magnitudes(exact.extent(0));
  for (std::size_t t = 0; t < magnitudes.size(); ++t)
    magnitudes[t] = std::hypot(exact(t, 0), exact(t, 1), exact(t, 2));
  if (magnitudes.empty())
    return 0;
  auto const middle = magnitudes.begin() + static_cast<std::ptrdiff_t>(magnitudes.size() / 2);
  std::nth_element(magnitudes.begin(), middle, magnitudes.end());
  // Most fields zero: every target counts in full.
  return *middle > 0 ? std::sqrt(calibration_bulk_factor) * *middle
                     : std::numeric_limits<double>::infinity();
}

/// What one evaluated row says of the problem: its theta, its table error, and the ratio of
/// what was measured of it (on the samples, or its difference from the reference) to that.
struct RowMeasurement
{
  double theta;
  double table_error;
  double ratio;
};

/// The problem's error at a row of theta `theta` and table error `table_error`, predicted as
/// the table error times the ratio measured at the row nearest in theta, and of those the
/// nearest in table error: the table's errors are the worst of three distributions, and how
/// far a problem stays below them depends most on theta (the clustered distributions that set
/// the table's worst case suffer most from wide thetas). None measured: no prediction (0).
inline double predictedError(std::vector<RowMeasurement> const &measured, double theta,
                             double table_error)
{
  RowMeasurement const *nearest = nullptr;
  auto const distance = [&](RowMeasurement const &m) {
    return std::make_pair(std::abs(m.theta - theta),
                          std::abs(std::log(m.table_error / table_error)));
  };
  for (RowMeasurement const &m : measured)
    if (nearest == nullptr || distance(m) < distance(*nearest))
      nearest = &m;
  return nearest == nullptr ? 0.0 : nearest->ratio * table_error;
}

/// Step 3 of the file comment beyond the backend's front `table`: the rows of `fronts` (every
/// backend's) that it lacks, each evaluated by `evaluate(row)` while one is left whose
/// predicted error is within `allowed`, that is not at most as accurate as a row that missed
/// (`dominated(order, theta)`), and that does less work than the kept row (`kept`, which an
/// evaluation that met in sufficiently less time replaces, of `kept_seconds`) and than every
/// evaluation that took longer (`trials`), the least accurate first (the fronts' own order), at
/// most calibration_beyond_front_trials of them. A setting of an order no lower and a theta no
/// larger than another's does at least its work: more terms, more pairs of cells, and leaves
/// no smaller, the leaf size growing with the order.
template <class Fronts, class Dominated, class Evaluate>
void tryBeyondFront(tuning::AccuracyRows table, Fronts const &fronts,
                    std::vector<RowMeasurement> const &measured,
                    std::vector<CalibrationTrial> const &trials, Dominated const &dominated,
                    Options const &kept, double const &kept_seconds, double allowed,
                    Evaluate const &evaluate)
{
  auto const atLeastTheWorkOf = [](tuning::AccuracyRow const &row, int order, double theta) {
    return row.order >= order && row.theta <= theta;
  };
  auto const slower = [&](tuning::AccuracyRow const &row) {
    return atLeastTheWorkOf(row, kept.order, kept.theta) ||
           std::any_of(trials.begin(), trials.end(), [&](CalibrationTrial const &t) {
             return !t.in_double && !t.direct_sum && t.seconds >= kept_seconds &&
                    atLeastTheWorkOf(row, t.order, t.theta);
           });
  };
  // The rows of `fronts` that `table` lacks, each once.
  std::vector<tuning::AccuracyRow> left;
  for (tuning::AccuracyRows const &front : fronts)
    for (int j = 0; j < front.count; ++j)
    {
      tuning::AccuracyRow const &row = front.rows[j];
      bool const listed = std::any_of(left.begin(), left.end(), [&](tuning::AccuracyRow const &r) {
        return r.order == row.order && r.theta == row.theta;
      });
      if (!listed && !tuning::holds(table, row.order, row.theta))
        left.push_back(row);
    }
  for (int trial = 0; trial < calibration_beyond_front_trials; ++trial)
  {
    auto next = left.end();
    double next_prediction = 0;
    for (auto r = left.begin(); r != left.end(); ++r)
    {
      double const prediction = predictedError(measured, r->theta, r->field_error);
      if (prediction <= allowed && prediction > next_prediction && !dominated(r->order, r->theta) &&
          !slower(*r))
      {
        next = r;
        next_prediction = prediction;
      }
    }
    if (next == left.end())
      return;
    tuning::AccuracyRow const row = *next;
    left.erase(next);
    evaluate(row);
  }
}

/// An evaluation's Stats and its seconds to the end of its kernels.
struct TimedStats
{
  Stats stats;
  double seconds;
};

/// calibrate's search (the file comment) for `targets` (the sources themselves for one set),
/// the chosen row's results left in `potential` and `field`. `solve(options, phi, g)`
/// evaluates the problem with `options` into Views phi and g (N and N x 3) of the caller's
/// precision, or of double, and returns its Stats. `ranks` (OneRank, or the distributed
/// calibrate's) spans the targets of every rank that calls it: `sources`, `charges`, `targets`
/// and the Views are this rank's, the samples are strided over every rank's targets in rank
/// order, and every rank measures the same errors and times and so chooses alike.
template <class ExecutionSpace, class Sources, class Charges, class Targets, class Potential,
          class Field, class Solve, class Ranks = OneRank>
Calibration calibrateRows(ExecutionSpace const &space, Sources const &sources,
                          Charges const &charges, Targets const &targets,
                          Potential const &potential, Field const &field, Options const &options,
                          Solve const &solve, Ranks const &ranks = {},
                          std::string const &where = "kfmm::calibrate")
{
  using Real = typename Potential::non_const_value_type;
  constexpr bool is_float = std::is_same<Real, float>::value;
  using Memory = typename ExecutionSpace::memory_space;
  Kokkos::Timer timer;

  // Options::check_samples is the count of calibrate's samples, never a sampled check of its
  // evaluations (every candidate runs without one), so it is valid with periodic boundaries.
  Options checked = options;
  checked.check_samples = 0;
  validate(checked, where);
  require(options.check_samples >= 0, where,
          "option 'check_samples' must be >= 0 (0: " + formatNumber(default_calibration_samples) +
              "), got " + formatNumber(options.check_samples));
  require(options.tolerance > 0, where,
          "option 'tolerance' must be > 0: calibrate chooses order and theta for it");
  bool const is_periodic = options.periodic.enabled;
  require(!is_periodic || options.softening == 0, where,
          "option 'softening' cannot be calibrated with 'periodic': the reference, Ewald's sum, "
          "is of the unsoftened kernel (Options::tolerance alone chooses from the accuracy "
          "table)");
  // No evaluation in Real reaches a relative error below its rounding; above it, a tolerance
  // below every row of the table is tried at its most accurate row.
  double const rounding = std::numeric_limits<Real>::epsilon();
  require(options.tolerance >= rounding, where,
          "option 'tolerance' " + formatNumber(options.tolerance) + " is below what " +
              (is_float ? "float" : "double") + " reaches: its rounding, " +
              formatBoundAbove(rounding, 3) + (is_float ? " (compute in double for less)" : ""));
  std::size_t const n = targets.extent(0);
  requireExtent(where, "charges", charges.extent(0), sources.extent(0));
  requireExtent(where, "potential", potential.extent(0), n);
  requireExtent(where, "field", field.extent(0), n);
  double const tolerance = options.tolerance;

  using Tuning = tuning::Tuning<ExecutionSpace>;
  tuning::AccuracyRows const table = accuracyRows<Tuning, Real>();
  tuning::AccuracyRow const *const rows = table.rows;
  int const count = table.count;
  Calibration result;
  int const table_choice = tuning::servingRow(table, tolerance);
  if (table_choice >= 0)
  {
    result.table_order = rows[table_choice].order;
    result.table_theta = rows[table_choice].theta;
  }
  double const reference_tolerance = tolerance / calibration_reference_factor;
  int const safer = tuning::servingRow(table, reference_tolerance);
  // Where float's table serves no reference row, double's may: its rows reach far below.
  tuning::AccuracyRows const double_table = accuracyRows<Tuning, double>();
  int const double_reference =
      is_float && safer < 0 ? tuning::servingRow(double_table, reference_tolerance) : -1;

  // Every rank's targets, and where this rank's start among them (named one by one: the
  // lambdas below capture them, and C++17 lambdas cannot capture a structured binding).
  std::pair<std::size_t, std::size_t> const span = ranks.span(n);
  std::size_t const total = span.first, first = span.second;
  std::size_t const k = std::min(
      total, static_cast<std::size_t>(options.check_samples > 0 ? options.check_samples
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
  Kokkos::View<Real *, Memory> phi(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::calibrate::potential"), n);
  using CandidateField = Kokkos::View<Real *[3], Memory>;
  CandidateField g(Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::calibrate::field"),
                   n);
  // The reference's field in double (step 2 of the file comment), and its error and scale.
  using ReferenceField = Kokkos::View<double *[3], Memory>;
  ReferenceField reference;
  bool have_reference = false; // a rank may hold no target, and its reference no memory
  double reference_error = 0;
  PowerOfTwo<double> reference_scale;
  double bulk = 0; // bulkFieldMagnitude of the samples' direct sum
  PowerOfTwo<double> exact_scale;
  bool have_exact = false;
  auto const policy = Kokkos::RangePolicy<ExecutionSpace>(space, 0, n);
  // A power of two near the largest component of the first `count` rows of `values`.
  auto const scaleOf = [&](auto const &values, std::size_t count) {
    using Values = std::decay_t<decltype(values)>;
    solver::SampledSums largest{};
    Kokkos::parallel_reduce("kfmm::calibrate::largest",
                            Kokkos::RangePolicy<ExecutionSpace>(space, 0, count),
                            FieldDifferenceSums<Values, Values>{values, values, {}, true},
                            solver::SampledReducer(largest, true));
    return PowerOfTwo<double>::of(-solver::scaleExponent(ranks.largest(largest.v[0])));
  };
  // The relative L2 difference of the field `a` from the field `b` over their first `count`
  // rows, each row with |b| above bulk weighted as one of magnitude bulk; `scale` is b's. The
  // rows are this rank's targets (`every_rank`: summed over the ranks) or the samples, which
  // every rank holds.
  auto const bulkDifference = [&](auto const &a, auto const &b, std::size_t count,
                                  PowerOfTwo<double> scale, bool every_rank) {
    using A = std::decay_t<decltype(a)>;
    using B = std::decay_t<decltype(b)>;
    solver::SampledSums sums{};
    Kokkos::parallel_reduce(
        "kfmm::calibrate::difference", Kokkos::RangePolicy<ExecutionSpace>(space, 0, count),
        FieldDifferenceSums<A, B>{a, b, scale, false, scale(bulk) * scale(bulk)},
        solver::SampledReducer(sums, false));
    if (every_rank)
      ranks.sum(sums.v, 2);
    return solver::relativeError(sums.v[0], sums.v[1]);
  };

  auto const candidate = [&](tuning::AccuracyRow const &row) {
    Options o = options;
    o.tolerance = 0;
    o.order = row.order;
    o.theta = row.theta;
    return o;
  };
  // The direct sum's options (step 4): one leaf of every particle (and of every target), so
  // that no pair of cells is far; order 1, the cheapest expansions, which no far pair reads.
  std::size_t const largest_set = std::max<std::size_t>({n, sources.extent(0), 1});
  bool const direct_fits = largest_set <= static_cast<std::size_t>(std::numeric_limits<int>::max());
  auto const directCandidate = [&] {
    Options o = options;
    o.tolerance = 0;
    o.order = 1;
    o.leaf_size = static_cast<int>(largest_set);
    return o;
  };
  // solve(o, phi, g), and its seconds to the end of its kernels.
  double slowest_seconds = 0;
  auto const timedSolve = [&](Options const &o, auto const &to_phi, auto const &to_g) {
    space.fence();
    Kokkos::Timer clock;
    TimedStats run{solve(o, to_phi, to_g), 0};
    space.fence();
    run.seconds = ranks.largest(clock.seconds()); // the slowest rank's: every rank decides alike
    slowest_seconds = std::max(slowest_seconds, run.seconds);
    return run;
  };
  // The sampled targets' field error of the field `values` against the direct sum (Ewald's
  // sum).
  auto const sampledError = [&](auto const &values) {
    if (!have_exact)
    {
      // After the first evaluation, which checked the positions and charges in the solver's
      // words.
      Kokkos::parallel_for(
          "kfmm::calibrate::gather_positions", Kokkos::RangePolicy<ExecutionSpace>(space, 0, k),
          GatherSampledRows<Targets, Samples>{targets, sampled_positions, total, first});
      ranks.sumView(space, sampled_positions);
      if (is_periodic)
      {
        // Ewald's sum adds to its results. The period is the box's side, or that of the
        // cube the solver puts around the particles.
        Kokkos::deep_copy(space, exact_potential, 0.0);
        Kokkos::deep_copy(space, exact_field, 0.0);
        double const period = options.periodic.ownCube() ? tree::boundingCube(space, sources).side
                                                         : options.periodic.side[0];
        periodic::ewaldSum(space, period, sampled_positions, sources, charges, exact_potential,
                           exact_field);
      }
      else
        kfmm::directSum(space, sampled_positions, sources, charges, exact_potential, exact_field,
                        options.softening);
      // Each rank's sources' share, summed: coincident points do not interact, so a target's
      // own particle, on whichever rank, adds nothing.
      ranks.sumView(space, exact_potential);
      ranks.sumView(space, exact_field);
      Kokkos::deep_copy(space, exact, exact_field);
      space.fence();
      bulk = bulkFieldMagnitude(exact);
      exact_scale = scaleOf(exact_field, k);
      have_exact = true;
    }
    using Values = std::decay_t<decltype(values)>;
    Kokkos::parallel_for("kfmm::calibrate::gather_field",
                         Kokkos::RangePolicy<ExecutionSpace>(space, 0, k),
                         GatherSampledRows<Values, Samples>{values, sampled_field, total, first});
    ranks.sumView(space, sampled_field);
    return bulkDifference(sampled_field, exact_field, k, exact_scale, false);
  };
  // The candidate's difference from the reference over every target.
  auto const referenceDifference = [&] {
    return bulkDifference(g, reference, n, reference_scale, true);
  };
  // `values` (N x 3, in Real or double) becomes the reference, of error `error` on the samples
  // at a row of table error `table_error`; `served` where a table served it for a tenth of the
  // tolerance.
  auto const becomeReference = [&](auto const &values, double error, double table_error,
                                   bool served) {
    reference = ReferenceField(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::calibrate::reference"), n);
    using Values = std::decay_t<decltype(values)>;
    Kokkos::parallel_for("kfmm::calibrate::copy_reference", policy,
                         CopyRows<Values, ReferenceField>{values, reference});
    // Samples may miss where a clustered problem's error gathers; the table's error of the
    // row, the worst of three distributions, bounds it there. A row no table serves for a
    // tenth of the tolerance (the most accurate one, taken for want of such a row) met on its
    // samples alone, and its table error may be most of the tolerance or above it: the faster
    // rows are held to the test it passed, its error on the samples.
    reference_error = served ? std::max(error, table_error) : error;
    have_reference = true;
    reference_scale = scaleOf(reference, n);
  };
  // Whether an error measured meets the tolerance: on the samples while there is no
  // reference, times the margin; else a difference from the reference, plus the margin times
  // the reference's error.
  auto const meetsTolerance = [&](double measured) {
    return !have_reference ? measured * calibration_margin <= tolerance
                           : measured + calibration_margin * reference_error <= tolerance;
  };

  std::vector<RowMeasurement> measured;
  // Each row of the table: not evaluated, or met or missed; the fastest row known to meet.
  enum class Known
  {
    not_evaluated,
    met,
    missed
  };
  std::vector<Known> known(static_cast<std::size_t>(count), Known::not_evaluated);
  int met = count;
  // The order and theta of every row of the caller's precision that missed, and whether a
  // setting is at most as accurate as one of them (an order no higher, a theta no smaller).
  std::vector<std::pair<int, double>> missed;
  auto const dominated = [&](int order, double theta) {
    return std::any_of(missed.begin(), missed.end(), [&](std::pair<int, double> const &m) {
      return order <= m.first && theta >= m.second;
    });
  };
  // The setting whose results the caller's Views hold, its error and its time.
  bool kept = false;
  Options kept_options;
  double kept_error = 0;
  double kept_seconds = 0;
  auto const keep = [&](Options const &o, TimedStats const &run, double error) {
    Kokkos::parallel_for(
        "kfmm::calibrate::keep_results", policy,
        CopyResults<decltype(phi), CandidateField, Potential, Field>{phi, g, potential, field});
    kept = true;
    kept_options = o;
    kept_error = error;
    kept_seconds = run.seconds;
    result.stats = run.stats;
  };
  // Evaluates `row` in the caller's precision into phi and g and notes what it measures (its
  // trial, its ratio to the table, a miss): what was measured (on the samples, or the
  // difference from the reference), whether it meets, and the error estimated (for a row
  // measured against the reference, a bound).
  struct RowOutcome
  {
    TimedStats run;
    double value;
    bool meets;
    double error;
  };
  auto const measureRow = [&](tuning::AccuracyRow const &row) {
    Options o = candidate(row);
    o.check_samples = 0;
    TimedStats const run = timedSolve(o, phi, g);
    bool const sampled = !have_reference;
    double const value = k == 0 ? 0.0 : sampled ? sampledError(g) : referenceDifference();
    bool const meets = meetsTolerance(value);
    double const error = sampled ? value : value + reference_error;
    if (!meets)
      missed.emplace_back(row.order, row.theta);
    result.trials.push_back({row.order, row.theta, false, false, error, meets, run.seconds});
    measured.push_back({row.theta, row.field_error, value / row.field_error});
    return RowOutcome{run, value, meets, error};
  };
  // Evaluates row `j` of the caller's precision's table.
  auto const evaluateRow = [&](int j) {
    bool const sampled = !have_reference;
    RowOutcome const r = measureRow(rows[j]);
    known[static_cast<std::size_t>(j)] = r.meets ? Known::met : Known::missed;
    if (r.meets)
      met = std::min(met, j);
    if (r.meets && sampled && k > 0)
      becomeReference(g, r.value, rows[j].field_error, safer >= 0);
    // The Views keep the fastest row that meets, or while none has, the least error.
    if (r.meets || !kept || (met == count && r.error < kept_error))
      keep(candidate(rows[j]), r.run, r.error);
  };

  // 1. The reference: rows of `candidates` from `start`, each evaluated by `evaluate(j)`,
  // climbing while none meets to the fastest more accurate row predicted to meet, else the
  // most accurate, once.
  auto const climb = [&](tuning::AccuracyRows const &candidates, int start, auto const &evaluate) {
    for (int j = start; j >= 0 && j < candidates.count;)
    {
      evaluate(j);
      if (have_reference || k == 0)
        return;
      int const tried = j;
      j = -1;
      for (int i = tried + 1; i < candidates.count && j < 0; ++i)
        if (meetsTolerance(
                predictedError(measured, candidates.rows[i].theta, candidates.rows[i].field_error)))
          j = i;
      if (j < 0 && tried < candidates.count - 1)
        j = candidates.count - 1;
    }
  };
  // In double for a float problem whose table serves no row for it.
  if (double_reference >= 0 && k > 0)
  {
    Kokkos::View<double *, Memory> phi_d(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::calibrate::potential_d"), n);
    ReferenceField g_d(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::calibrate::field_d"), n);
    climb(double_table, double_reference, [&](int j) {
      tuning::AccuracyRow const &row = double_table.rows[j];
      Options o = candidate(row);
      o.check_samples = 0;
      TimedStats const run = timedSolve(o, phi_d, g_d);
      double const error = sampledError(g_d);
      bool const meets = meetsTolerance(error);
      result.trials.push_back({row.order, row.theta, true, false, error, meets, run.seconds});
      measured.push_back({row.theta, row.field_error, error / row.field_error});
      if (meets)
        becomeReference(g_d, error, row.field_error, true);
    });
  }
  // Else, or where no row of double's met, rows of the caller's precision.
  if (!have_reference)
    climb(table, safer >= 0 ? safer : count - 1, evaluateRow);

  // 2.-3. Faster rows: the fastest one not evaluated, not at most as accurate as a row that
  // missed (an order no higher and a theta no smaller), whose predicted error is within
  // calibration_probe_factor of what meets, until none is.
  while (have_reference)
  {
    int next = -1;
    double const allowed = tolerance - calibration_margin * reference_error;
    for (int j = 0; j < met && next < 0; ++j)
      if (known[static_cast<std::size_t>(j)] == Known::not_evaluated &&
          !dominated(rows[j].order, rows[j].theta) &&
          predictedError(measured, rows[j].theta, rows[j].field_error) <=
              calibration_probe_factor * allowed)
        next = j;
    if (next < 0)
      break;
    evaluateRow(next);
  }
  // 3. Rows of other backends' fronts, once a row of this one met.
  if (have_reference && met < count)
    tryBeyondFront(table, tuning::everyFront<Real>(), measured, result.trials, dominated,
                   kept_options, kept_seconds, tolerance - calibration_margin * reference_error,
                   [&](tuning::AccuracyRow const &row) {
                     RowOutcome const r = measureRow(row);
                     if (r.meets &&
                         r.run.seconds <= calibration_beyond_front_time_factor * kept_seconds)
                       keep(candidate(row), r.run, r.error);
                   });
  // No row of the caller's precision evaluated, or none met: its most accurate row, so that
  // the Views hold the least error there is.
  if (!kept || (met == count && known[static_cast<std::size_t>(count - 1)] == Known::not_evaluated))
    evaluateRow(count - 1);

  // 4. The direct sum, where its predicted time is within calibration_probe_factor of the
  // fastest row that met (of the slowest evaluation where none met).
  double direct_predicted = 0;
  bool direct_tried = false, direct_met = false;
  // The seconds of a direct sum in Real at the first m targets, to the end of its kernels.
  auto const timedDirectSum = [&](std::size_t m) {
    Kokkos::View<Real *, Memory> some_phi(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::calibrate::direct_potential"),
        m);
    Kokkos::View<Real *[3], Memory> some_field(
        Kokkos::view_alloc(space, Kokkos::WithoutInitializing, "kfmm::calibrate::direct_field"), m);
    auto const some = Kokkos::subview(targets, std::make_pair(std::size_t(0), m), Kokkos::ALL);
    space.fence();
    Kokkos::Timer clock;
    kfmm::directSum(space, some, sources, charges, some_phi, some_field, options.softening);
    space.fence();
    return clock.seconds();
  };
  if (k > 0 && direct_fits && !is_periodic && Ranks::holds_every_source)
  {
    double const budget = met < count ? kept_seconds : slowest_seconds;
    // Timed at the samples' count of targets and scaled to every target. Where that is more
    // than the probe allows but took under half the budget, its fixed costs (checks, launches)
    // may make up most of it: timed again at four times as many targets (up to all), and
    // extrapolated along the line through the two.
    std::size_t const first = k;
    double const first_seconds = timedDirectSum(first);
    direct_predicted = first_seconds * static_cast<double>(n) / static_cast<double>(first);
    if (direct_predicted > calibration_probe_factor * budget && first < n &&
        first_seconds < budget / 2)
    {
      std::size_t const second = std::min(n, 4 * first);
      double const second_seconds = timedDirectSum(second);
      double const per_target =
          std::max(0.0, (second_seconds - first_seconds) / static_cast<double>(second - first));
      direct_predicted = second_seconds + per_target * static_cast<double>(n - second);
    }
    if (direct_predicted <= calibration_probe_factor * budget)
    {
      if (met < count)
      {
        // The row's one evaluation may have paid for what a setting's first evaluation
        // allocates and touches, which the direct sum, evaluated after it, does not: it is
        // timed once more, and the two compared at its faster time.
        Options again = kept_options;
        again.check_samples = 0;
        kept_seconds = std::min(kept_seconds, timedSolve(again, phi, g).seconds);
        for (CalibrationTrial &t : result.trials)
          if (!t.in_double && t.meets && t.order == kept_options.order &&
              t.theta == kept_options.theta)
            t.seconds = std::min(t.seconds, kept_seconds);
      }
      Options o = directCandidate();
      o.check_samples = 0;
      TimedStats const run = timedSolve(o, phi, g);
      double const error = sampledError(g);
      bool const meets = error * calibration_margin <= tolerance;
      result.trials.push_back({o.order, o.theta, false, true, error, meets, run.seconds});
      if ((meets && (met == count || run.seconds < kept_seconds)) ||
          (met == count && error < kept_error))
      {
        keep(directCandidate(), run, error);
        result.direct_sum = true;
      }
      direct_met = meets;
      direct_tried = true;
    }
  }

  space.fence();
  result.evaluations = static_cast<int>(result.trials.size());
  result.options = kept_options;
  result.field_error = kept_error;
  result.tolerance_missed = met == count && !direct_met;
  result.seconds = timer.seconds();
  if (result.tolerance_missed && !options.allow_missed_tolerance)
  {
    // The least error, and the direct sum where it was not tried.
    std::string const least = result.direct_sum
                                  ? std::string("by the direct sum")
                                  : "at order " + formatNumber(kept_options.order) + " and theta " +
                                        formatNumber(kept_options.theta);
    std::string const direct =
        direct_tried ? std::string(" nor the direct sum")
        : direct_predicted > 0
            ? " (the direct sum, option 'leaf_size' " + formatNumber(largest_set) +
                  ", was not tried: predicted to take " + formatBoundAbove(direct_predicted, 2) +
                  " s, above twice the slowest evaluation)"
            : std::string();
    char error[32];
    std::snprintf(error, sizeof error, "%.3g", kept_error);
    throw ToleranceError(where +
                             ": no row of the backend's accuracy table reaches option "
                             "'tolerance' " +
                             formatNumber(tolerance) + direct +
                             " on this input: the least relative L2 field error estimated (" +
                             formatNumber(k) + " sampled targets), " + least + ", is " + error +
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
/// targets (default_calibration_samples where 0) against the direct sum in double (Ewald's
/// sum with Options::periodic), and returns the fastest row that meets the tolerance by
/// calibration_margin, or the direct sum where it meets it in less time, whose results it
/// leaves in `potential` (N) and `field` (N x 3). The Views are those of kfmm::evaluate. It
/// costs the evaluations (Calibration::evaluations) and the reference and the direct sum's
/// prediction, each samples x N pairs (Ewald's sum at the samples, with periodic boundaries,
/// costs far more: periodic/EwaldSum.hpp); for time steps, calibrate once and evaluate with
/// Calibration::options.
/// \throws kfmm::Exception on what kfmm::evaluate refuses, a tolerance of 0, or softening with
/// periodic boundaries; kfmm::ToleranceError where nothing evaluated meets the tolerance,
/// unless Options::allow_missed_tolerance.
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
  {
    detail::InDouble<ExecutionSpace, Positions, Charges, Positions> in_double{space, positions,
                                                                              charges, positions};
    return detail::calibrateRows(space, positions, charges, positions, potential, field, options,
                                 [&](Options const &o, auto const &phi, auto const &g) {
                                   if constexpr (detail::sameValues<decltype(phi), Potential>())
                                     return kfmm::evaluate(space, positions, charges, phi, g, o);
                                   else
                                     return kfmm::evaluate(space, in_double.sources(),
                                                           in_double.charges(), phi, g, o);
                                 });
  }
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
  {
    detail::InDouble<ExecutionSpace, Sources, Charges, Targets> in_double{space, sources, charges,
                                                                          targets};
    return detail::calibrateRows(
        space, sources, charges, targets, potential, field, options,
        [&](Options const &o, auto const &phi, auto const &g) {
          if constexpr (detail::sameValues<decltype(phi), Potential>())
            return kfmm::evaluate(space, sources, charges, targets, phi, g, o);
          else
            return kfmm::evaluate(space, in_double.sources(), in_double.charges(),
                                  in_double.targets(), phi, g, o);
        });
  }
  else
    return {};
}

} // namespace kfmm

#endif
