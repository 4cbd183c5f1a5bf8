# SPDX-License-Identifier: BSD-3-Clause
# Run by ctest (cmake -P): builds TARGET in the build tree BUILD_DIR, which must fail, and the
# first error the compiler reports must contain EXPECT (kfmm's static_assert message for the
# mistake TARGET's source makes). Errors are the lines with "error:" (g++, clang and nvcc's
# front end all print that); the compiler's notes on where a template was instantiated from
# come before the first error and are not errors.
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET}
                RESULT_VARIABLE result OUTPUT_VARIABLE output ERROR_VARIABLE output)
if(result EQUAL 0)
  message(FATAL_ERROR "compile-fail test: ${TARGET} compiled; expected the error '${EXPECT}'")
endif()
string(REGEX MATCH "[^\n]*error:[^\n]*" first_error "${output}")
string(FIND "${first_error}" "${EXPECT}" position)
if(position EQUAL -1)
  message(FATAL_ERROR "compile-fail test: the first error building ${TARGET} is not "
                      "'${EXPECT}' but:\n${first_error}\n\nThe whole output:\n${output}")
endif()
message(STATUS "compile-fail test: ${TARGET} fails with: ${first_error}")
