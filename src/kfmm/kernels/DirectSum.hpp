// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_KERNELS_DIRECT_SUM_HPP
#define KFMM_KERNELS_DIRECT_SUM_HPP

#include <kfmm/detail/Math.hpp>
#include <kfmm/detail/ScopedRegion.hpp>
#include <kfmm/detail/StaticChecks.hpp>
#include <kfmm/tuning/Tuning.hpp>
#include <kfmm/detail/UnitFrame.hpp>
#include <kfmm/detail/Validation.hpp>
#include <kfmm/kernels/detail/TargetBlock.hpp>
#include <kfmm/tree/Morton.hpp>

#include <Kokkos_Core.hpp>

#include <string>
#include <type_traits>

namespace kfmm
{
namespace kernels
{

/// All-pairs Laplace potential and field, O(N_targets * N_sources): the reference every
/// approximation in kfmm is checked against, and the pattern of the near-field P2P kernel.
///
/// One team per block of targets and slice of the sources; sources pass through team scratch
/// in tiles (the tiled all-pairs scheme of seed 001, Listing 2, and of Nyland, Harris &
/// Prins, GPU Gems 3 ch. 31). Each thread keeps `TargetsPerThread` targets in registers: one
/// on a GPU, several on a CPU so that the source loop vectorises across targets. Like the FMM
/// it computes in units (detail/UnitFrame.hpp): targets and staged sources are converted as
/// they are loaded, the results as they are written. With one slice (enough targets to
/// occupy the device) a team writes its targets' results; with several (a few targets, e.g.
/// an accuracy check's samples, against many sources) each team writes its slice's sums to
/// `partial_sums`, which AddSourceSlices adds.
template <class ExecutionSpace, class Real, int TargetsPerThread, class Targets, class Sources,
          class Charges, class Potential, class Field>
struct DirectSumKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Staged = detail::StagedSource<Real>;
  using Block = detail::TargetBlock<Real, TargetsPerThread>;

  Targets targets;
  Sources sources;
  Charges charges;
  Potential potential;
  Field field;
  kfmm::detail::UnitFrame frame;
  kfmm::detail::PowerOfTwo<double> to_unit_charge;
  kfmm::detail::ResultScale<Real> scale;
  Real softening2; ///< in units
  int source_tile;
  int targets_per_team;
  int source_slices;
  int slice_sources; ///< sources of one slice, a whole number of tiles
  /// Slice s's sums (potential, field) at target t, in units: row s * N_t + t.
  Kokkos::View<Real *[4], typename ExecutionSpace::memory_space> partial_sums;

  /// Scratch for one tile of `tile` sources, with room to align it.
  static std::size_t scratchBytes(int tile) { return (tile + 1) * sizeof(Staged); }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const num_targets = static_cast<int>(targets.extent(0));
    int const num_sources = static_cast<int>(sources.extent(0));
    auto *const staged = static_cast<Staged *>(
        team.team_scratch(0).get_shmem_aligned(source_tile * sizeof(Staged), sizeof(Staged)));

    // Coordinate d of particle i of `x` in units.
    auto const unit = [&](auto const &x, int i, int d) {
      return static_cast<Real>(frame.position(static_cast<double>(x(i, d)), d));
    };
    int const slice = team.league_rank() % source_slices;
    int const first =
        team.league_rank() / source_slices * targets_per_team + team.team_rank() * TargetsPerThread;
    Block block;
    for (int k = 0; k < TargetsPerThread; ++k)
    {
      // Targets past the end compute on a copy of the last real one and are not written.
      int const t = kfmm::detail::min(first + k, num_targets - 1);
      block.x[k] = t >= 0 ? unit(targets, t, 0) : Real(0);
      block.y[k] = t >= 0 ? unit(targets, t, 1) : Real(0);
      block.z[k] = t >= 0 ? unit(targets, t, 2) : Real(0);
    }
    block.clearSums();

    int const slice_end = kfmm::detail::min(num_sources, (slice + 1) * slice_sources);
    for (int tile_start = slice * slice_sources; tile_start < slice_end; tile_start += source_tile)
    {
      int const tile = kfmm::detail::min(source_tile, slice_end - tile_start);
      team.team_barrier(); // the previous tile is no longer read
      Kokkos::parallel_for(Kokkos::TeamThreadRange(team, tile), [&](int s) {
        int const j = tile_start + s;
        staged[s] =
            Block::stage(unit(sources, j, 0), unit(sources, j, 1), unit(sources, j, 2),
                         static_cast<Real>(to_unit_charge(static_cast<double>(charges(j)))));
      });
      team.team_barrier();

      // Any tile may hold a target itself or a coincident particle: each is checked.
      block.interact(staged, tile, 1, softening2, false);
    }

