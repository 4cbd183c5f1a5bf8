# SPDX-License-Identifier: BSD-3-Clause
# --json writes a valid JSON report with the documented keys (ctest: cmake -P); --quiet
# prints nothing.
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)

kfmm_run_ok(--n 300 --check 50 --repeat 2 --acceptance classic --json report.json --quiet)
if(NOT run_OUT STREQUAL "")
  kfmm_fail("--quiet printed on stdout")
endif()
file(READ ${WORK_DIR}/report.json json)

# kfmm_json(<var> KEY...): the value at the path, failing when it is missing.
function(kfmm_json var)
  string(JSON value ERROR_VARIABLE error GET "${json}" ${ARGN})
  if(error)
    message(FATAL_ERROR "report.json: ${error}\n${json}")
  endif()
  set(${var} "${value}" PARENT_SCOPE)
endfunction()

macro(kfmm_bad what)
  message(FATAL_ERROR "report.json: ${what}\n${json}")
endmacro()

kfmm_json(program program)
kfmm_json(n configuration n)
kfmm_json(repeat configuration repeat)
kfmm_json(check configuration check)
kfmm_json(precision configuration precision)
kfmm_json(distribution configuration distribution)
kfmm_json(acceptance configuration acceptance)
if(NOT program STREQUAL "kfmm" OR NOT n EQUAL 300 OR NOT repeat EQUAL 2 OR NOT check EQUAL 50
   OR NOT precision STREQUAL "float" OR NOT distribution STREQUAL "plummer"
   OR NOT acceptance STREQUAL "classic")
  kfmm_bad("configuration differs from the command line")
endif()
foreach(key method order theta softening seed)
  kfmm_json(ignored configuration ${key})
endforeach()
# The classic rule has no theta; the M2L variant is spelled as --m2l takes it.
string(JSON theta_type TYPE "${json}" configuration theta)
kfmm_json(m2l configuration m2l)
if(NOT theta_type STREQUAL "NULL" OR NOT m2l STREQUAL "auto")
  kfmm_bad("configuration: theta is ${theta_type} (expected null with --acceptance classic), "
           "m2l '${m2l}' (expected 'auto')")
endif()
# No --leaf-size: the backend's tuned one, which is a positive count.
kfmm_json(leaf_size configuration leaf_size)
kfmm_json(leaf_size_tuned configuration leaf_size_tuned)
if(NOT leaf_size MATCHES "^[1-9][0-9]*$" OR NOT leaf_size_tuned STREQUAL "ON")
  kfmm_bad("leaf_size ${leaf_size}, leaf_size_tuned ${leaf_size_tuned}: expected a tuned size")
endif()

# Stages timed (the program's default): every stage on one instance, whatever the option.
kfmm_json(concurrent_option configuration concurrent_far_field)
kfmm_json(far_field_concurrent timing far_field_concurrent)
if(NOT concurrent_option STREQUAL "ON" OR NOT far_field_concurrent STREQUAL "OFF")
  kfmm_bad("concurrent_far_field ${concurrent_option}, far_field_concurrent ${far_field_concurrent}: expected ON and OFF")
endif()

kfmm_json(version kokkos version)
kfmm_json(default_space kokkos default_space)
kfmm_json(concurrency kokkos concurrency)
string(JSON spaces LENGTH "${json}" kokkos enabled_spaces)
if(NOT version MATCHES "^[0-9]+[.][0-9]+[.][0-9]+$" OR default_space STREQUAL ""
   OR NOT spaces GREATER 0 OR NOT concurrency GREATER 0)
  kfmm_bad("incomplete Kokkos description")
endif()

kfmm_json(runs timing runs)
kfmm_json(total timing total_seconds)
kfmm_json(rate timing particles_per_second)
string(JSON stages LENGTH "${json}" timing stage_seconds)
if(NOT runs EQUAL 2 OR NOT stages GREATER 0 OR NOT total GREATER 0 OR NOT rate GREATER 0)
  kfmm_bad("incomplete timing")
