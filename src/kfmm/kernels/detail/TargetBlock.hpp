// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_KERNELS_DETAIL_TARGET_BLOCK_HPP
#define KFMM_KERNELS_DETAIL_TARGET_BLOCK_HPP

// The particle-particle interaction shared by the all-pairs direct sum and the FMM's near
// field (P2P): a thread holds a few targets in registers and sweeps a tile of sources that
// its team staged in scratch (the tiled scheme of seed 001, Listing 2).

#include <kfmm/detail/Math.hpp>

#include <Kokkos_Core.hpp>

namespace kfmm::detail
{

/// One source as staged in team scratch: the four values an interaction reads, packed and
/// aligned so that a GPU thread fetches them with one vector load.
template <class Real>
struct alignas(4 * sizeof(Real)) StagedSource
{
  Real x, y, z, q;
};

/// `Count` targets of one thread: positions and running sums of potential and field.
/// One target per thread on a GPU; several on a CPU, so that the source loop vectorises
/// across them.
template <class Real, int Count>
struct TargetBlock
{
  Real x[Count], y[Count], z[Count];
  Real phi[Count], gx[Count], gy[Count], gz[Count];

  KOKKOS_INLINE_FUNCTION void clearSums()
  {
    for (int k = 0; k < Count; ++k)
      phi[k] = gx[k] = gy[k] = gz[k] = Real(0);
  }

  /// Adds the potential and field of the staged sources sources[0], sources[stride], ...
  /// below sources[count] (a stride above 1 lets several threads share one tile). The tile
  /// is summed on its own before it is added to the running sums: this blocked summation
  /// keeps the float rounding error near eps (sqrt(tile) + sqrt(N / tile)) instead of
  /// eps sqrt(N).
  KOKKOS_INLINE_FUNCTION void interact(StagedSource<Real> const *sources, int count, int stride,
                                       Real softening2)
  {
    Real tphi[Count], tgx[Count], tgy[Count], tgz[Count];
    for (int k = 0; k < Count; ++k)
      tphi[k] = tgx[k] = tgy[k] = tgz[k] = Real(0);
    for (int s = 0; s < count; s += stride)
    {
      StagedSource<Real> const source = sources[s];
      for (int k = 0; k < Count; ++k)
      {
        Real const dx = x[k] - source.x;
        Real const dy = y[k] - source.y;
        Real const dz = z[k] - source.z;
        Real const r2 = dx * dx + dy * dy + dz * dz;
        // Zero-distance pairs (the target itself, coincident particles) contribute
        // nothing, with or without softening. The reciprocal square root is taken
        // unconditionally (of 0 it is infinite, and no trap is enabled) and the pair then
        // selected: a select, not a branch, so that the loop over targets vectorises on a
        // CPU, and two instructions on a GPU, where masking by arithmetic took five.
        Real const any_inv_r = rsqrt(r2 + softening2);
        Real const inv_r = r2 > Real(0) ? any_inv_r : Real(0);
        Real const q_inv_r = source.q * inv_r;
        // field = grad_target (q / r) = -(q / r^2) (x_t - x_s) / r, in this order: q / r^2 is
        // the pair's own field and (x_t - x_s) / r at most 1, so nothing overflows unless
        // that field does (q / r^3 would, in float, for r below ~1e-13 at q = 1).
        Real const q_inv_r2 = q_inv_r * inv_r;
        tphi[k] += q_inv_r;
        tgx[k] -= q_inv_r2 * (dx * inv_r);
        tgy[k] -= q_inv_r2 * (dy * inv_r);
        tgz[k] -= q_inv_r2 * (dz * inv_r);
      }
    }
    for (int k = 0; k < Count; ++k)
    {
      phi[k] += tphi[k];
      gx[k] += tgx[k];
      gy[k] += tgy[k];
      gz[k] += tgz[k];
    }
  }
};

/// Flops of one interaction as counted for rates (the usual convention for a Laplace
/// potential + field pair with one reciprocal square root: 20).
constexpr double flops_per_interaction = 20;

} // namespace kfmm::detail

#endif
