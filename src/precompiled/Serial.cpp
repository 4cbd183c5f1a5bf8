// SPDX-License-Identifier: BSD-3-Clause
// kfmm::precompiled: kfmm::evaluate for Kokkos::Serial in float and in double, when this
// Kokkos has it (kfmm/detail/Precompiled.hpp says which Views these instances take).
#include <kfmm/Fmm.hpp>

#if defined(KOKKOS_ENABLE_SERIAL)
namespace kfmm::detail
{
template KFMM_DETAIL_EVALUATE_ONCE(Kokkos::Serial, float);
template KFMM_DETAIL_EVALUATE_ONCE(Kokkos::Serial, double);
} // namespace kfmm::detail
#endif
