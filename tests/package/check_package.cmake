# tests/package/check_package.cmake (cmake -P): the Debian package, as a user gets it.
#   1. cpack --config BUILD/CPackConfig.cmake into WORK/out (a fresh dir each run)
#   2. exactly one file, named timeout-lab_VERSION_ARCH.deb (ARCH: dpkg's own)
#   3. dpkg-deb --info names the package, version, section, maintainer, and a
#      Depends that dpkg-shlibdeps computed (the libraries tlab links: libfmt, libuv)
#   4. dpkg-deb --contents lists tlab, the headers and the CMake package config
#   5. dpkg -x into WORK/root, then from a directory outside the source tree run
#      WORK/root/usr/bin/tlab --version (it must print VERSION) and `tlab run` on its
#      built-in suite with --operations 300 (every case must pass), and each
#      shipped exec adapter by name (tests/install/check_adapters.cmake)
#   6. configure, build and run tests/install/consumer against the extracted
#      package (CMAKE_PREFIX_PATH=WORK/root/usr): find_package(tlab) from the .deb
# Any step that fails fails the test with its output.
foreach(var BUILD WORK SOURCE_DIR VERSION CPACK CXX ADAPTERS)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "check_package.cmake: -D${var}= is required")
  endif()
endforeach()
include(${SOURCE_DIR}/tests/install/step.cmake)
include(${SOURCE_DIR}/tests/install/check_adapters.cmake)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK}/run)

step("cpack" ${CPACK} --config ${BUILD}/CPackConfig.cmake -B ${WORK}/out)
step("dpkg --print-architecture" dpkg --print-architecture)
string(STRIP "${step_out}" arch)
file(GLOB debs RELATIVE ${WORK}/out ${WORK}/out/*.deb)
if(NOT debs STREQUAL "timeout-lab_${VERSION}_${arch}.deb")
  message(FATAL_ERROR "cpack made [${debs}], expected exactly timeout-lab_${VERSION}_${arch}.deb")
endif()
set(deb ${WORK}/out/${debs})

step("dpkg-deb --info" dpkg-deb --info ${deb})
set(info "${step_out}")
foreach(field "Package: timeout-lab" "Version: ${VERSION}" "Architecture: ${arch}"
        "Section: devel" "Maintainer: timeout-lab maintainers <" "Description: "
        "Depends: .*libfmt.*" "Depends: .*libuv1")
  if(NOT info MATCHES "\n ${field}")
    message(FATAL_ERROR "dpkg-deb --info has no '${field}':\n${info}")
  endif()
endforeach()

step("dpkg-deb --contents" dpkg-deb --contents ${deb})
set(contents "${step_out}")
foreach(f usr/bin/tlab usr/share/tlab/adapters/python/asyncio_subject.py usr/include/tlab/timer_service.h usr/include/tlab/subject.h
          usr/include/tlab/subject_adapter.h usr/lib/libtlab_core.a
          usr/lib/cmake/tlab/tlabConfig.cmake usr/lib/cmake/tlab/tlabConfigVersion.cmake
          usr/lib/cmake/tlab/tlabTargets.cmake usr/lib/cmake/tlab/TlabSubjects.cmake)
  string(FIND "${contents}" " ./${f}\n" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "the package has no /${f}:\n${contents}")
  endif()
endforeach()

step("dpkg -x" dpkg -x ${deb} ${WORK}/root)
set(tlab ${WORK}/root/usr/bin/tlab)
step("extracted tlab --version" ${CMAKE_COMMAND} -E chdir ${WORK}/run ${tlab} --version)
if(NOT step_out MATCHES "^tlab ${VERSION} ")
  message(FATAL_ERROR "the extracted tlab says '${step_out}', expected tlab ${VERSION}")
endif()
# 300 operations per case: every built-in case still passes (the narrow-ABA case
# sees its wraparound) in a few seconds of CPU.
step("extracted tlab run (built-in suite)" ${CMAKE_COMMAND} -E chdir ${WORK}/run
     ${tlab} run --operations 300)
string(REGEX MATCH "[0-9]+ cases: [0-9]+ passed, 0 failed, 0 errors, 0 timeouts" summary "${step_out}")
if(NOT summary)
  message(FATAL_ERROR "the extracted tlab's run did not pass every case:\n${step_out}")
endif()
message(STATUS "${summary}")
check_adapters(${tlab} ${WORK}/run ${SOURCE_DIR} "${ADAPTERS}")

step("configure the consumer against the package" ${CMAKE_COMMAND}
     -S ${SOURCE_DIR}/tests/install/consumer -B ${WORK}/consumer -G Ninja
     -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${WORK}/root/usr -DCMAKE_BUILD_TYPE=Release)
step("build the consumer" ${CMAKE_COMMAND} --build ${WORK}/consumer)
step("run the consumer" ${WORK}/consumer/consumer)
string(FIND "${step_out}" "binary_heap ok" found)
if(found EQUAL -1)
  message(FATAL_ERROR "the consumer printed no strategy:\n${step_out}")
endif()
file(REMOVE_RECURSE ${WORK})
