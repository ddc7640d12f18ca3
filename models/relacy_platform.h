// models/relacy_platform.h: the Platform that runs core/ templates under Relacy.
//
// RelacyPlatform is the third Platform (core/include/tlab/platform/platform.h), next
// to StdPlatform and StressPlatform. A model instantiates the SHIPPED core template
// with it (TimeoutToken<RelacyPlatform, 3>, ...), so every atomic operation, lock and
// wait of the real code becomes a scheduling point that Relacy explores, with
// relaxed-memory semantics and happens-before data-race detection. No model is a
// transcription of the algorithm (docs/design.md, "The Platform policy").
//
//   member            RelacyPlatform
//   Atomic<T>         RelacyAtomic<T>: facade over rl::atomic<T> with the std::atomic
//                     member API, taking std::memory_order (mapped to rl::memory_order)
//   Mutex             RelacyMutex: rl::mutex with lock()/unlock()/try_lock(), so that
//                     std::unique_lock works
//   CondVar           RelacyCondVar: rl::condition_variable (spurious wake-ups allowed)
//   Lock              std::unique_lock<RelacyMutex>
//   Clock             RelacyClock: virtual time in an rl::atomic, moved by the model
//   fault(p)          no-op (see below)
//   mutated(m)        runtime flag set by the model before rl::simulate
//   yield()           rl::yield(1): a scheduling point that marks a spin loop
//   wait_until(...)   an UNTIMED wait (see below)
//
// Cost: each operation is the rl:: primitive's: one scheduler call plus Relacy's
// vector-clock bookkeeping; the facade adds a switch on the memory order.
// Measured iteration rates per model are in models/README.md.
//
// Follows: Relacy Race Detector 2.x as packaged by Debian (relacy-dev), whose std
// front end (relacy_std.hpp) we do NOT use: it clashes with libstdc++ 12. Departs
// from Relacy's own examples in that debug info is not spelled `$` at each call:
// every facade method takes a defaulted std::source_location, so a Relacy history
// names the core/ file and line of the operation (timeout_token.h(131)), not this
// header.
//
// Include order, the recipe every model translation unit follows (docs/design.md,
// "The Platform policy"). Relacy's header defines `new`, `delete`, `malloc`, `free`,
// `assert`, `errno` and `memory_order_acquire`-style macros; a standard header seen
// after it breaks (libstdc++'s <atomic> declares `memory_order_acquire`). So:
//   1. the model's own standard headers;
//   2. "relacy_platform.h": it includes every standard header core/ uses, then
//      <relacy/relacy.hpp>, then #undefs new, delete, malloc and free (they break
//      `= delete` and placement new in core/);
//   3. the core/ headers ("tlab/timeout_token.h", ...).
// The memory_order_* macros stay defined on purpose: core/ must spell orders the
// C++20 way (std::memory_order::acquire); the old spelling then fails to compile
// here instead of being silently accepted. A core/ header that needs a standard
// header not listed below must have it added here, before <relacy/relacy.hpp>.
//
// Ground rules: every object of these types (atomics, mutexes, condition variables,
// RelacyClock) must be constructed inside a Relacy run: as a member of the
// rl::test_suite, or by a simulated thread. Their constructors register with the
// running rl::context. set_mutant() is called only between runs, never by a
// simulated thread, so a run is deterministic (Relacy replays the failing iteration
// to print its history and asserts that the replay fails the same way).
//
// A TLAB_CHECK that fails inside core/ would call std::abort (tlab/base/check.h)
// and end the process before Relacy could print a history. This header therefore
// defines TLAB_CHECK_FAILED (section 2b below), which check.h calls on failure: in a
// model a broken core/ invariant fails the Relacy iteration like RL_ASSERT, with
// the expression, file and line in the result and the full history in the report.
// Models still state their own properties with TLAB_MODEL_CHECK (model_runner.h),
// whose message names the property.
//
// Design decisions:
// - fault(p) is a no-op. Relacy already inserts a preemption point before every
//   atomic operation, lock, unlock, wait and notify, which is every place another
//   thread can observe; a FaultPoint marks a window between two such operations
//   (a resolver's token read and its CAS), so an extra rl::yield there would add
//   no interleaving, only search depth, and it would also deprioritise the
//   yielding thread in the fair schedulers, biasing the search.
// - wait_until(cv, lock, clock, deadline) is a plain, untimed wait. The clock is
//   virtual; time moves only when the model moves it, and whoever moves it must
//   notify (the same contract as BasicStdPlatform<ManualClock>). A lost notify then
//   leaves every thread blocked, which Relacy reports as DEADLOCK. A timed
//   rl::condition_variable wait would instead let Relacy time the waiter out at
//   any point, which masks exactly the lost-notify bugs (seed 001's race) that the
//   timer-service models exist to find. Spurious wake-ups stay enabled (Relacy
//   allows 10 per condition variable per run), so core/ loops are checked against
//   them.
// - mutated(m) reads a process-wide flag, so the SAME model binary runs clean and
//   with any mutant (--mutant NAME) without recompiling.
//
// Memory ordering: exactly what the caller asks for. std::memory_order values map
// one to one onto rl::memory_order; a failure order on compare_exchange goes to the
// six-argument rl form compare_exchange_strong(cmp, xchg, mo, info, failure_mo,
// info). Relacy rejects illegal pairs (a release load, a relaxed-success
// acquire-failure CAS) as the standard does.
#pragma once

