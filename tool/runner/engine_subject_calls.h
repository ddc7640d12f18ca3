// tlab/tool/runner/engine_subject_calls.h: what the generic driver's parts share
// (engine_subject.cc, engine_subject_facility*.cc, engine_subject_wait.cc): how
// one call crosses into a subject instance, the host clock, and the names of the
// ABI's codes for the sentences users read.
//
//   | helper        | what                                                      | cost           |
//   |---------------|-----------------------------------------------------------|----------------|
//   | AbiCalls      | runs one ABI call, on one mutex per instance unless the   | one lock when  |
//   |               | subject promises TLAB_PROMISE_THREAD_SAFE                 | serialised     |
//   | monotonic_ns  | CLOCK_MONOTONIC, what MONOTONIC subjects read themselves  | one vDSO call  |
//   | status_name   | "TLAB_EFAIL", or "status 17 (not a tlab_status)"          | none           |
//   | periodic_kind_| a scenario's periodic mode as the ABI's TLAB_PERIODIC_*   | none           |
//   | of, _name     | bit (0: mode once), and that bit's name                   |                |
//
// Ground rules: an AbiCalls lives as long as the subject instance it guards; any
// thread may call it. The call mutex is taken before the driver's record lock (its
// TimerLedger's mutex) and never while holding it (a fired() callback runs inside
// poll, under the call mutex, and takes the record lock).
#pragma once

#include <time.h>

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "runner/case_context.h"
#include "runner/subject_extras.h"
#include "scenario/scenario.h"
#include "tlab/subject.h"

namespace tlab::tool::runner {

// Where a virtual clock starts (as the service engine: engines.h): 2^62 ns, so
// that a huge delay crosses INT64_MAX.
inline constexpr std::int64_t kSubjectVirtualEpochNs = std::int64_t{1} << 62;

inline std::int64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// sat_add: a + b saturated to [INT64_MIN, INT64_MAX] (the ABI's "due at
// now + delay, saturated at INT64_MAX").
inline std::int64_t sat_add(std::int64_t a, std::int64_t b) {
  std::int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
  return r;
}

inline std::uint32_t periodic_kind_of(ScheduleMode m) {
  switch (m) {
    case ScheduleMode::kFixedRate:
      return TLAB_PERIODIC_FIXED_RATE;
    case ScheduleMode::kFixedRateSkip:
      return TLAB_PERIODIC_FIXED_RATE_SKIP;
    case ScheduleMode::kFixedDelay:
      return TLAB_PERIODIC_FIXED_DELAY;
    case ScheduleMode::kOnce:
      break;
  }
  return 0;
}

inline std::string_view periodic_kind_name(std::uint32_t kind) {
  switch (kind) {
    case TLAB_PERIODIC_FIXED_RATE:
      return "TLAB_PERIODIC_FIXED_RATE";
    case TLAB_PERIODIC_FIXED_RATE_SKIP:
      return "TLAB_PERIODIC_FIXED_RATE_SKIP";
    case TLAB_PERIODIC_FIXED_DELAY:
      return "TLAB_PERIODIC_FIXED_DELAY";
    default:
      return "no periodic kind";
  }
}

inline std::string status_name(std::int32_t st) {
  switch (st) {
    case TLAB_OK:
      return "TLAB_OK";
    case TLAB_EINVAL:
      return "TLAB_EINVAL";
    case TLAB_ENOMEM:
      return "TLAB_ENOMEM";
    case TLAB_ESTATE:
      return "TLAB_ESTATE";
    case TLAB_EFAIL:
      return "TLAB_EFAIL";
    default:
      return fmt::format("status {} (not a tlab_status)", st);
  }
}

// AbiCalls: one subject instance and the mutex its calls share when the subject
// is not THREAD_SAFE (subject.h: "without it tlab serialises its calls on one
// mutex per instance", poll included).
class AbiCalls {
 public:
  explicit AbiCalls(const tlab_subject& d)
      : d_(d), serial_((d.promises & TLAB_PROMISE_THREAD_SAFE) == 0) {}

  const tlab_subject& d() const { return d_; }
  bool serial() const { return serial_; }
  void* self = nullptr;  // set once by create(), before any other call

  // AbiCalls::operator(): runs `f` (one ABI call and the reads that must be next
  // to it) under the call mutex when serialised. `st`, if given, shows kLocking
  // while the caller waits for the mutex.
  template <class F>
  auto operator()(F&& f, ActorState* st = nullptr, std::uint64_t obj = 0) {
    if (!serial_) return f();
    if (st != nullptr) st->set(Phase::kLocking, obj);
    std::lock_guard lk(mu_);
    if (st != nullptr) st->set(Phase::kWorking, obj);
    return f();
  }

 private:
  const tlab_subject& d_;
  const bool serial_;
  std::mutex mu_;
};

// The parts of run_abi_case, by kind (engine_subject.cc dispatches).
void run_facility_case(CaseContext& ctx, const tlab_subject& d, const SubjectExtras& extras);
void run_timed_wait_case(CaseContext& ctx, const tlab_subject& d);

}  // namespace tlab::tool::runner
