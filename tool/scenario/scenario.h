// tlab/tool/scenario/scenario.h: a stress scenario, typed, and the loader that makes one.
//
// A scenario file (scenarios/README.md documents every field) says which engine to
// build, which actors (threads playing roles) to run against it, which fault points
// to perturb, how much work to do and what must hold afterwards. Loading is three
// passes, each reporting `file: /json/pointer: message` (json_input.h):
//   1. parse      json_input.h: syntax, duplicate keys, numbers beyond int64, depth;
//   2. schema     scenarios/schema.json (draft 7, embedded), via valijson: types,
//                 ranges, unknown keys (additionalProperties: false everywhere);
//   3. semantics  here: names against the catalogues (strategies, mutants, fault
//                 points), per-role fields (kRoleInfo), uniform bounds in order,
//                 the thread cap, duplicate fault points.
// A Scenario that comes out of ScenarioLoader has passed all three; the runner may
// rely on every field being in range.
//
// Hard caps against hostile files: actor counts plus engine.workers <= kMaxThreads,
// run.operations <= 10^8, run.budget_s <= 600, run.max_pending <= 10^6 live timers
// (the runner stops scheduling there), fault delays <= 1 s each, files <= 1 MiB,
// strings <= 2000 bytes, arrays <= maxItems (json_input.h checks them first).
//
// Costs: loading is O(n log n) in the file size n (json_input.h: no array longer
// than the schema's maxItems reaches valijson, uniqueItems is checked with a set);
// Distribution::sample is O(1).
//
// Ground rules: a Scenario is a plain value, immutable once loaded; share it freely
// across threads. ScenarioLoader is immutable after construction.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "base/json_input.h"
#include "tlab/platform/fault_point.h"
#include "tlab/platform/mutant.h"
#include "tlab/platform/stress_control.h"
#include "types/expectations.h"
#include "types/sim_spec.h"

namespace tlab::tool {

// Total threads a scenario may ask for: the sum of actor counts plus engine.workers.
// 256 is eight times the largest machine the suite targets; beyond it a file is a
// fork bomb, not a stress test.
inline constexpr int kMaxThreads = 256;

// The longest string any scenario field takes (`description`, 2000 characters in
// the schema); checked before the schema's patterns run (ScenarioLoader).
inline constexpr std::size_t kMaxStringBytes = 2000;

// A random quantity in microseconds: {"fixed": n} | {"uniform": [a, b]} | {"exponential": mean}.
struct Distribution {
  enum class Kind : std::uint8_t { kFixed, kUniform, kExponential };
  Kind kind = Kind::kFixed;
  std::int64_t lo = 0;  // kFixed: the value; kUniform: a
  std::int64_t hi = 0;  // kFixed: the value; kUniform: b (lo <= hi)
  double mean = 0;      // kExponential only; > 0

