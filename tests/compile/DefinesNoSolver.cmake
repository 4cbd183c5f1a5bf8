# SPDX-License-Identifier: BSD-3-Clause
# Run by ctest (cmake -P): the object file OBJECT, compiled against kfmm::precompiled, uses the
# library's kfmm::evaluate, of one set and at targets, instead of compiling its own. NM -C must
# list kfmm::detail::evaluateOnce and kfmm::detail::evaluateAtTargets as undefined (U: the
# library defines them) and no defined symbol of the solver (kfmm::Fmm, kfmm::tree, either
# function), of which a translation unit that compiles the solver defines hundreds.
execute_process(COMMAND ${NM} -C ${OBJECT} RESULT_VARIABLE result OUTPUT_VARIABLE symbols
                ERROR_VARIABLE errors)
if(NOT result EQUAL 0)
  message(FATAL_ERROR "precompiled test: ${NM} failed on ${OBJECT}: ${errors}")
endif()
foreach(function evaluateOnce evaluateAtTargets)
  if(NOT symbols MATCHES "(^|\n) +U [^\n]*kfmm::detail::${function}<")
    message(FATAL_ERROR "precompiled test: ${OBJECT} does not call the precompiled "
                        "kfmm::detail::${function}")
  endif()
endforeach()
string(REGEX MATCHALL "(^|\n)[0-9a-fA-F]+ [A-Za-z] [^\n]*kfmm::(Fmm<|tree::|detail::evaluateOnce<|detail::evaluateAtTargets<)[^\n]*"
       defined "${symbols}")
list(LENGTH defined count)
if(count GREATER 0)
  list(GET defined 0 example)
  message(FATAL_ERROR "precompiled test: ${OBJECT} defines ${count} symbols of the solver "
                      "itself, e.g.${example}")
endif()
message(STATUS "precompiled test: ${OBJECT} uses the library's kfmm::evaluate")
