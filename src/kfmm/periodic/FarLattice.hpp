// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_PERIODIC_FAR_LATTICE_HPP
#define KFMM_PERIODIC_FAR_LATTICE_HPP

// Periodic boundaries beyond the near images: the far lattice's harmonic part as one
// translation of the root's multipole into the root's local (periodic/LatticeCoefficients.hpp
// derives it), and the neutralising background's quadratic at the targets.
//
// With the root's multipole M (the sources about the box's centre c) and the box's charge Q,
// dipole D = sum_j q_j (x_j - c) and second moment S = sum_j q_j |x_j - c|^2,
//   - the root's local gains (T2) with T_l^m in place of I_l^m(D) (LatticeM2L);
//   - a target at x, w = x - c, gains sum_j q_j (2 pi / 3V) |x - x_j|^2
//       = (2 pi / 3V) (Q |w|^2 - 2 w . D + S)          in the potential, and
//         (4 pi / 3V) (Q w - D)                         in the field (its gradient) (Background).
// Q and D are the root multipole's degrees 0 and 1; S is a reduction over the sources. For a
// charge-neutral box these give Ewald's tin-foil result; with a net charge, the result of a
// uniform background of the opposite charge, with the potential's mean over the box zero.

#include <kfmm/expansions/SphericalHarmonics.hpp>
#include <kfmm/kernels/detail/ExpansionArrays.hpp>
#include <kfmm/periodic/LatticeCoefficients.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::periodic
{

/// What the periodic stages need of a solver's box: the lattice's coefficients for its
/// period and order, and the sources' second moment (made each evaluation).
template <class MemorySpace>
struct FarLattice
{
  /// U_l^m = T_l^m 2^-l / L for l <= 2p at coefficientIndex(l, m): (T2)'s irregular
  /// harmonics with its scales, those of the root (L / 2), folded in.
  Kokkos::View<Kokkos::complex<double> *, MemorySpace> coefficients;
  Kokkos::View<double, MemorySpace> second_moment;
  double period = 0; ///< L, in the solver's units; 0: no periodic boundaries

  bool enabled() const { return period > 0; }
};

/// The far lattice of a box of side `period` (in the solver's units) for order p.
template <class ExecutionSpace, class MemorySpace>
FarLattice<MemorySpace> farLattice(ExecutionSpace const &space, double period, int p)
{
  auto const &unit = unitLatticeCoefficients(2 * p);
  FarLattice<MemorySpace> lattice;
  lattice.period = period;
  lattice.coefficients = Kokkos::View<Kokkos::complex<double> *, MemorySpace>(
      Kokkos::view_alloc(space, "kfmm::periodic::lattice_coefficients"), unit.size());
  auto host = Kokkos::create_mirror_view(lattice.coefficients);
  for (int l = 0; l <= 2 * p; ++l)
    for (int m = 0; m <= l; ++m)
    {
      int const index = expansions::coefficientIndex(l, m);
      double const scale = std::ldexp(1.0, -l) / period;
      host(index) = Kokkos::complex<double>(unit[index].real() * scale, unit[index].imag() * scale);
    }
  Kokkos::deep_copy(space, lattice.coefficients, host);
  lattice.second_moment =
      Kokkos::View<double, MemorySpace>(Kokkos::view_alloc(space, "kfmm::periodic::second_moment"));
  space.fence(); // the host mirror goes out of scope
  return lattice;
}

/// sum_j q_j |x_j - c|^2 over the sorted sources, c the root's centre.
template <class MemorySpace, class Positions, class Charges>
struct SecondMoment
{
  kernels::detail::CellView<MemorySpace> cells;
  Positions x;
  Charges q;

  KOKKOS_INLINE_FUNCTION void operator()(int j, double &sum) const
  {
    double w2 = 0;
    for (int d = 0; d < 3; ++d)
    {
      double const w = static_cast<double>(x(j, d)) - cells.centre(0, d);
      w2 += w * w;
    }
    sum += static_cast<double>(q(j)) * w2;
  }
};

/// (T2) from the root's multipole to the root's local with the lattice's coefficients: a
/// thread per local coefficient (j, k), summed in double.
template <class ExecutionSpace, class Real>
struct LatticeM2L
{
  using Member = typename Kokkos::TeamPolicy<ExecutionSpace>::member_type;
  using Memory = typename ExecutionSpace::memory_space;

  Kokkos::View<Kokkos::complex<double> *, Memory> coefficients;
  kernels::detail::CoefficientArray<Real, Memory> multipoles;
  kernels::detail::CoefficientArray<Real, Memory> locals;
  int order;

  /// S(a, b) = (-1)^{(|a| + |b| - |a + b|) / 2} of Operators.hpp.
  KOKKOS_INLINE_FUNCTION static double sign(int a, int b)
  {
    int const e = (expansions::detail::iabs(a) + expansions::detail::iabs(b) -
                   expansions::detail::iabs(a + b)) /
                  2;
    return (e & 1) ? -1.0 : 1.0;
  }

  KOKKOS_FUNCTION void operator()(Member const &team) const
  {
    int const p = order;
    Kokkos::parallel_for(
        Kokkos::TeamThreadRange(team, expansions::coefficientCount(p)), [&](int index) {
          int const j = expansions::detail::degreeOf(index);
          int const k = index - expansions::coefficientIndex(j, 0);
          double re = 0, im = 0;
          double binomial = 1; // C(j + n, n)
          for (int n = 0; n <= p; ++n)
          {
            if (n > 0)
              binomial = binomial * (j + n) / n;
            int const l = j + n;
            for (int m = -n; m <= n; ++m)
            {
              auto const stored =
                  multipoles(0, expansions::coefficientIndex(n, expansions::detail::iabs(m)));
              double const m_re = static_cast<double>(stored.real());
              double const m_im = m < 0 ? -static_cast<double>(stored.imag())
                                        : static_cast<double>(stored.imag());
              int const mu = m - k;
              auto const u =
                  coefficients(expansions::coefficientIndex(l, expansions::detail::iabs(mu)));
              double const u_im = mu < 0 ? -u.imag() : u.imag();
              double const factor = binomial * sign(m, -k);
              re += factor * (m_re * u.real() - m_im * u_im);
              im += factor * (m_re * u_im + m_im * u.real());
            }
          }
          double const parity = (j & 1) ? -1.0 : 1.0;
          locals(0, index) +=
              Kokkos::complex<Real>(static_cast<Real>(parity * re), static_cast<Real>(parity * im));
        });
  }
};

/// The background's quadratic at each sorted target (the file comment), added to the results.
template <class Real, class MemorySpace, class Positions, class Potential, class Field>
struct Background
{
  kernels::detail::CellView<MemorySpace> cells;
  kernels::detail::CoefficientArray<Real, MemorySpace> multipoles;
  Kokkos::View<double, MemorySpace> second_moment;
  Positions x;
  Potential potential;
  Field field;
  double period;

  KOKKOS_INLINE_FUNCTION void operator()(int i) const
  {
    double const volume = period * period * period;
    // The root's multipole in its scale s = L / 2: M_0^0 = Q, M_1^0 = D_z / s,
    // M_1^1 = (D_x - i D_y) / (2 s).
    double const s = 0.5 * period;
    double const charge = static_cast<double>(multipoles(0, 0).real());
    double const dipole[3] = {2 * s * static_cast<double>(multipoles(0, 2).real()),
                              -2 * s * static_cast<double>(multipoles(0, 2).imag()),
                              s * static_cast<double>(multipoles(0, 1).real())};
    double w[3], w2 = 0, w_dot_d = 0;
    for (int d = 0; d < 3; ++d)
    {
      w[d] = static_cast<double>(x(i, d)) - cells.centre(0, d);
      w2 += w[d] * w[d];
      w_dot_d += w[d] * dipole[d];
    }
    double const factor = 2 * pi / (3 * volume);
    potential(i) += static_cast<Real>(factor * (charge * w2 - 2 * w_dot_d + second_moment()));
    for (int d = 0; d < 3; ++d)
      field(i, d) += static_cast<Real>(2 * factor * (charge * w[d] - dipole[d]));
  }
};

/// The far lattice into the root's local: the sources' second moment (for Background), and
/// LatticeM2L. After the M2L, which writes the locals, and before the L2L.
template <class ExecutionSpace, class Real, class MemorySpace, class Positions, class Charges>
void addFarLattice(ExecutionSpace const &space, FarLattice<MemorySpace> const &lattice,
                   kernels::detail::CellView<MemorySpace> const &cells, Positions const &x,
                   Charges const &q,
                   kernels::detail::CoefficientArray<Real, MemorySpace> const &multipoles,
                   kernels::detail::CoefficientArray<Real, MemorySpace> const &locals, int order)
{
  Kokkos::parallel_reduce(
      "kfmm::periodic::second_moment", Kokkos::RangePolicy<ExecutionSpace>(space, 0, x.extent(0)),
      SecondMoment<MemorySpace, Positions, Charges>{cells, x, q}, lattice.second_moment);
  Kokkos::parallel_for(
      "kfmm::periodic::lattice_m2l", Kokkos::TeamPolicy<ExecutionSpace>(space, 1, Kokkos::AUTO),
      LatticeM2L<ExecutionSpace, Real>{lattice.coefficients, multipoles, locals, order});
}

/// The background's quadratic at the sorted targets, added to their results.
template <class ExecutionSpace, class Real, class MemorySpace, class Positions, class Potential,
          class Field>
void addBackground(ExecutionSpace const &space, FarLattice<MemorySpace> const &lattice,
                   kernels::detail::CellView<MemorySpace> const &cells,
                   kernels::detail::CoefficientArray<Real, MemorySpace> const &multipoles,
                   Positions const &x, Potential const &potential, Field const &field)
{
  Kokkos::parallel_for(
      "kfmm::periodic::background", Kokkos::RangePolicy<ExecutionSpace>(space, 0, x.extent(0)),
      Background<Real, MemorySpace, Positions, Potential, Field>{
          cells, multipoles, lattice.second_moment, x, potential, field, lattice.period});
}

} // namespace kfmm::periodic

#endif
