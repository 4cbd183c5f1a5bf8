// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_FARFIELD_M2L_MATRICES_HPP
#define KFMM_FARFIELD_M2L_MATRICES_HPP

// The M2L operator of each translation class (farfield/M2LGroups.hpp) as a dense real matrix,
// computed once per tree from the team operator m2lTeam, so the grouped M2L applies exactly
// the translation (T2) of Operators.hpp.
//
// A coefficient array of order p is coefficientCount(p) complex numbers, i.e. n = 2
// coefficientCount(p) reals (real and imaginary parts interleaved, Kokkos::complex's
// layout). M2L is real-linear in that vector (the orders m < 0 enter through complex
// conjugates), so column k of a class's matrix is the translation of the k-th unit vector:
//   L_real = A M_real,  A (n x n).
// A is stored transposed, row k holding column k of A padded with zeros to
// paddedRealCount(p) (a whole number of the product's row tiles): the product then reads
// contiguous, aligned runs of A for each input component.
// Matrices are computed in double and stored in the solver's precision, in units where the
// finer of the two cells' length scales is 1: the coarser one is 2^|delta|, the offset is o.
// A local expansion carries one inverse length (Operators.hpp), so the product is divided
// by the finer scale u of the actual pair: L = (1/u) A M.

#include <kfmm/detail/Workspace.hpp>
#include <kfmm/expansions/TeamOperators.hpp>
#include <kfmm/farfield/M2LGroups.hpp>
#include <kfmm/kernels/detail/ExpansionArrays.hpp>
#include <kfmm/kernels/detail/RealMatrices.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::farfield
{

/// Class matrices, transposed: matrices(class, k, i) = A_class(i, k), i < n padded.
template <class Real, class MemorySpace>
using M2LMatrixArray = kernels::detail::RealMatrixArray<Real, MemorySpace>;

using kernels::detail::componentExchange;
using kernels::detail::componentParities;
using kernels::detail::componentSign;
using kernels::detail::operatorColumnScratchBytes;
using kernels::detail::operatorMatrixColumn;
using kernels::detail::paddedRealCount;
using kernels::detail::realCoefficientCount;
/// Bytes of the class matrices of `classes` classes at order p on ExecutionSpace.
template <class ExecutionSpace, class Real>
std::size_t m2lMatrixBytes(int classes, int p)
{
  auto const n = static_cast<std::size_t>(realCoefficientCount(p));
  return static_cast<std::size_t>(classes) * n *
         static_cast<std::size_t>(paddedRealCount<ExecutionSpace, Real>(p)) * sizeof(Real);
}

/// Team (class, column): the translation of one unit multipole vector.
template <class ExecutionSpace, class Real>
struct M2LMatrixKernel
{
  using TeamMember = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Memory = typename ExecutionSpace::memory_space;

  Kokkos::View<int *, Memory> class_keys;
  M2LMatrixArray<Real, Memory> matrices;
  int order;

  static std::size_t scratchBytes(int p)
  {
    return operatorColumnScratchBytes<ExecutionSpace>(p, expansions::m2lTeamScratchSize(p));
  }

  KOKKOS_FUNCTION void operator()(TeamMember const &team) const
  {
    int const n = realCoefficientCount(order);
    int const cls = team.league_rank() / n;
    int const column = team.league_rank() % n;
    int delta, ox, oy, oz;
    TranslationClassBounds::decode(class_keys(cls), delta, ox, oy, oz);
    double const coarser = static_cast<double>(1 << (delta < 0 ? -delta : delta));
    double const source_scale = delta >= 0 ? coarser : 1.0;
    double const target_scale = delta >= 0 ? 1.0 : coarser;
    operatorMatrixColumn<ExecutionSpace, Real>(
        team, order, column, expansions::m2lTeamScratchSize(order),
        [&](Kokkos::complex<double> const *M, Kokkos::complex<double> *L,
            Kokkos::complex<double> *work) {
          expansions::m2lTeam(team, order, double(ox), double(oy), double(oz), M, L, work,
                              source_scale, target_scale);
        },
        [&](int i, double value) { matrices(cls, column, i) = static_cast<Real>(value); });
  }
};

/// The matrices of every class of `groups` at order p, in an array taken from `memory`.
template <class Real, class ExecutionSpace, class MemorySpace>
M2LMatrixArray<Real, MemorySpace> buildM2LMatrices(ExecutionSpace const &space,
                                                   kfmm::detail::Workspace<MemorySpace> &memory,
                                                   M2LGroups<MemorySpace> const &groups, int p,
                                                   int team_size)
{
  int const n = realCoefficientCount(p);
  auto const matrices = memory.template take<M2LMatrixArray<Real, MemorySpace>>(
      space, "kfmm::Fmm::m2l_matrices", groups.num_classes, n,
      paddedRealCount<ExecutionSpace, Real>(p));
  using Kernel = M2LMatrixKernel<ExecutionSpace, Real>;
  Kokkos::parallel_for("kfmm::Fmm::m2l_matrices",
                       Kokkos::TeamPolicy<ExecutionSpace>(space, groups.num_classes * n, team_size)
                           .set_scratch_size(0, Kokkos::PerTeam(Kernel::scratchBytes(p))),
                       Kernel{groups.class_keys, matrices, p});
  return matrices;
}

} // namespace kfmm::farfield

#endif
