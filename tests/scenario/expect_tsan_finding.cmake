# Runs the TSan tlab on one scenario with mutant data_race_plain_flag and expects
# exit 1 with a ThreadSanitizer report in the case's sanitizer_reports.
# -DTLAB=<binary> -DSCENARIO=<file> -DREPORT=<path>
execute_process(COMMAND ${TLAB} run ${SCENARIO} --strategy binary_heap
                        --mutant data_race_plain_flag --report ${REPORT}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 1)
  message(FATAL_ERROR "expected exit 1 (TSan finding), got ${rc}\n${out}\n${err}")
endif()
file(READ ${REPORT} report)
string(JSON reports GET ${report} cases 0 sanitizer_reports)
string(JSON n LENGTH ${report} cases 0 sanitizer_reports)
if(n LESS 1 OR NOT reports MATCHES "ThreadSanitizer: data race")
  message(FATAL_ERROR "no ThreadSanitizer data race in sanitizer_reports:\n${reports}")
endif()
message(STATUS "caught: ${n} TSan report(s)")
