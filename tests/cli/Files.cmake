# SPDX-License-Identifier: BSD-3-Clause
# What the program does with the files it is given (ctest: cmake -P), in a fresh WORK_DIR:
#   - a file written may not be one that is read, nor both written files one, however the
#     paths are spelled (./x, a symbolic link): exit status 2, and the files unchanged;
#   - a read-only file is not replaced (exit status 2);
#   - an output path that is a symbolic link is written through: the link stays, and the file
#     it names holds the results.
#   PROGRAM, WORK_DIR, DATA_DIR  the program, a fresh folder, tests/cli/data
include(${CMAKE_CURRENT_LIST_DIR}/Common.cmake)

file(COPY ${DATA_DIR}/particles.csv DESTINATION ${WORK_DIR})
file(SHA256 ${WORK_DIR}/particles.csv original)
file(CREATE_LINK particles.csv ${WORK_DIR}/link.csv SYMBOLIC)

# kfmm_refused(REGEX ARGS...): exit status 2, one error line matching REGEX, particles.csv
# unchanged and no file left but those there before.
function(kfmm_refused regex)
  kfmm_run(run ${ARGN})
  if(NOT run_EXIT EQUAL 2 OR NOT run_ERR MATCHES "^kfmm: error: [^\n]*${regex}[^\n]*\n$")
    kfmm_fail("kfmm ${ARGN}: expected exit status 2 and '${regex}', got ${run_EXIT}")
  endif()
  file(SHA256 ${WORK_DIR}/particles.csv now)
  if(NOT now STREQUAL original)
    kfmm_fail("kfmm ${ARGN} changed particles.csv")
  endif()
  file(GLOB left RELATIVE ${WORK_DIR} ${WORK_DIR}/*)
  list(REMOVE_ITEM left particles.csv link.csv readonly.csv)
  if(left)
    kfmm_fail("kfmm ${ARGN} left files behind: ${left}")
  endif()
endfunction()

set(same "name the same file")
kfmm_refused("options '--input' and '--json' ${same}" --input particles.csv --json ./particles.csv)
kfmm_refused("options '--input' and '--output' ${same}" --input link.csv --output particles.csv)
kfmm_refused("options '--input' and '--output' ${same}" --input particles.csv --output link.csv)
kfmm_refused("options '--targets' and '--json' ${same}"
             --n 100 --targets particles.csv --json ${WORK_DIR}/particles.csv)
kfmm_refused("options '--output' and '--json' ${same}" --n 100 --output ./r.csv --json r.csv)

file(COPY ${DATA_DIR}/particles.csv DESTINATION ${WORK_DIR}/ro)
file(RENAME ${WORK_DIR}/ro/particles.csv ${WORK_DIR}/readonly.csv)
file(REMOVE_RECURSE ${WORK_DIR}/ro)
file(CHMOD ${WORK_DIR}/readonly.csv PERMISSIONS OWNER_READ GROUP_READ WORLD_READ)
kfmm_refused("option '--output': 'readonly.csv' is read-only" --n 100 --output readonly.csv)
file(SHA256 ${WORK_DIR}/readonly.csv now)
if(NOT now STREQUAL original)
  kfmm_fail("the read-only file was replaced")
endif()

# Through a link, to a file there and to one not yet there.
file(CREATE_LINK results.csv ${WORK_DIR}/out.csv SYMBOLIC)
kfmm_run_ok(--n 100 --check 0 --output out.csv --quiet)
if(NOT IS_SYMLINK ${WORK_DIR}/out.csv OR NOT EXISTS ${WORK_DIR}/results.csv)
  kfmm_fail("--output out.csv (a link to results.csv): the link was replaced, or results.csv "
            "not written")
endif()
file(STRINGS ${WORK_DIR}/results.csv lines)
list(LENGTH lines count)
if(NOT count EQUAL 101)
  kfmm_fail("results.csv has ${count} lines, expected 101")
endif()
kfmm_run_ok(--n 50 --check 0 --output out.csv --quiet)
file(STRINGS ${WORK_DIR}/results.csv lines)
list(LENGTH lines count)
if(NOT IS_SYMLINK ${WORK_DIR}/out.csv OR NOT count EQUAL 51)
  kfmm_fail("a second run through the link did not replace results.csv (${count} lines)")
endif()
file(GLOB left ${WORK_DIR}/*.tmp*)
if(left)
  kfmm_fail("temporary files left behind: ${left}")
endif()
