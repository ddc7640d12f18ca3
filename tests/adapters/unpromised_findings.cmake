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

# run(CODE ARGS...): tlab check on the subject and scenario with ARGS must exit CODE;
# its stdout is left in `out`.
function(run code)
  execute_process(COMMAND ${TLAB} check --subject ${SUBJECT} ${SCENARIO} ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE stdout ERROR_VARIABLE stderr)
  if(NOT rc EQUAL code)
    message(FATAL_ERROR "${SUBJECT} ${ARGN}: exited ${rc}, not ${code}:\n${stdout}\n${stderr}")
  endif()
  set(out "${stdout}" PARENT_SCOPE)
endfunction()
# expect(WHAT TEXT REGEX): TEXT must match REGEX.
function(expect what text regex)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${SUBJECT}: ${what} does not show task_exceptions:\n${text}")
  endif()
endfunction()

run(0 --junit ${WORK}/r.xml --sarif ${WORK}/r.sarif --html ${WORK}/r.html)
expect("the summary" "${out}" "1 passed \\(1 with findings: [^)]*task_exceptions [0-9]+")
file(READ ${WORK}/r.xml junit)
# (other unpromised findings, such as Node's early fires on some runs, may come
# first in the list)
expect("JUnit" "${junit}" "<system-out>findings not promised by .*\ntask_exceptions: [0-9]+")
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
expect("the HTML report" "${html}" "<tr class=\"unpromised\"><td>[^<]*</td><td>task_exceptions</td>")
run(1 --fail-on any)
message(STATUS "${SUBJECT}: task_exceptions shown in the summary, JUnit, SARIF and HTML; "
               "--fail-on any fails the run")
