# cmake/TlabPackage.cmake: the Debian package, made by CPack from the install rules.
#
#   cpack --config build/default/CPackConfig.cmake -B OUT
#     -> OUT/timeout-lab_<version>_<arch>.deb   (0.1.0 on amd64: timeout-lab_0.1.0_amd64.deb)
#
# The package holds exactly what `cmake --install` installs (cmake/TlabInstall.cmake),
# under /usr: /usr/bin/tlab (its built-in scenarios are embedded, so it needs no data
# files), /usr/include/tlab, /usr/lib/libtlab_core.a and /usr/lib/cmake/tlab. cpack
# packs the build tree as it is: build tlab first (the `package` test,
# tests/package/, runs after the build).
#
# Depends is computed by dpkg-shlibdeps (dpkg-dev) from what /usr/bin/tlab links
# (libfmt, libuv, libevent, libstdc++, libc), so it names the Debian packages and
# minimum versions the binary was built against, never a hand-kept list that drifts.
# Recommends names what the development half needs (find_package(tlab) and
# tlab_add_subject take cmake and a C/C++20 compiler); tlab itself runs without.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME timeout-lab)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "timeout-lab maintainers <maintainers@users.noreply.a-seed-c2b615d9.example>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "stress and verification tool for cancelable timers")
set(CPACK_PACKAGE_DESCRIPTION
    "tlab runs a real timeout engine under scenario files that provoke the races timers
are known for (racing cancellers, missed notifies, wraparound), model-checks it
with Relacy, and measures it against libuv, libevent and asio. The package also
ships the engine's headers, libtlab_core and the CMake package config
(find_package(tlab CONFIG) -> tlab::core, tlab_add_subject, tlab_add_checks), so
your own timer can be checked with `tlab check --subject`.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# DEB-DEFAULT: <name>_<version>_<arch>.deb (no -<revision> while none is set).
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER ${CPACK_PACKAGE_CONTACT})
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://example.invalid/timeout-lab")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Strip the binaries as Debian policy asks: RelWithDebInfo's tlab is ~140 MB with its
# debug info, ~10x its stripped size; the build tree keeps the unstripped one.
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "cmake (>= 3.25), g++ (>= 4:12) | clang (>= 1:14)")
# The exec adapters in /usr/share/tlab/adapters run on these runtimes (the Go one
# is a static binary): `tlab list subjects` says which are available.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3, nodejs, default-jre-headless")
include(CPack)
