# cmake/TlabInstall.cmake: what `cmake --install <build> --prefix P` puts in P.
#
#   P/bin/tlab                              the CLI (its built-in scenarios are embedded)
#   P/share/tlab/adapters/...               the exec adapters, run by name
#                                           (`--subject exec:python-asyncio`;
#                                           adapters/CMakeLists.txt stages and installs them)
#   P/include/tlab/...                      the engine headers (core/include/tlab)
#   P/lib/libtlab_core.a                    the StressPlatform switchboard
#   P/lib/cmake/tlab/tlabConfig.cmake       find_package(tlab CONFIG REQUIRED)
#   P/lib/cmake/tlab/tlabConfigVersion.cmake  same major version is compatible
#   P/lib/cmake/tlab/tlabTargets.cmake      the imported target tlab::core
#   P/lib/cmake/tlab/TlabSubjects.cmake     tlab_add_subject, tlab_add_checks
#   P/lib/cmake/tlab/TlabSim.cmake          tlab_add_sim_test (your code under simulation)
#   P/lib/cmake/tlab/TlabExpectViolation.cmake  the command of an EXPECT_FAIL check
#   P/lib/cmake/tlab/TlabExpectFindings.cmake   the command of an EXPECT_FINDINGS check
#   P/lib/cmake/tlab/TlabReport.cmake       reading a JSON report in a cmake -P script
#
# A consumer writes find_package(tlab CONFIG REQUIRED) and links tlab::core: the
# headers (tlab/subject.h and tlab/subject_adapter.h among them), C++20 and
# Threads come with it; a subject plugin is built with tlab_add_subject and
# checked with tlab_add_checks. tests/install/ builds such a consumer and the
# examples/subjects/ projects against a fresh install (ctest install.package).
include(CMakePackageConfigHelpers)

install(TARGETS tlab_core EXPORT tlabTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/tlab
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} FILES_MATCHING PATTERN "*.h")
if(TARGET tlab)
  install(TARGETS tlab RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

set(tlab_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/tlab)
install(EXPORT tlabTargets NAMESPACE tlab:: DESTINATION ${tlab_cmake_dir})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tlabConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/tlabConfig.cmake
                              INSTALL_DESTINATION ${tlab_cmake_dir}
                              PATH_VARS CMAKE_INSTALL_BINDIR)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tlabConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMajorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tlabConfig.cmake ${PROJECT_BINARY_DIR}/tlabConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/TlabSubjects.cmake
              ${PROJECT_SOURCE_DIR}/cmake/TlabSim.cmake
              ${PROJECT_SOURCE_DIR}/cmake/TlabExpectViolation.cmake
              ${PROJECT_SOURCE_DIR}/cmake/TlabExpectFindings.cmake
              ${PROJECT_SOURCE_DIR}/cmake/TlabReport.cmake
        DESTINATION ${tlab_cmake_dir})
