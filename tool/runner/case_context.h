// tlab/tool/runner/case_context.h: what every engine driver of the stress runner
// shares while one case runs: the stop flag, the operation budget, the actors'
// published states (for the watchdog), the oracle tallies and the latency samples.
//
// A case runs in a forked child process (stress_runner.h says why). Inside the child
// the engine driver (engines.h) starts one thread per actor, each seeded from the
// scenario seed and its actor index, and reports into a CaseContext:
//
//   | what                 | how an actor reports it                   | cost            |
//   |----------------------|-------------------------------------------|-----------------|
//   | an oracle violation  | violation(Oracle, sentence)               | one lock        |
//   | a counter            | add(name, n)                              | one lock        |
//   | a latency sample     | sample(Latency, ns) into its ActorLog     | Histogram::record|
//   | its state            | ActorState::set(phase, object)            | 3 relaxed stores|
//   | one unit of work     | take_op(left): its share of run.operations| one fetch_add   |
//
// The child's monitor thread (stress_runner.cc) reads the actor states: at the budget
// it reports verdict timeout with every actor's state ("waiter#3: parked on token
// 0x2a for 4.1 s"); a waiter parked long past its deadline is a lost wakeup.
//
// In a mutant case (spec.expect_fail) the first violation over its bound sets the
// stop flag: detection, not the full run, is what the case exists for; the time of
// that first violation is kept as counters["detect_us"].
//
// Ground rules: one CaseContext per child process, alive until the child exits.
// Every method is thread-safe. ActorLog is owned by its actor thread until the
// thread is joined (or the child gives up on it and _exits), unless it is shared:
// then sample() takes its own mutex (one lock per sample), so any thread may write.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <vector>

#include "base/fmt_ns.h"
#include "runner/runner.h"
#include "scenario/scenario.h"

namespace tlab::tool::runner {

// The latency histograms a case reports (report key = kLatencyNames[i]). The
// last two come only from exec subjects (subjects/exec/exec_session.h): a fire's
// lateness by the subject's own timestamps, and a request's round trip over the
// pipe.
enum class Latency : std::uint8_t {
  kFireLateness,
  kCancelToResume,
  kScheduleCost,
  kCancelCost,
  kSubjectLateness,
  kPipeRoundTrip,
  kCount
};
inline constexpr std::size_t kLatencyCount = static_cast<std::size_t>(Latency::kCount);
inline constexpr std::array<std::string_view, kLatencyCount> kLatencyNames{
    "fire_lateness", "cancel_to_resume", "schedule_cost",
    "cancel_cost",   "subject_lateness", "pipe_round_trip"};

// What an actor is doing, for the watchdog's report. `object` is a token, task id
// or similar; 0 when not applicable.
enum class Phase : std::uint8_t {
  kStarting,
  kWorking,
  kParked,
  kSleeping,
  kLocking,
  kWaiting,
  kHolding,
  kDone
};
std::string_view name_of(Phase p);

struct ActorState {
  std::string name;  // "waiter#3": immutable after construction
  std::atomic<Phase> phase{Phase::kStarting};
  std::atomic<std::uint64_t> object{0};
  std::atomic<std::int64_t> since_ns{0};     // steady time of the last phase change (add_actor: then)
  std::atomic<std::int64_t> deadline_ns{0};  // parked waiters: their timeout's deadline (steady)
  std::atomic<std::uint64_t> ops{0};

  // ActorState::set: publishes a phase change. Thread safety: the actor only.
  void set(Phase p, std::uint64_t obj = 0);
};

// Latency recorded by one actor: one histogram per kind, so memory stays constant
// however many operations the case runs; merged when the case reports.
struct ActorLog {
  std::array<Histogram, kLatencyCount> latency;
  // ActorLog::share: from now on every sample() locks, for the log of an actor that
  // stands for several threads (the calls made from inside callbacks of a subject
  // that fires on more than one thread). Call before those threads start.
  void share() { mu = std::make_unique<std::mutex>(); }
  void sample(Latency l, std::int64_t ns) {
    if (mu == nullptr) {
      latency[static_cast<std::size_t>(l)].record(ns);
      return;
    }
    const std::lock_guard lk(*mu);
    latency[static_cast<std::size_t>(l)].record(ns);
  }
  std::unique_ptr<std::mutex> mu;  // set by share(); guards latency from then on
};

class CaseContext {
 public:
  CaseContext(const CaseSpec& spec, std::int64_t start_steady_ns);

