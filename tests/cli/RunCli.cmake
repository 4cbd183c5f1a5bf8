# SPDX-License-Identifier: BSD-3-Clause
# One run of the kfmm program (ctest: cmake -P), checked:
#   PROGRAM, WORK_DIR   the program, and a fresh folder it runs in
#   ARGS                its arguments, separated by '|'
#   EXPECT_EXIT         the exit status (0)
#   EXPECT_ERROR        a regular expression for a failing run: stderr must be exactly one
#                       line "kfmm: error: ..." that matches it, stdout empty, and WORK_DIR
#                       left empty (no --output, no temporary file)
#   EXPECT_STDOUT       a regular expression stdout must match
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)

if(NOT DEFINED EXPECT_EXIT OR EXPECT_EXIT STREQUAL "")
  set(EXPECT_EXIT 0)
endif()
string(REPLACE "|" ";" arguments "${ARGS}")
kfmm_run(run ${arguments})
if(NOT run_EXIT EQUAL EXPECT_EXIT)
  kfmm_fail("kfmm ${arguments}: exit status ${run_EXIT}, expected ${EXPECT_EXIT}")
endif()
if(NOT "${EXPECT_ERROR}" STREQUAL "")
  if(NOT run_ERR MATCHES "^kfmm: error: [^\n]*\n$")
    kfmm_fail("stderr is not one line 'kfmm: error: ...'")
  endif()
  if(NOT run_ERR MATCHES "${EXPECT_ERROR}")
    kfmm_fail("stderr does not match '${EXPECT_ERROR}'")
  endif()
  if(NOT run_OUT STREQUAL "")
    kfmm_fail("a failing run printed on stdout")
  endif()
  file(GLOB left ${WORK_DIR}/* ${WORK_DIR}/.*)
  if(left)
    kfmm_fail("a failing run left files behind: ${left}")
  endif()
endif()
if(NOT "${EXPECT_STDOUT}" STREQUAL "" AND NOT run_OUT MATCHES "${EXPECT_STDOUT}")
  kfmm_fail("stdout does not match '${EXPECT_STDOUT}'")
endif()