  // Distribution::sample: one draw, in microseconds.
  // Ensures: kFixed -> lo; kUniform -> in [lo, hi]; kExponential -> >= 0, rounded,
  // capped at 600 s.
  std::int64_t sample(std::mt19937_64& rng) const;
};

enum class Role : std::uint8_t {
  kWaiter,           // arms a timeout on a waiter and parks until resolved
  kCanceller,        // cancels a random armed waiter or task after delay_us
  kScheduler,        // schedules tasks on the timer service / queue
  kTimerThread,      // drives expiry (the timer service thread)
  kWorkerChurn,      // stops and restarts executor workers every period_us
  kMutexContender,   // lock_for(timeout_us) on the timed mutex, holds hold_us
  kWaitGroupMember,  // done() after delay_us
  kWaitGroupWaiter,  // await(timeout_us)
  kPoolClient,       // checks out of the pool with timeout_us, holds hold_us
  kCoroutineTask,    // co_await with_timeout(sleep_for(delay_us), timeout_us)
  kThrower,          // schedules tasks that throw, after delay_us
  kCount
};
inline constexpr std::size_t kRoleCount = static_cast<std::size_t>(Role::kCount);

// Actor fields, as bits for the role table.
enum ActorField : std::uint16_t {
  kFieldTimeout = 1 << 0,
  kFieldDelay = 1 << 1,
  kFieldPeriod = 1 << 2,
  kFieldHold = 1 << 3,
  kFieldMode = 1 << 4,
  kFieldCancelProbability = 1 << 5,
  kFieldStaleProbability = 1 << 6,
  kFieldRearmProbability = 1 << 7,
  kFieldRearmDelay = 1 << 8,
  kFieldCallbackRearm = 1 << 9,
  kFieldCallbackRearmDelay = 1 << 10,
  kFieldCallbackCancel = 1 << 11,
  kFieldCallbackSelfCancel = 1 << 12,
};

// Which optional actor fields each role requires and accepts (role and count are
// always required). `period_us` on a scheduler is further tied to its mode: required
// for fixed_delay/fixed_rate, refused for once.
struct RoleInfo {
  Role id;
  std::string_view name;
  std::uint16_t required;
  std::uint16_t allowed;  // superset of required
  std::string_view description;
};

inline constexpr std::array<RoleInfo, kRoleCount> kRoleInfo{{
    {Role::kWaiter, "waiter", kFieldTimeout, kFieldTimeout,
     "arms a timeout (timeout_us) on a waiter and parks until it is resolved"},
    {Role::kCanceller, "canceller", kFieldDelay, kFieldDelay | kFieldStaleProbability,
     "after delay_us, cancels a random armed waiter or scheduled task (on a subject, with "
     "stale_probability a recently settled timer's handle instead)"},
    {Role::kScheduler, "scheduler", kFieldDelay,
     kFieldDelay | kFieldPeriod | kFieldMode | kFieldCancelProbability | kFieldStaleProbability |
         kFieldRearmProbability | kFieldRearmDelay | kFieldCallbackRearm |
         kFieldCallbackRearmDelay | kFieldCallbackCancel | kFieldCallbackSelfCancel,
     "schedules tasks delay_us ahead (mode once|fixed_delay|fixed_rate with period_us); "
     "cancels each with cancel_probability (on a subject, then a recently settled timer's "
     "handle with stale_probability, and re-arms a held timer with rearm_probability, "
     "rearm_delay_us ahead); on a subject whose callbacks may call it, each timer's "
     "callback re-arms (callback_rearm_probability, callback_rearm_delay_us ahead), cancels "
     "another timer (callback_cancel_probability) or itself (callback_self_cancel_probability)"},
    {Role::kTimerThread, "timer_thread", 0, 0, "runs the timer service's expiry loop"},
    {Role::kWorkerChurn, "worker_churn", kFieldPeriod, kFieldPeriod,
     "every period_us, stops one executor worker and restarts it"},
    {Role::kMutexContender, "mutex_contender", kFieldTimeout,
     kFieldTimeout | kFieldHold | kFieldDelay,
     "lock_for(timeout_us) on the timed mutex; holds it for hold_us; then pauses delay_us "
     "(sparse contention: a lost wakeup is then not hidden by the next hand-off)"},
    {Role::kWaitGroupMember, "wait_group_member", kFieldDelay, kFieldDelay,
     "calls done() on the wait group after delay_us"},
    {Role::kWaitGroupWaiter, "wait_group_waiter", kFieldTimeout, kFieldTimeout | kFieldDelay,
     "awaits the wait group with timeout_us, delay_us into the round (if set)"},
    {Role::kPoolClient, "pool_client", kFieldTimeout, kFieldTimeout | kFieldHold | kFieldDelay,
     "checks a resource out of the pool with timeout_us; holds it for hold_us; then pauses "
     "delay_us (sparse contention)"},
    {Role::kCoroutineTask, "coroutine_task", kFieldTimeout | kFieldDelay,
     kFieldTimeout | kFieldDelay,
     "co_await with_timeout(x, timeout_us) on the coroutine executor, x alternating between "
     "sleep_for(delay_us) and an Event another thread sets delay_us later"},
    {Role::kThrower, "thrower", kFieldDelay, kFieldDelay,
     "schedules tasks, delay_us ahead, that throw when run"},
}};

constexpr std::string_view name_of(Role r) { return kRoleInfo[static_cast<std::size_t>(r)].name; }
std::optional<Role> role_from_name(std::string_view name);

// fixed_delay and fixed_rate are MissedTick::kDelay and kBurst (Java's two
// periodic kinds); fixed_rate_skip is MissedTick::kSkip (tokio's Skip).
enum class ScheduleMode : std::uint8_t { kOnce, kFixedDelay, kFixedRate, kFixedRateSkip };

constexpr std::string_view mode_name(ScheduleMode m) {
  switch (m) {
    case ScheduleMode::kFixedDelay:
      return "fixed_delay";
    case ScheduleMode::kFixedRate:
      return "fixed_rate";
    case ScheduleMode::kFixedRateSkip:
      return "fixed_rate_skip";
    case ScheduleMode::kOnce:
      break;
  }
  return "once";
}

struct Actor {
  Role role = Role::kWaiter;
  int count = 1;
  std::optional<Distribution> timeout_us;
  std::optional<Distribution> delay_us;
  std::optional<Distribution> period_us;
  std::optional<Distribution> hold_us;
  ScheduleMode mode = ScheduleMode::kOnce;
  double cancel_probability = 0.0;
  // Subjects only (the generic driver, engine_subject_facility.h): how often a
  // cancel goes to a recently settled timer's handle; absent means the driver's
  // default. The built-in engines refuse a value above 0 (subjects.h engine_for).
  std::optional<double> stale_probability;
  // How often a scheduler re-arms the timer it just scheduled: a subject (the
  // generic driver, engine_subject_facility.h) cancels its handle and schedules a
  // new one; the timer service engine calls TimerService::reschedule (service_
  // tasks.h). The other built-in engines refuse a value above 0 (subjects.h
  // engine_for).
  double rearm_probability = 0.0;
  // The delay of a re-arm (the reschedule, or the subject's replacement timer);
  // absent: a delay_us sample. Refused unless rearm_probability > 0. A re-arm far
  // later than the first arming makes a re-arm that did not move the timer fire
  // early by more than any load delays it.
  std::optional<Distribution> rearm_delay_us;
  // Callback scripts (subjects that declare TLAB_PROMISE_REENTRANT; the generic
  // driver, engine_subject_facility.h): the chance that a timer's callback, from
  // inside the subject's fire, schedules the next timer of its chain
  // (callback_rearm_delay_us ahead, default 0: due at once; the new timer draws its
  // own script), cancels another live timer, one due in the same poll when there
  // is one, or cancels itself. The timer_service, executor and coroutine_loop
  // engines perform them too (runner/service_scripts.h, runner/executor_scripts.h,
  // runner/engine_coro.cc); the other built-in engines note that they do not.
  double callback_rearm_probability = 0.0;
  std::optional<Distribution> callback_rearm_delay_us;
  double callback_cancel_probability = 0.0;
  double callback_self_cancel_probability = 0.0;
  bool scripts_callbacks() const {
    return callback_rearm_probability > 0 || callback_cancel_probability > 0 ||
           callback_self_cancel_probability > 0;
  }

