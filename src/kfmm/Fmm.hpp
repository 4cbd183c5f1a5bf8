// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_FMM_HPP
#define KFMM_FMM_HPP

// The solver's front: tree and lists built once from the positions, then any number of
// evaluations for new charges (the static-geometry case of Gumerov & Duraiswami 2008), or the
// one-shot kfmm::evaluate. The stages and their schedule live in solver/ (docs/ARCHITECTURE.md):
// kfmm::Fmm holds a solver::State and runs solver/Schedule.hpp on it.

#include <kfmm/Exception.hpp>
#include <kfmm/Options.hpp>
#include <kfmm/Stats.hpp>
#include <kfmm/detail/Precompiled.hpp>
#include <kfmm/detail/StaticChecks.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/solver/Schedule.hpp>
#include <kfmm/solver/State.hpp>
#include <kfmm/solver/WorkCount.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <string>
#include <type_traits>

namespace kfmm
{
namespace detail
{

/// The charges of kfmm::evaluate's one evaluation, given to its solver's build.
template <class Charges>
struct ChargesAtBuild
{
  Charges const &charges;
};

} // namespace detail

/// The FMM / treecode solver for one set of positions, or for a set of sources and a set of
/// targets (points that are not sources: grid points, probes, another species).
///
/// \tparam Real         float or double: the precision of the expansions and kernels
/// \tparam MemorySpace  where the tree, lists and expansions live: the memory_space of the
///                      execution space the solver runs on
///
/// Positions, charges and results are Kokkos Views (any layout, any floating-point type) in
/// any memory space the execution space can access (Kokkos::SpaceAccessibility: its own, and
/// e.g. CudaUVMSpace or CudaHostPinnedSpace from Cuda), in the caller's particle order; a View
/// it cannot access is a compile-time error. The potential and field follow kfmm::directSum's
/// definitions. Positions may be given in double for a float solver: they are rounded only
/// after they are taken relative to their bounding cube, so a cloud far from the origin keeps
/// float's full resolution (Stats::precision_limited says where even that is not enough).
template <class Real, class MemorySpace>
class Fmm
{
  static_assert(std::is_same<Real, float>::value || std::is_same<Real, double>::value,
                "kfmm::Fmm: Real must be float or double");
  static_assert(Kokkos::is_memory_space<MemorySpace>::value,
                "kfmm::Fmm: the second parameter must be a Kokkos memory space");

public:
  using real_type = Real;
  using memory_space = MemorySpace;

  /// Builds the octree and the interaction lists of `positions` (N x 3), and finds whether
  /// the precision resolves them (Stats::unresolved_pairs, precision_limited).
  /// \throws kfmm::Exception on invalid options or positions (NaN/Inf: the first bad index)
  template <class ExecutionSpace, class Positions>
  Fmm(ExecutionSpace const &space, Positions const &positions, Options const &options = {})
  {
    checkSpace<ExecutionSpace>();
    KFMM_STATIC_REQUIRE_VIEW("kfmm::Fmm", "positions", Positions, 2, "N x 3", ExecutionSpace);
    _state.options = options;
    if constexpr (detail::viewFits<ExecutionSpace, Positions, 2>())
      solver::build(space, _state, "kfmm::Fmm", positions, static_cast<Positions const *>(nullptr));
  }

  /// Builds the octrees of `sources` (N_s x 3) and of `targets` (N_t x 3) on one cube and the
  /// interaction lists of the targets' cells against the sources': evaluate() then gives the
  /// potential and field at the targets due to charges at the sources. A target at a
  /// source's position gets nothing from that source (as in kfmm::directSum).
  /// \throws kfmm::Exception on invalid options or positions (NaN/Inf: the argument and the
  /// first bad index)
  template <
      class ExecutionSpace, class Sources, class Targets,
      std::enable_if_t<Kokkos::is_view<Sources>::value && Kokkos::is_view<Targets>::value, int> = 0>
  Fmm(ExecutionSpace const &space, Sources const &sources, Targets const &targets,
      Options const &options = {})
  {
    checkSpace<ExecutionSpace>();
    KFMM_STATIC_REQUIRE_VIEW("kfmm::Fmm", "sources", Sources, 2, "N_s x 3", ExecutionSpace);
    KFMM_STATIC_REQUIRE_VIEW("kfmm::Fmm", "targets", Targets, 2, "N_t x 3", ExecutionSpace);
    _state.options = options;
    if constexpr (detail::viewFits<ExecutionSpace, Sources, 2>() &&
                  detail::viewFits<ExecutionSpace, Targets, 2>())
      solver::build(space, _state, "kfmm::Fmm", sources, &targets);
  }

