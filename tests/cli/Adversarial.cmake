# SPDX-License-Identifier: BSD-3-Clause
# One particle set of tests/Adversarial.hpp (a file written by kfmm_test_inputs) through the
# program with its default options (ctest: cmake -P):
#   PROGRAM, WORK_DIR  the program, and a fresh folder it runs in
#   INPUT, PRECISION   the particle file, float or double
#   EXPECT             accurate: exit status 0, nothing on stderr, relative L2 errors of
#                      potential and field at most MAX_ERROR (the defaults give about 1e-4);
#                      limited: exit status 4, stderr exactly the error that the precision
#                      does not resolve the particles, suggesting --precision double, and
#                      nothing written; then with --allow-unresolved exit status 0 and stderr
#                      exactly the warning
#   Either way the results of the run with exit status 0 were checked for NaN/Inf and written.
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)

set(arguments --input ${INPUT} --precision ${PRECISION} --check 1000 --json report.json
    --output out.csv --quiet)
set(unresolved "float does not resolve these particles: [0-9]+ pairs of the [0-9]+ particles ")
string(APPEND unresolved "are so close, for their coordinates, that rounding them to float changes ")
string(APPEND unresolved "their distance by more than 1/1024; their results may be far less ")
string(APPEND unresolved "accurate than the options give")
if(EXPECT STREQUAL "limited")
  kfmm_run(run ${arguments})
  if(NOT run_EXIT EQUAL 4)
    kfmm_fail("exit status ${run_EXIT}, expected 4 (the precision does not resolve them)")
  endif()
  if(NOT run_ERR MATCHES "^kfmm: error: ${unresolved}; use --precision double [(]--allow-unresolved writes such results anyway[)]; nothing was written\n$")
    kfmm_fail("expected the precision error on stderr")
  endif()
  file(GLOB left ${WORK_DIR}/*)
  if(left)
    kfmm_fail("a run that stopped on the precision left files behind: ${left}")
  endif()
  list(APPEND arguments --allow-unresolved)
endif()
kfmm_run_ok(${arguments})
file(READ ${WORK_DIR}/report.json json)
string(JSON checked GET "${json}" results_checked)
string(JSON precision_limited GET "${json}" resolution precision_limited)
string(JSON n GET "${json}" configuration n)
if(NOT checked STREQUAL "ON")
  kfmm_fail("report.json: results_checked is ${checked}")
endif()
file(STRINGS ${WORK_DIR}/out.csv lines)
list(LENGTH lines count)
math(EXPR expected_lines "${n} + 1")
if(NOT count EQUAL expected_lines)
  kfmm_fail("out.csv has ${count} lines, expected ${expected_lines}")
endif()

if(EXPECT STREQUAL "accurate")
  string(JSON potential GET "${json}" errors potential)
  string(JSON field GET "${json}" errors field)
  if(NOT run_ERR STREQUAL "")
    kfmm_fail("an accurate run printed on stderr")
  endif()
  if(precision_limited STREQUAL "ON" OR potential GREATER MAX_ERROR OR field GREATER MAX_ERROR)
    kfmm_fail("errors potential ${potential}, field ${field} (at most ${MAX_ERROR}), "
              "precision limited ${precision_limited}")
  endif()
elseif(EXPECT STREQUAL "limited")
  set(warning "^kfmm: warning: ${unresolved} [(]--allow-unresolved[)]\n$")
  if(NOT run_ERR MATCHES "${warning}" OR NOT precision_limited STREQUAL "ON")
    kfmm_fail("expected the precision warning on stderr (precision limited ${precision_limited})")
  endif()
else()
  message(FATAL_ERROR "Adversarial.cmake: EXPECT must be accurate or limited")
endif()