endif()
# The near field's rate: its pairs over its stage time, present when both are.
kfmm_json(pairs interactions p2p)
kfmm_json(p2p_seconds timing stage_seconds P2P)
kfmm_json(p2p_rate timing p2p_pairs_per_second)
if(NOT pairs GREATER 0 OR NOT p2p_seconds GREATER 0 OR NOT p2p_rate GREATER 0)
  kfmm_bad("timing.p2p_pairs_per_second ${p2p_rate}, P2P stage ${p2p_seconds} s")
endif()

kfmm_json(targets errors targets)
kfmm_json(potential errors potential)
kfmm_json(field errors field)
# Float results: the solver's defaults aim at about 1e-4.
if(NOT targets EQUAL 50 OR NOT potential LESS 1e-3 OR NOT field LESS 1e-2)
  kfmm_bad("errors: ${targets} targets, potential ${potential}, field ${field}")
endif()

kfmm_json(bytes memory particle_bytes)
if(NOT bytes EQUAL 13200) # 300 particles x (3 doubles + 5 floats)
  kfmm_bad("memory.particle_bytes is ${bytes}, expected 13200")
endif()
kfmm_json(checked results_checked)
kfmm_json(limited resolution precision_limited)
kfmm_json(unresolved resolution unresolved_pairs)
if(NOT checked STREQUAL "ON" OR NOT limited STREQUAL "OFF" OR NOT unresolved EQUAL 0)
  kfmm_bad("results_checked ${checked}, precision_limited ${limited}, "
           "unresolved_pairs ${unresolved}")
endif()
kfmm_json(ignored memory solver_bytes)
kfmm_json(ignored interactions p2p)
string(JSON calibration_type TYPE "${json}" calibration)
if(NOT calibration_type STREQUAL "NULL")
  kfmm_bad("calibration is of type ${calibration_type} without --tolerance, expected null")
endif()

# --tolerance measures on the problem: the calibration object lists every row it evaluated.
kfmm_run_ok(--n 3000 --tolerance 1e-3 --check 50 --json report.json --quiet)
file(READ ${WORK_DIR}/report.json json)
kfmm_json(evaluations calibration evaluations)
string(JSON trial_count LENGTH "${json}" calibration trials)
if(NOT evaluations GREATER 0 OR NOT trial_count EQUAL evaluations)
  kfmm_bad("calibration: ${evaluations} evaluations, ${trial_count} trials")
endif()
kfmm_json(order calibration order)
kfmm_json(theta calibration theta)
kfmm_json(direct calibration direct_sum)
set(chosen_met OFF)
math(EXPR last "${trial_count} - 1")
foreach(i RANGE ${last})
  kfmm_json(trial_order calibration trials ${i} order)
  kfmm_json(trial_theta calibration trials ${i} theta)
  kfmm_json(trial_precision calibration trials ${i} precision)
  kfmm_json(trial_error calibration trials ${i} field_error)
  kfmm_json(trial_meets calibration trials ${i} meets)
  kfmm_json(trial_direct calibration trials ${i} direct_sum)
  kfmm_json(trial_seconds calibration trials ${i} seconds)
  if(NOT trial_error GREATER_EQUAL 0 OR NOT trial_precision MATCHES "^(float|double)$"
     OR NOT trial_seconds GREATER 0)
    kfmm_bad("calibration.trials[${i}]: error ${trial_error}, precision ${trial_precision}, "
             "seconds ${trial_seconds}")
  endif()
  if(trial_order EQUAL order AND trial_theta EQUAL theta AND trial_meets STREQUAL "ON"
     AND trial_precision STREQUAL "float" AND trial_direct STREQUAL direct)
    set(chosen_met ON)
  endif()
endforeach()
if(NOT chosen_met)
  kfmm_bad("the chosen order ${order}, theta ${theta} (direct sum: ${direct}) is not a float "
           "trial that met")
endif()
