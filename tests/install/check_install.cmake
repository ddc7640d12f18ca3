# tests/install/check_install.cmake (cmake -P): the install, used as a user would.
#   1. cmake --install BUILD --prefix WORK/prefix (a fresh prefix each run)
#   2. configure and build tests/install/consumer against it (find_package(tlab))
#   3. run the consumer: every strategy of the installed engine keeps its promises
#   4. run the installed tlab: --version, and a built-in scenario on one strategy
# Any step that fails fails the test with its output.
foreach(var BUILD WORK SOURCE_DIR CXX)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_install.cmake: -D${var}= is required")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})

function(step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "${what}: ok")
  set(step_out "${out}" PARENT_SCOPE)
endfunction()

step("install" ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix)
foreach(f bin/tlab include/tlab/timer_service.h lib/cmake/tlab/tlabConfig.cmake)
  if(NOT EXISTS ${WORK}/prefix/${f})
    message(FATAL_ERROR "the install has no ${f}")
  endif()
endforeach()
step("configure the consumer" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer
     -B ${WORK}/consumer -G Ninja -DCMAKE_CXX_COMPILER=${CXX}
     -DCMAKE_PREFIX_PATH=${WORK}/prefix -DCMAKE_BUILD_TYPE=Release)
step("build the consumer" ${CMAKE_COMMAND} --build ${WORK}/consumer)
step("run the consumer" ${WORK}/consumer/consumer)
message(STATUS "${step_out}")
string(FIND "${step_out}" "binary_heap ok" found)
if(found EQUAL -1)
  message(FATAL_ERROR "the consumer printed no strategy:\n${step_out}")
endif()
step("installed tlab --version" ${WORK}/prefix/bin/tlab --version)
step("installed tlab run" ${WORK}/prefix/bin/tlab run ${SOURCE_DIR}/scenarios/racing_cancellers.json --strategy binary_heap
     --operations 2000)
file(REMOVE_RECURSE ${WORK})
