# tests/install/check_install.cmake (cmake -P): the install, used as a user would.
#   1. cmake --install BUILD --prefix WORK/prefix (a fresh prefix each run)
#   2. configure and build tests/install/consumer against it (find_package(tlab))
#   3. run the consumer: every strategy of the installed engine keeps its promises
#   4. run the installed tlab: --version, and a built-in scenario on one strategy;
#      each shipped exec adapter by name (check_adapters.cmake; ADAPTERS lists the
#      ones that must be there)
#   5. configure, build and ctest each examples/subjects/* and examples/sim/*
#      project against it (the sim example: tlab_add_sim_test, the buggy latch
#      must fail a schedule); the
#      subjects are built by the package's tlab_add_subject and checked by its
#      tlab_add_checks (`tlab check --subject`); the ctest run passes only if every
#      correct example passes and each EXPECT_FAIL one (c_timer_heap_aba) fails
#      with exit 1, and the ABA heap's report must count wrong_result or lost_timer
#      (go_timer needs Go, rust_timer rustc and cargo: scripts/setup installs them)
# Any step that fails fails the test with its output.
foreach(var BUILD WORK SOURCE_DIR CXX CC ADAPTERS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_install.cmake: -D${var}= is required")
  endif()
endforeach()
file(REMOVE_RECURSE ${WORK})

include(${CMAKE_CURRENT_LIST_DIR}/step.cmake)
include(${CMAKE_CURRENT_LIST_DIR}/check_adapters.cmake)

step("install" ${CMAKE_COMMAND} --install ${BUILD} --prefix ${WORK}/prefix)
foreach(f bin/tlab share/tlab/adapters/python/asyncio_subject.py include/tlab/timer_service.h include/tlab/subject.h
          include/tlab/subject_adapter.h lib/cmake/tlab/tlabConfig.cmake
          lib/cmake/tlab/TlabSubjects.cmake lib/cmake/tlab/TlabExpectViolation.cmake
          lib/cmake/tlab/TlabSim.cmake include/tlab/platform/sim_explore.h)
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
file(MAKE_DIRECTORY ${WORK}/run)
check_adapters(${WORK}/prefix/bin/tlab ${WORK}/run ${SOURCE_DIR} "${ADAPTERS}")

file(GLOB examples LIST_DIRECTORIES true ${SOURCE_DIR}/examples/subjects/*
     ${SOURCE_DIR}/examples/sim/*)
foreach(dir IN LISTS examples)
  if(NOT EXISTS ${dir}/CMakeLists.txt)
    continue()
  endif()
  cmake_path(GET dir FILENAME ex)
  step("configure example ${ex}" ${CMAKE_COMMAND} -S ${dir} -B ${WORK}/examples/${ex} -G Ninja
       -DCMAKE_C_COMPILER=${CC} -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${WORK}/prefix
       -DCMAKE_BUILD_TYPE=Release)
  step("build example ${ex}" ${CMAKE_COMMAND} --build ${WORK}/examples/${ex})
  step("check example ${ex} (ctest: tlab check --subject)" ${CMAKE_CTEST_COMMAND}
       --test-dir ${WORK}/examples/${ex} --output-on-failure)
  message(STATUS "${step_out}")
endforeach()
# The seeded bug must be caught for the right reason by tlab's generic suite (its
# virtual-clock cases replay exactly): a stale cancel said PREVENTED
# (wrong_result), or the timer whose slot it hit was lost (lost_timer); a crash
# or a refused subject does not count.
set(aba_report ${WORK}/examples/c_timer_heap/tlab_checks/c_timer_heap_aba.check.json)
if(NOT EXISTS ${aba_report})
  message(FATAL_ERROR "the ABA example wrote no report (${aba_report})")
endif()
file(READ ${aba_report} aba)
string(JSON ncases LENGTH "${aba}" cases)
set(caught 0)
foreach(oracle wrong_result lost_timer)
  set(total 0)
  if(ncases GREATER 0)
    math(EXPR last "${ncases} - 1")
    foreach(i RANGE ${last})
      string(JSON n ERROR_VARIABLE absent GET "${aba}" cases ${i} violations ${oracle} count)
      if(NOT absent)
        math(EXPR total "${total} + ${n}")
      endif()
    endforeach()
  endif()
  math(EXPR caught "${caught} + ${total}")
  message(STATUS "c_timer_heap_aba: ${total} ${oracle} violations")
endforeach()
if(caught EQUAL 0)
  message(FATAL_ERROR "the ABA example's report counts no wrong_result or lost_timer (${aba_report})")
endif()
file(REMOVE_RECURSE ${WORK})
