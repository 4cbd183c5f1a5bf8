// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_EXPANSIONS_TEAM_OPERATORS_HPP
#define KFMM_EXPANSIONS_TEAM_OPERATORS_HPP

// Team variants of the expansion operators (KokkosBatched style: the same operator, one
// team instead of one thread). The pattern is seed 001, Listing 5: the team builds what a
// pair shares (the real harmonics of the offset, the rotated input) once in team scratch,
// then each thread computes whole output coefficients, so no two threads write the same
// output and no atomics are needed. The per-coefficient code is the serial variants' own
// (Operators.hpp), so serial and team results agree to rounding (M2M, M2L and L2L perform
// the same operations in the same order; P2M sums its particles in another order).
//
// Scratch: every team function takes `work`, a team-shared array of
// `<op>TeamScratchSize(p)` Kokkos::complex<Real> that the caller allocates once (e.g. a
// View<Kokkos::complex<Real>*, ScratchSpace, MemoryUnmanaged>(team.team_scratch(0), size),
// sized on the policy with that View's shmem_size(size)) and may reuse across calls.
//
// Synchronisation: all threads of the team must call a team function with the same
// arguments. It begins with a team barrier, so inputs the caller wrote (staged
// coefficients, say) are visible and a previous call's readers of `work` are done; it does
// not end with one, so the caller must barrier before reading an output that another thread
// wrote (an output in scratch) or reusing `work` for something else.

#include <kfmm/detail/Math.hpp>
#include <kfmm/expansions/Operators.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::expansions
{

/// Scratch of m2lTeam, in Kokkos::complex<Real>: rotated source (coefficientCount(p)),
/// phases e^{i m phi} (p + 1) and the real irregular table to degree 2p.
KOKKOS_INLINE_FUNCTION constexpr int m2lTeamScratchSize(int p)
{
  return coefficientCount(p) + (p + 1) + (coefficientCount(2 * p) + 1) / 2;
}

/// Scratch of m2mTeam and l2lTeam: rotated input, phases and the real regular table.
KOKKOS_INLINE_FUNCTION constexpr int m2mTeamScratchSize(int p)
{
  return coefficientCount(p) + (p + 1) + (coefficientCount(p) + 1) / 2;
}

KOKKOS_INLINE_FUNCTION constexpr int l2lTeamScratchSize(int p) { return m2mTeamScratchSize(p); }

/// The most bytes of team scratch that p2mTeam's partial expansions take: a CUDA block has 48
/// KiB, of which Kokkos keeps some for its team reductions (2 KiB at 256 threads; order 24
/// runs at 352, tests/tstFmm.cpp). Unbounded, the groups of order 22 and above in double
/// asked for 50 KiB, and the kernel did not launch.
inline constexpr int p2m_team_scratch_bytes = 44 * 1024;

/// Particle groups p2mTeam splits a team into: team_size / (p + 1) threads work on each of
/// the p + 1 columns m, each group on its share of the particles, as many groups as their
/// partial expansions fit in p2m_team_scratch_bytes beside the table of steps (at least
/// one).
template <class Real>
KOKKOS_INLINE_FUNCTION constexpr int p2mTeamGroups(int p, int team_size)
{
  int const by_threads = team_size / (p + 1);
  int const expansion_bytes = coefficientCount(p) * static_cast<int>(sizeof(Kokkos::complex<Real>));
  int const by_scratch = p2m_team_scratch_bytes / expansion_bytes - 1;
  return kfmm::detail::max(1, kfmm::detail::min(by_threads, by_scratch));
}

/// Scratch of p2mTeam in Kokkos::complex<Real>: the steps of (R1) for order p (a
/// detail::RegularStep takes the room of one coefficient) and one partial expansion per
/// particle group.
template <class Real>
KOKKOS_INLINE_FUNCTION constexpr int p2mTeamScratchSize(int p, int team_size)
{
  return (1 + p2mTeamGroups<Real>(p, team_size)) * coefficientCount(p);
}

/// Scratch of l2pTeam: the expansion, staged once for all threads, and the steps of (R1).
KOKKOS_INLINE_FUNCTION constexpr int l2pTeamScratchSize(int p) { return 2 * coefficientCount(p); }

KOKKOS_INLINE_FUNCTION constexpr int m2pTeamScratchSize(int p) { return coefficientCount(p); }

namespace detail
{

/// Column m of P2M for one particle, added to `M` (a group's partial expansion).
template <class Real>
KOKKOS_INLINE_FUNCTION void p2mColumn(int p, int m, Real dx, Real dy, Real dz, Real q,
                                      Real inv_scale, TabulatedRegularSteps<Real> const &steps,
                                      Complex<Real> *M)
{
  auto const g = polar(dx * inv_scale, dy * inv_scale, dz * inv_scale);
  Complex<Real> const e = phase(g, m);
  Real a_prev = Real(0);
  Real a = q * regularDiagonal(g, m);
  for (int n = m; n <= p; ++n)
  {
    M[coefficientIndex(n, m)] += Complex<Real>(a * e.real(), -a * e.imag());
    Real const next = steps(n, m).next(g.z, g.r2, a, a_prev);
    a_prev = a;
    a = next;
  }
}

/// The steps of (R1) for order p into `table` (coefficientCount(p) entries at
/// coefficientIndex(n, m)), one per thread of the team.
template <class TeamMember, class Real>
KOKKOS_INLINE_FUNCTION void fillRegularSteps(TeamMember const &team, int p,
                                             RegularStep<Real> *table)
{
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, coefficientCount(p)), [&](int index) {
    int const n = degreeOf(index);
    table[index] = RegularStep<Real>::of(n, index - coefficientIndex(n, 0));
  });
}

} // namespace detail