// --- 1. Every standard header core/ uses, BEFORE Relacy (see the recipe above).
#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cassert>
#include <chrono>
#include <compare>
#include <concepts>
#include <condition_variable>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <deque>
#include <exception>
#include <functional>
#include <iostream>
#include <limits>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <numeric>
#include <optional>
#include <ostream>
#include <queue>
#include <set>
#include <source_location>
#include <span>
#include <sstream>
#include <stdexcept>
#include <streambuf>
#include <string>
#include <string_view>
#include <thread>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

// --- 2. Relacy, then remove the macros that break ordinary C++.
#include <relacy/relacy.hpp>
#undef new
#undef delete
#undef malloc
#undef free

// Relacy replaces the unsized global operator new/delete (inline, in this
// translation unit) so that it can track and leak-check memory allocated during a
// run. g++ calls the SIZED operator delete (C++14 sized deallocation) from
// std::allocator, i.e. from every standard container, and that one Relacy leaves
// alone: libstdc++'s version would free() a block that Relacy's allocator handed
// out ("free(): invalid pointer"). Route the sized forms to the replaced ones.
inline void operator delete(void* p, std::size_t) noexcept { ::operator delete(p); }
inline void operator delete[](void* p, std::size_t) noexcept { ::operator delete[](p); }

// --- 2b. TLAB_CHECK under Relacy (tlab/base/check.h): a core/ invariant that fails
// inside a model fails the Relacy iteration, so Relacy replays it and prints the
// execution history, instead of aborting the process without one. The message names
// the expression and the core/ file and line; the operands are not formatted (that
// would allocate through Relacy's operator new in the middle of a failing step).
#ifdef TLAB_CHECK_FAILED
#error "models: include relacy_platform.h before any tlab/ header (it defines TLAB_CHECK_FAILED)"
#endif
namespace tlab::relacy_detail {
template <class... Args>
[[noreturn]] void check_failed(const char* expr, const char* file, int line, const Args&...) {
  char desc[256];
  std::snprintf(desc, sizeof desc, "TLAB_CHECK(%s) failed", expr);
  rl::ctx().fail_test(desc, rl::test_result_user_assert_failed,
                      rl::debug_info("TLAB_CHECK", file, line));
  std::abort();  // unreachable: fail_test leaves this fiber for good
}
}  // namespace tlab::relacy_detail
#define TLAB_CHECK_FAILED ::tlab::relacy_detail::check_failed

// --- 3. Core headers the platform itself needs.
#include "tlab/platform/fault_point.h"
#include "tlab/platform/mutant.h"
#include "tlab/platform/platform.h"

namespace tlab {

namespace relacy_detail {

// Relacy debug info naming the caller's file and line (the core/ operation).
inline rl::debug_info info_of(const std::source_location& loc) {
  return rl::debug_info(loc.function_name(), loc.file_name(), loc.line());
}

constexpr rl::memory_order to_rl(std::memory_order mo) {
  switch (mo) {
    case std::memory_order::relaxed:
      return rl::mo_relaxed;
    case std::memory_order::consume:
      return rl::mo_consume;
    case std::memory_order::acquire:
      return rl::mo_acquire;
    case std::memory_order::release:
      return rl::mo_release;
    case std::memory_order::acq_rel:
      return rl::mo_acq_rel;
    case std::memory_order::seq_cst:
      return rl::mo_seq_cst;
  }
  return rl::mo_seq_cst;
}

// The failure order std::atomic derives from a single-order compare_exchange:
// acq_rel -> acquire, release -> relaxed, anything else unchanged.
constexpr std::memory_order failure_order_of(std::memory_order mo) {
  if (mo == std::memory_order::acq_rel) return std::memory_order::acquire;
  if (mo == std::memory_order::release) return std::memory_order::relaxed;
  return mo;
}

}  // namespace relacy_detail

// tlab::RelacyAtomic: std::atomic<T>'s member API over rl::atomic<T>.
// Every method takes the std::memory_order core/ passes, and a defaulted
// std::source_location that Relacy's history prints.
// Requires: constructed inside a Relacy run (see Ground rules).
// Ensures: default construction value-initialises, as std::atomic<T> does in C++20.
template <class T>
class RelacyAtomic {
  using Loc = std::source_location;

