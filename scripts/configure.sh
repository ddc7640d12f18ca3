# scripts/configure.sh: sourced by scripts/run, scripts/test and scripts/soak --build,
# so all configure the default preset the same way and none rebuilds what another built.
#
# CI builds what it tests: no benchmark programs (never run by scripts/test;
# `ctest -L bench` is for a release build). ccache, when the machine has it
# (scripts/setup installs it), makes a rebuild on a machine that keeps its cache (a
# developer's, or CI on the submitting machine) cost only what changed; paths are
# hashed relative to the checkout, so a fresh clone elsewhere still hits.
#
# Line tables only (-g1, not -g) in the RelWithDebInfo presets this configures
# (default, tsan): full debug info is about 30% of the CPU of a template-heavy test
# file (timer_service_test.cc: 56.6 s at -g, 40.1 s at -g1, g++ 12; the whole cold
# default build without bench: 1630 s -> 1122 s user+sys), while
# backtraces, TSan reports and gdb's `bt` still name file:line. A developer who wants
# variables in gdb uses a build directory this script never configured (the flags
# stay in CMakeCache.txt).
#
# tlab_tool compiles as a unity build (TLAB_UNITY_BUILD, tool/CMakeLists.txt says
# which files and why): its cold compile fell from about 526 s to 297 s of CPU.
#
# The tsan preset compiles at -O1 (configure_tsan), as ThreadSanitizer's own docs
# suggest: it is there to find races, not to be fast, and -O1 costs about 28% less
# CPU to compile (runner/engine_sync.cc under TSan: 28.5 s at -O2, 20.5 s at -O1).
# The default preset stays at -O2: `tlab compare` and the stress scenarios time it.
configure=(-DTLAB_BUILD_BENCH=OFF -DTLAB_UNITY_BUILD=ON
           "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG"
           "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG")
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
  configure+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
configure_tsan=("${configure[@]}"
                "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
                "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG")
# The asan-ubsan preset (Debug: assertions on) compiles at -O0 -g1: the sanitizers'
# checks are inserted whatever the level (a signed overflow the optimiser would fold
# away at -O2 is still reported), and -O0 costs less than half the CPU of -O1 under
# the sanitizers (timer_service_features_property_test.cc: 41.0 s at -O1 -g1, 17.8 s
# at -O0 -g1, g++ 12; 16.0 s at -O2 -g1 without them), while every core test still
# runs in seconds.
configure_asan=("${configure[@]}"
                "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -g1"
                "-DCMAKE_C_FLAGS_DEBUG=-O0 -g1")

# labelled_build_targets DIR LABEL: the targets of build directory DIR (configured)
# that its LABEL-labelled tests run, one a line: a test is named after its target
# (tlab_add_test), or after it and a dotted suffix (`timer_service_test.slow`,
# `sanitizer_canary.overflow`), and tests that drive the CLI need tlab. A test whose
# name names no target (one that drives tlab) contributes nothing. scripts/test and scripts/soak
# --build build only these in the tsan and asan-ubsan directories.
labelled_build_targets() {
  local dir=$1 label=$2 all t
  all=$(cmake --build "$dir" --target help | sed -n 's/^\([A-Za-z0-9_.-]*\): .*/\1/p')
  while read -r t; do
    grep -qx -- "$t" <<<"$all" && echo "$t"
  done < <(ctest --test-dir "$dir" -N -L "$label" | sed -n 's/^ *Test *#[0-9]*: *\([^.]*\).*/\1/p' | sort -u)
  # Only tests that drive the CLI need it; the core label has none.
  if [[ $label != core ]] && grep -qx tlab <<<"$all"; then echo tlab; fi
}
tsan_build_targets() { labelled_build_targets build/tsan tsan; }
