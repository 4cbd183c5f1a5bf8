// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_EXCEPTION_HPP
#define KFMM_EXCEPTION_HPP

#include <stdexcept>
#include <string>

namespace kfmm
{

/// Thrown on invalid input or a failed host-side precondition. The message starts with the
/// entry point ("kfmm::directSum: ...") and names the offending argument.
class Exception : public std::invalid_argument
{
public:
  using std::invalid_argument::invalid_argument;
};

} // namespace kfmm

#endif