    for (int k = 0; k < TargetsPerThread; ++k)
    {
      int const t = first + k;
      if (t >= num_targets)
        continue;
      if (source_slices == 1)
      {
        potential(t) = scale.potential(block.phi[k]);
        field(t, 0) = scale.field(block.gx[k]);
        field(t, 1) = scale.field(block.gy[k]);
        field(t, 2) = scale.field(block.gz[k]);
      }
      else
      {
        auto const row = static_cast<std::size_t>(slice) * num_targets + t;
        partial_sums(row, 0) = block.phi[k];
        partial_sums(row, 1) = block.gx[k];
        partial_sums(row, 2) = block.gy[k];
        partial_sums(row, 3) = block.gz[k];
      }
    }
  }
};

/// The results of a direct sum over several source slices: each target's slice sums added in
/// slice order (the same numbers on every run) and scaled to the caller's units.
template <class Real, class PartialSums, class Potential, class Field>
struct AddSourceSlices
{
  PartialSums partial_sums;
  int source_slices;
  kfmm::detail::ResultScale<Real> scale;
  Potential potential;
  Field field;

  KOKKOS_INLINE_FUNCTION void operator()(int t) const
  {
    std::size_t const num_targets = potential.extent(0);
    Real sums[4] = {};
    for (int s = 0; s < source_slices; ++s)
      for (int c = 0; c < 4; ++c)
        sums[c] += partial_sums(s * num_targets + t, c);
    potential(t) = scale.potential(sums[0]);
    for (int d = 0; d < 3; ++d)
      field(t, d) = scale.field(sums[d + 1]);
  }
};

/// Slices of the sources for a direct sum run by `target_teams` teams of targets: as many as
/// bring the teams to `teams_wanted` (enough to occupy the execution space), but no more than
/// the `source_tiles` tiles of the sources. A direct sum of a few targets (an accuracy
/// check's samples) against many sources otherwise runs on a few teams, on one
/// multiprocessor of a GPU that has a hundred or more (docs/TUNING.md, "The all-pairs direct
/// sum").
constexpr int directSourceSlices(int target_teams, int source_tiles, int teams_wanted)
{
  int const wanted = (teams_wanted + target_teams - 1) / target_teams;
  int const slices = wanted < source_tiles ? wanted : source_tiles;
  return slices > 1 ? slices : 1;
}

/// Whether the Views of a direct sum have the ranks, memory spaces and result types that its
/// body needs (the entry points state each check as a static_assert in the caller's terms).
template <class ExecutionSpace, class Targets, class Sources, class Charges, class Potential,
          class Field>
constexpr bool directSumViewsFit()
{
  return Kokkos::is_execution_space<ExecutionSpace>::value &&
         kfmm::detail::viewFits<ExecutionSpace, Targets, 2>() &&
         kfmm::detail::viewFits<ExecutionSpace, Sources, 2>() &&
         kfmm::detail::viewFits<ExecutionSpace, Charges, 1>() &&
         kfmm::detail::viewFits<ExecutionSpace, Potential, 1>() &&
         kfmm::detail::viewFits<ExecutionSpace, Field, 2>() &&
         kfmm::detail::holdsWritableReal<Potential>() && kfmm::detail::holdsWritableReal<Field>();
}

/// The run-time checks of the directSum entry points, on Views whose types they checked.
/// `caller` is the entry point, and `targets_name` and `sources_name` are what it calls those
/// arguments, so that messages are in the caller's terms; `sources_name` is null when the
/// sources are the targets (checked once).
template <class ExecutionSpace, class Targets, class Sources, class Charges, class Potential,
          class Field>
void checkDirectSum(kfmm::detail::EntryPoint caller, ExecutionSpace const &space,
                    Targets const &targets, Sources const &sources, Charges const &charges,
                    Potential const &potential, Field const &field, double softening,
                    char const *targets_name, char const *sources_name)
{
  std::string const where = caller.name;
  auto const nt = targets.extent(0);
  auto const ns = sources.extent(0);
  std::string const targets_arg = targets_name;
  kfmm::detail::requireExtent(where, targets_arg + " (columns)", targets.extent(1), 3);
  if (sources_name)
    kfmm::detail::requireExtent(where, std::string(sources_name) + " (columns)", sources.extent(1),
                                3);
  kfmm::detail::requireExtent(where, "charges", charges.extent(0), ns);
  kfmm::detail::requireExtent(where, "potential", potential.extent(0), nt);
  kfmm::detail::requireExtent(where, "field", field.extent(0), nt);
  kfmm::detail::requireExtent(where, "field (columns)", field.extent(1), 3);
  kfmm::detail::require(softening >= 0 && std::isfinite(softening), where,
                        "argument 'softening' must be finite and >= 0, got " +
                            kfmm::detail::formatNumber(softening));
  kfmm::detail::requireFinite(space, where, targets_arg, targets);
  if (sources_name)
    kfmm::detail::requireFinite(space, where, sources_name, sources);
  kfmm::detail::requireFinite(space, where, "charges", charges);
}