 public:
  RelacyAtomic(Loc loc = Loc::current()) : RelacyAtomic(T{}, loc) {}
  // Initialisation is a relaxed store, as for std::atomic's constructor: it is
  // published only through whatever later synchronises (thread start in a model).
  RelacyAtomic(T desired, Loc loc = Loc::current()) {
    a_.store(desired, rl::mo_relaxed, relacy_detail::info_of(loc));
  }
  RelacyAtomic(const RelacyAtomic&) = delete;
  RelacyAtomic& operator=(const RelacyAtomic&) = delete;

  T load(std::memory_order mo = std::memory_order::seq_cst, Loc loc = Loc::current()) const {
    return a_.load(relacy_detail::to_rl(mo), relacy_detail::info_of(loc));
  }
  void store(T desired, std::memory_order mo = std::memory_order::seq_cst,
             Loc loc = Loc::current()) {
    a_.store(desired, relacy_detail::to_rl(mo), relacy_detail::info_of(loc));
  }
  T exchange(T desired, std::memory_order mo = std::memory_order::seq_cst,
             Loc loc = Loc::current()) {
    return a_.exchange(desired, relacy_detail::to_rl(mo), relacy_detail::info_of(loc));
  }
  T fetch_add(T arg, std::memory_order mo = std::memory_order::seq_cst, Loc loc = Loc::current()) {
    return a_.fetch_add(arg, relacy_detail::to_rl(mo), relacy_detail::info_of(loc));
  }
  T fetch_sub(T arg, std::memory_order mo = std::memory_order::seq_cst, Loc loc = Loc::current()) {
    return a_.fetch_sub(arg, relacy_detail::to_rl(mo), relacy_detail::info_of(loc));
  }
  T fetch_or(T arg, std::memory_order mo = std::memory_order::seq_cst, Loc loc = Loc::current()) {
    return a_.fetch_or(arg, relacy_detail::to_rl(mo), relacy_detail::info_of(loc));
  }
  T fetch_and(T arg, std::memory_order mo = std::memory_order::seq_cst, Loc loc = Loc::current()) {
    return a_.fetch_and(arg, relacy_detail::to_rl(mo), relacy_detail::info_of(loc));
  }
  T fetch_xor(T arg, std::memory_order mo = std::memory_order::seq_cst, Loc loc = Loc::current()) {
    return a_.fetch_xor(arg, relacy_detail::to_rl(mo), relacy_detail::info_of(loc));
  }

  bool compare_exchange_strong(T& expected, T desired,
                               std::memory_order mo = std::memory_order::seq_cst,
                               Loc loc = Loc::current()) {
    return cas<false>(expected, desired, mo, relacy_detail::failure_order_of(mo), loc);
  }
  bool compare_exchange_strong(T& expected, T desired, std::memory_order success,
                               std::memory_order failure, Loc loc = Loc::current()) {
    return cas<false>(expected, desired, success, failure, loc);
  }
  // May fail spuriously, as the standard allows: Relacy injects such failures.
  bool compare_exchange_weak(T& expected, T desired,
                             std::memory_order mo = std::memory_order::seq_cst,
                             Loc loc = Loc::current()) {
    return cas<true>(expected, desired, mo, relacy_detail::failure_order_of(mo), loc);
  }
  bool compare_exchange_weak(T& expected, T desired, std::memory_order success,
                             std::memory_order failure, Loc loc = Loc::current()) {
    return cas<true>(expected, desired, success, failure, loc);
  }

 private:
  // The six-argument rl form is the one that takes a failure order.
  template <bool kWeak>
  bool cas(T& expected, T desired, std::memory_order success, std::memory_order failure,
           const Loc& loc) {
    const rl::debug_info info = relacy_detail::info_of(loc);
    if constexpr (kWeak) {
      return a_.compare_exchange_weak(expected, desired, relacy_detail::to_rl(success), info,
                                      relacy_detail::to_rl(failure), info);
    } else {
      return a_.compare_exchange_strong(expected, desired, relacy_detail::to_rl(success), info,
                                        relacy_detail::to_rl(failure), info);
    }
  }

  rl::atomic<T> a_;
};

// tlab::RelacyMutex: rl::mutex with the BasicLockable + try_lock API, so that
// std::unique_lock<RelacyMutex> (RelacyPlatform::Lock) works unchanged.
// try_lock() may fail spuriously once per mutex per run, as the standard allows.
class RelacyMutex {
  using Loc = std::source_location;

