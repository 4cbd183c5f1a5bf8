// SPDX-License-Identifier: BSD-3-Clause
// kfmm::precompiled: kfmm::evaluate, of one set and at targets, for Kokkos::OpenMP in float and
// in double, when this Kokkos has it (kfmm/detail/Precompiled.hpp says which Views these
// instances take).
#include <kfmm/Fmm.hpp>

#if defined(KOKKOS_ENABLE_OPENMP)
namespace kfmm::detail
{
KFMM_DETAIL_PRECOMPILED_INSTANCES(template, Kokkos::OpenMP, float);
KFMM_DETAIL_PRECOMPILED_INSTANCES(template, Kokkos::OpenMP, double);
} // namespace kfmm::detail
#endif
