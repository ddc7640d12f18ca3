# tlab_add_test(NAME <name> LABELS <label>... SOURCES <file>... [LIBS <lib>...]
#               [TIMEOUT <seconds>] [ARGS <arg>...] [SLOW_FILTER <gtest filter>])
#
# Builds one test executable and registers it with ctest. SLOW_FILTER (GoogleTest
# programs) takes the tests it matches out of <name> and registers them as
# <name>.slow, labels `slow` and <label>...: checks that mean something only on real
# time (a race left to the scheduler), which CI does not run. Labels in use:
#   unit      GoogleTest contract tests, no sleeping, manual clock
#   property  rapidcheck stateful tests against a reference model
#   model     Relacy models over the shipped core code
#   tsan      multi-threaded tests; scripts/test also runs these under the tsan preset
#   scenario  shipped scenario files run through tlab
#   e2e       the real tlab binary (or the CLI in-process) end to end: exit codes,
#             reports against their schema, tlab model / tlab mutants
#   clang-tsa clang++ -fsyntax-only -Wthread-safety over the core templates (tests/tsa/);
#             scripts/test runs it as its own step, before the build
#   fuzz      libFuzzer runs over the scenario loader (tests/fuzz/; registered there, not
#             here: the targets are built by clang++ in a sub-build)
#   install   `cmake --install` used by a separate project (tests/install/; registered
#             there: it is a cmake -P script, not a test executable)
#   package   the Debian package built by cpack, unpacked and run (tests/package/;
#             registered there, a cmake -P script too)
#   slow      real-clock or long runs; not part of the default CI run
#   bench     Google Benchmark programs; never run by default
#   soak      scripts/soak, a few loaded rounds of tests that have flaked under load
#             (tests/soak/); excluded by both ctest presets, so CI never runs it
#   core      added here, never passed: the program links the engine alone (no
#             tlab_tool in LIBS). The asan-ubsan preset builds and runs exactly these
#             (unit and property tests of core/) under ASan and UBSan, no recovery.
# TIMEOUT defaults to 300 s so that a hung test fails instead of eating CI's budget.
function(tlab_add_test)
  cmake_parse_arguments(T "" "NAME;TIMEOUT;SLOW_FILTER" "LABELS;SOURCES;LIBS;ARGS" ${ARGN})
  if(NOT T_NAME OR NOT T_SOURCES)
    message(FATAL_ERROR "tlab_add_test: NAME and SOURCES are required")
  endif()
  if(NOT T_TIMEOUT)
    set(T_TIMEOUT 300)
  endif()
  if(NOT "tlab_tool" IN_LIST T_LIBS)
    list(APPEND T_LABELS core)
  endif()
  add_executable(${T_NAME} ${T_SOURCES})
  target_link_libraries(${T_NAME} PRIVATE tlab_core ${T_LIBS})
  target_include_directories(${T_NAME} PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  if(T_SLOW_FILTER)
    add_test(NAME ${T_NAME} COMMAND ${T_NAME} ${T_ARGS} --gtest_filter=-${T_SLOW_FILTER})
    add_test(NAME ${T_NAME}.slow COMMAND ${T_NAME} ${T_ARGS} --gtest_filter=${T_SLOW_FILTER})
    set_tests_properties(${T_NAME}.slow PROPERTIES LABELS "${T_LABELS};slow" TIMEOUT ${T_TIMEOUT})
  else()
    add_test(NAME ${T_NAME} COMMAND ${T_NAME} ${T_ARGS})
  endif()
  set_tests_properties(${T_NAME} PROPERTIES LABELS "${T_LABELS}" TIMEOUT ${T_TIMEOUT})
endfunction()
