// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_DETAIL_SCOPED_REGION_HPP
#define KFMM_DETAIL_SCOPED_REGION_HPP

#include <Kokkos_Core.hpp>

#include <string>

namespace kfmm::detail
{

/// A Kokkos Tools profiling region for the lifetime of the object (Kokkos 3.4 has push/pop
/// but no scoped region of its own).
class ScopedRegion
{
public:
  explicit ScopedRegion(std::string const &name) { Kokkos::Profiling::pushRegion(name); }
  ~ScopedRegion() { Kokkos::Profiling::popRegion(); }
  ScopedRegion(ScopedRegion const &) = delete;
  ScopedRegion &operator=(ScopedRegion const &) = delete;
};

} // namespace kfmm::detail

#endif
