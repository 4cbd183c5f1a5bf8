// SPDX-License-Identifier: BSD-3-Clause
#ifndef KFMM_KFMM_HPP
#define KFMM_KFMM_HPP

// Umbrella header: everything a user of kfmm needs.

#include <kfmm/CachedMemory.hpp>
#include <kfmm/Calibrate.hpp>
#include <kfmm/Config.hpp>
#include <kfmm/Exception.hpp>
#include <kfmm/Fmm.hpp>
#include <kfmm/Options.hpp>
#include <kfmm/Stats.hpp>
#include <kfmm/kernels/DirectSum.hpp>

#endif