  // Actor::rearm_delay: the distribution a re-arm draws from (rearm_delay_us,
  // else delay_us). Requires: delay_us (every role that re-arms requires it).
  const Distribution& rearm_delay() const { return rearm_delay_us ? *rearm_delay_us : *delay_us; }
};

enum class ClockKind : std::uint8_t { kSteady, kVirtual };

struct EngineConfig {
  std::vector<std::string> strategies;  // expanded: "all" becomes every catalogued name
  std::int64_t tick_us = 100;
  int workers = 1;
  int token_bits = 32;
  ClockKind clock = ClockKind::kSteady;
  int pool_size = 1;
  // A built-in subject row (subjects/subjects.h) that every case of the scenario
  // runs on through the generic ABI driver, as `--subject NAME` would, but with
  // the scenario's catches planned as mutant cases (the subject is tlab's own
  // code on StressPlatform); "": the engine the roles select.
  std::string subject;
  // The timer service engine's TimerServiceOptions::max_pending (0: no cap); the
  // other engines refuse it (subjects.h engine_for).
  std::size_t max_pending = 0;
};

struct FaultSpec {
  FaultPoint point = FaultPoint::kTokenBeforeResolveCas;
  stress::FaultAction action = stress::FaultAction::kDelay;
  Distribution delay_us;  // kFixed or kUniform, in [0, 1 s]; zero for kYield
  double probability = 0.0;
};

struct RunConfig {
  std::uint64_t operations = 1;
  double budget_s = 1.0;
  std::uint64_t seed = 1;
  std::uint64_t max_pending = 100000;  // live timers; the runner stops scheduling here
  // run.sim: the scenario runs under deterministic simulation unless the command
  // line says otherwise (--sim overrides it; --subject runs real threads). For a
  // finding that depends on one interleaving, e.g. an expect.at_least
  // demonstration, which real threads show only when the machine's timing allows.
  std::optional<SimSpec> sim;
};

struct Scenario {
  std::string name;
  std::string description;
  std::string source;  // the path, or "builtin:<file>" for the embedded suite
  Json document;       // as loaded, for embedding in reports (replay uses it)
  EngineConfig engine;
  std::vector<Actor> actors;
  std::vector<FaultSpec> faults;
  RunConfig run;
  Expectations expect;
  std::vector<Mutant> catches;
  // Mutants caught only by ThreadSanitizer (a data race with no other symptom):
  // `tlab check` runs these pairs only in a TSan build (plan.h).
  std::vector<Mutant> tsan_catches;
  // Mutants caught only under deterministic simulation: their symptom (a wait that
  // overlaps availability by a few hundred microseconds) is far below the grace
  // real threads need on a loaded machine. `tlab check` and the kill matrix's sim
  // layer run these pairs simulated; the scenario layer (real threads) does not
  // plan them (plan.h).
  std::vector<Mutant> sim_catches;

