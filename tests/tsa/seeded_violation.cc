// tests/tsa/seeded_violation.cc: proof that the clang thread-safety check can fail
// (label clang-tsa; compiled with -fsyntax-only, never linked).
//
// One small class written the way core/ writes its primitives: a template over
// the Platform, `typename P::Lock` on `P::Mutex`, TLAB_GUARDED_BY fields and a
// TLAB_REQUIRES helper, instantiated on StdPlatform. TLAB_TSA_CASE picks one seeded
// mistake; tests/tsa/CMakeLists.txt expects clang to reject each one with the
// named diagnostic, and case 0 (no mistake) to compile cleanly, so a rejection is
// caused by the seeded line and nothing else:
//
//   case  mistake                                          clang must say
//   0     none                                             (nothing)
//   1     the lock removed before a guarded write          writing variable ... requires holding
//   2     a guarded read after lock.unlock()               reading variable ... requires holding
//   3     a guarded write inside a ScopedUnlock window     writing variable ... requires holding
//   4     a TLAB_REQUIRES helper called without the lock   calling function ... requires holding
//
// If the annotation macros went empty, or StdPlatform's Mutex/Lock lost their
// capability attributes, cases 1-4 would compile and their tests would fail.
#include <cstdint>

#include "tlab/base/annotations.h"
#include "tlab/base/scoped_unlock.h"
#include "tlab/platform/std_platform.h"

#ifndef TLAB_TSA_CASE
#error "compile with -DTLAB_TSA_CASE=<0..4>"
#endif

namespace tlab::tsa {

template <class P>
class Counter {
 public:
  void add() {
#if TLAB_TSA_CASE == 1
    ++count_;  // seeded: the Lock that belongs here was removed
#else
    typename P::Lock lock(mu_);
    ++count_;
#endif
  }

  std::uint64_t read_twice() {
    typename P::Lock lock(mu_);
    const std::uint64_t first = count_;
    lock.unlock();
#if TLAB_TSA_CASE == 2
    const std::uint64_t second = count_;  // seeded: read in the unlocked window
#else
    lock.lock();
    const std::uint64_t second = count_;
#endif
    return first + second;
  }

  void add_around(typename P::Lock& lock) TLAB_REQUIRES(mu_) {
    ++count_;
    {
      ScopedUnlock unlocked(lock, mu_);
#if TLAB_TSA_CASE == 3
      ++count_;  // seeded: written while ScopedUnlock has dropped mu_
#endif
    }
    ++count_;
  }

  void bump() {
#if TLAB_TSA_CASE == 4
    bump_locked();  // seeded: the caller forgot the Lock
#else
    typename P::Lock lock(mu_);
    bump_locked();
    add_around(lock);
#endif
  }

 private:
  void bump_locked() TLAB_REQUIRES(mu_) { ++count_; }

  typename P::Mutex mu_;
  std::uint64_t count_ TLAB_GUARDED_BY(mu_) = 0;
};

template class Counter<StdPlatform>;

}  // namespace tlab::tsa