/// Team M2L (seed 001, Listing 5): the team computes the real irregular table of the pair
/// and the rotated source in `work`, then each thread adds whole coefficients L_j^k of (T2).
/// Arguments as m2l, plus `work` (m2lTeamScratchSize(p) elements of team scratch).
template <class TeamMember, class Real>
KOKKOS_INLINE_FUNCTION void m2lTeam(TeamMember const &team, int p, Real dx, Real dy, Real dz,
                                    Kokkos::complex<Real> const *M, Kokkos::complex<Real> *L,
                                    Kokkos::complex<Real> *work, Real source_scale = Real(1),
                                    Real target_scale = Real(1))
{
  using detail::Complex;
  Complex<Real> *rotated = work;
  Complex<Real> *phases = rotated + coefficientCount(p);
  Real *irr = reinterpret_cast<Real *>(phases + (p + 1));
  detail::M2LPair<Real> const pair(dx, dy, dz, source_scale, target_scale);
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, 2 * p + 1),
                       [&](int column) { pair.setUpColumn(p, column, M, rotated, phases, irr); });
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, coefficientCount(p)),
                       [&](int index) { pair.addCoefficient(p, index, rotated, phases, irr, L); });
}

/// Team M2M: arguments as m2m, plus `work` (m2mTeamScratchSize(p) elements).
template <class TeamMember, class Real>
KOKKOS_INLINE_FUNCTION void m2mTeam(TeamMember const &team, int p, Real dx, Real dy, Real dz,
                                    Kokkos::complex<Real> const *M_child,
                                    Kokkos::complex<Real> *M_parent, Kokkos::complex<Real> *work,
                                    Real child_scale = Real(1), Real parent_scale = Real(1))
{
  using detail::Complex;
  Complex<Real> *rotated = work;
  Complex<Real> *phases = rotated + coefficientCount(p);
  Real *reg = reinterpret_cast<Real *>(phases + (p + 1));
  detail::ShiftPair<Real> const pair(dx, dy, dz, parent_scale);
  Real const ratio = child_scale / parent_scale;
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, p + 1), [&](int column) {
    pair.setUpColumn(p, column, ratio, M_child, rotated, phases, reg);
  });
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, coefficientCount(p)), [&](int index) {
    detail::m2mCoefficient(index, rotated, phases, reg, M_parent);
  });
}

