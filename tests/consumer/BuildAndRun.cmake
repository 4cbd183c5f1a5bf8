# SPDX-License-Identifier: BSD-3-Clause
# Run by ctest (cmake -P): install kfmm into a scratch prefix, build the project in
# CONSUMER_SOURCE_DIR against it and run its program PROGRAM (kfmm_consumer unless given) with
# PROGRAM_ARGS. Fails on the first step that fails. Lists are '|'-separated.
#
#   KFMM_BINARY_DIR        the kfmm build to install, or else
#   KFMM_SOURCE_DIR        a kfmm source tree to configure (with KFMM_CONFIGURE_ARGS), build
#                          and install first: a kfmm configured differently from this build
#   CONSUMER_ARGS          extra arguments for the consumer's configure step
#   BUILD_TARGET           the one consumer target to build (all unless given)
#   RUN_PREFIX             what the program runs under (an mpiexec command line, say)
#   EXPECT_CONFIGURE_ERROR a regex: the consumer's configure step must fail with a message
#                          matching it, and nothing is built
#   EXPECT_KOKKOS_DIR      the Kokkos_DIR the consumer must end up with
#
# The consumer is configured the way the README tells a user to: with kfmm's prefix on
# CMAKE_PREFIX_PATH and nothing about Kokkos, so the installed kfmmConfig.cmake has to find the
# Kokkos kfmm was built with by itself.
function(run_step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE result)
  if(NOT result EQUAL 0)
    message(FATAL_ERROR "consumer test: step failed (${result}): ${ARGN}")
  endif()
endfunction()

if(NOT DEFINED PROGRAM)
  set(PROGRAM kfmm_consumer)
endif()
foreach(list PROGRAM_ARGS KFMM_CONFIGURE_ARGS CONSUMER_ARGS RUN_PREFIX)
  string(REPLACE "|" ";" ${list} "${${list}}")
endforeach()

# Whatever the calling shell says about Kokkos must not help: only kfmm's own record may.
unset(ENV{Kokkos_DIR})
unset(ENV{Kokkos_ROOT})
unset(ENV{CMAKE_PREFIX_PATH})

file(REMOVE_RECURSE ${WORK_DIR})
if(DEFINED KFMM_SOURCE_DIR)
  run_step(${CMAKE_COMMAND} -S ${KFMM_SOURCE_DIR} -B ${WORK_DIR}/kfmm -G ${GENERATOR}
           --no-warn-unused-cli -DCMAKE_CXX_COMPILER=${CXX_COMPILER} ${KFMM_CONFIGURE_ARGS})
  run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/kfmm)
  set(KFMM_BINARY_DIR ${WORK_DIR}/kfmm)
endif()
run_step(${CMAKE_COMMAND} --install ${KFMM_BINARY_DIR} --prefix ${WORK_DIR}/prefix)

# --no-warn-unused-cli: CMAKE_DISABLE_FIND_PACKAGE_MPI goes unused exactly when all is well.
set(configure ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
    --no-warn-unused-cli -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
    -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix ${CONSUMER_ARGS})
if(DEFINED EXPECT_CONFIGURE_ERROR)
  execute_process(COMMAND ${configure} RESULT_VARIABLE result OUTPUT_VARIABLE output
                  ERROR_VARIABLE output)
  # CMake wraps and indents messages; compare with the white space collapsed.
  string(REGEX REPLACE "[ \n]+" " " output "${output}")
  if(result EQUAL 0)
    message(FATAL_ERROR "consumer test: configuring the consumer succeeded, expected an error")
  elseif(NOT output MATCHES "${EXPECT_CONFIGURE_ERROR}")
    message(FATAL_ERROR "consumer test: configuring the consumer failed, but not with a message "
                        "matching '${EXPECT_CONFIGURE_ERROR}':\n${output}")
  endif()
  return()
endif()
run_step(${configure})

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
if(DEFINED BUILD_TARGET)
  run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/build --target ${BUILD_TARGET})
else()
  run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
endif()
run_step(${RUN_PREFIX} ${WORK_DIR}/build/${PROGRAM} ${PROGRAM_ARGS})
