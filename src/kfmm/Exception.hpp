// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_EXCEPTION_HPP
#define KFMM_EXCEPTION_HPP

#include <cstddef>
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

/// Thrown by kfmm::evaluate and kfmm::Fmm::evaluate when the field error that the sampled
/// check measured (Options::check_samples) is above Options::tolerance: the solver did not
/// deliver the accuracy asked for on this input (docs/ACCURACY.md, "Limits"). The results
/// Views then hold what was computed, and the solver's Stats the measured errors;
/// Options::allow_missed_tolerance turns the error off.
class ToleranceError : public Exception
{
public:
  ToleranceError(std::string const &message, double error, double tolerance, std::size_t samples)
      : Exception(message), _error(error), _tolerance(tolerance), _samples(samples)
  {
  }

  /// The relative L2 field error measured on the samples (NaN where a result was NaN).
  double error() const noexcept { return _error; }
  /// The tolerance asked for (Options::tolerance).
  double tolerance() const noexcept { return _tolerance; }
  /// The number of targets the error was measured on.
  std::size_t samples() const noexcept { return _samples; }

private:
  double _error;
  double _tolerance;
  std::size_t _samples;
};

} // namespace kfmm

#endif
