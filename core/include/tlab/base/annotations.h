// tlab/base/annotations.h: thread-safety annotations.
//
// Every field that threads share carries either TLAB_GUARDED_BY(mu_) or an owner
// comment ("// timer thread only"). Under clang with -Wthread-safety these expand
// to the analysis attributes; under g++ they are documentation that costs nothing.
#pragma once

#include <cstddef>

#if defined(__clang__)
#define TLAB_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define TLAB_THREAD_ANNOTATION(x)
#endif

#define TLAB_GUARDED_BY(x) TLAB_THREAD_ANNOTATION(guarded_by(x))
#define TLAB_PT_GUARDED_BY(x) TLAB_THREAD_ANNOTATION(pt_guarded_by(x))
#define TLAB_REQUIRES(...) TLAB_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define TLAB_EXCLUDES(...) TLAB_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define TLAB_NO_THREAD_SAFETY_ANALYSIS TLAB_THREAD_ANNOTATION(no_thread_safety_analysis)

// Cache-line size for padding shared atomics apart. 64 bytes on every x86-64 and
// most arm64 parts; std::hardware_destructive_interference_size warns on g++ 12.
namespace tlab {
inline constexpr std::size_t kCacheLine = 64;
}
