// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_KERNELS_DETAIL_REAL_MATRICES_HPP
#define KFMM_KERNELS_DETAIL_REAL_MATRICES_HPP

// Linear operators on coefficient arrays as dense real matrices: the M2L's class matrices
// (farfield/M2LMatrices.hpp) and the M2M and L2L shifts (kernels/ShiftMatrices.hpp). A
// coefficient array of order p is coefficientCount(p) complex numbers, i.e. n = 2
// coefficientCount(p) reals (real and imaginary parts interleaved, Kokkos::complex's layout);
// the operators are real-linear in that vector (the orders m < 0 enter through complex
// conjugates), so column k of an operator's matrix is its image of the k-th unit vector. A
// matrix is stored transposed, row k holding column k padded with zeros to paddedRealCount(p)
// (a multiple of the backend's matrix_row_padding_float or _double, tuning/Tuning.hpp).
// The reflections of a cell's octants act on the vector by signs (expansions/Symmetries.hpp).

#include <kfmm/expansions/SphericalHarmonics.hpp>
#include <kfmm/expansions/Symmetries.hpp>
#include <kfmm/kernels/detail/ExpansionArrays.hpp>
#include <kfmm/tuning/Tuning.hpp>

#include <Kokkos_Core.hpp>

#include <cstddef>
#include <type_traits>

namespace kfmm::kernels::detail
{

/// Real matrices of operators, transposed: matrices(m, k, i) = A_m(i, k), i < n padded.
template <class Real, class MemorySpace>
using RealMatrixArray = Kokkos::View<Real ***, Kokkos::LayoutRight, MemorySpace>;

/// Length of the real coefficient vector of order p.
KOKKOS_INLINE_FUNCTION constexpr int realCoefficientCount(int p)
{
  return 2 * expansions::coefficientCount(p);
}

/// The rows' padding of matrices of Real on ExecutionSpace (Tuning::matrix_row_padding_float
/// or _double): a multiple of the products' row tiles, so that a thread's run of matrix
/// entries is whole.
template <class ExecutionSpace, class Real>
KOKKOS_INLINE_FUNCTION constexpr int matrixRowPadding()
{
  using Tune = tuning::Tuning<ExecutionSpace>;
  return std::is_same<Real, float>::value ? Tune::matrix_row_padding_float
                                          : Tune::matrix_row_padding_double;
}

/// realCoefficientCount(p) rounded up to a multiple of matrixRowPadding.
template <class ExecutionSpace, class Real>
KOKKOS_INLINE_FUNCTION constexpr int paddedRealCount(int p)
{
  constexpr int padding = matrixRowPadding<ExecutionSpace, Real>();
  return (realCoefficientCount(p) + padding - 1) / padding * padding;
}

/// expansions::mirrorParities of real component i (of coefficient i / 2) of the real vector.
KOKKOS_INLINE_FUNCTION int componentParities(int i)
{
  int const n = expansions::detail::degreeOf(i / 2);
  return expansions::mirrorParities(n, i / 2 - expansions::coefficientIndex(n, 0), i);
}

/// expansions::exchangeCode of real component i (of coefficient i / 2) of the real vector.
KOKKOS_INLINE_FUNCTION int componentExchange(int i)
{
  int const n = expansions::detail::degreeOf(i / 2);
  return expansions::exchangeCode(i / 2 - expansions::coefficientIndex(n, 0), i & 1);
}

/// The sign of real component k under the reflections `mirror`.
KOKKOS_INLINE_FUNCTION int componentSign(int mirror, int k)
{
  return expansions::mirrorSign(mirror, componentParities(k));
}

/// Team scratch of operatorMatrixColumn for an operator whose team work array has
/// `work_size` elements.
template <class ExecutionSpace>
std::size_t operatorColumnScratchBytes(int p, int work_size)
{
  return scratchCoefficientBytes<double, ExecutionSpace>(2 * expansions::coefficientCount(p) +
                                                         work_size);
}

/// Column `column` of the real matrix of a linear operator on coefficient arrays of order p,
/// computed by one team in double: `apply(in, out, work)` (a team operator adding to `out`)
/// maps the unit vector of real component `column`; the image is written through
/// store(i, value) for i < paddedRealCount<ExecutionSpace, Real>(p), zero past the n real
/// components.
template <class ExecutionSpace, class Real, class TeamMember, class Apply, class Store>
KOKKOS_INLINE_FUNCTION void operatorMatrixColumn(TeamMember const &team, int p, int column,
                                                 int work_size, Apply const &apply,
                                                 Store const &store)
{
  int const count = expansions::coefficientCount(p);
  ScratchCoefficients<double, ExecutionSpace> in(team.team_scratch(0), count);
  ScratchCoefficients<double, ExecutionSpace> out(team.team_scratch(0), count);
  ScratchCoefficients<double, ExecutionSpace> work(team.team_scratch(0), work_size);
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, count), [&](int i) {
    double const one = i == column / 2 ? 1.0 : 0.0;
    in(i) = column % 2 == 0 ? Kokkos::complex<double>(one, 0) : Kokkos::complex<double>(0, one);
    out(i) = Kokkos::complex<double>(0, 0);
  });
  apply(in.data(), out.data(), work.data());
  team.team_barrier();
  auto const *out_real = reinterpret_cast<double const *>(out.data());
  Kokkos::parallel_for(Kokkos::TeamThreadRange(team, paddedRealCount<ExecutionSpace, Real>(p)),
                       [&](int i) { store(i, i < 2 * count ? out_real[i] : 0.0); });
}

} // namespace kfmm::kernels::detail

#endif
