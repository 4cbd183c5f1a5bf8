// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_EXCEPTION_HPP
#define KFMM_EXCEPTION_HPP

#include <stdexcept>
#include <string>

namespace kfmm
{

/// Thrown on invalid input or a failed host-side precondition, and by kfmm::Fmm on a result
/// beyond the range of its precision. The message starts with the entry point
/// ("kfmm::directSum: ...") and names the offending argument or particle.
class Exception : public std::invalid_argument
{
public:
  using std::invalid_argument::invalid_argument;
};

} // namespace kfmm

#endif
