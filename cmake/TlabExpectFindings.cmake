# cmake/TlabExpectFindings.cmake (cmake -P): the command of a
# tlab_add_checks(... EXPECT_FINDINGS ...) test (cmake/TlabSubjects.cmake): a
# subject whose behaviour tlab has already measured, held to exactly that.
#
# Runs `TLAB check --subject SUBJECT --report REPORT [SCENARIOS]`, then reads the
# report and succeeds only if
#   - tlab ran the cases: exit 0 or 1 (2 = refused, 3 = a timeout or an internal
#     error, and a crash fail the test);
#   - every EXPECT entry `<scenario>:<finding>` is in the report: that case has
#     the finding (an oracle name such as early_fire) with a count above 0,
#     whether or not the subject promised it;
#   - every finding in the report is an EXPECT or an ALLOW entry: a new finding,
#     or one gone from a judged case, is news the test reports;
#   - no case is an error or a timeout.
# A known bug of a runtime is then asserted, not hidden: the test fails the day it
# is fixed (remove the entry) and the day another appears.
#   -DTLAB=<tlab binary> -DSUBJECT=<--subject value> -DREPORT=<json path>
#   -DSCENARIOS=<files joined by '|'> -DEXPECT=<entries joined by '|'>
#   -DALLOW=<entries joined by '|'>  (each may be empty)
cmake_minimum_required(VERSION 3.25)  # IN_LIST and string(JSON) in script mode
foreach(var TLAB SUBJECT REPORT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "TlabExpectFindings.cmake: -D${var}= is required")
  endif()
endforeach()
string(REPLACE "|" ";" scenarios "${SCENARIOS}")
string(REPLACE "|" ";" expect "${EXPECT}")
string(REPLACE "|" ";" allow "${ALLOW}")
execute_process(COMMAND ${TLAB} check --subject ${SUBJECT} --report ${REPORT} ${scenarios}
                RESULT_VARIABLE rc)
if(NOT rc STREQUAL "0" AND NOT rc STREQUAL "1")
  message(FATAL_ERROR "tlab check did not run the cases to a verdict (exit ${rc})")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/TlabReport.cmake)
file(READ ${REPORT} doc)
tlab_report_cases("${doc}" cases)
list(LENGTH cases ncases)
set(seen "")
set(problems "")
foreach(i IN LISTS cases)
  string(JSON scenario GET "${doc}" cases ${i} scenario)
  string(JSON verdict GET "${doc}" cases ${i} verdict)
  if(verdict STREQUAL "error" OR verdict STREQUAL "timeout")
    string(JSON message GET "${doc}" cases ${i} message)
    list(APPEND problems "${scenario}: verdict ${verdict}: ${message}")
  endif()
  tlab_case_findings("${doc}" ${i} keys)
  foreach(key IN LISTS keys)
    list(APPEND seen "${scenario}:${key}")
    if(NOT "${scenario}:${key}" IN_LIST expect AND NOT "${scenario}:${key}" IN_LIST allow)
      string(JSON count GET "${doc}" cases ${i} violations ${key} count)
      string(JSON example GET "${doc}" cases ${i} violations ${key} first_example)
      list(APPEND problems "unexpected finding ${scenario}:${key} (${count}): ${example}")
    endif()
  endforeach()
endforeach()
foreach(e IN LISTS expect)
  if(NOT e IN_LIST seen)
    list(APPEND problems "expected finding ${e} did not show (fixed? then drop it from EXPECT_FINDINGS)")
  endif()
endforeach()
if(problems)
  list(JOIN problems "\n  " text)
  message(FATAL_ERROR "the subject's findings are not the known ones (report ${REPORT}):\n  ${text}")
endif()
list(LENGTH expect nexpect)
message(STATUS "tlab check: ${ncases} cases, exactly the ${nexpect} known findings (exit ${rc})")
