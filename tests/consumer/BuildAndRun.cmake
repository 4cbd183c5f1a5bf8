# SPDX-License-Identifier: BSD-3-Clause
# Run by ctest (cmake -P): install kfmm from KFMM_BINARY_DIR into a scratch prefix, build the
# project in CONSUMER_SOURCE_DIR against it and run its program PROGRAM (kfmm_consumer unless
# given) with PROGRAM_ARGS ('|'-separated). Fails on the first step that fails.
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

file(REMOVE_RECURSE ${WORK_DIR})
run_step(${CMAKE_COMMAND} --install ${KFMM_BINARY_DIR} --prefix ${WORK_DIR}/prefix)
run_step(${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/build -G ${GENERATOR}
         -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DKokkos_DIR=${Kokkos_DIR}
         -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix)
run_step(${CMAKE_COMMAND} --build ${WORK_DIR}/build)
run_step(${WORK_DIR}/build/${PROGRAM} ${program_args})
