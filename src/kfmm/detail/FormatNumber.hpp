// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DETAIL_FORMAT_NUMBER_HPP
#define KFMM_DETAIL_FORMAT_NUMBER_HPP

// Numbers in messages, written as the caller would write them.

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <type_traits>

namespace kfmm::detail
{

/// `value` as the caller would write it: the shortest decimal that reads back as the same
/// double ("0", "0.1", "-2.5", "1e-300", "nan", "inf"), where std::to_string gives six
/// fixed decimals ("0.000000", and "0.000000" for 1e-300 too).
inline std::string formatNumber(double value)
{
  char buffer[32];
  if (!std::isfinite(value))
  {
    std::snprintf(buffer, sizeof buffer, "%g", value);
    return buffer;
  }
  // At most 17 significant digits are needed for any double to read back exactly.
  for (int digits = 1; digits <= 17; ++digits)
  {
    std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
    if (std::strtod(buffer, nullptr) == value)
      break;
  }
  return buffer;
}

/// `value` (finite, > 0) rounded up to `digits` significant digits, as the caller would write
/// it ("3.45e-12" for 3.4425e-12): a bound a message can offer that is at least `value`, where
/// formatNumber would print all seventeen digits of a product such as 2.295e-12 * 1.5.
inline std::string formatBoundAbove(double value, int digits)
{
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.*g", digits, value);
  // Rounded to the nearest, and down: one unit of the last digit more rounds to the next
  // number up.
  if (std::strtod(buffer, nullptr) < value)
    std::snprintf(buffer, sizeof buffer, "%.*g", digits,
                  value + std::pow(10.0, std::floor(std::log10(value)) - (digits - 1)));
  return buffer;
}

/// An integer as the caller would write it: all its digits (a conversion to double would
/// round those above 2^53).
template <class Integer, std::enable_if_t<std::is_integral<Integer>::value, int> = 0>
std::string formatNumber(Integer value)
{
  return std::to_string(value);
}

} // namespace kfmm::detail

#endif
