# models/cmake/ModelDiscover.cmake: registers a model binary's ctest runs from its
# own catalogue (`model_<name> --list`), so no test, mutant or kill is written twice.
#
# tlab_discover_model_runs(<model>
#                          SCHEDULERS <random|bound|full>...
#                          [ITERATIONS <n>] [SLOW_ITERATIONS <n>])
#
# Follows GoogleTest.cmake's gtest_discover_tests(... DISCOVERY_MODE PRE_TEST): at
# configure time this writes a small ctest include file (directory property
# TEST_INCLUDE_FILES); each time ctest reads the directory, that file runs
# `--list` again if the binary, the settings or the discovery script are newer than
# the generated test list (ModelDiscoverTests.cmake), then includes the list.
# Nothing is run at build time; an unbuilt binary shows up as the failing test
# model.<model>.NOT_BUILT (label `model`), as gtest's <target>_NOT_BUILT does.
#
# The catalogue says what exists and how far each search gets (ModelTest and
# ModelReach in models/model_runner.h); CMake says only which schedulers a model
# runs and how long its random searches are:
#   SCHEDULERS       the schedulers this model runs at all
#   ITERATIONS       random-scheduler iterations of a clean run; the test name then
#                    ends in random<n> (without it: Relacy's default 10^5, name `random`)
#   SLOW_ITERATIONS  a longer random run (label `slow`) for each clean test that has
#                    no exhaustive search within seconds (bound_quick 0, no full_quick)
#
# The runs, per test of the catalogue (name model.<model>.<test>[.<mutant>].<sched>):
#   | the test's clean code | run                                            | label      |
#   | must pass             | random<ITERATIONS>                             | model      |
#   |                       | bound1 .. bound<bound_quick>                   | model      |
#   |                       | bound<bound_slow> if deeper than bound_quick   | model;slow |
#   |                       | full if full_quick                             | model      |
#   |                       | random<SLOW_ITERATIONS> if nothing exhaustive  | model;slow |
#   | must fail             | random; bound (if bound_quick); full (if       | model      |
#   |                       | full_quick); all with --expect-fail            |            |
#   | each kill M           | .M.<sched> --expect-fail for each scheduler up | model      |
#   |                       | to the kill's reach (random < bound < full)    |            |
# Mutant and must-fail runs use the schedulers' defaults (10^5 iterations, context
# bound 1). Every run writes its history (failing runs only) to
# ${TLAB_MODEL_HISTORY_DIR}/<ctest name>.txt. Timeouts: 300 s, 900 s for `slow`.

set(TLAB_MODEL_DISCOVER_TESTS_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/ModelDiscoverTests.cmake)

function(tlab_discover_model_runs model)
  cmake_parse_arguments(D "" "ITERATIONS;SLOW_ITERATIONS" "SCHEDULERS" ${ARGN})
  if(D_UNPARSED_ARGUMENTS OR NOT D_SCHEDULERS)
    message(FATAL_ERROR "tlab_discover_model_runs(${model}): bad arguments ${ARGN}")
  endif()
  foreach(s IN LISTS D_SCHEDULERS)
    if(NOT s MATCHES "^(random|bound|full)$")
      message(FATAL_ERROR "tlab_discover_model_runs(${model}): unknown scheduler ${s}")
    endif()
  endforeach()
  set(target model_${model})
  set(base ${CMAKE_CURRENT_BINARY_DIR}/${target})
  set(tests_file ${base}_runs.cmake)
  string(REPLACE ";" " " schedulers "${D_SCHEDULERS}")
  string(CONCAT content
    "if(EXISTS \"$<TARGET_FILE:${target}>\")\n"
    "  if(NOT EXISTS \"${tests_file}\" OR\n"
    "     NOT \"${tests_file}\" IS_NEWER_THAN \"$<TARGET_FILE:${target}>\" OR\n"
    "     NOT \"${tests_file}\" IS_NEWER_THAN \"\${CMAKE_CURRENT_LIST_FILE}\" OR\n"
    "     NOT \"${tests_file}\" IS_NEWER_THAN \"${TLAB_MODEL_DISCOVER_TESTS_SCRIPT}\")\n"
    "    include(\"${TLAB_MODEL_DISCOVER_TESTS_SCRIPT}\")\n"
    "    tlab_model_write_runs(\n"
    "      MODEL [==[${model}]==]\n"
    "      EXECUTABLE [==[$<TARGET_FILE:${target}>]==]\n"
    "      SCHEDULERS [==[${schedulers}]==]\n"
    "      ITERATIONS [==[${D_ITERATIONS}]==]\n"
    "      SLOW_ITERATIONS [==[${D_SLOW_ITERATIONS}]==]\n"
    "      HISTORY_DIR [==[${TLAB_MODEL_HISTORY_DIR}]==]\n"
    "      WORKING_DIRECTORY [==[${CMAKE_CURRENT_BINARY_DIR}]==]\n"
    "      OUTPUT [==[${tests_file}]==])\n"
    "  endif()\n"
    "  include(\"${tests_file}\")\n"
    "else()\n"
    "  add_test(model.${model}.NOT_BUILT ${target}_NOT_BUILT)\n"
    "  set_tests_properties(model.${model}.NOT_BUILT PROPERTIES LABELS model)\n"
    "endif()\n")
  file(GENERATE OUTPUT ${base}_include.cmake CONTENT "${content}")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${base}_include.cmake)
endfunction()