/// The sums of launchDirectSum once the units are known: `frame` takes the positions into
/// units, `to_unit_charge` the charges, and `scale` the unit sums into the results; the
/// kernels are named `label` (and `label`::add_slices). Besides kfmm::directSum, the solver's
/// sampled check (solver/SampledCheck.hpp) runs it on positions already in the solver's units
/// and charges it reads through the sort's permutation.
template <class ExecutionSpace, class Targets, class Sources, class Charges, class Potential,
          class Field>
void launchDirectSumInUnits(std::string const &label, ExecutionSpace const &space,
                            Targets const &targets, Sources const &sources, Charges const &charges,
                            Potential const &potential, Field const &field,
                            kfmm::detail::UnitFrame const &frame,
                            kfmm::detail::PowerOfTwo<double> to_unit_charge,
                            kfmm::detail::ResultScale<typename Potential::value_type> scale,
                            double unit_softening)
{
  using Real = typename Potential::value_type;
  auto const nt = targets.extent(0);
  if (nt == 0)
    return;
  using Tune = kfmm::tuning::Tuning<ExecutionSpace>;
  constexpr int per_thread = Tune::directTargetsPerThread(static_cast<int>(sizeof(Real)));
  using Kernel = kfmm::kernels::DirectSumKernel<ExecutionSpace, Real, per_thread, Targets, Sources,
                                                Charges, Potential, Field>;
  int const team_size = Tune::direct_team_size;
  int const per_team = team_size * per_thread;
  int const target_teams = static_cast<int>((nt + per_team - 1) / per_team);
  int const tile = Tune::direct_source_tile;
  auto const num_sources = static_cast<int>(sources.extent(0));
  int const source_tiles = (num_sources + tile - 1) / tile;
  int const slices_wanted = directSourceSlices(
      target_teams, source_tiles, kfmm::detail::max(1, space.concurrency() / team_size));
  // Whole tiles per slice; the last slice may hold fewer, and none is empty.
  int const slice_sources = (source_tiles + slices_wanted - 1) / slices_wanted * tile;
  int const slices = slice_sources == 0 ? 1 : (num_sources + slice_sources - 1) / slice_sources;
  Kokkos::View<Real *[4], typename ExecutionSpace::memory_space> partial_sums(
      Kokkos::view_alloc(space, Kokkos::WithoutInitializing, label + "::partial_sums"),
      slices > 1 ? slices * nt : 0);
  Kernel kernel{targets,        sources,     charges,
                potential,      field,       frame,
                to_unit_charge, scale,       static_cast<Real>(unit_softening * unit_softening),
                tile,           per_team,    slices,
                slice_sources,  partial_sums};
  Kokkos::parallel_for(label,
                       Kokkos::TeamPolicy<ExecutionSpace>(space, target_teams * slices, team_size)
                           .set_scratch_size(0, Kokkos::PerTeam(Kernel::scratchBytes(tile))),
                       kernel);
  if (slices > 1)
    Kokkos::parallel_for(label + "::add_slices", Kokkos::RangePolicy<ExecutionSpace>(space, 0, nt),
                         AddSourceSlices<Real, decltype(partial_sums), Potential, Field>{
                             partial_sums, slices, kernel.scale, potential, field});
}

/// The sums on checked arguments. `sources_are_targets` says whether the sources are the
/// targets themselves; otherwise the units are those of both sets' enclosing cube.
template <class ExecutionSpace, class Targets, class Sources, class Charges, class Potential,
          class Field>
void launchDirectSum(ExecutionSpace const &space, Targets const &targets, Sources const &sources,
                     Charges const &charges, Potential const &potential, Field const &field,
                     double softening, bool sources_are_targets)
{
  using Real = typename Potential::value_type;
  // The charges were checked by the caller, so the message of this check never shows.
  int const charge_exponent =
      kfmm::detail::chargeExponent(space, "kfmm::directSum", "charges", charges);
  if (targets.extent(0) == 0)
    return;
  // The units of the targets and sources together.
  auto const frame = kfmm::detail::unitFrame(sources_are_targets
                                                 ? tree::boundingCube(space, targets)
                                                 : tree::boundingCube(space, targets, sources),
                                             "kfmm::directSum");
  launchDirectSumInUnits(
      "kfmm::direct_sum", space, targets, sources, charges, potential, field, frame,
      kfmm::detail::PowerOfTwo<double>::of(-charge_exponent),
      kfmm::detail::ResultScale<Real>::of(frame.length_exponent, charge_exponent),
      frame.length(softening));
}

} // namespace kernels

