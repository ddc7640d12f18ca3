# tests/install/check_adapters.cmake: check_adapters(TLAB RUN_DIR SOURCE_DIR REQUIRED),
# for the checks of the install (check_install.cmake) and of the Debian package
# (tests/package/): every exec adapter the installed or unpacked tlab lists as
# available (`tlab list subjects --json`, "adapters") runs by name from RUN_DIR, a
# directory outside the source tree: `tlab check --subject exec:<name>` on
# tests/exec/short_races.json must pass. Each name in REQUIRED (a list; the
# adapters whose runtimes the configure found) must be among them, so a package
# that lost an adapter fails rather than skips. Needs step() (step.cmake).
cmake_policy(SET CMP0057 NEW)  # if(... IN_LIST ...)
function(check_adapters tlab run_dir source_dir required)
  step("tlab list subjects --json" ${CMAKE_COMMAND} -E chdir ${run_dir} ${tlab} list subjects
       --json)
  set(listing "${step_out}")
  string(JSON n LENGTH "${listing}" adapters)
  if(n EQUAL 0)
    message(FATAL_ERROR "tlab list subjects --json lists no adapter:\n${listing}")
  endif()
  math(EXPR last "${n} - 1")
  set(ran "")
  foreach(i RANGE ${last})
    string(JSON name GET "${listing}" adapters ${i} name)
    string(JSON available GET "${listing}" adapters ${i} available)
    if(NOT available)
      string(JSON why GET "${listing}" adapters ${i} why_not)
      message(STATUS "adapter ${name}: not available here: ${why}")
      continue()
    endif()
    step("adapter ${name} by name (tlab check --subject exec:${name})" ${CMAKE_COMMAND} -E chdir
         ${run_dir} ${tlab} check --subject exec:${name}
         ${source_dir}/tests/exec/short_races.json)
    list(APPEND ran ${name})
  endforeach()
  foreach(name IN LISTS required)
    if(NOT name IN_LIST ran)
      message(FATAL_ERROR "adapter ${name} is required here but did not run:\n${listing}")
    endif()
  endforeach()
endfunction()
