// SPDX-License-Identifier: BSD-3-Clause
// kfmm::precompiled: kfmm::evaluate, of one set and at targets, for Kokkos::Serial in float and
// in double, when this Kokkos has it (kfmm/detail/Precompiled.hpp says which Views these
// instances take).
#include <kfmm/Fmm.hpp>

#if defined(KOKKOS_ENABLE_SERIAL)
namespace kfmm::detail
{
KFMM_DETAIL_PRECOMPILED_INSTANCES(template, Kokkos::Serial, float);
KFMM_DETAIL_PRECOMPILED_INSTANCES(template, Kokkos::Serial, double);
} // namespace kfmm::detail
#endif
