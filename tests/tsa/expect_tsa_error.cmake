# Compiles one seeded case of seeded_violation.cc and expects clang to reject it
# with a thread-safety diagnostic matching EXPECT; case 0 must compile cleanly.
# -DCLANGXX=<clang++> -DSOURCE=<file> -DINCLUDE=<core/include> -DCASE=<n> [-DEXPECT=<regex>]
execute_process(COMMAND ${CLANGXX} -std=c++20 -fsyntax-only -Wthread-safety -Werror
                        -DTLAB_TSA_CASE=${CASE} -I${INCLUDE} ${SOURCE}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(CASE EQUAL 0)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the unseeded control case must compile cleanly, got ${rc}:\n${err}")
  endif()
  message(STATUS "control case compiles cleanly")
  return()
endif()
if(rc EQUAL 0)
  message(FATAL_ERROR "case ${CASE}: clang accepted the seeded violation; the analysis is blind")
endif()
if(NOT err MATCHES "${EXPECT} \\[-Werror,-Wthread-safety")
  message(FATAL_ERROR "case ${CASE}: rejected, but not with \"${EXPECT}\":\n${err}")
endif()
message(STATUS "case ${CASE} caught: ${CMAKE_MATCH_0}")
