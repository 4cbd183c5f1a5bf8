# SPDX-License-Identifier: BSD-3-Clause
# What the program prints where (ctest: cmake -P), in a fresh WORK_DIR:
#   - stdout holds the report alone: Kokkos' start-up notes (with OMP_PROC_BIND unset, its
#     OpenMP back end warns) go to stderr, and with --quiet stdout is empty;
#   - on a terminal a long solve shows its elapsed time on one line of stderr, rewritten in
#     place; not on a terminal, nothing (run under `script`, which gives the program a
#     terminal; skipped with a message where `script` is missing).
#   PROGRAM, WORK_DIR  the program, a fresh folder
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)

kfmm_run_command(run ${CMAKE_COMMAND} -E env --unset=OMP_PROC_BIND ${PROGRAM} --n 200 --check 10)
if(NOT run_EXIT EQUAL 0 OR NOT run_OUT MATCHES "^kfmm [0-9]" OR run_OUT MATCHES "Kokkos::")
  kfmm_fail("stdout is not the report alone (exit status ${run_EXIT})")
endif()
kfmm_run_command(run ${CMAKE_COMMAND} -E env --unset=OMP_PROC_BIND ${PROGRAM} --n 200 --check 10
                 --quiet)
if(NOT run_EXIT EQUAL 0 OR NOT run_OUT STREQUAL "")
  kfmm_fail("--quiet printed on stdout (exit status ${run_EXIT})")
endif()

# Long enough for the first line (after a second) on two cores; a GPU solves it in less, and
# then the terminal case is skipped (a quick solve shows no line, by design).
set(long --n 600000 --check 0 --distribution uniform)
kfmm_run(run ${long})
if(NOT run_EXIT EQUAL 0 OR run_ERR MATCHES "solving")
  kfmm_fail("not on a terminal, the elapsed time was shown (exit status ${run_EXIT})")
endif()
if(NOT run_OUT MATCHES "total [(]wall[)] +([0-9.]+)")
  kfmm_fail("no total time in the report")
endif()
if(CMAKE_MATCH_1 LESS 2)
  message(STATUS "Terminal.cmake: the solve took ${CMAKE_MATCH_1} s, under the 2 s that show "
                 "the elapsed-time line for sure: the terminal case is not tested here")
  return()
endif()
find_program(SCRIPT script)
if(NOT SCRIPT)
  message(STATUS "Terminal.cmake: no 'script' program: the terminal case is not tested")
  return()
endif()
list(JOIN long " " long_text)
kfmm_run_command(run ${SCRIPT} -qec "${PROGRAM} ${long_text}" /dev/null)
if(NOT run_EXIT EQUAL 0 OR NOT run_OUT MATCHES "\rkfmm: solving: [0-9]+[.][0-9] s")
  kfmm_fail("on a terminal, no elapsed-time line 'kfmm: solving: T s' (exit status ${run_EXIT})")
endif()