/// Team L2L: arguments as l2l, plus `work` (l2lTeamScratchSize(p) elements).
template <class TeamMember, class Real>
KOKKOS_INLINE_FUNCTION void l2lTeam(TeamMember const &team, int p, Real dx, Real dy, Real dz,
                                    Kokkos::complex<Real> const *L_parent,
                                    Kokkos::complex<Real> *L_child, Kokkos::complex<Real> *work,
                                    Real parent_scale = Real(1), Real child_scale = Real(1))
{
  using detail::Complex;
  Complex<Real> *rotated = work;
  Complex<Real> *phases = rotated + coefficientCount(p);
  Real *reg = reinterpret_cast<Real *>(phases + (p + 1));
  detail::ShiftPair<Real> const pair(dx, dy, dz, parent_scale);
  Real const ratio = child_scale / parent_scale;
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, p + 1), [&](int column) {
    pair.setUpColumn(p, column, Real(1), L_parent, rotated, phases, reg);
  });
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, coefficientCount(p)), [&](int index) {
    detail::l2lCoefficient(p, index, ratio, rotated, phases, reg, L_child);
  });
}

/// Team P2M of particles first..last-1 about centre (cx, cy, cz), added to M. Thread
/// (m, g) builds column m of (R1) for the particles of group g into the group's partial
/// expansion in `work`; the groups are then summed, one coefficient per thread.
///
/// The centre is a double and a particle's offset from it is taken in double, then rounded:
/// deep in a tree a centre rounded to float would sit a sizeable part of its cell away from
/// where the translations between cells assume it (in units where the tree's cube is 1, a
/// cell of level 21 is 5e-7 wide and float's spacing near 0.5 is 6e-8). The same holds for
/// l2pTeam and m2pTeam.
///
/// \param [in]     x        positions, x(i, 0..2)
/// \param [in]     q        charges, q(i)
/// \param [in,out] M        coefficientCount(p) coefficients, scale `scale` (added to)
/// \param          work     p2mTeamScratchSize<Real>(p, team.team_size()) elements of scratch
template <class TeamMember, class Real, class Positions, class Charges>
KOKKOS_INLINE_FUNCTION void p2mTeam(TeamMember const &team, int p, double cx, double cy, double cz,
                                    Positions const &x, Charges const &q, int first, int last,
                                    Kokkos::complex<Real> *M, Kokkos::complex<Real> *work,
                                    Real scale = Real(1))
{
  using detail::Complex;
  int const groups = p2mTeamGroups<Real>(p, team.team_size());
  int const count = coefficientCount(p);
  Real const inv = Real(1) / scale;
  auto *const table = reinterpret_cast<detail::RegularStep<Real> *>(work);
  Complex<Real> *const partials = work + count;
  detail::TabulatedRegularSteps<Real> const steps{table};
  team.team_barrier();
  detail::fillRegularSteps(team, p, table);
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, groups * (p + 1)), [&](int item) {
    int const m = item % (p + 1);
    int const group = item / (p + 1);
    Complex<Real> *partial = partials + group * count;
    for (int n = m; n <= p; ++n)
      partial[coefficientIndex(n, m)] = Complex<Real>(Real(0), Real(0));
    for (int i = first + group; i < last; i += groups)
      detail::p2mColumn(p, m, static_cast<Real>(static_cast<double>(x(i, 0)) - cx),
                        static_cast<Real>(static_cast<double>(x(i, 1)) - cy),
                        static_cast<Real>(static_cast<double>(x(i, 2)) - cz),
                        static_cast<Real>(q(i)), inv, steps, partial);
  });
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count), [&](int index) {
    Complex<Real> sum = partials[index];
    for (int group = 1; group < groups; ++group)
      sum += partials[group * count + index];
    M[index] += sum;
  });
}

