# cmake/TlabSim.cmake: your own Platform-templated code under tlab's deterministic
# simulation, from CMake. Installed next to tlabConfig.cmake, which includes it;
# docs/your-own-timer.md is the guide and examples/sim/timed_latch a complete
# project.
#
# tlab_add_sim_test(NAME <test> SOURCES <file>... [SEEDS <n>] [STRATEGY random|pct]
#                   [PCT_DEPTH <d>] [EXPECT_FAILURE] [DEFINITIONS <def>...])
#
#   Builds an executable <test> from SOURCES (one of which ends with
#   TLAB_SIM_MAIN(setup), tlab/platform/sim_explore.h), linked to tlab::core, and
#   registers a ctest test, label `tlab_sim`, that explores SEEDS seeded schedules
#   (default 1000) with the STRATEGY scheduler (default random; PCT_DEPTH for pct)
#   and fails on the first schedule that breaks an invariant, printing the seed
#   that replays it (TLAB_SIM_SEED=<seed> <test>). EXPECT_FAILURE: code with a
#   known bug; the test passes only if some schedule fails. DEFINITIONS are
#   compile definitions of the executable (build one source two ways).
include_guard(GLOBAL)

function(tlab_add_sim_test)
  cmake_parse_arguments(S "EXPECT_FAILURE" "NAME;SEEDS;STRATEGY;PCT_DEPTH"
                        "SOURCES;DEFINITIONS" ${ARGN})
  if(NOT S_NAME OR NOT S_SOURCES)
    message(FATAL_ERROR "tlab_add_sim_test: NAME and SOURCES are required")
  endif()
  if(S_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tlab_add_sim_test(${S_NAME}): unknown arguments: ${S_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT S_SEEDS)
    set(S_SEEDS 1000)
  endif()
  if(NOT S_STRATEGY)
    set(S_STRATEGY random)
  endif()
  if(NOT S_STRATEGY MATCHES "^(random|pct)$")
    message(FATAL_ERROR "tlab_add_sim_test(${S_NAME}): STRATEGY must be random or pct, not "
                        "'${S_STRATEGY}'")
  endif()
  if(NOT S_PCT_DEPTH)
    set(S_PCT_DEPTH 3)
  endif()
  add_executable(${S_NAME} ${S_SOURCES})
  target_link_libraries(${S_NAME} PRIVATE tlab::core)
  target_compile_features(${S_NAME} PRIVATE cxx_std_20)
  if(S_DEFINITIONS)
    target_compile_definitions(${S_NAME} PRIVATE ${S_DEFINITIONS})
  endif()
  set(expect 0)
  if(S_EXPECT_FAILURE)
    set(expect 1)
  endif()
  add_test(NAME ${S_NAME} COMMAND ${S_NAME})
  set_tests_properties(${S_NAME} PROPERTIES LABELS tlab_sim
    ENVIRONMENT "TLAB_SIM_SEEDS=${S_SEEDS};TLAB_SIM_STRATEGY=${S_STRATEGY};TLAB_SIM_PCT_DEPTH=${S_PCT_DEPTH};TLAB_SIM_EXPECT_FAILURE=${expect}")
endfunction()
