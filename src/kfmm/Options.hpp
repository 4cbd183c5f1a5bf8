// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_OPTIONS_HPP
#define KFMM_OPTIONS_HPP

#include <kfmm/Exception.hpp>
#include <kfmm/tuning/AccuracyTable.hpp>
#include <kfmm/tuning/LeafSizeTable.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/expansions/SphericalHarmonics.hpp>
#include <kfmm/tree/ListRules.hpp>

#include <array>
#include <cmath>
#include <iterator>
#include <string>
#include <type_traits>

namespace kfmm
{

/// How the far field is evaluated. The enumerators name the interaction lists each
/// method needs (tree::ListKind):
///   fmm,      multipole-to-local translations between cells, then local expansions (O(N))
///   treecode  multipoles evaluated directly at the particles of each target leaf (O(N log N))
using Method = tree::ListKind;

inline char const *methodName(Method m) { return m == Method::fmm ? "fmm" : "treecode"; }

/// How the FMM's multipole-to-local translations are computed.
enum class M2LVariant
{
  automatic, ///< the backend's measured choice for the order (its tuning data)
  per_pair,  ///< each pair's operator built and applied on the fly, O(p^4) per pair
  grouped,   ///< pairs grouped by relative position, one precomputed matrix per group,
             ///< applied as team matrix products (register-tiled, or Kokkos Kernels'
             ///< team GEMM where a backend's tuning chooses it)
  rotation   ///< rotation to the pair's axis, coaxial translation, rotation back, O(p^3)
             ///< per pair, with rotations precomputed per direction
};

/// The variant's name as the program's --m2l option spells it.
inline char const *m2lVariantName(M2LVariant v)
{
  switch (v)
  {
  case M2LVariant::per_pair: return "per-pair";
  case M2LVariant::grouped: return "grouped";
  case M2LVariant::rotation: return "rotation";
  default: return "auto";
  }
}

/// Which pairs of cells interact through their expansions (the multipole acceptance
/// criterion of the interaction lists): tree::Acceptance, whose enumerators say each rule.
using Acceptance = tree::Acceptance;

inline char const *acceptanceName(Acceptance a)
{
  return a == Acceptance::classic ? "classic" : "theta";
}

/// Periodic boundaries in all three directions (docs/PERIODIC.md): the potential and field of
/// the infinite periodic lattice of the particles in a cubic box. A charge-neutral box gets
/// Ewald's result with the tin-foil (conducting) boundary; a box with a net charge gets the
/// result with a uniform neutralising background, whose potential has zero mean over the
/// box. Every particle must lie in the box (lower <= x < lower + side), or the build throws.
struct Periodic
{
  bool enabled = false;
  std::array<double, 3> lower{0, 0, 0}; ///< the box's lowest corner
  /// The box's sides, equal (cubic boxes only); all 0: the cube the solver puts around the
  /// particles (their bounding box's longest side, 1e-6 wider, about its centre).
  std::array<double, 3> side{0, 0, 0};

