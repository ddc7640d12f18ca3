// tlab/base/annotations.h: thread-safety annotations.
//
// Every field that threads share carries either TLAB_GUARDED_BY(mu_) or an owner
// comment ("// timer thread only"). Under clang with -Wthread-safety these expand
// to the analysis attributes; under g++ they are documentation that costs nothing.
//
// The analysis only sees locks whose types are annotated: StdPlatform's Mutex and
// Lock are tlab::StdMutex and tlab::StdLock (platform/std_mutex.h), a capability
// and a scoped capability over std::mutex and std::unique_lock, because
// libstdc++'s own types carry no annotations. scripts/test runs the analysis
// (tests/tsa/, "clang thread-safety analysis") with -Werror=thread-safety, and a
// known-bad snippet there proves it fails on an unguarded access.
#pragma once

#include <cstddef>

#if defined(__clang__)
#define TLAB_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define TLAB_THREAD_ANNOTATION(x)
#endif

// On types: what the analysis tracks.
#define TLAB_CAPABILITY(x) TLAB_THREAD_ANNOTATION(capability(x))
#define TLAB_SCOPED_CAPABILITY TLAB_THREAD_ANNOTATION(scoped_lockable)

// On functions: what they take, give back, or need.
#define TLAB_ACQUIRE(...) TLAB_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define TLAB_TRY_ACQUIRE(...) TLAB_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))
#define TLAB_RELEASE(...) TLAB_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define TLAB_ASSERT_CAPABILITY(x) TLAB_THREAD_ANNOTATION(assert_capability(x))

// On fields and functions: what must be held.
#define TLAB_GUARDED_BY(x) TLAB_THREAD_ANNOTATION(guarded_by(x))
#define TLAB_PT_GUARDED_BY(x) TLAB_THREAD_ANNOTATION(pt_guarded_by(x))
#define TLAB_REQUIRES(...) TLAB_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define TLAB_EXCLUDES(...) TLAB_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
#define TLAB_NO_THREAD_SAFETY_ANALYSIS TLAB_THREAD_ANNOTATION(no_thread_safety_analysis)

// Cache-line size for padding shared atomics apart. 64 bytes on every x86-64 and
// most arm64 parts; std::hardware_destructive_interference_size warns on g++ 12.
namespace tlab {
inline constexpr std::size_t kCacheLine = 64;

// tlab::assume_held: tells the analysis that `mu` is held from here to the end of
// the enclosing function; checks nothing at run time. Only for a callback that its
// caller runs synchronously while holding `mu` (a queue's expire() sink inside a
// `_locked` function): the analysis checks a lambda body as a function of its own,
// with nothing held, and cannot see where it is called from.
template <class M>
inline void assume_held(const M& mu) TLAB_ASSERT_CAPABILITY(mu) {
  (void)mu;
}
}  // namespace tlab