/// Potential and field at `targets` due to charges `charges` at `sources`, by the all-pairs
/// sum:
///   potential(i) = sum_j q_j / sqrt(r_ij^2 + softening^2)
///   field(i, :)  = grad_i potential(i) = -sum_j q_j (x_i - x_j) / (r_ij^2 + softening^2)^(3/2)
/// over all sources j at non-zero distance r_ij from target i (a target that is also a
/// source does not act on itself; coincident particles do not interact). For gravity with
/// q = mass, the acceleration is G * field.
///
/// \param [in]  space      execution space instance the kernels run on
/// \param [in]  targets    N_t x 3 target positions
/// \param [in]  sources    N_s x 3 source positions
/// \param [in]  charges    N_s source charges (or masses)
/// \param [out] potential  N_t potentials
/// \param [out] field      N_t x 3 fields
/// \param [in]  softening  Plummer softening length, >= 0
/// The computation runs in the value type of `potential` (float or double), in units of the
/// particles' bounding cube and largest charge (detail/UnitFrame.hpp), so that it holds its
/// accuracy at any scale; a result beyond the range of that type comes out infinite (the
/// direct sum is a reference and does not check; kfmm::Fmm does).
/// \throws kfmm::Exception on mismatched extents, negative or non-finite softening, or
/// NaN/Inf in positions or charges (the message names the argument and first bad index).
///
/// The overload is taken only when `field` is a View, so that directSum(space, x, q, phi, g, 0)
/// with an integer softening is the overload below.
template <class ExecutionSpace, class Targets, class Sources, class Charges, class Potential,
          class Field, std::enable_if_t<Kokkos::is_view<Field>::value, int> = 0>
void directSum(ExecutionSpace const &space, Targets const &targets, Sources const &sources,
               Charges const &charges, Potential const &potential, Field const &field,
               double softening = 0)
{
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "kfmm::directSum: the first argument must be a Kokkos execution space");
  KFMM_STATIC_REQUIRE_VIEW("kfmm::directSum", "targets", Targets, 2, "N_t x 3", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::directSum", "sources", Sources, 2, "N_s x 3", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::directSum", "charges", Charges, 1, "N_s", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::directSum", "potential", Potential, 1, "N_t", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::directSum", "field", Field, 2, "N_t x 3", ExecutionSpace);
  static_assert(detail::holdsWritableReal<Potential>() && detail::holdsWritableReal<Field>(),
                "kfmm::directSum: arguments 'potential' and 'field' must hold non-const float "
                "or double");
  if constexpr (kernels::directSumViewsFit<ExecutionSpace, Targets, Sources, Charges, Potential,
                                           Field>())
  {
    detail::ScopedRegion region("kfmm::directSum");
    kernels::checkDirectSum(detail::EntryPoint{"kfmm::directSum"}, space, targets, sources, charges,
                            potential, field, softening, "targets", "sources");
    kernels::launchDirectSum(space, targets, sources, charges, potential, field, softening, false);
  }
}

/// All-pairs potential and field of N particles on each other (targets = sources =
/// `positions`): the same sums and checks, with messages that name 'positions'.
template <class ExecutionSpace, class Positions, class Charges, class Potential, class Field>
void directSum(ExecutionSpace const &space, Positions const &positions, Charges const &charges,
               Potential const &potential, Field const &field, double softening = 0)
{
  static_assert(Kokkos::is_execution_space<ExecutionSpace>::value,
                "kfmm::directSum: the first argument must be a Kokkos execution space");
  KFMM_STATIC_REQUIRE_VIEW("kfmm::directSum", "positions", Positions, 2, "N x 3", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::directSum", "charges", Charges, 1, "N", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::directSum", "potential", Potential, 1, "N", ExecutionSpace);
  KFMM_STATIC_REQUIRE_VIEW("kfmm::directSum", "field", Field, 2, "N x 3", ExecutionSpace);
  static_assert(detail::holdsWritableReal<Potential>() && detail::holdsWritableReal<Field>(),
                "kfmm::directSum: arguments 'potential' and 'field' must hold non-const float "
                "or double");
  if constexpr (kernels::directSumViewsFit<ExecutionSpace, Positions, Positions, Charges, Potential,
                                           Field>())
  {
    detail::ScopedRegion region("kfmm::directSum");
    kernels::checkDirectSum(detail::EntryPoint{"kfmm::directSum"}, space, positions, positions,
                            charges, potential, field, softening, "positions", nullptr);
    kernels::launchDirectSum(space, positions, positions, charges, potential, field, softening,
                             true);
  }
}

} // namespace kfmm

#endif
