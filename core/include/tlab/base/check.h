// tlab/base/check.h: invariants as code.
//
// TLAB_CHECK(cond, fmt-ish message...) is always on, in every build type, because
// the engine exists to be verified: an invariant that only holds in Debug builds is
// a claim, not a check. On failure it prints the expression, the location and the
// operands the caller passed (tokio's "elapsed={}; when={}" habit), then aborts.
// Cost: one well-predicted branch on the happy path; the message is only built on
// failure, inside check_failed(), which is [[gnu::cold]] and [[gnu::noinline]]: the
// ostringstream formatting exists once per operand-type list, in .text.unlikely,
// and never inside a caller, so a check adds to a hot function only the compare,
// the branch and one call's argument set-up (the inliner's size estimate for the
// caller does not grow with the operands). GCC 12 at -O3 already kept the formatter
// out of line without the attributes; they make that a guarantee, not a heuristic.
//
// TLAB_DCHECK is the same but compiled out when NDEBUG is set; use it only on hot
// paths whose invariant is also covered by a check_invariants() call in tests.
//
// TLAB_CHECK_FAILED is what a failing check calls. It is check_failed() (print,
// abort) everywhere except in Relacy models: models/relacy_platform.h defines it,
// before any tlab header, to fail the current Relacy iteration instead, so that a
// core/ invariant broken by a mutant comes with Relacy's execution history. The
// production expansion is unchanged: the same call behind the same branch.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>

namespace tlab::detail {

// tlab::detail::check_failed: prints "file:line: TLAB_CHECK(expr) failed: " followed
// by every operand streamed with operator<< and nothing between them, then aborts.
// Cold and never inlined (see the top of this header). Operands are taken by
// reference, so any streamable type works; the price is that an operand which is a
// local must have an address, so prefer passing members or values already in memory
// from the hottest paths.
template <class... Args>
[[noreturn, gnu::cold, gnu::noinline]] void check_failed(const char* expr, const char* file,
                                                         int line, const Args&... args) {
  std::ostringstream os;
  ((os << args), ...);
  std::fprintf(stderr, "%s:%d: TLAB_CHECK(%s) failed: %s\n", file, line, expr, os.str().c_str());
  std::fflush(stderr);
  std::abort();
}

}  // namespace tlab::detail

#ifndef TLAB_CHECK_FAILED
#define TLAB_CHECK_FAILED ::tlab::detail::check_failed
#endif

#define TLAB_CHECK(cond, ...)                                                      \
  do {                                                                             \
    if (!(cond)) [[unlikely]] {                                                    \
      TLAB_CHECK_FAILED(#cond, __FILE__, __LINE__, "" __VA_OPT__(, ) __VA_ARGS__); \
    }                                                                              \
  } while (0)

#ifdef NDEBUG
#define TLAB_DCHECK(cond, ...) \
  do {                         \
  } while (0)
#else
#define TLAB_DCHECK(cond, ...) TLAB_CHECK(cond, __VA_ARGS__)
#endif
