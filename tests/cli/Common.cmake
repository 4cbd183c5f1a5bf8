# SPDX-License-Identifier: BSD-3-Clause
# Helpers of the kfmm program's tests (cmake -P scripts): run the program in WORK_DIR and
# check what it did.

# kfmm_run_command(<prefix> COMMAND...): runs COMMAND in WORK_DIR; sets <prefix>_EXIT, _OUT,
# _ERR.
function(kfmm_run_command prefix)
  execute_process(COMMAND ${ARGN}
                  WORKING_DIRECTORY ${WORK_DIR}
                  RESULT_VARIABLE exit_code OUTPUT_VARIABLE out ERROR_VARIABLE err)
  set(${prefix}_EXIT "${exit_code}" PARENT_SCOPE)
  set(${prefix}_OUT "${out}" PARENT_SCOPE)
  set(${prefix}_ERR "${err}" PARENT_SCOPE)
endfunction()

# kfmm_run(<prefix> ARGS...): runs PROGRAM in WORK_DIR; sets <prefix>_EXIT, _OUT, _ERR.
function(kfmm_run prefix)
  kfmm_run_command(run_result ${PROGRAM} ${ARGN})
  set(${prefix}_EXIT "${run_result_EXIT}" PARENT_SCOPE)
  set(${prefix}_OUT "${run_result_OUT}" PARENT_SCOPE)
  set(${prefix}_ERR "${run_result_ERR}" PARENT_SCOPE)
endfunction()

# kfmm_fail(message...): fails the test, with the last run's output for the log.
macro(kfmm_fail)
  message(FATAL_ERROR "${ARGN}\n--- stdout:\n${run_OUT}\n--- stderr:\n${run_ERR}")
endmacro()

# kfmm_run_ok(ARGS...): runs the program and requires exit status 0.
macro(kfmm_run_ok)
  kfmm_run(run ${ARGN})
  if(NOT run_EXIT EQUAL 0)
    kfmm_fail("kfmm ${ARGN}: exit status ${run_EXIT}, expected 0")
  endif()
endmacro()

# kfmm_csv_columns(<var> FILE FIRST COUNT): the lines of a CSV file cut to COUNT fields
# starting at field FIRST (0-based), as a list.
function(kfmm_csv_columns var file first count)
  file(STRINGS ${file} lines)
  set(result)
  foreach(line IN LISTS lines)
    string(REPLACE "," ";" fields "${line}")
    list(SUBLIST fields ${first} ${count} kept)
    list(JOIN kept "," kept)
    list(APPEND result "${kept}")
  endforeach()
  set(${var} "${result}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