  /// The constructors for an entry point that checked the Views' types and builds a solver
  /// for its caller's one evaluation (kfmm::evaluate), of `charges`: messages name `caller`.
  /// The build starts that evaluation too (its upward pass; solver::upwardAtBuild), and the
  /// solver's next evaluate() must be of the same charges.
  template <class ExecutionSpace, class Positions, class Charges>
  Fmm(detail::EntryPoint caller, ExecutionSpace const &space, Positions const &positions,
      detail::ChargesAtBuild<Charges> charges, Options const &options)
  {
    checkSpace<ExecutionSpace>();
    _state.options = options;
    solver::build(space, _state, caller.name, positions, static_cast<Positions const *>(nullptr),
                  &charges.charges);
  }

  template <class ExecutionSpace, class Sources, class Targets, class Charges>
  Fmm(detail::EntryPoint caller, ExecutionSpace const &space, Sources const &sources,
      Targets const &targets, detail::ChargesAtBuild<Charges> charges, Options const &options)
  {
    checkSpace<ExecutionSpace>();
    _state.options = options;
    solver::build(space, _state, caller.name, sources, &targets, &charges.charges);
  }

  /// Potential and field at every target due to `charges` (N_s) at the sources: at every
  /// particle due to all others for a solver of one set. Results go to `potential` (N_t) and
  /// `field` (N_t x 3) in the caller's order of the targets.
  /// \throws kfmm::Exception on mismatched extents or NaN/Inf charges, and (unless
  /// Options::check_results is off) when a potential or field is NaN or infinite: the message
  /// names the first such particle, its position and the likely cause (a result beyond the
  /// range of the precision). With the results' check the charges are checked at the end,
  /// with the results, which are then undefined.
  template <class ExecutionSpace, class Charges, class Potential, class Field>
  void evaluate(ExecutionSpace const &space, Charges const &charges, Potential const &potential,
                Field const &field)
  {
    checkSpace<ExecutionSpace>();
    KFMM_STATIC_REQUIRE_VIEW("kfmm::Fmm::evaluate", "charges", Charges, 1, "N", ExecutionSpace);
    KFMM_STATIC_REQUIRE_VIEW("kfmm::Fmm::evaluate", "potential", Potential, 1, "N", ExecutionSpace);
    KFMM_STATIC_REQUIRE_VIEW("kfmm::Fmm::evaluate", "field", Field, 2, "N x 3", ExecutionSpace);
    static_assert(detail::holdsWritableReal<Potential>() && detail::holdsWritableReal<Field>(),
                  "kfmm::Fmm::evaluate: arguments 'potential' and 'field' must hold non-const "
                  "float or double");
    if constexpr (detail::viewFits<ExecutionSpace, Charges, 1>() &&
                  detail::viewFits<ExecutionSpace, Potential, 1>() &&
                  detail::viewFits<ExecutionSpace, Field, 2>() &&
                  detail::holdsWritableReal<Potential>() && detail::holdsWritableReal<Field>())
      solver::evaluate(space, _state, "kfmm::Fmm::evaluate", charges, potential, field);
  }

  /// evaluate() for an entry point that checked the Views' types (kfmm::evaluate): messages
  /// name `caller`.
  template <class ExecutionSpace, class Charges, class Potential, class Field>
  void evaluate(detail::EntryPoint caller, ExecutionSpace const &space, Charges const &charges,
                Potential const &potential, Field const &field)
  {
    solver::evaluate(space, _state, caller.name, charges, potential, field);
  }

