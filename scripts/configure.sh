# scripts/configure.sh: sourced by scripts/run and scripts/test, so both configure
# the default preset the same way and neither rebuilds what the other built.
#
# CI builds what it tests: no benchmark programs (never run by scripts/test;
# `ctest -L bench` is for a release build). ccache, when the machine has it
# (scripts/setup installs it), makes a rebuild on a machine that keeps its cache (a
# developer's, or CI on the submitting machine) cost only what changed; paths are
# hashed relative to the checkout, so a fresh clone elsewhere still hits.
configure=(-DTLAB_BUILD_BENCH=OFF)
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR="$PWD" CCACHE_NOHASHDIR=true
  configure+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
