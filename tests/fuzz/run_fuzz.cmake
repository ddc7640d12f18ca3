# Runs one libFuzzer target over a fresh corpus seeded from the repository.
#   cmake -DFUZZER=<binary> -DDICT=<file> -DWORK=<dir> -DSOURCE_DIR=<repo root>
#         -DLIMIT=<-runs=N | -max_total_time=S> -P run_fuzz.cmake
#
# WORK is emptied first, then gets:
#   seeds/      scenarios/*.json (but schema.json) and tests/e2e/bad/*.json, copied
#               here so that the repository holds each file once
#   corpus/     where libFuzzer writes the inputs that reach new coverage
#   artifacts/  crash-*, leak-*, timeout-*, oom-* reproducers, if any
# -seed=1 makes a run with the same binary and seeds repeat itself. A non-zero exit
# from the fuzzer (a crash, a sanitizer report, a broken contract in the target, a
# leak, an input slower than -timeout) fails with the reproducer command.
foreach(var FUZZER DICT WORK SOURCE_DIR LIMIT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "run_fuzz.cmake: -D${var}=... is required")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/seeds ${WORK}/corpus ${WORK}/artifacts)
file(GLOB seeds ${SOURCE_DIR}/scenarios/*.json ${SOURCE_DIR}/tests/e2e/bad/*.json)
list(FILTER seeds EXCLUDE REGEX "/schema\\.json$")
list(LENGTH seeds n)
if(n EQUAL 0)
  message(FATAL_ERROR "run_fuzz.cmake: no seed files under ${SOURCE_DIR}")
endif()
# scenarios/ and tests/e2e/bad/ may share a file name: prefix each with its folder.
foreach(f IN LISTS seeds)
  get_filename_component(dir ${f} DIRECTORY)
  get_filename_component(dir ${dir} NAME)
  get_filename_component(name ${f} NAME)
  file(COPY_FILE ${f} ${WORK}/seeds/${dir}_${name})
endforeach()

# -timeout=30: no input of at most a few KB may take 30 s (the loader is O(size));
# one that does is a hang, reported as timeout-*.
execute_process(
  COMMAND ${FUZZER} -dict=${DICT} -seed=1 ${LIMIT} -timeout=30 -print_final_stats=1
          -artifact_prefix=${WORK}/artifacts/ ${WORK}/corpus ${WORK}/seeds
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  file(GLOB found ${WORK}/artifacts/*)
  message(FATAL_ERROR "${FUZZER} failed (${rc}) with ${n} seeds; reproducer(s): ${found}\n"
                      "re-run one with: ${FUZZER} <reproducer>")
endif()