  bool ownCube() const { return side[0] == 0 && side[1] == 0 && side[2] == 0; }
};

/// The solver's parameters. The defaults (order 6, theta 0.7) give a field error near 1e-4
/// on uniform and Plummer distributions, the fastest setting found at that error on the GPU
/// (docs/ACCURACY.md says what error each setting reaches).
struct Options
{
  /// The relative L2 field error to reach, > 0; 0: none, order and theta as given. With a
  /// tolerance the solver chooses order and theta (theta rule) from its backend's measured
  /// accuracy table (docs/ACCURACY.md): the fastest pair whose measured error, with a margin,
  /// is within it on any distribution. Leave order, theta and acceptance at their defaults
  /// then; Stats says what was chosen. kfmm::calibrate (kfmm/Calibrate.hpp) measures the
  /// fastest pair that meets it on the caller's own problem. A periodic box with a net charge
  /// over nearly uniform particles can miss the table's choice (docs/PERIODIC.md): calibrate,
  /// or check it (check_samples).
  double tolerance = 0;
  /// Expansion order p: degrees 0..p of the spherical-harmonic expansions (1..max_order).
  int order = 6;
  /// Acceptance parameter of the test (R_t + R_s) < theta |c_t - c_s|, in (0, 1]: smaller is
  /// more accurate and more expensive.
  double theta = 0.7;
  /// The acceptance rule; theta applies to Acceptance::theta only.
  Acceptance acceptance = Acceptance::theta;
  /// A cell splits while it holds more than this many particles (and is above level 21);
  /// 0: the fastest measured on the backend for the order and precision (its tuning table,
  /// docs/TUNING.md; Stats says what was used). At least the number of particles (and of
  /// targets): one leaf, no far pair, and the evaluation is the all-pairs direct sum alone
  /// (kfmm::calibrate chooses it where it is faster than the FMM).
  int leaf_size = 0;
  Method method = Method::fmm;
  /// The FMM's M2L variant; automatic takes the backend's tuned choice. The variants agree
  /// to rounding.
  M2LVariant m2l_variant = M2LVariant::automatic;
  /// Plummer softening length eps >= 0: 1/r becomes 1/sqrt(r^2 + eps^2). The near field (P2P)
  /// computes the softened kernel; the far field expands the unsoftened 1/r, whose field
  /// differs from the softened one by a relative 3 eps^2 / (2 r^2) at distance r, so a pair
  /// of cells is far only where its particles are at least eps sqrt(1.5 / share) apart, share
  /// being a third of the error that the backend's accuracy table gives order and theta,
  /// times its margin (at most the tolerance that chose them): docs/ACCURACY.md. A softening
  /// that is large against the particles' spacing makes most pairs near, at the cost of the
  /// direct sum.
  double softening = 0;
  /// After each evaluation, check the potential and field for NaN and infinity (counted as
  /// they are written) and throw kfmm::Exception naming the first bad particle. The charges'
  /// check (NaN or infinite charges throw either way) then waits for the same read at the
  /// end, and the charges' unit is found on the device; off, the host finds it before the
  /// evaluation, which waits for the device once more. Turn off only where a wrong answer
  /// going unnoticed matters less than that read.
  bool check_results = true;
  /// Fence after every stage of the build and of the evaluation and record its time in
  /// Stats::stage_seconds (the program turns this on). Off, the stages run back to back on
  /// the caller's execution-space instance and only what must reach the host waits for the
  /// device: the sizes of the build and the results' check (with the charges' check), or,
  /// without the results' check, the charges' range; with
  /// check_results off an evaluation may return before its kernels end, as Kokkos kernels
  /// do (fence the instance, or deep_copy the results, before reading them on the host).
  bool time_stages = false;
  /// Where the backend runs kernels of two instances at once (CUDA), the far field's
  /// translations (P2M, M2M and, for the FMM, M2L and L2L) run on a second instance of the
  /// execution space, of the highest priority, while the near field runs on the caller's;
  /// the far field's last stage (L2P or M2P) follows both on the caller's instance.
  /// kfmm::evaluate starts P2M and M2M there while its build makes the interaction lists. The
  /// results are the same bit for bit either way. Off, or with time_stages, or on the host
  /// spaces, every kernel runs on the caller's instance, one after another.
  bool concurrent_far_field = true;
  /// Hand back results that the precision cannot give accurately: where positions given in
  /// double are so close together, for their coordinates, that rounding them to float moves
  /// a sizeable part of them (Stats::precision_limited), evaluate() throws
  /// kfmm::PrecisionError unless this is on (then Stats says so and nothing throws).
  bool allow_unresolved = false;
  /// After each evaluation, measure the relative L2 error of the potential and the field on
  /// this many targets against the direct sum in double over all sources, on the device
  /// (Stats::sampled_field_error; solver/SampledCheck.hpp): targets evenly strided in the
  /// caller's order (all of them where there are no more), at a cost of check_samples x N
  /// pairs (with periodic boundaries, Ewald's sum: those pairs' nearest images and wave
  /// vectors, docs/PERIODIC.md). The reference takes the softening, and the positions as the solver
  /// holds them (exactly the caller's for positions given in the solver's precision). With a
  /// tolerance, a field error above it throws kfmm::ToleranceError. 0: no check.
  int check_samples = 0;
  /// With check_samples and a tolerance, take results whose measured field error is above the
  /// tolerance instead of throwing kfmm::ToleranceError (Stats::tolerance_missed says so).
  bool allow_missed_tolerance = false;
  /// Periodic boundaries (Periodic); the FMM of one set of particles only (no separate
  /// targets, no treecode), on one rank. The sampled check then compares with Ewald's sum
  /// in double (periodic/EwaldSum.hpp), without softening.
  Periodic periodic;
};

/// The largest expansion order kfmm supports.
constexpr int max_order = expansions::max_order;

namespace detail
{

/// Throws kfmm::Exception naming the first invalid option.
inline void validate(Options const &o, std::string const &where)
{
  require(o.order >= 1 && o.order <= max_order, where,
          "option 'order' must be in 1.." + formatNumber(max_order) + ", got " +
              formatNumber(o.order));
  require(o.theta > 0 && o.theta <= 1, where,
          "option 'theta' must be in (0, 1], got " + formatNumber(o.theta));
  require(o.leaf_size >= 0, where,
          "option 'leaf_size' must be >= 1, or 0 for the backend's tuned one, got " +
              formatNumber(o.leaf_size));
  require(o.softening >= 0 && std::isfinite(o.softening), where,
          "option 'softening' must be finite and >= 0, got " + formatNumber(o.softening));
  require(o.tolerance >= 0 && std::isfinite(o.tolerance), where,
          "option 'tolerance' must be finite and >= 0 (0: none), got " + formatNumber(o.tolerance));
  require(o.check_samples >= 0, where,
          "option 'check_samples' must be >= 0 (0: no check), got " +
              formatNumber(o.check_samples));
  if (o.periodic.enabled)
  {
    auto const &box = o.periodic;
    for (int d = 0; d < 3; ++d)
      require(std::isfinite(box.lower[d]) && std::isfinite(box.side[d]) && box.side[d] >= 0, where,
              "option 'periodic': the box's lower corner and sides must be finite, the "
              "sides >= 0 (all 0: the particles' cube), got side " +
                  formatNumber(box.side[d]) + " along axis " + formatNumber(d));
    require(box.ownCube() ||
                (box.side[0] > 0 && box.side[0] == box.side[1] && box.side[0] == box.side[2]),
            where,
            "option 'periodic': the box must be a cube (equal sides), got " +
                formatNumber(box.side[0]) + " x " + formatNumber(box.side[1]) + " x " +
                formatNumber(box.side[2]) + "; boxes of unequal sides are not supported yet");
    require(o.method == Method::fmm, where,
            "option 'periodic' needs method fmm: the treecode has no local expansions for the "
            "far lattice");
    require(o.check_samples == 0 || o.softening == 0, where,
            "option 'check_samples' with 'periodic' needs 'softening' 0: the sampled check's "
            "reference, Ewald's sum, is unsoftened");
  }
  Options const defaults;
  require(o.tolerance == 0 || (o.order == defaults.order && o.theta == defaults.theta &&
                               o.acceptance == defaults.acceptance),
          where,
          "option 'tolerance' chooses 'order' and 'theta': leave them, and 'acceptance', at "
          "their defaults");
}

/// The share of the field error left to the far field's unsoftened kernel: a third of the
/// tolerance that order and theta serve (the error the backend's accuracy table gives them
/// times its margin: at most the tolerance that chose them), the rest being the expansions'.
constexpr double softening_share = 1.0 / 3;

/// The least distance between the particles of a far pair of cells (tree::detail::thetaAccepts)
/// in the caller's units, for the order and theta that withTunedParameters filled in: 0
/// without softening; else the r at which the relative difference 3 eps^2 / (2 r^2) between
/// the fields of the softened and the unsoftened kernel is softening_share of the tolerance
/// that order and theta serve. It depends on the options alone, so that every entry point
/// (one set, separate targets, the distributed solver's ranks) draws the same line.
template <class Tuning, class Real>
double softeningSeparation(Options const &options)
{
  if (options.softening == 0)
    return 0;
  double const served =
      tuning::tolerance_margin *
      (std::is_same<Real, float>::value
           ? tuning::expectedFieldError(Tuning::accuracy_float, options.order, options.theta)
           : tuning::expectedFieldError(Tuning::accuracy_double, options.order, options.theta));
  return options.softening * std::sqrt(1.5 / (softening_share * served));
}

/// The lowest order at which the backend (its tuning data `Tuning`) runs the rotation M2L in
/// precision Real.
template <class Tuning, class Real>
constexpr int rotationM2LMinOrder()
{
  return std::is_same<Real, float>::value ? Tuning::m2l_rotation_min_order_float
                                          : Tuning::m2l_rotation_min_order_double;
}

/// The backend's measured choice of M2L variant at order p in precision Real for an M2L list
/// of `entries` entries (its tuning data `Tuning`): the rotation M2L from order
/// rotationM2LMinOrder, below it the grouped M2L up to order m2l_grouped_max_order, the
/// per-pair M2L between them; but the grouped M2L up to order m2l_grouped_long_list_max_order
/// for a list of at least m2l_grouped_long_list_entries entries, whose translations outweigh
/// the build of its class matrices.
template <class Tuning, class Real>
constexpr M2LVariant automaticM2LVariant(int p, double entries = 0)
{
  if (p > Tuning::m2l_grouped_max_order && p <= Tuning::m2l_grouped_long_list_max_order &&
      entries >= Tuning::m2l_grouped_long_list_entries)
    return M2LVariant::grouped;
  return p >= rotationM2LMinOrder<Tuning, Real>() ? M2LVariant::rotation
         : p <= Tuning::m2l_grouped_max_order     ? M2LVariant::grouped
                                                  : M2LVariant::per_pair;
}

/// `options` with what it leaves to the backend filled in from the tuning data `Tuning` of
/// precision Real: order and theta for its tolerance (tuning/AccuracyTable.hpp), then the
/// leaf size for that order where it is 0 (tuning/LeafSizeTable.hpp).
template <class Tuning, class Real>
Options withTunedParameters(Options options, std::string const &where)
{
  bool const single = std::is_same<Real, float>::value;
  if (options.tolerance > 0)
  {
    auto const choose = [&](auto const &rows, char const *precision) {
      if (tuning::AccuracyRow const *const row =
              tuning::servingAccuracyRow(rows, options.tolerance))
        return *row;
      double const smallest = std::end(rows)[-1].field_error * tuning::tolerance_margin;
      throw Exception(where + ": option 'tolerance' " + formatNumber(options.tolerance) +
                      " is below what " + precision + " reaches on this backend; the smallest is " +
                      formatBoundAbove(smallest, 3) +
                      (std::string(precision) == "float" ? " (compute in double for less)" : ""));
    };
    tuning::AccuracyRow const row = single ? choose(Tuning::accuracy_float, "float")
                                           : choose(Tuning::accuracy_double, "double");
    options.order = row.order;
    options.theta = row.theta;
  }
  if (options.leaf_size == 0)
    options.leaf_size = single ? tuning::tunedLeafSize(Tuning::leaf_sizes_float, options.order)
                               : tuning::tunedLeafSize(Tuning::leaf_sizes_double, options.order);
  return options;
}

} // namespace detail
} // namespace kfmm

#endif
