# tests/install/step.cmake: step(WHAT COMMAND...) for the cmake -P checks of the
# install (check_install.cmake) and of the Debian package (tests/package/): runs the
# command, fails the check with its output if it exits non-zero, prints "WHAT: ok"
# otherwise, and leaves its stdout in step_out for the caller to inspect.
function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok")
  set(step_out "${out}" PARENT_SCOPE)
endfunction()
