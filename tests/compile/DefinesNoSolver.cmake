# SPDX-License-Identifier: BSD-3-Clause
# Run by ctest (cmake -P): the object file OBJECT, compiled against kfmm::precompiled, uses the
# library's kfmm::evaluate instead of compiling its own. NM -C must list
# kfmm::detail::evaluateOnce as undefined (U: the library defines it) and no defined symbol of
# the solver (kfmm::Fmm, kfmm::tree, evaluateOnce), of which a translation unit that compiles
# the solver defines hundreds.
execute_process(COMMAND ${NM} -C ${OBJECT} RESULT_VARIABLE result OUTPUT_VARIABLE symbols
                ERROR_VARIABLE errors)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "precompiled test: ${NM} failed on ${OBJECT}: ${errors}")
endif()
if(NOT symbols MATCHES "(^|\n) +U [^\n]*kfmm::detail::evaluateOnce<")
  message(FATAL_ERROR "precompiled test: ${OBJECT} does not call the precompiled "
                      "kfmm::detail::evaluateOnce")
endif()
string(REGEX MATCHALL "(^|\n)[0-9a-fA-F]+ [A-Za-z] [^\n]*kfmm::(Fmm<|tree::|detail::evaluateOnce<)[^\n]*"
       defined "${symbols}")
list(LENGTH defined count)
if(count GREATER 0)
  list(GET defined 0 example)
  message(FATAL_ERROR "precompiled test: ${OBJECT} defines ${count} symbols of the solver "
                      "itself, e.g.${example}")
endif()
message(STATUS "precompiled test: ${OBJECT} uses the library's kfmm::evaluate")
