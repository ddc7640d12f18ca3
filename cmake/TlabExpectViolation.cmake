# cmake/TlabExpectViolation.cmake (cmake -P): the command of a
# tlab_add_checks(... EXPECT_FAIL) test (cmake/TlabSubjects.cmake).
#
# Runs `TLAB check --subject SUBJECT --report REPORT [SCENARIOS]` with its output
# passed through, and succeeds only if tlab exits 1: it ran the cases and a
# verdict failed (cli/command.h, kExitViolation). Exit 0 (the known bug went
# unseen), 2 (the subject or a scenario was refused), 3 (internal error) or a
# crash fail the test, so a known-buggy example cannot "pass" for the wrong
# reason, as it would under a bare WILL_FAIL.
#   -DTLAB=<tlab binary> -DSUBJECT=<plugin path> -DREPORT=<json path>
#   -DSCENARIOS=<files joined by '|'> (may be empty)
foreach(var TLAB SUBJECT REPORT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "TlabExpectViolation.cmake: -D${var}= is required")
  endif()
endforeach()
string(REPLACE "|" ";" scenarios "${SCENARIOS}")
execute_process(COMMAND ${TLAB} check --subject ${SUBJECT} --report ${REPORT} ${scenarios}
                RESULT_VARIABLE rc)
if(NOT rc STREQUAL "1")
  message(FATAL_ERROR "expected tlab check to find the known bug (exit 1), got: ${rc}")
endif()
message(STATUS "tlab check failed as expected (exit 1): the known bug was found; "
               "report: ${REPORT}")
