// tlab/tool/base/sanitizer.h: whether this build of tlab runs under ThreadSanitizer.
//
// One answer for every place that must know: the planner (a scenario's
// tsan_catches are planned only in a TSan build, plan.cc), the kill matrix (a
// TSan tlab is its own tsan layer, layers.cc) and the stress runner. The compiler
// decides (g++ defines __SANITIZE_THREAD__, clang has
// __has_feature(thread_sanitizer)), so the answer is the build's truth whatever
// the TLAB_SANITIZER CMake variable was spelled as.
//
// Cost: none (a constant). Ground rules: safe from any thread.
#pragma once

namespace tlab::tool {

#if defined(__SANITIZE_THREAD__)
#define TLAB_UNDER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TLAB_UNDER_TSAN 1
#endif
#endif

// under_tsan: true in a ThreadSanitizer build of tlab.
constexpr bool under_tsan() {
#ifdef TLAB_UNDER_TSAN
  return true;
#else
  return false;
#endif
}

}  // namespace tlab::tool