 public:
  RelacyMutex() = default;
  RelacyMutex(const RelacyMutex&) = delete;
  RelacyMutex& operator=(const RelacyMutex&) = delete;

  void lock(Loc loc = Loc::current()) { m_.lock(relacy_detail::info_of(loc)); }
  bool try_lock(Loc loc = Loc::current()) { return m_.try_lock(relacy_detail::info_of(loc)); }
  void unlock(Loc loc = Loc::current()) { m_.unlock(relacy_detail::info_of(loc)); }

 private:
  friend struct RelacyPlatform;
  rl::mutex m_;
};

// tlab::RelacyCondVar: rl::condition_variable. Only RelacyPlatform::wait/notify_*
// touch it, as core/ never calls a condition variable directly.
class RelacyCondVar {
 public:
  RelacyCondVar() = default;
  RelacyCondVar(const RelacyCondVar&) = delete;
  RelacyCondVar& operator=(const RelacyCondVar&) = delete;

 private:
  friend struct RelacyPlatform;
  rl::condition_variable cv_;
};

// tlab::RelacyClock: virtual time owned by the model (models Clock, kVirtual).
// Like ManualClock, but the time lives in a RelacyAtomic, so a read of the clock
// is a scheduling point and advance()/set() publish with release semantics that
// Relacy tracks (ManualClock's std::atomic would be invisible to it).
// Thread safety: any simulated thread may read; the model's driver moves time and
// must notify whoever waits on it (see wait_until).
// Memory ordering: set() stores with release, now() loads with acquire: a thread
// that observes the new time sees what the driver wrote before moving it.
class RelacyClock {
 public:
  static constexpr bool kVirtual = true;

  explicit RelacyClock(Instant start = Instant::from_ns(0)) : now_(start.ns()) {}

  Instant now() const {
    return Instant::from_ns(now_.load(std::memory_order::acquire));  // pairs with set()
  }
  // tlab::RelacyClock::advance
  // Requires: d >= 0. A negative step fails the model run (never clamped).
  void advance(Duration d) {
    RL_ASSERT(!d.is_negative());
    set(now() + d);
  }
  // tlab::RelacyClock::set
  // Requires: t >= now(). Time going backwards fails the model run.
  void set(Instant t) {
    RL_ASSERT(t >= now());
    now_.store(t.ns(), std::memory_order::release);  // pairs with now()
  }

 private:
  RelacyAtomic<std::int64_t> now_;
};

struct RelacyPlatform {
  template <class T>
  using Atomic = RelacyAtomic<T>;
  using Mutex = RelacyMutex;
  using CondVar = RelacyCondVar;
  using Lock = std::unique_lock<Mutex>;
  using Clock = RelacyClock;

  static constexpr std::string_view kName = "relacy";

  // tlab::RelacyPlatform::set_mutant
  // Turns one mutant on (or all off with std::nullopt) for the following runs.
  // Thread safety: call only between rl::simulate runs, never from a model thread.
  static void set_mutant(std::optional<Mutant> m) noexcept { active_mutant_ = m; }
  static std::optional<Mutant> active_mutant() noexcept { return active_mutant_; }

  static bool mutated(Mutant m) noexcept { return active_mutant_ == m; }
  // See "Design decisions": Relacy already preempts at every observable operation.
  static void fault(FaultPoint) noexcept {}
  static void yield(std::source_location loc = std::source_location::current()) {
    rl::yield(1, relacy_detail::info_of(loc));
  }

  // tlab::RelacyPlatform::wait
  // Requires: `lock` owns its mutex. The mutex is released while blocked and
  // re-acquired before returning; the unique_lock's ownership flag stays true
  // throughout, exactly as with std::condition_variable::wait.
  static void wait(CondVar& cv, Lock& lock,
                   std::source_location loc = std::source_location::current()) {
    RL_ASSERT(lock.owns_lock());
    cv.cv_.wait(lock.mutex()->m_, relacy_detail::info_of(loc));
  }
  // tlab::RelacyPlatform::wait_until: untimed (see "Design decisions"); returns on
  // a notify or a spurious wake-up, never because virtual time passed.
  static void wait_until(CondVar& cv, Lock& lock, const Clock& clock, Instant deadline,
                         std::source_location loc = std::source_location::current()) {
    (void)clock;
    (void)deadline;
    wait(cv, lock, loc);
  }
  static void notify_one(CondVar& cv, std::source_location loc = std::source_location::current()) {
    cv.cv_.notify_one(relacy_detail::info_of(loc));
  }
  static void notify_all(CondVar& cv, std::source_location loc = std::source_location::current()) {
    cv.cv_.notify_all(relacy_detail::info_of(loc));
  }

 private:
  static inline std::optional<Mutant> active_mutant_;
};

static_assert(Platform<RelacyPlatform>);

}  // namespace tlab
