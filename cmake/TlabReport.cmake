# cmake/TlabReport.cmake: reading a tlab JSON report (report_schema.json) in a
# cmake -P script: TlabExpectFindings.cmake (installed with it) and
# tests/scenario/check_scenario.cmake walk its cases and violations with these.
#
# tlab_report_cases(DOC OUT): OUT = the indices of DOC's cases, in order (empty
#   when there are none).
# tlab_case_findings(DOC I OUT): OUT = the violation keys of case I whose count is
#   above 0, in report order.
include_guard(GLOBAL)

function(tlab_report_cases doc out)
  string(JSON n LENGTH "${doc}" cases)
  set(indices "")
  if(n GREATER 0)
    math(EXPR last "${n} - 1")
    foreach(i RANGE ${last})
      list(APPEND indices ${i})
    endforeach()
  endif()
  set(${out} "${indices}" PARENT_SCOPE)
endfunction()

function(tlab_case_findings doc i out)
  string(JSON n LENGTH "${doc}" cases ${i} violations)
  set(keys "")
  if(n GREATER 0)
    math(EXPR last "${n} - 1")
    foreach(k RANGE ${last})
      string(JSON key MEMBER "${doc}" cases ${i} violations ${k})
      string(JSON count GET "${doc}" cases ${i} violations ${key} count)
      if(count GREATER 0)
        list(APPEND keys ${key})
      endif()
    endforeach()
  endif()
  set(${out} "${keys}" PARENT_SCOPE)
endfunction()
