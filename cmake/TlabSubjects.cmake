# cmake/TlabSubjects.cmake: putting your own timer under tlab, from CMake.
# Installed next to tlabConfig.cmake, which includes it: after
# find_package(tlab CONFIG REQUIRED) a project has both functions below. The tlab
# tree includes it too (tests/unit builds the examples' subjects with it).
# docs/your-own-timer.md is the guide; examples/subjects/ are complete projects.
#
# tlab_add_subject(NAME <target> SOURCES <file>...)
# tlab_add_subject(NAME <target> QUEUE_HEADER <header> QUEUE <type>
#                  [SUBJECT_NAME <name>] [SUMMARY <line>] [SOURCES <file>...])
#
#   Builds a subject plugin: a MODULE library (lib<target>.so) exporting
#   `tlab_subject_entry` (tlab/subject.h). Two ways in:
#     SOURCES        C or C++ that defines the entry point itself: C filling a
#                    tlab_subject descriptor by hand, or C++ ending with
#                    TLAB_EXPORT_QUEUE_SUBJECT(Queue, "name", "summary")
#                    (tlab/subject_adapter.h)
#     QUEUE_HEADER   a header defining a type that satisfies tlab's TimerQueue
#     + QUEUE        concept with Payload std::uint64_t (QUEUE names it, e.g.
#                    my::Wheel<std::uint64_t>); the entry point is generated
#                    through the adapter, named SUBJECT_NAME (default <target>)
#                    with SUMMARY as its one-line summary
#   The library gets tlab's include directory (and links tlab::core when the
#   project enables C++), hidden visibility except for the entry point, and no
#   "lib" prefix surprises: its path is $<TARGET_FILE:<target>>.
#
# tlab_add_foreign_subject(NAME <target> LIBRARY <path> COMMAND <word>...
#                          [DEPENDS <file>...] [WORKING_DIRECTORY <dir>])
#
#   A subject plugin another toolchain builds (cargo, go build -buildmode=c-shared,
#   ...): COMMAND makes the shared library LIBRARY (run again when a DEPENDS file
#   changes; in WORKING_DIRECTORY, default the current source dir), and <target>,
#   an imported library built by target <target>_build, names it for
#   tlab_add_checks(SUBJECT <target>). examples/subjects/go_timer and rust_timer
#   use it.
#
# tlab_add_checks(NAME <test> (SUBJECT <target> | COMMAND <word>...)
#                 [SCENARIOS <file>...]
#                 [EXPECT_FAIL | [EXPECT_FINDINGS <scenario>:<finding>...]
#                                [ALLOW_FINDINGS <scenario>:<finding>...]]
#                 [TIMEOUT <seconds>])
#
#   Registers one ctest test, label `tlab`, that runs
#     ${tlab_EXECUTABLE} check --subject <subject>
#         --report <build dir>/tlab_checks/<test>.json [scenarios]
#   i.e. tlab's generic suite (or the SCENARIOS given, relative to the current
#   source dir) on the subject: SUBJECT, a plugin target (tlab_add_subject), or
#   COMMAND, a process speaking the exec protocol (docs/protocol.md): its words
#   become `--subject exec:'word' 'word'...` (a word may be a generator
#   expression, e.g. $<TARGET_FILE:my_go_adapter>). The report is kept for
#   `tlab replay`. Without a mode the test passes iff tlab check exits 0.
#     EXPECT_FAIL      a subject with a known bug: the test passes only if tlab
#                      check runs and a verdict fails (exit 1); a pass, a refused
#                      subject (exit 2) or a crash fail it (TlabExpectViolation.cmake;
#                      stricter than ctest's WILL_FAIL, which any non-zero exit
#                      satisfies)
#     EXPECT_FINDINGS  a subject whose findings are known: each entry
#                      (`expiry_storm:early_fire`) must show, and no other finding
#                      may, except ALLOW_FINDINGS entries (ones that show only on
#                      some runs; ALLOW_FINDINGS alone: nothing must show, those
#                      may); exit 0 or 1, no error or timeout
#                      (TlabExpectFindings.cmake). A runtime that breaks a promise
#                      is asserted, not hidden.
#   TIMEOUT defaults to 600 s.
#
# Requires: tlab_EXECUTABLE (tlabConfig.cmake sets it to the installed tlab).
include_guard(GLOBAL)

