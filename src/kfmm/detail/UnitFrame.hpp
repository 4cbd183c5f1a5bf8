// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DETAIL_UNIT_FRAME_HPP
#define KFMM_DETAIL_UNIT_FRAME_HPP

// The units the solver and the direct sum compute in, so that the same particles give the
// same relative accuracy at any scale of coordinates and charges (float's 1e-38..3e38 is
// otherwise exhausted by r^2 at r ~ 1e20 or by 1/r^3 at r ~ 1e-13, long before the results
// are out of range).
//
//   position  x_unit = (x - shift) 2^-k   with 2^k > the bounding cube's side
//   charge    q_unit = q 2^-j             with 2^j > max |q|, so |q_unit| < 1
//   results   potential = phi_unit 2^(j - k),  field = field_unit 2^(j - 2k)
//
// The units are powers of two, so scaling is exact: a particle set and the same set scaled
// by 2^m give the same unit problem bit for bit. Along each axis the shift is zero while the
// cube's centre is less than 1.5 units from the origin, so that coordinates around the origin
// (and their fine resolution near it) are kept exactly and |x_unit| < 2; farther out it is
// the centre rounded to a whole multiple of the unit, at least 2 units, which moves a cloud
// far from the origin next to it (float needs that: positions near 1e8 are 8 apart) and
// keeps x - shift exact for positions given in any precision (Sterbenz: the shift is within a
// factor 2 of every x).

#include <kfmm/detail/Math.hpp>
#include <kfmm/detail/Streaming.hpp>
#include <kfmm/detail/Validation.hpp>

