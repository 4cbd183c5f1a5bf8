// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_KERNELS_DETAIL_TARGET_BLOCK_HPP
#define KFMM_KERNELS_DETAIL_TARGET_BLOCK_HPP

// The particle-particle interaction shared by the all-pairs direct sum and the FMM's near
// field (P2P): a thread holds a few targets in registers and sweeps a tile of sources that
// its team staged in scratch (the tiled scheme of seed 001, Listing 2).

#include <kfmm/detail/Math.hpp>

#include <Kokkos_Core.hpp>

#include <limits>

namespace kfmm::kernels::detail
{

/// One source as staged in team scratch: the four values an interaction reads, packed and
/// aligned so that a GPU thread fetches them with one vector load. Its charge is the
/// charge times `staged_charge_scale` (TargetBlock::stage).
template <class Real>
struct alignas(4 * sizeof(Real)) StagedSource
{
  Real x, y, z, q;
};

/// 2^e for a whole e within Real's normal range, as a constant expression.
template <class Real>
constexpr Real powerOfTwo(int e)
{
  Real p = 1;
  for (; e > 0; --e)
    p *= 2;
  for (; e < 0; ++e)
    p /= 2;
  return p;
}

/// The scale of staged charges, 2^-(max_exponent / 2) (2^-64 in float): the interaction forms
/// q / r^3 in one product, which overflows where r^3 < q / max; q / r^2, the pair's own field,
/// overflows where r^2 < q / max. Scaled by about 1 / sqrt(max), the charge moves the first
/// limit to the second, so that nothing overflows unless the pair's field does, and the
/// potential q / r stays far above the smallest normal number (charges are in units, below 1
/// and, where they matter, above about 2^-60 in float). A power of two: the sums scaled back
/// are the same numbers as without it.
template <class Real>
constexpr Real staged_charge_scale = powerOfTwo<Real>(-std::numeric_limits<Real>::max_exponent / 2);

/// `Count` targets of one thread: positions and running sums of potential and field.
/// One target per thread on a GPU; several on a CPU, so that the source loop vectorises
/// across them.
template <class Real, int Count>
struct TargetBlock
{
  Real x[Count], y[Count], z[Count];
  Real phi[Count], gx[Count], gy[Count], gz[Count];

  /// A source as `interact` reads it, its charge `q` scaled.
  KOKKOS_INLINE_FUNCTION static StagedSource<Real> stage(Real sx, Real sy, Real sz, Real q)
  {
    return {sx, sy, sz, q * staged_charge_scale<Real>};
  }

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
  ///
  /// Zero-distance pairs (a target and itself, coincident particles) contribute nothing.
  /// Excluding them costs a comparison and a select per pair, two instructions of the
  /// seventeen of an unsoftened pair; `may_hold_targets` says whether the tile may hold the
  /// targets themselves (the near field's own leaf), where it is paid. Other tiles are swept
  /// without it and their sums checked: a zero distance makes 1/r infinite and leaves an
  /// infinity or a NaN in the field's sums, and only then is the tile swept again with the
  /// select. Without zero distances the two sweeps compute the same numbers.
  KOKKOS_INLINE_FUNCTION void interact(StagedSource<Real> const *sources, int count, int stride,
                                       Real softening2, bool may_hold_targets)
  {
    // Softened pairs are never infinite, so their sweep always selects.
    if (softening2 != Real(0))
      interactTile<Sweep::softened>(sources, count, stride, softening2);
    else if (may_hold_targets ||
             !interactTile<Sweep::unselected>(sources, count, stride, softening2))
      interactTile<Sweep::selected>(sources, count, stride, softening2);
  }

private:
  /// How a tile's pairs are formed: without excluding zero distances (the tile's sums are
  /// then checked), excluding them, or excluding them and adding the softening.
  enum class Sweep
  {
    unselected,
    selected,
    softened
  };

  /// Sweeps the tile and adds its sums; false, adding nothing, where an unselected sweep met
  /// a zero distance.
  template <Sweep Pairs>
  KOKKOS_INLINE_FUNCTION bool interactTile(StagedSource<Real> const *sources, int count, int stride,
                                           Real softening2)
  {
    Real tphi[Count], tgx[Count], tgy[Count], tgz[Count];
    for (int k = 0; k < Count; ++k)
      tphi[k] = tgx[k] = tgy[k] = tgz[k] = Real(0);
    // A pointer walks the tile: the loop then costs an addition, a comparison and a branch
    // per unrolled step, where an index took more instructions than that (docs/TUNING.md,
    // "The near field").
    StagedSource<Real> const *const end = sources + count;
#if defined(__CUDA_ARCH__)
#pragma unroll 8
#endif
    for (StagedSource<Real> const *next = sources; next < end; next += stride)
    {
      StagedSource<Real> const source = *next;
      // On a CPU the targets are the vector lanes: without this the compiler may vectorise
      // the source loop instead, as a reduction over gathered sources (GCC 12 did, and the
      // near field on a CPU took several times as long: docs/TUNING.md, "The near field").
#if defined(_OPENMP) && !defined(__CUDA_ARCH__)
#pragma omp simd
#endif
      for (int k = 0; k < Count; ++k)
      {
        Real const dx = x[k] - source.x;
        Real const dy = y[k] - source.y;
        Real const dz = z[k] - source.z;
        Real const r2 = dx * dx + dy * dy + dz * dz;
        // The reciprocal square root is taken unconditionally (of 0 it is infinite, and no
        // trap is enabled) and the pair then selected: a select, not a branch, so that the
        // loop over targets vectorises on a CPU, and two instructions on a GPU, where
        // masking by arithmetic took five.
        Real const any_inv_r = kfmm::detail::rsqrt(Pairs == Sweep::softened ? r2 + softening2 : r2);
        Real const inv_r = Pairs == Sweep::unselected ? any_inv_r
                                                      : (r2 > Real(0) ? any_inv_r : Real(0));
        // field = grad_target (q / r) = -(q / r^3) (x_t - x_s), q / r^3 formed as
        // (q / r^2) / r: with the staged charge's scale neither product overflows unless
        // the pair's field q / r^2 does. Each field component is then one fused
        // multiply-add.
        Real const q_inv_r = source.q * inv_r;
        Real const q_inv_r3 = (q_inv_r * inv_r) * inv_r;
        tphi[k] += q_inv_r;
        tgx[k] -= q_inv_r3 * dx;
        tgy[k] -= q_inv_r3 * dy;
        tgz[k] -= q_inv_r3 * dz;
      }
    }
    if (Pairs == Sweep::unselected)
    {
      // An infinite or NaN sum may also come from pairs closer than float's range allows;
      // the selected sweep then gives the same sums again.
      bool finite = true;
      for (int k = 0; k < Count; ++k)
        finite = finite && kfmm::detail::isfinite(tgx[k]);
      if (!finite)
        return false;
    }
    constexpr Real unscale = 1 / staged_charge_scale<Real>;
    for (int k = 0; k < Count; ++k)
    {
      phi[k] += unscale * tphi[k];
      gx[k] += unscale * tgx[k];
      gy[k] += unscale * tgy[k];
      gz[k] += unscale * tgz[k];
    }
    return true;
  }
};

/// Flops of one interaction as counted for rates (the usual convention for a Laplace
/// potential + field pair with one reciprocal square root: 20).
constexpr double flops_per_interaction = 20;

} // namespace kfmm::kernels::detail

#endif
