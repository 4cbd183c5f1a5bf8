# SPDX-License-Identifier: BSD-3-Clause
# Run by ctest (cmake -P): the installed kfmmConfig.cmake takes any Kokkos from the minimum
# version up, across major versions, and refuses an older one with a message that says so.
# Two stand-in Kokkos packages are written (a config that defines Kokkos::kokkos, and a version
# file made the way Kokkos makes its own: SameMajorVersion), 4.6.0 and 3.3.0, and
# tests/consumer is configured (not built) against each with Kokkos_DIR. A real Kokkos 4 is not
# needed for this: what decides is the version file, which Kokkos 4 and 5 write the same way.
# The compiled kfmm::precompiled, unlike the header-only kfmm::kfmm, is refused with any Kokkos
# but the one it was compiled against.
include(CMakePackageConfigHelpers)

function(fake_kokkos version dir)
  file(WRITE ${dir}/KokkosConfig.cmake
       "set(Kokkos_DEVICES OPENMP)\n"
       "if(NOT TARGET Kokkos::kokkos)\n"
       "  add_library(Kokkos::kokkos INTERFACE IMPORTED)\n"
       "endif()\n")
  write_basic_package_version_file(${dir}/KokkosConfigVersion.cmake VERSION ${version}
                                   COMPATIBILITY SameMajorVersion)
endfunction()

# configure(<name> <Kokkos_DIR> <result var> <output var> [<consumer argument>...])
function(configure name kokkos_dir result_var output_var)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${CONSUMER_SOURCE_DIR} -B ${WORK_DIR}/${name}
                          -G ${GENERATOR} -DCMAKE_CXX_COMPILER=${CXX_COMPILER}
                          -DCMAKE_PREFIX_PATH=${WORK_DIR}/prefix -DKokkos_DIR=${kokkos_dir}
                          ${ARGN}
                  RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
  set(${result_var} ${result} PARENT_SCOPE)
  set(${output_var} "${output}" PARENT_SCOPE)
endfunction()

unset(ENV{Kokkos_DIR})
unset(ENV{Kokkos_ROOT})
unset(ENV{CMAKE_PREFIX_PATH})
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${KFMM_BINARY_DIR} --prefix ${WORK_DIR}/prefix
                RESULT_VARIABLE result)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "Kokkos version test: installing kfmm failed (${result})")
endif()
fake_kokkos(4.6.0 ${WORK_DIR}/kokkos-4.6.0)
fake_kokkos(3.3.0 ${WORK_DIR}/kokkos-3.3.0)

# A newer major version: accepted, and it is the one used (the user's choice wins over the
# Kokkos kfmm was built with).
configure(newer ${WORK_DIR}/kokkos-4.6.0 result output)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "Kokkos version test: Kokkos 4.6.0 was refused:\n${output}")
endif()
file(STRINGS ${WORK_DIR}/newer/CMakeCache.txt found REGEX "^Kokkos_DIR:")
if(NOT found MATCHES "kokkos-4.6.0$")
  message(FATAL_ERROR "Kokkos version test: the caller's Kokkos_DIR was not kept: ${found}")
endif()

# An older one: refused, with the minimum version and the newer ones accepted in the message.
configure(older ${WORK_DIR}/kokkos-3.3.0 result output)
string(REGEX REPLACE "[ \n]+" " " output "${output}")
if(result EQUAL 0)
  message(FATAL_ERROR "Kokkos version test: Kokkos 3.3.0 was accepted")
endif()
if(NOT output MATCHES "kfmm needs Kokkos 3.4 or newer \\(4.x and later are accepted\\), but found Kokkos 3.3.0 in [^ ]*kokkos-3.3.0")
  message(FATAL_ERROR "Kokkos version test: unexpected message for Kokkos 3.3.0:\n${output}")
endif()
message(STATUS "Kokkos version test: 4.6.0 accepted, 3.3.0 refused with a clear message")

# The compiled kfmm::precompiled with another Kokkos than its own: refused with a message that
# says why and what works instead (PRECOMPILED: whether this kfmm was built with it).
if(PRECOMPILED)
  configure(precompiled ${WORK_DIR}/kokkos-4.6.0 result output -DKFMM_CONSUMER_PRECOMPILED=ON)
  string(REGEX REPLACE "[ \n]+" " " output "${output}")
  if(result EQUAL 0)
    message(FATAL_ERROR "Kokkos version test: kfmm::precompiled was taken with another Kokkos")
  endif()
  if(NOT output MATCHES "kfmm's component 'precompiled' \\(the kfmm::precompiled target\\) is not available: it was compiled against the Kokkos in [^ ]+, and this project uses the one in [^ ]*kokkos-4.6.0; link kfmm::kfmm \\(header-only\\) instead")
    message(FATAL_ERROR "Kokkos version test: unexpected message for kfmm::precompiled with "
                        "another Kokkos:\n${output}")
  endif()
  message(STATUS "Kokkos version test: kfmm::precompiled refused with another Kokkos")
endif()
