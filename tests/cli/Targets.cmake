# SPDX-License-Identifier: BSD-3-Clause
# --targets through the kfmm program (ctest: cmake -P): the results at the positions of a
# targets file, in its order, as accurate as asked against the direct sum in double, and the
# report says where they are.
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)

# Targets: 300 points on a sphere through a Plummer cloud of 3000 particles.
kfmm_run_ok(--n 300 --distribution sphere --seed 5 --precision double --check 0
            --output targets.csv)
set(solve --n 3000 --distribution plummer --precision double --order 18 --theta 0.4 --check 100
          --targets targets.csv)
kfmm_run_ok(${solve} --output out.csv)
if(NOT run_OUT MATCHES "particles +3000, plummer, seed 1; at 300 targets from targets.csv")
  kfmm_fail("the report does not name the 300 targets")
endif()
if(NOT run_OUT MATCHES "error +potential ([0-9.e+-]+), field ([0-9.e+-]+) [^\n]* on 100 targets")
  kfmm_fail("the report has no accuracy line for 100 targets")
endif()
# Order 18 at theta 0.4 in double: at most 1e-10 in both, as the library's accuracy tests
# require (tests/tstFmm.cpp, tests/tstTargets.cpp).
foreach(error ${CMAKE_MATCH_1} ${CMAKE_MATCH_2})
  if(error GREATER 1e-10)
    kfmm_fail("error ${error} above 1e-10")
  endif()
endforeach()
# One result per target, in the targets' order, at the targets' positions.
kfmm_csv_columns(given ${WORK_DIR}/targets.csv 0 3)
kfmm_csv_columns(written ${WORK_DIR}/out.csv 0 3)
if(NOT given STREQUAL written)
  kfmm_fail("out.csv does not hold the targets' positions in their order")
endif()
