# tests/scenario/check_scenario.cmake: one scenario.<name> test: `tlab check
# SCENARIO --report REPORT`, exit status kept. When it fails, it prints each failed
# case of the report with its message, counters and every violation's first
# example in full (the table cuts a detail at 160 characters), so the output a
# soak saves (scripts/soak) says what happened, not only that it did.
#   cmake -DTLAB=... -DSCENARIO=... -DREPORT=... -P check_scenario.cmake
cmake_minimum_required(VERSION 3.25)  # string(JSON), IN_LIST in script mode
execute_process(COMMAND ${TLAB} check ${SCENARIO} --report ${REPORT} RESULT_VARIABLE rc)
if(rc EQUAL 0)
  return()
endif()
if(EXISTS ${REPORT})
  include(${CMAKE_CURRENT_LIST_DIR}/../../cmake/TlabReport.cmake)
  file(READ ${REPORT} doc)
  tlab_report_cases("${doc}" cases)
  foreach(i IN LISTS cases)
    string(JSON verdict GET "${doc}" cases ${i} verdict)
    string(JSON expect_fail GET "${doc}" cases ${i} expect_fail)
    # A mutant case fails by design; a clean case that does not pass, or a
    # mutant case that passes (it survived), is what went wrong.
    if((expect_fail AND verdict STREQUAL "pass") OR (NOT expect_fail AND NOT verdict STREQUAL "pass"))
      string(JSON id GET "${doc}" cases ${i} id)
      string(JSON message GET "${doc}" cases ${i} message)
      string(JSON counters GET "${doc}" cases ${i} counters)
      message("== ${id}: ${verdict}: ${message}")
      message("   counters: ${counters}")
      tlab_case_findings("${doc}" ${i} keys)
      foreach(key IN LISTS keys)
        string(JSON count GET "${doc}" cases ${i} violations ${key} count)
        string(JSON example GET "${doc}" cases ${i} violations ${key} first_example)
        message("   ${key}=${count}: ${example}")
      endforeach()
    endif()
  endforeach()
endif()
message(FATAL_ERROR "tlab check ${SCENARIO} exited ${rc}")
