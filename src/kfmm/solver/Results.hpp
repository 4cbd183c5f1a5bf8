// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_SOLVER_RESULTS_HPP
#define KFMM_SOLVER_RESULTS_HPP

// The results: the sorted results back in the caller's order and units, and their check for
// NaN and infinity (Options::check_results).

#include <kfmm/Exception.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/detail/ZeroFill.hpp>
#include <kfmm/kernels/Permutation.hpp>
#include <kfmm/solver/Stage.hpp>
#include <kfmm/solver/State.hpp>

#include <Kokkos_Core.hpp>

#include <cmath>
#include <cstdio>
#include <limits>
#include <string>
#include <type_traits>

namespace kfmm::solver
{

/// The sorted results, in the caller's order and units (those of the charge unit that
/// sorted the charges), with the results that are not finite counted.
template <class ExecutionSpace, class Real, class MemorySpace, class Potential, class Field>
void returnResults(ExecutionSpace const &space, State<Real, MemorySpace> &state,
                   Potential const &potential, Field const &field)
{
  runStage(space, state.options, "unsort results", state.stats.stage_seconds, [&] {
    auto const not_finite = Kokkos::subview(state.checks, state.results_not_finite);
    detail::zeroFill(space, "kfmm::Fmm::clear_results_check", not_finite);
    kernels::unsortResults(space, state.target_ranks, state.results, state.charge_unit, potential,
                           field, not_finite);
  });
}

/// Throws when a charge (where `charges_on_device`: the device found their unit) or a
/// potential or field is NaN or infinite, naming the first such charge, or particle in the
/// caller's order, where it is, and why that happens.
template <class ExecutionSpace, class Real, class MemorySpace, class Charges, class Potential,
          class Field>
void checkResults(ExecutionSpace const &space, State<Real, MemorySpace> const &state,
                  std::string const &where, Charges const &charges, Potential const &potential,
                  Field const &field, bool charges_on_device)
{
  using S = State<Real, MemorySpace>;
  // The device flagged the charges whose largest magnitude may be NaN or infinite
  // (detail::findChargeUnit), and the results' return counted the bad rows as it wrote
  // them (kernels::unsortResults); the first bad one is looked for only when there is one.
  // This read, of both, waits for the device.
  int checks[S::check_count] = {0, 0};
  Kokkos::deep_copy(Kokkos::View<int *, Kokkos::HostSpace>(checks, S::check_count), state.checks);
  if (charges_on_device && checks[S::charges_suspect] != 0)
    detail::requireFinite(space, where, "charges", charges);
  int const not_finite = checks[S::results_not_finite];
  if (not_finite == 0)
    return;
  auto const bad = detail::firstNonFinite(space, potential, field);
  if (bad < 0)
    throw Exception("kfmm internal error: kfmm::Fmm::evaluate counted " +
                    std::to_string(not_finite) + " results that are not finite, and found none");
  auto const result = detail::rowValues(space, potential, field, bad);
  double const phi = result[0];
  bool const potential_bad = !std::isfinite(phi);
  double const value = potential_bad               ? phi
                       : !std::isfinite(result[1]) ? result[1]
                       : !std::isfinite(result[2]) ? result[2]
                                                   : result[3];
  auto const x = detail::rowOf(space, state.target_x,
                               kernels::sortedIndexOf(space, state.target_tree.permutation, bad));
  constexpr bool single = std::is_same<Real, float>::value;
  char const *const precision = single ? "float" : "double";
  auto const number = [](double v) {
    char buffer[32];
    std::snprintf(buffer, sizeof buffer, "%.*g", std::numeric_limits<Real>::max_digits10, v);
    return std::string(buffer);
  };
  auto const &frame = state.frame;
  std::string const position = "(" + number(frame.caller(x[0], 0)) + ", " +
                               number(frame.caller(x[1], 1)) + ", " +
                               number(frame.caller(x[2], 2)) + ")";
  // The inputs are finite and the solver works in units where they are below 1, so what
  // overflows is a result or, for particles closer than the precision's range allows, a
  // pair's share of one.
  throw Exception(
      std::string("kfmm::Fmm::evaluate: the ") + (potential_bad ? "potential" : "field") +
      (state.separateTargets() ? " at target " : " of particle ") + std::to_string(bad) + " at " +
      position + " is " + (std::isnan(value) ? "NaN" : "infinite") +
      ": a result, or a pair's share of it, is beyond the range of " + precision +
      " (largest magnitude " + number(static_cast<double>(std::numeric_limits<Real>::max())) + ")" +
      (single ? "; compute in double precision, or " : "; ") +
      "choose units or charges that bring the results into range");
}

} // namespace kfmm::solver

#endif