  // Scenario::total_threads: sum of actor counts plus engine.workers (<= kMaxThreads).
  int total_threads() const;
  // Scenario::fault_plans: the faults as stress_control.h plans, ready for configure().
  std::array<stress::FaultPlan, kFaultPointCount> fault_plans() const;
};

// ScenarioLoader: the three passes above. Construct once (it compiles the schema).
class ScenarioLoader {
 public:
  ScenarioLoader();

  // ScenarioLoader::load_file: reads and checks `path`; nullopt plus errors on failure.
  std::optional<Scenario> load_file(const std::string& path, InputErrors& errors) const;
  // ScenarioLoader::load_text: checks `text`, naming it `source` in errors.
  std::optional<Scenario> load_text(std::string_view text, const std::string& source,
                                    InputErrors& errors) const;
  // ScenarioLoader::load_document: schema and semantic passes over a parsed document.
  std::optional<Scenario> load_document(const Json& doc, const std::string& source,
                                        InputErrors& errors) const;

  // ScenarioLoader::load_paths: files as given; directories contribute their *.json
  // files (except schema.json), sorted. Duplicate scenario names are errors. Returns
  // the scenarios that loaded; `errors` says what did not. Stops before the next
  // file once interrupted() (interrupt.h) is set; the caller checks interrupted().
  std::vector<Scenario> load_paths(const std::vector<std::string>& paths,
                                   InputErrors& errors) const;
  // ScenarioLoader::load_builtin: the suite embedded in the binary at build time.
  std::vector<Scenario> load_builtin(InputErrors& errors) const;

 private:
  SchemaValidator schema_;
};

}  // namespace tlab::tool