namespace detail
{

/// Stages the expansion E (centre (cx, cy, cz)) in `work`, then evaluates it at particles
/// first..last-1, one particle per thread: as a local expansion (l2p, with the steps of (R1)
/// tabulated after it in `work`) or a multipole expansion (m2p). The body of l2pTeam and
/// m2pTeam.
template <bool Local, class TeamMember, class Real, class Positions, class Potential, class Field>
KOKKOS_INLINE_FUNCTION void evaluateTeam(TeamMember const &team, int p, double cx, double cy,
                                         double cz, Kokkos::complex<Real> const *E,
                                         Positions const &x, int first, int last,
                                         Potential const &potential, Field const &field,
                                         Kokkos::complex<Real> *work, Real scale)
{
  auto *const table = reinterpret_cast<RegularStep<Real> *>(work + coefficientCount(p));
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, coefficientCount(p)),
                       [&](int index) { work[index] = E[index]; });
  if constexpr (Local)
    fillRegularSteps(team, p, table);
  team.team_barrier();
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, first, last), [&](int i) {
    Real phi = Real(0), gx = Real(0), gy = Real(0), gz = Real(0);
    Real const dx = static_cast<Real>(static_cast<double>(x(i, 0)) - cx);
    Real const dy = static_cast<Real>(static_cast<double>(x(i, 1)) - cy);
    Real const dz = static_cast<Real>(static_cast<double>(x(i, 2)) - cz);
    auto const *staged = static_cast<Kokkos::complex<Real> const *>(work);
    if constexpr (Local)
      l2p(p, dx, dy, dz, staged, phi, gx, gy, gz, scale, TabulatedRegularSteps<Real>{table});
    else
      m2p(p, dx, dy, dz, staged, phi, gx, gy, gz, scale);
    potential(i) += phi;
    field(i, 0) += gx;
    field(i, 1) += gy;
    field(i, 2) += gz;
  });
}

} // namespace detail

/// Team L2P: adds the potential and field of the local expansion L (centre (cx, cy, cz))
/// at particles first..last-1, one particle per thread, L staged in `work`.
///
/// \param [in]     x          positions, x(i, 0..2)
/// \param [in,out] potential  potential(i) (added to)
/// \param [in,out] field      field(i, 0..2) (added to)
/// \param          work       l2pTeamScratchSize(p) elements of scratch
template <class TeamMember, class Real, class Positions, class Potential, class Field>
KOKKOS_INLINE_FUNCTION void l2pTeam(TeamMember const &team, int p, double cx, double cy, double cz,
                                    Kokkos::complex<Real> const *L, Positions const &x, int first,
                                    int last, Potential const &potential, Field const &field,
                                    Kokkos::complex<Real> *work, Real scale = Real(1))
{
  detail::evaluateTeam<true>(team, p, cx, cy, cz, L, x, first, last, potential, field, work, scale);
}

/// Team M2P (treecode far field): adds the potential and field of the multipole expansion
/// M (centre (cx, cy, cz)) at particles first..last-1, one particle per thread, M staged
/// in `work`. Arguments as l2pTeam; `work` is m2pTeamScratchSize(p) elements.
template <class TeamMember, class Real, class Positions, class Potential, class Field>
KOKKOS_INLINE_FUNCTION void m2pTeam(TeamMember const &team, int p, double cx, double cy, double cz,
                                    Kokkos::complex<Real> const *M, Positions const &x, int first,
                                    int last, Potential const &potential, Field const &field,
                                    Kokkos::complex<Real> *work, Real scale = Real(1))
{
  detail::evaluateTeam<false>(team, p, cx, cy, cz, M, x, first, last, potential, field, work,
                              scale);
}

} // namespace kfmm::expansions

#endif
