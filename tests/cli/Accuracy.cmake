# SPDX-License-Identifier: BSD-3-Clause
# A tolerance that is met (docs/ACCURACY.md), in float and double: with --tolerance and
# --check a field error above the tolerance is exit status 5, so each run below must exit 0,
# its error measured against the direct sum in double (PRECISION: float or double).
#  - softening: far pairs are only those whose particles are far enough apart for the
#    unsoftened expansions (an unsoftened far field reached 1.6e-4 at a tolerance of 1e-5);
#  - separate targets on a lattice through and around a Plummer cloud, most of them where
#    its tree has no cells of their size: pairs of a large and a small cell converge at the
#    rate of the larger (1.75e-3 in float at a tolerance of 1e-3 with the plain rule
#    (R_t + R_s) < theta d).
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)

set(common --precision ${PRECISION} --quiet)
kfmm_run(run --n 10000 --distribution plummer --softening 0.05 --tolerance 1e-5 --check 500
             ${common})
if(NOT run_EXIT EQUAL 0)
  kfmm_fail("softening 0.05, tolerance 1e-5: exit status ${run_EXIT}, expected 0")
endif()

# 512 targets: an 8 x 8 x 8 lattice filling [-3, 3]^3, Plummer scale radii 1.
set(lattice -2.625 -1.875 -1.125 -0.375 0.375 1.125 1.875 2.625)
set(lines "x,y,z,q\n")
foreach(x IN LISTS lattice)
  foreach(y IN LISTS lattice)
    foreach(z IN LISTS lattice)
      string(APPEND lines "${x},${y},${z},1\n")
    endforeach()
  endforeach()
endforeach()
file(WRITE ${WORK_DIR}/lattice.csv "${lines}")
foreach(tolerance 1e-3 3e-4 1e-4)
  kfmm_run(run --n 20000 --distribution plummer --targets lattice.csv --tolerance ${tolerance}
               --check 512 ${common})
  if(NOT run_EXIT EQUAL 0)
    kfmm_fail("separate targets, tolerance ${tolerance}: exit status ${run_EXIT}, expected 0")
  endif()
endforeach()