function(tlab_add_subject)
  cmake_parse_arguments(S "" "NAME;QUEUE_HEADER;QUEUE;SUBJECT_NAME;SUMMARY" "SOURCES" ${ARGN})
  if(NOT S_NAME)
    message(FATAL_ERROR "tlab_add_subject: NAME is required")
  endif()
  if(S_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tlab_add_subject(${S_NAME}): unknown arguments ${S_UNPARSED_ARGUMENTS}")
  endif()
  if(S_QUEUE_HEADER AND NOT S_QUEUE)
    message(FATAL_ERROR "tlab_add_subject(${S_NAME}): QUEUE_HEADER needs QUEUE <type>")
  endif()
  if(NOT S_QUEUE_HEADER AND (S_QUEUE OR S_SUBJECT_NAME OR S_SUMMARY))
    message(FATAL_ERROR
            "tlab_add_subject(${S_NAME}): QUEUE, SUBJECT_NAME and SUMMARY go with QUEUE_HEADER")
  endif()
  if(NOT S_SOURCES AND NOT S_QUEUE_HEADER)
    message(FATAL_ERROR "tlab_add_subject(${S_NAME}): give SOURCES, or QUEUE_HEADER and QUEUE")
  endif()
  set(sources ${S_SOURCES})
  if(S_QUEUE_HEADER)
    if(NOT S_SUBJECT_NAME)
      set(S_SUBJECT_NAME ${S_NAME})
    endif()
    if(NOT S_SUMMARY)
      set(S_SUMMARY "${S_QUEUE} through tlab's TimerQueue adapter")
    endif()
    cmake_path(ABSOLUTE_PATH S_QUEUE_HEADER BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
    set(generated ${CMAKE_CURRENT_BINARY_DIR}/tlab_subject_${S_NAME}.cc)
    file(CONFIGURE OUTPUT ${generated} @ONLY CONTENT [=[
// Generated by tlab_add_subject(NAME @S_NAME@ QUEUE_HEADER ...): the entry point of
// the subject "@S_SUBJECT_NAME@", @S_QUEUE@ through tlab/subject_adapter.h.
#include "@S_QUEUE_HEADER@"
#include "tlab/subject_adapter.h"

using TlabSubjectQueue = @S_QUEUE@;
TLAB_EXPORT_QUEUE_SUBJECT(TlabSubjectQueue, "@S_SUBJECT_NAME@", "@S_SUMMARY@")
]=])
    list(APPEND sources ${generated})
  endif()
  add_library(${S_NAME} MODULE ${sources})
  get_property(languages GLOBAL PROPERTY ENABLED_LANGUAGES)
  if(CXX IN_LIST languages)
    target_link_libraries(${S_NAME} PRIVATE tlab::core)
  else()
    # A C-only project: subject.h is all it needs (tlab::core asks for C++20).
    target_include_directories(${S_NAME}
                               PRIVATE $<TARGET_PROPERTY:tlab::core,INTERFACE_INCLUDE_DIRECTORIES>)
  endif()
  set_target_properties(${S_NAME} PROPERTIES C_VISIBILITY_PRESET hidden
                                             CXX_VISIBILITY_PRESET hidden
                                             VISIBILITY_INLINES_HIDDEN ON)
endfunction()

function(tlab_add_foreign_subject)
  cmake_parse_arguments(F "" "NAME;LIBRARY;WORKING_DIRECTORY" "COMMAND;DEPENDS" ${ARGN})
  if(NOT F_NAME OR NOT F_LIBRARY OR NOT F_COMMAND)
    message(FATAL_ERROR "tlab_add_foreign_subject: NAME, LIBRARY and COMMAND are required")
  endif()
  if(F_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR
            "tlab_add_foreign_subject(${F_NAME}): unknown arguments ${F_UNPARSED_ARGUMENTS}")
  endif()
  if(NOT F_WORKING_DIRECTORY)
    set(F_WORKING_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
  endif()
  add_custom_command(OUTPUT ${F_LIBRARY} COMMAND ${F_COMMAND} DEPENDS ${F_DEPENDS}
                     WORKING_DIRECTORY ${F_WORKING_DIRECTORY}
                     COMMENT "Building subject ${F_NAME}" VERBATIM)
  add_custom_target(${F_NAME}_build ALL DEPENDS ${F_LIBRARY})
  add_library(${F_NAME} SHARED IMPORTED GLOBAL)
  set_target_properties(${F_NAME} PROPERTIES IMPORTED_LOCATION ${F_LIBRARY})
  add_dependencies(${F_NAME} ${F_NAME}_build)
endfunction()

function(tlab_add_checks)
  cmake_parse_arguments(C "EXPECT_FAIL" "NAME;SUBJECT;TIMEOUT"
                        "SCENARIOS;COMMAND;EXPECT_FINDINGS;ALLOW_FINDINGS" ${ARGN})
  if(NOT C_NAME OR (NOT C_SUBJECT AND NOT C_COMMAND) OR (C_SUBJECT AND C_COMMAND))
    message(FATAL_ERROR "tlab_add_checks: NAME and one of SUBJECT or COMMAND are required")
  endif()
  if(C_UNPARSED_ARGUMENTS)
    message(FATAL_ERROR "tlab_add_checks(${C_NAME}): unknown arguments ${C_UNPARSED_ARGUMENTS}")
  endif()
  if(C_EXPECT_FAIL AND (C_EXPECT_FINDINGS OR C_ALLOW_FINDINGS))
    message(FATAL_ERROR "tlab_add_checks(${C_NAME}): EXPECT_FAIL and EXPECT_FINDINGS exclude "
                        "each other")
  endif()
  foreach(entry IN LISTS C_EXPECT_FINDINGS C_ALLOW_FINDINGS)
    if(NOT entry MATCHES "^[A-Za-z0-9_.-]+:[a-z_.]+$")
      message(FATAL_ERROR "tlab_add_checks(${C_NAME}): finding `${entry}` is not "
                          "<scenario>:<finding> (e.g. expiry_storm:early_fire)")
    endif()
  endforeach()
  if(C_SUBJECT AND NOT TARGET ${C_SUBJECT})
    message(FATAL_ERROR "tlab_add_checks(${C_NAME}): SUBJECT ${C_SUBJECT} is not a target "
                        "(build it with tlab_add_subject first)")
  endif()
  if(NOT tlab_EXECUTABLE)
    message(FATAL_ERROR "tlab_add_checks(${C_NAME}): tlab_EXECUTABLE is not set "
                        "(find_package(tlab CONFIG REQUIRED) sets it)")
  endif()
  if(NOT C_TIMEOUT)
    set(C_TIMEOUT 600)
  endif()
  if(C_SUBJECT)
    set(subject $<TARGET_FILE:${C_SUBJECT}>)
  else()
    # Each word single-quoted for tlab's shell-like split (wordexp); a ' inside a
    # word becomes '\''.
    set(subject "exec:")
    foreach(word IN LISTS C_COMMAND)
      string(REPLACE "'" "'\\''" word "${word}")
      string(APPEND subject "'${word}' ")
    endforeach()
    string(STRIP "${subject}" subject)
  endif()
  set(scenarios "")
  foreach(s IN LISTS C_SCENARIOS)
    cmake_path(ABSOLUTE_PATH s BASE_DIRECTORY ${CMAKE_CURRENT_SOURCE_DIR})
    list(APPEND scenarios ${s})
  endforeach()
  set(report ${CMAKE_CURRENT_BINARY_DIR}/tlab_checks/${C_NAME}.json)
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/tlab_checks)
  string(JOIN "|" joined ${scenarios})
  if(C_EXPECT_FAIL)
    add_test(NAME ${C_NAME}
             COMMAND ${CMAKE_COMMAND} -DTLAB=${tlab_EXECUTABLE} -DSUBJECT=${subject}
                     -DREPORT=${report} -DSCENARIOS=${joined}
                     -P ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/TlabExpectViolation.cmake)
  elseif(C_EXPECT_FINDINGS OR C_ALLOW_FINDINGS)
    string(JOIN "|" expect ${C_EXPECT_FINDINGS})
    string(JOIN "|" allow ${C_ALLOW_FINDINGS})
    add_test(NAME ${C_NAME}
             COMMAND ${CMAKE_COMMAND} -DTLAB=${tlab_EXECUTABLE} -DSUBJECT=${subject}
                     -DREPORT=${report} -DSCENARIOS=${joined} -DEXPECT=${expect}
                     -DALLOW=${allow}
                     -P ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/TlabExpectFindings.cmake)
  else()
    add_test(NAME ${C_NAME}
             COMMAND ${tlab_EXECUTABLE} check --subject ${subject} --report ${report} ${scenarios})
  endif()
  set_tests_properties(${C_NAME} PROPERTIES LABELS tlab TIMEOUT ${C_TIMEOUT})
endfunction()
