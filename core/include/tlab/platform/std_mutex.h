// tlab/platform/std_mutex.h: std::mutex and std::unique_lock, visible to clang's
// thread-safety analysis.
//
// StdPlatform's Mutex and Lock. libstdc++'s std::mutex and std::unique_lock carry
// no capability attributes, so under `clang -Wthread-safety` every access to a
// TLAB_GUARDED_BY field would look unguarded (or, with annotations on a plain
// std::mutex, nothing would be checked at all). These two wrappers add exactly the
// attributes and nothing else:
//
//   type      wraps                          analysis sees
//   StdMutex  std::mutex                     a capability ("mutex")
//   StdLock   std::unique_lock<std::mutex>   a scoped capability: holds its mutex
//                                            from construction to destruction,
//                                            except between unlock() and lock()
//
// Cost: none. Every member is a one-line inline forwarder; the machine code is
// that of the std types. Under g++ the attributes expand to nothing.
//
// Ground rules: the std rules. A StdLock is owned by one thread and never moved
// (the analysis tracks it by name); waiting on a std::condition_variable goes
// through native(), which BasicStdPlatform::wait()/wait_until() do.
#pragma once

#include <mutex>

#include "tlab/base/annotations.h"

namespace tlab {

class TLAB_CAPABILITY("mutex") StdMutex {
 public:
  StdMutex() = default;
  StdMutex(const StdMutex&) = delete;
  StdMutex& operator=(const StdMutex&) = delete;

  void lock() TLAB_ACQUIRE() { m_.lock(); }
  void unlock() TLAB_RELEASE() { m_.unlock(); }
  bool try_lock() TLAB_TRY_ACQUIRE(true) { return m_.try_lock(); }

  // tlab::StdMutex::native: the std::mutex, for std::unique_lock.
  std::mutex& native() noexcept { return m_; }

 private:
  std::mutex m_;
};

class TLAB_SCOPED_CAPABILITY StdLock {
 public:
  // tlab::StdLock::StdLock
  // Ensures: `mu` is held by the calling thread.
  explicit StdLock(StdMutex& mu) TLAB_ACQUIRE(mu) : lk_(mu.native()) {}
  ~StdLock() TLAB_RELEASE() = default;
  StdLock(const StdLock&) = delete;
  StdLock& operator=(const StdLock&) = delete;

  // tlab::StdLock::unlock / lock: release and re-take the mutex inside the scope.
  // Requires: held (unlock) / not held (lock) by this StdLock.
  void unlock() TLAB_RELEASE() { lk_.unlock(); }
  void lock() TLAB_ACQUIRE() { lk_.lock(); }

  // tlab::StdLock::native: the std::unique_lock, for std::condition_variable.
  // A wait releases and re-takes the mutex inside the call, so for the analysis
  // the mutex stays held across it.
  std::unique_lock<std::mutex>& native() noexcept { return lk_; }

 private:
  std::unique_lock<std::mutex> lk_;
};

}  // namespace tlab
