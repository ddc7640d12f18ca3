// tlab/base/scoped_unlock.h: release a held lock for one scope, visibly to clang's
// thread-safety analysis.
//
// A `_locked` helper that receives the caller's `P::Lock&` and must drop the mutex
// for a while (to run a callback, or to wait) cannot say `lock.unlock()`: the
// analysis does not know which mutex a Lock passed by reference holds, so it would
// report "releasing mutex 'lock' that was not held" and, worse, keep treating the
// mutex as held in the unlocked window. ScopedUnlock names the mutex as well:
//
//   {
//     ScopedUnlock unlocked(lock, mu_);  // lock.unlock(); mu_ is not held here
//     run_callback();                     // touching a TLAB_GUARDED_BY(mu_) field warns
//   }                                     // lock.lock(), also when run_callback throws
//
// Cost: the lock.unlock() and lock.lock() calls, nothing more. It works through the
// Lock, so the Lock's own ownership flag stays right (std::unique_lock under
// Relacy, tlab::StdLock under StdPlatform).
//
// Requires: `lock` holds `mu` on construction; the scope does not outlive `lock`.
#pragma once

#include "tlab/base/annotations.h"

namespace tlab {

template <class Lock, class Mutex>
class TLAB_SCOPED_CAPABILITY ScopedUnlock {
 public:
  // `mu` is for the analysis only: it names what `lock` holds.
  ScopedUnlock(Lock& lock, [[maybe_unused]] Mutex& mu) TLAB_RELEASE(mu) : lock_(lock) {
    lock_.unlock();
  }
  // For the analysis, releasing the scope re-takes what the constructor released.
  ~ScopedUnlock() TLAB_RELEASE() { lock_.lock(); }
  ScopedUnlock(const ScopedUnlock&) = delete;
  ScopedUnlock& operator=(const ScopedUnlock&) = delete;

 private:
  Lock& lock_;
};

}  // namespace tlab
