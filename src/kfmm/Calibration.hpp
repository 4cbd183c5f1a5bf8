// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_CALIBRATION_HPP
#define KFMM_CALIBRATION_HPP

// What kfmm::calibrate (kfmm/Calibrate.hpp) returns, apart from the solver, for code that
// reports it.

#include <kfmm/Options.hpp>
#include <kfmm/Stats.hpp>

#include <cstddef>
#include <vector>

namespace kfmm
{

/// One setting kfmm::calibrate evaluated: a row of the accuracy table, or the direct sum.
struct CalibrationTrial
{
  int order = 0;
  double theta = 0;
  /// Evaluated in double for a float problem: the reference where float's table serves no row
  /// for it (kfmm/Calibrate.hpp, step 1).
  bool in_double = false;
  /// The direct sum (kfmm/Calibrate.hpp, step 4): one leaf of every particle, every pair by
  /// the all-pairs kernel; order and theta are then those its options carry, unused.
  bool direct_sum = false;
  /// The relative L2 field error estimated: on the samples before there is a reference row,
  /// else the difference from the reference's field over every target plus its error.
  double field_error = 0;
  /// Whether it met the tolerance by calibration_margin.
  bool meets = false;
  /// The evaluation's seconds, to the end of its kernels (the first one's include what the
  /// first evaluation of a problem allocates); for the row compared with the direct sum, the
  /// faster of its two evaluations (kfmm/Calibrate.hpp, step 4).
  double seconds = 0;
};

/// What kfmm::calibrate chose and measured.
struct Calibration
{
  /// The caller's options with the chosen row's order and theta and no tolerance (for the
  /// direct sum, order 1 and a leaf size of every particle, so that no cell pair is far): for
  /// kfmm::Fmm, kfmm::evaluate or kfmm::distributed::DistributedFmm on this problem and on
  /// problems like it (the next time steps of a simulation).
  Options options;
  /// The relative L2 field error estimated for them: for the reference row (kfmm/Calibrate.hpp
  /// step 1), measured on `samples` targets against the direct sum in double (Ewald's sum with
  /// periodic boundaries); for a faster
  /// row, its difference from the reference's field over every target plus that error.
  double field_error = 0;
  std::size_t samples = 0;
  /// Settings evaluated (trials), the chosen one included, and the seconds of the whole calibration
  /// (the reference's direct or Ewald's sum included).
  int evaluations = 0;
  double seconds = 0;
  /// The row the accuracy table alone chooses for the tolerance (order 0 where it serves
  /// none).
  int table_order = 0;
  double table_theta = 0;
  /// The direct sum was chosen: it met the tolerance and was faster than every row that met,
  /// or it alone met it.
  bool direct_sum = false;
  /// Nothing evaluated met the tolerance, neither a row nor the direct sum (with
  /// Options::allow_missed_tolerance; without it, calibrate throws kfmm::ToleranceError):
  /// options, results and error are those of the least error measured.
  bool tolerance_missed = false;
  /// What the chosen row's evaluation did.
  Stats stats;
  /// Every row evaluated, in the order evaluated.
  std::vector<CalibrationTrial> trials;
};

} // namespace kfmm

#endif