  /// Times, counts and sizes of the build and of the last evaluation. The first call after
  /// the build waits for the device: the build's counts are reductions it did not wait for
  /// (detail/DeferredCounts.hpp).
  Stats const &stats() const { return solver::currentStats(_state); }
  /// The options the solver runs with: the caller's, with the order and theta chosen for a
  /// tolerance and the tuned leaf size filled in.
  Options const &options() const { return _state.options; }
  /// Number of particles (of sources, for a solver of sources and targets).
  std::size_t size() const { return _state.size(); }
  /// Number of targets: size() for a solver of one set.
  std::size_t numTargets() const { return _state.numTargets(); }

private:
  template <class ExecutionSpace>
  static void checkSpace()
  {
    static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                  "kfmm::Fmm: the first argument must be a Kokkos execution space");
    // The kernels keep the tree and the expansions in the execution space's own memory; the
    // caller's Views may be in any memory space the execution space can access.
    static_assert(std::is_same<typename ExecutionSpace::memory_space, MemorySpace>::value,
                  "kfmm::Fmm: the solver's MemorySpace must be the execution space's "
                  "memory_space: Fmm<Real, ExecutionSpace::memory_space>");
  }

  solver::State<Real, MemorySpace> _state;
};

namespace detail
{

template <class ExecutionSpace, class Positions, class Charges, class Potential, class Field>
Stats evaluateOnce(ExecutionSpace const &space, Positions const &positions, Charges const &charges,
                   Potential const &potential, Field const &field, Options const &options)
{
  detail::ScopedRegion region("kfmm::evaluate");
  EntryPoint const caller{"kfmm::evaluate"};
  Fmm<typename Potential::value_type, typename ExecutionSpace::memory_space> fmm(
      caller, space, positions, ChargesAtBuild<Charges>{charges}, options);
  fmm.evaluate(caller, space, charges, potential, field);
  // The solver's destruction on return waits for its kernels before its memory goes back to
  // the pool (detail/Workspace.hpp).
  return fmm.stats();
}

/// kfmm::evaluate's work at targets that are not the sources, on Views whose types it checked.
template <class ExecutionSpace, class Sources, class Charges, class Targets, class Potential,
          class Field>
Stats evaluateAtTargets(ExecutionSpace const &space, Sources const &sources, Charges const &charges,
                        Targets const &targets, Potential const &potential, Field const &field,
                        Options const &options)
{
  detail::ScopedRegion region("kfmm::evaluate");
  EntryPoint const caller{"kfmm::evaluate"};
  Fmm<typename Potential::value_type, typename ExecutionSpace::memory_space> fmm(
      caller, space, sources, targets, ChargesAtBuild<Charges>{charges}, options);
  fmm.evaluate(caller, space, charges, potential, field);
  // The solver's destruction on return waits for its kernels before its memory goes back to
  // the pool (detail/Workspace.hpp).
  return fmm.stats();
}

} // namespace detail

/// One-shot evaluation: builds the tree and lists of `positions`, evaluates the potential
/// and field of `charges` at every particle, and returns what it did. The precision is the
/// value type of `potential`. The Views are those of kfmm::Fmm; with kfmm::precompiled
/// linked, Views in the execution space's memory space and default layout, all of one
/// precision, use the library's compiled instance (kfmm/detail/Precompiled.hpp).
template <class ExecutionSpace, class Positions, class Charges, class Potential, class Field>
Stats evaluate(ExecutionSpace const &space, Positions const &positions, Charges const &charges,
               Potential const &potential, Field const &field, Options const &options = {})
{
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "kfmm::evaluate: the first argument must be a Kokkos execution space");
  KFMM_STATIC_REQUIRE_VIEW("kfmm::evaluate", "positions", Positions, 2, "N x 3", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::evaluate", "charges", Charges, 1, "N", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::evaluate", "potential", Potential, 1, "N", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::evaluate", "field", Field, 2, "N x 3", ExecutionSpace);
  static_assert(detail::holdsWritableReal<Potential>() && detail::holdsWritableReal<Field>(),
                "kfmm::evaluate: arguments 'potential' and 'field' must hold non-const float or "
                "double");
  if constexpr (Kokkos::is_execution_space<ExecutionSpace>::value &&
                detail::viewFits<ExecutionSpace, Positions, 2>() &&
                detail::viewFits<ExecutionSpace, Charges, 1>() &&
                detail::viewFits<ExecutionSpace, Potential, 1>() &&
                detail::viewFits<ExecutionSpace, Field, 2>() &&
                detail::holdsWritableReal<Potential>() && detail::holdsWritableReal<Field>())
  {
    using Views = detail::PrecompiledViews<ExecutionSpace, typename Potential::value_type>;
    detail::noteSolverCompilation<ExecutionSpace, typename Potential::value_type, Positions,
                                  Charges, Potential, Field>();
    return detail::evaluateOnce(space,
                                detail::precompiledForm<typename Views::Positions>(positions),
                                detail::precompiledForm<typename Views::Charges>(charges),
                                detail::precompiledForm<typename Views::Potential>(potential),
                                detail::precompiledForm<typename Views::Field>(field), options);
  }
  else
    return {};
}

