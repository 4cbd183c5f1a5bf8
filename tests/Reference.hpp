// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_TESTS_REFERENCE_HPP
#define KFMM_TESTS_REFERENCE_HPP

// The plain double-precision serial loop every kfmm result is ultimately checked against.

#include <Kokkos_Core.hpp>

#include <cmath>

namespace kfmm::test
{

struct HostResult
{
  Kokkos::View<double *, Kokkos::HostSpace> potential;
  Kokkos::View<double *[3], Kokkos::HostSpace> field;
};

/// Potential and field at `targets` from all `sources` at non-zero distance, in double.
template <class Targets, class Sources, class Charges>
HostResult referenceDirectSum(Targets const &targets, Sources const &sources,
                              Charges const &charges, double softening = 0)
{
  auto const nt = targets.extent(0);
  HostResult r{Kokkos::View<double *, Kokkos::HostSpace>("kfmm::test::phi", nt),
               Kokkos::View<double *[3], Kokkos::HostSpace>("kfmm::test::field", nt)};
  for (std::size_t i = 0; i < nt; ++i)
    for (std::size_t j = 0; j < sources.extent(0); ++j)
    {
      double const dx = double(targets(i, 0)) - double(sources(j, 0));
      double const dy = double(targets(i, 1)) - double(sources(j, 1));
      double const dz = double(targets(i, 2)) - double(sources(j, 2));
      double const r2 = dx * dx + dy * dy + dz * dz;
      if (r2 == 0)
        continue;
      double const inv_r = 1 / std::sqrt(r2 + softening * softening);
      double const q = charges(j);
      r.potential(i) += q * inv_r;
      r.field(i, 0) -= q * inv_r * inv_r * inv_r * dx;
      r.field(i, 1) -= q * inv_r * inv_r * inv_r * dy;
      r.field(i, 2) -= q * inv_r * inv_r * inv_r * dz;
    }
  return r;
}

} // namespace kfmm::test

#endif