  const CaseSpec& spec() const { return spec_; }
  const Scenario& scenario() const { return *spec_.scenario; }

  // CaseContext::add_actor: a new actor state and log, named "<role>#<index>".
  // Thread safety: the driver thread, before the actors start.
  ActorState& add_actor(const std::string& name);
  ActorLog& log_of(const ActorState& a);
  std::deque<ActorState>& actors() { return actors_; }
  // CaseContext::actors_ready: the driver has added every actor (none is added
  // later); starts the child's monitor. Call once, before starting the actors.
  void actors_ready() {
    if (on_actors_ready) on_actors_ready();
  }
  std::function<void()> on_actors_ready;  // set by the child harness

  // CaseContext::rng_for: the RNG of actor `index` (a SplitMix of seed and index).
  std::mt19937_64 rng_for(std::uint64_t index) const;
  // CaseContext::thread_seed: the fault-point RNG seed of actor `index`.
  std::uint64_t thread_seed(std::uint64_t index) const;

  // CaseContext::take_op: claims one operation of the budget; false once the budget
  // is spent or the case is stopping.
  bool take_op();
  // CaseContext::share: actor i's part of run.operations split over n actors.
  std::uint64_t share(std::size_t i, std::size_t n) const;
  // CaseContext::take_op(left): claims one operation of an actor's own share.
  bool take_op(std::uint64_t& left);
  std::uint64_t ops_done() const;

  bool stopping() const { return stop_.load(std::memory_order::acquire); }  // pairs with stop()
  void stop() { stop_.store(true, std::memory_order::release); }

  // CaseContext::violation: counts one violation of `o`; keeps `example` if first.
  void violation(Oracle o, const std::string& example);
  // CaseContext::violation_named: the same for a runner-level key ("crash", "fifo_order").
  void violation_named(const std::string& key, const std::string& example);
  void add(const std::string& counter, std::uint64_t n = 1);
  void set_counter(const std::string& counter, std::uint64_t n);
  void note(const std::string& line);  // appended to the case message

  // Microseconds since the case started, for example sentences ("t=1.234 ms").
  std::int64_t elapsed_ns() const;
  // start_ns: the steady instant the case started (what at() measures from).
  std::int64_t start_ns() const { return start_ns_; }
  std::string at(std::int64_t steady_ns) const;  // "t=1.234ms"

  // CaseContext::snapshot: the result so far (violations, counters, message, the
  // child's peak RSS so far) plus,
  // with `samples`, every actor log's histograms merged (only once the actors are
  // joined): what the child sends to the parent (types/case_result.h). The
  // verdict is `v` for a forced end and is otherwise left for the parent to judge.
  CaseResult snapshot(Verdict v, const std::string& message, bool samples);
  // CaseContext::actor_report: one line per actor, for a timeout.
  std::string actor_report() const;

 private:
  const CaseSpec& spec_;
  const std::int64_t start_ns_;
  std::atomic<bool> stop_{false};
  std::atomic<std::int64_t> ops_left_;
  std::atomic<std::uint64_t> ops_done_{0};
  std::deque<ActorState> actors_;  // stable addresses
  std::deque<ActorLog> logs_;
  mutable std::mutex mu_;
  std::map<std::string, ViolationRecord> violations_;  // guarded by mu_
  std::map<std::string, std::uint64_t> counters_;      // guarded by mu_
  std::string notes_;                                  // guarded by mu_
  bool detected_ = false;                              // guarded by mu_
};

// peak_rss_bytes: the process's peak resident set so far (getrusage(RUSAGE_SELF)
// ru_maxrss), in bytes; 0 if the call fails. In the case child this is the case's
// peak, since the fork: the parent's pages count only once touched by the child.
std::uint64_t peak_rss_bytes();
// steady_ns: the steady clock in nanoseconds (the timeline of ActorState).
std::int64_t steady_ns();
// sleep_us: sleeps `us` microseconds in slices of at most 5 ms, returning early once
// `ctx` is stopping; 0 yields.
void sleep_us(CaseContext& ctx, std::int64_t us);

}  // namespace tlab::tool::runner
