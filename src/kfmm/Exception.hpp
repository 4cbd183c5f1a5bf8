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

/// Thrown by kfmm::evaluate and kfmm::Fmm::evaluate when the solver's precision does not
/// resolve the particles (Stats::precision_limited): their results may be far less accurate
/// than the options give, so they are not handed back as if they were. The results Views
/// then hold what was computed; Options::allow_unresolved turns the error off.
class PrecisionError : public Exception
{
public:
  using Exception::Exception;
};

} // namespace kfmm

#endif
