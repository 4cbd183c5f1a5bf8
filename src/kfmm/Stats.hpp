// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_STATS_HPP
#define KFMM_STATS_HPP

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace kfmm
{

/// What one tree build and evaluation did and how long each stage took.
struct Stats
{
  /// Seconds per stage, in the order they ran ("tree", "lists", ..., "P2M", "M2M", ...; for
  /// kfmm::evaluate "tree", "allocate", ..., "P2M", "M2M", "lists", ...), with
  /// Options::time_stages (empty without): each stage is fenced then, so the times add up to
  /// the wall time of the call.
  std::vector<std::pair<std::string, double>> stage_seconds;
  /// The expansion order and theta the solver used: Options' own, or those it chose for
  /// Options::tolerance; and the leaf size: Options' own, or its backend's tuned one.
  int order = 0;
  double theta = 0;
  int leaf_size = 0;
  /// Deepest level of the octree (the root is level 0).
  int depth = 0;
  std::size_t cells = 0;
  std::size_t leaves = 0;
  /// Particle-particle pairs evaluated by the near field.
  std::size_t p2p_interactions = 0;
  /// Cell-cell translations (fmm) and cell-particle evaluations (treecode) of the far field.
  std::size_t m2l_interactions = 0;
  std::size_t m2p_interactions = 0;
  /// The M2L variant that ran ("per-pair", "grouped" or "rotation"; empty for the treecode),
  /// and for the grouped one: its translation classes (one matrix each), the bytes of those
  /// matrices, and the M2L pairs outside every class, translated one at a time; for the
  /// rotation one: its directions (one set of rotation tables each), the tables' bytes, and
  /// the pairs without a direction's tables, translated with the per-pair operator.
  std::string m2l_variant;
  std::size_t m2l_classes = 0;
  std::size_t m2l_matrix_bytes = 0;
  std::size_t m2l_per_pair_interactions = 0;
  /// Whether the last evaluation checked its results for NaN and infinity
  /// (Options::check_results; a failed check throws).
  bool results_checked = false;
  /// Whether the last evaluation ran the far field's translations on a second instance,
  /// beside the near field (Options::concurrent_far_field, on a backend that can).
  bool far_field_concurrent = false;
  /// Pairs of particles, neighbours in the tree's order, whose distance rounding their
  /// coordinates to the solver's precision (in its units) changes by more than 1/1024
  /// (detail/Resolution.hpp); such a pair's field is off by more than about 1e-3. Always 0
  /// for positions given in the solver's precision: those the solver does not round.
  std::size_t unresolved_pairs = 0;
  /// At least 1/1000 of the particles are in unresolved pairs: the precision does not
  /// resolve these particles, and their results may be far less accurate than the options
  /// give (in float: compute in double, with the positions given in double).
  bool precision_limited = false;
  /// The targets the last evaluation's sampled check measured its errors on
  /// (Options::check_samples; 0: no check), and the relative L2 errors of the potential and
  /// the field there against the direct sum in double (Ewald's sum with periodic boundaries;
  /// NaN where a result was NaN).
  std::size_t sampled_targets = 0;
  double sampled_potential_error = 0;
  double sampled_field_error = 0;
  /// Whether that field error is above Options::tolerance (or not a number): with
  /// Options::allow_missed_tolerance the evaluation returns; without, it throws
  /// kfmm::ToleranceError.
  bool tolerance_missed = false;
  /// Estimated floating-point operations of the evaluation.
  double flops = 0;
  /// Device memory held by the tree, the lists and the expansions.
  std::size_t bytes = 0;

  double seconds(std::string const &stage) const
  {
    for (auto const &s : stage_seconds)
      if (s.first == stage)
        return s.second;
    return 0;
  }

  double totalSeconds() const
  {
    double total = 0;
    for (auto const &s : stage_seconds)
      total += s.second;
    return total;
  }
};

} // namespace kfmm

#endif