/// One-shot evaluation at targets that are not the sources (grid points, probes, another
/// species): builds the octrees of `sources` (N_s x 3) and `targets` (N_t x 3) on one cube
/// and evaluates the potential and field at the targets of `charges` (N_s) at the sources,
/// into `potential` (N_t) and `field` (N_t x 3), the definitions of kfmm::directSum (a
/// target at a source's position gets nothing from that source). The Views are those of
/// kfmm::Fmm; the precision is the value type of `potential`. With `targets` equal to
/// `sources` the results are those of the evaluation of one set to rounding under the classic
/// rule; under the theta rule targets of their own take a stricter test of unequal cells
/// (docs/ACCURACY.md), and the results are at least as accurate. kfmm::precompiled holds this
/// call too, for the Views it holds kfmm::evaluate's.
template <class ExecutionSpace, class Sources, class Charges, class Targets, class Potential,
          class Field, std::enable_if_t<Kokkos::is_view<Field>::value, int> = 0>
Stats evaluate(ExecutionSpace const &space, Sources const &sources, Charges const &charges,
               Targets const &targets, Potential const &potential, Field const &field,
               Options const &options = {})
{
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "kfmm::evaluate: the first argument must be a Kokkos execution space");
  KFMM_STATIC_REQUIRE_VIEW("kfmm::evaluate", "sources", Sources, 2, "N_s x 3", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::evaluate", "charges", Charges, 1, "N_s", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::evaluate", "targets", Targets, 2, "N_t x 3", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::evaluate", "potential", Potential, 1, "N_t", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::evaluate", "field", Field, 2, "N_t x 3", ExecutionSpace);
  static_assert(detail::holdsWritableReal<Potential>() && detail::holdsWritableReal<Field>(),
                "kfmm::evaluate: arguments 'potential' and 'field' must hold non-const float or "
                "double");
  if constexpr (Kokkos::is_execution_space<ExecutionSpace>::value &&
                detail::viewFits<ExecutionSpace, Sources, 2>() &&
                detail::viewFits<ExecutionSpace, Charges, 1>() &&
                detail::viewFits<ExecutionSpace, Targets, 2>() &&
                detail::viewFits<ExecutionSpace, Potential, 1>() &&
                detail::viewFits<ExecutionSpace, Field, 2>() &&
                detail::holdsWritableReal<Potential>() && detail::holdsWritableReal<Field>())
  {
    using Views = detail::PrecompiledViews<ExecutionSpace, typename Potential::value_type>;
    detail::noteSolverCompilation<ExecutionSpace, typename Potential::value_type, Sources, Charges,
                                  Potential, Field, Targets>();
    return detail::evaluateAtTargets(
        space, detail::precompiledForm<typename Views::Positions>(sources),
        detail::precompiledForm<typename Views::Charges>(charges),
        detail::precompiledForm<typename Views::Positions>(targets),
        detail::precompiledForm<typename Views::Potential>(potential),
        detail::precompiledForm<typename Views::Field>(field), options);
  }
  else
    return {};
}

} // namespace kfmm

#endif
