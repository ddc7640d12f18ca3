# tests/adapters/unpromised_findings.cmake (cmake -P): a runtime's documented
# failure that its adapter does not promise to avoid (a throwing callback that
# kills java.util.Timer's thread, or ends a Node or Go process: task_exceptions)
# shows in every output of a passing run, and --fail-on any turns the run red.
#   -DTLAB=<tlab> -DSUBJECT=<exec:name> -DSCENARIO=<throwing_tasks.json> -DWORK=<dir>
# A throwing task is a `fail` schedule the thrower always sends, so the finding
# shows in every run (no timing).
cmake_minimum_required(VERSION 3.25)  # policies: quoted if() arguments are strings
foreach(var TLAB SUBJECT SCENARIO WORK)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "unpromised_findings.cmake: -D${var}= is required")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
execute_process(COMMAND ${TLAB} check --subject ${SUBJECT} ${SCENARIO} --junit ${WORK}/r.xml
                        --sarif ${WORK}/r.sarif --html ${WORK}/r.html
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${SUBJECT}: the plain run exited ${rc}, not 0:\n${out}\n${err}")
endif()
if(NOT out MATCHES "1 passed \\(1 with findings: [^)]*task_exceptions [0-9]+")
  message(FATAL_ERROR "${SUBJECT}: the summary does not count task_exceptions:\n${out}")
endif()
file(READ ${WORK}/r.xml junit)
if(NOT junit MATCHES "<system-out>findings not promised by [^\n]*\ntask_exceptions: [0-9]+")
  message(FATAL_ERROR "${SUBJECT}: JUnit does not list task_exceptions:\n${junit}")
endif()
file(READ ${WORK}/r.sarif sarif)
string(JSON n LENGTH "${sarif}" runs 0 results)
set(found_note NO)
if(n GREATER 0)
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    string(JSON rule GET "${sarif}" runs 0 results ${i} ruleId)
    string(JSON level GET "${sarif}" runs 0 results ${i} level)
    if(NOT level STREQUAL "note")
      message(FATAL_ERROR "${SUBJECT}: a SARIF result of a passing run is ${level}")
    endif()
    if(rule STREQUAL "task_exceptions")
      set(found_note YES)
    endif()
  endforeach()
endif()
if(NOT found_note)
  message(FATAL_ERROR "${SUBJECT}: SARIF has no task_exceptions note:\n${sarif}")
endif()
file(READ ${WORK}/r.html html)
if(NOT html MATCHES "<tr class=\"unpromised\"><td>[^<]*</td><td>task_exceptions</td>")
  message(FATAL_ERROR "${SUBJECT}: the HTML report has no task_exceptions row")
endif()
execute_process(COMMAND ${TLAB} check --subject ${SUBJECT} ${SCENARIO} --fail-on any
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "${SUBJECT}: --fail-on any exited ${rc}, not 1:\n${out}\n${err}")
endif()
message(STATUS "${SUBJECT}: task_exceptions shown in the summary, JUnit, SARIF and HTML; "
               "--fail-on any fails the run")