#include <Kokkos_Core.hpp>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace kfmm::detail
{

/// 2^e for e within T's normal exponents, by repeated squaring: every partial product is a
/// normal power of two, so the result is exact. On the host and the device alike (Kokkos 3.4
/// has no ldexp).
template <class T>
KOKKOS_INLINE_FUNCTION T normalPowerOfTwo(int e)
{
  T base = e < 0 ? T(0.5) : T(2);
  unsigned bits = static_cast<unsigned>(e < 0 ? -e : e);
  T power = 1;
  while (bits != 0)
  {
    if (bits & 1u)
      power *= base;
    bits >>= 1;
    if (bits != 0)
      base *= base;
  }
  return power;
}

/// Multiplication by 2^e for any whole e, as three multiplications by powers of two that are
/// each representable in T. The factors are all >= 1 or all <= 1, so every partial product
/// lies between the operand and the result: none overflows or underflows unless the result
/// does, and each is exact while it stays normal.
template <class T>
struct PowerOfTwo
{
  T factor[3] = {1, 1, 1};

  KOKKOS_INLINE_FUNCTION static PowerOfTwo of(int e)
  {
    constexpr int largest = std::numeric_limits<T>::max_exponent - 1;  // 2^largest is finite
    constexpr int smallest = std::numeric_limits<T>::min_exponent - 1; // 2^smallest is normal
    // Beyond 3 factors every non-zero T over- or underflows anyway.
    e = e > 3 * largest ? 3 * largest : e < 3 * smallest ? 3 * smallest : e;
    PowerOfTwo p;
    for (auto &f : p.factor)
    {
      int const part = e > largest ? largest : e < smallest ? smallest : e;
      f = normalPowerOfTwo<T>(part);
      e -= part;
    }
    return p;
  }

  KOKKOS_INLINE_FUNCTION T operator()(T v) const { return v * factor[0] * factor[1] * factor[2]; }
};

/// The exponent j of the smallest power of two above |v|: 2^(j-1) <= |v| < 2^j (0 for v = 0),
/// frexp's exponent, by exact scalings by powers of two (host and device). An infinite v gives
/// one more than the largest finite exponent (and never a loop without end).
KOKKOS_INLINE_FUNCTION int exponentAbove(double v)
{
  v = v < 0 ? -v : v;
  if (v == 0)
    return 0;
  if (v > DBL_MAX)
    return DBL_MAX_EXP + 1;
  int j = 0;
  for (; v >= 0x1p32; v *= 0x1p-32)
    j += 32;
  for (; v < 0x1p-32; v *= 0x1p32)
    j -= 32;
  for (; v >= 1; v *= 0.5)
    ++j;
  for (; v < 0.5; v *= 2)
    --j;
  return j;
}

/// The position frame: x_unit = (x - shift) 2^-length_exponent (the file comment).
struct UnitFrame
{
  double shift[3] = {0, 0, 0};
  int length_exponent = 0;
  PowerOfTwo<double> to_unit; ///< times 2^-length_exponent

  KOKKOS_INLINE_FUNCTION double position(double x, int d) const { return to_unit(x - shift[d]); }
  PowerOfTwo<double> to_caller; ///< times 2^length_exponent

  /// A length (a radius, a softening) in units.
  KOKKOS_INLINE_FUNCTION double length(double l) const { return to_unit(l); }
  /// A length in units back in the caller's (exact where both are normal numbers).
  KOKKOS_INLINE_FUNCTION double callerLength(double l) const { return to_caller(l); }
  /// A unit position back in the caller's coordinates (for messages).
  double caller(double unit, int d) const { return shift[d] + std::ldexp(unit, length_exponent); }
};

/// The frame of the particles inside `cube` (a tree::Cube: its `origin` and `side`): 2^k is the
/// smallest power of two above its side, the shift along each axis 0, or its centre rounded to
/// a multiple of 2^k of at least 2.
/// Throws kfmm::Exception, naming `where`, when the cube is not finite: finite positions whose
/// extent overflows a double (two points at x = -1e308 and 1e308, say) have no frame.
template <class Cube>
UnitFrame unitFrame(Cube const &cube, std::string const &where)
{
  bool finite = std::isfinite(cube.side);
  for (int d = 0; d < 3; ++d)
    finite = finite && std::isfinite(cube.origin[d]);
  require(finite, where,
          "the positions span more than a double can hold (the side of the cube around them, "
          "with a margin of 1e-6, overflows): scale or shift them into a smaller range");
  UnitFrame frame;
  frame.length_exponent = exponentAbove(cube.side);
  frame.to_unit = PowerOfTwo<double>::of(-frame.length_exponent);
  frame.to_caller = PowerOfTwo<double>::of(frame.length_exponent);
  for (int d = 0; d < 3; ++d)
  {
    double const units =
        std::nearbyint(std::ldexp(cube.origin[d] + 0.5 * cube.side, -frame.length_exponent));
    frame.shift[d] = std::abs(units) < 2 ? 0.0 : std::ldexp(units, frame.length_exponent);
  }
  return frame;
}

/// What the largest-charge reduction counts a NaN or infinite charge as: the largest double,
/// which sends the rare finite charges that large through the search for a bad one too.
constexpr double charge_not_finite = std::numeric_limits<double>::max();

/// The exponent j of the charge unit 2^j of charges whose largest magnitude is `largest`: the
/// smallest power of two above it, or 0 where all are zero or there are none (the Max
/// identity).
KOKKOS_INLINE_FUNCTION int chargeExponentOf(double largest)
{
  return largest > 0 ? exponentAbove(largest) : 0;
}

/// m becomes the larger of m and |charges(i)|, `bad` for a NaN or infinite charge.
template <class Charges>
struct LargestCharge
{
  Charges charges;
  double bad;

  KOKKOS_INLINE_FUNCTION void operator()(std::size_t i, double &m) const
  {
    double const q = static_cast<double>(charges(i));
    double const a = isfinite(q) ? (q < 0 ? -q : q) : bad;
    m = a > m ? a : m;
  }
};

/// The charge unit 2^j: the smallest power of two above max |charges(i)|. One max-reduction,
/// which also finds NaN and infinite charges (they throw, naming the first bad index, as
/// requireFinite does).
template <class ExecutionSpace, class Charges>
int chargeExponent(ExecutionSpace const &space, std::string const &where, std::string const &name,
                   Charges const &charges)
{
  double largest = 0;
  streamReduce("kfmm::unit_frame::largest_charge", space, charges.extent(0),
               LargestCharge<Charges>{charges, charge_not_finite}, Kokkos::Max<double>(largest));
  if (largest == charge_not_finite)
    requireFinite(space, where, name, charges);
  return chargeExponentOf(largest);
}

/// What turns unit results back into the caller's: 2^(j - k) for the potential and
/// 2^(j - 2k) for the field, applied in the precision of the results.
template <class Real>
struct ResultScale
{
  PowerOfTwo<Real> potential;
  PowerOfTwo<Real> field;

  /// Of the lengths' unit 2^k and the charges' 2^j.
  KOKKOS_INLINE_FUNCTION static ResultScale of(int length_exponent, int charge_exponent)
  {
    int const k = length_exponent;
    return {PowerOfTwo<Real>::of(charge_exponent - k),
            PowerOfTwo<Real>::of(charge_exponent - 2 * k)};
  }
};

/// The charge unit 2^j of an evaluation as the solver's kernels read it, from device memory
/// (a rank-0 View): the charges' factor into units and the results' factors back into the
/// caller's (results of precision Real, positions in units of 2^length_exponent).
template <class Real>
struct ChargeUnit
{
  PowerOfTwo<double> to_unit; ///< times 2^-j
  ResultScale<Real> results;

  KOKKOS_INLINE_FUNCTION static ChargeUnit of(int length_exponent, int charge_exponent)
  {
    return {PowerOfTwo<double>::of(-charge_exponent),
            ResultScale<Real>::of(length_exponent, charge_exponent)};
  }
};

/// unit() = the unit of the charges whose largest magnitude is largest() (chargeExponentOf),
/// and suspect() = whether that is charge_not_finite: a NaN or infinite charge, or one at the
/// largest double, which the host then looks for.
template <class Real, class MemorySpace, class Suspect>
struct ChargeUnitOfLargest
{
  Kokkos::View<double, MemorySpace> largest;
  int length_exponent;
  Kokkos::View<ChargeUnit<Real>, MemorySpace> unit;
  Suspect suspect; ///< a rank-0 int View

  KOKKOS_INLINE_FUNCTION void operator()(int) const
  {
    double const m = largest();
    suspect() = m == charge_not_finite ? 1 : 0;
    unit() = ChargeUnit<Real>::of(length_exponent, chargeExponentOf(m));
  }
};

/// chargeExponent without waiting for the device: the largest charge reduced into device
/// memory (`largest`), then the unit found there (ChargeUnitOfLargest). The charges' check is
/// left to the caller's next read of `suspect`: where it is 1, requireFinite names the first
/// NaN or infinite charge, if any. At least one charge.
template <class ExecutionSpace, class Charges, class Real, class MemorySpace, class Suspect>
void findChargeUnit(ExecutionSpace const &space, Charges const &charges, int length_exponent,
                    Kokkos::View<double, MemorySpace> const &largest,
                    Kokkos::View<ChargeUnit<Real>, MemorySpace> const &unit, Suspect const &suspect)
{
  static_assert(Suspect::rank == 0, "kfmm::detail::findChargeUnit: the flag is a rank-0 View");
  streamReduce("kfmm::unit_frame::largest_charge", space, charges.extent(0),
               LargestCharge<Charges>{charges, charge_not_finite},
               Kokkos::Max<double, MemorySpace>(largest));
  Kokkos::parallel_for(
      "kfmm::unit_frame::charge_unit", Kokkos::RangePolicy<ExecutionSpace>(space, 0, 1),
      ChargeUnitOfLargest<Real, MemorySpace, Suspect>{largest, length_exponent, unit, suspect});
}

/// unit() = the unit 2^charge_exponent, which the host found.
template <class Real, class MemorySpace>
struct SetChargeUnit
{
  Kokkos::View<ChargeUnit<Real>, MemorySpace> unit;
  int length_exponent;
  int charge_exponent;

  KOKKOS_INLINE_FUNCTION void operator()(int) const
  {
    unit() = ChargeUnit<Real>::of(length_exponent, charge_exponent);
  }
};

} // namespace kfmm::detail

#endif
