# SPDX-License-Identifier: BSD-3-Clause
# Run by ctest (cmake -P): install kfmm from KFMM_BINARY_DIR into a scratch prefix, build the
# project in CONSUMER_SOURCE_DIR against it and run its program PROGRAM (kfmm_consumer unless
# given) with PROGRAM_ARGS ('|'-separated). Fails on the first step that fails.
#
# The consumer is configured the way the README tells a user to: with kfmm's prefix on
# CMAKE_PREFIX_PATH and nothing about Kokkos, so the installed kfmmConfig.cmake has to find the
# Kokkos kfmm was built with by itself. EXPECT_KOKKOS_DIR, when given, is the Kokkos_DIR the
# consumer must end up with.
function(run_step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "consumer test: step failed (${result}): ${ARGN}")
  endif()
endfunction()

if(NOT DEFINED PROGRAM)
  set(PROGRAM kfmm_consumer)
endif()
string(REPLACE "|" ";" program_args "${PROGRAM_ARGS}")

# Whatever the calling shell says about Kokkos must not help: only kfmm's own record may.
unset(ENV{Kokkos_DIR})
unset(ENV{Kokkos_ROOT})
unset(ENV{CMAKE_PREFIX_PATH})

file(REMOVE_RECURSE ${WORK_DIR})
run_step(${CMAKE_COMMAND} --install ${KFMM_BINARY_DIR} --prefix ${WORK_DIR}/prefix)
run_step(${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
         -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
if(DEFINED EXPECT_KOKKOS_DIR)
  file(STRINGS ${WORK_DIR}/build/CMakeCache.txt found REGEX "^Kokkos_DIR:")
  string(REGEX REPLACE "^Kokkos_DIR:[A-Z]*=" "" found "${found}")
  file(REAL_PATH "${found}" found)
  file(REAL_PATH "${EXPECT_KOKKOS_DIR}" expected)
  if(NOT found STREQUAL expected)
    message(FATAL_ERROR "consumer test: the consumer found Kokkos in '${found}', "
                        "not the one kfmm was built with ('${expected}')")
  endif()
endif()
run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run_step(${WORK_DIR}/build/${PROGRAM} ${program_args})
