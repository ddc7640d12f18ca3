// tlab/tool/subjects/subjects.cc: see subjects.h. The one catalogue of subjects.
#include "subjects/subjects.h"

#include <algorithm>
#include <array>

#include <fmt/format.h>

#include "runner/engines.h"
#include "subjects/builtin/executor.h"
#include "subjects/builtin/peers.h"
#include "subjects/builtin/sharded_service.h"
#include "subjects/builtin/strategies.h"
#include "subjects/builtin/sync.h"
#include "tlab/queue/strategy.h"

namespace tlab::tool {

namespace {

using enum Promise;
using R = Role;

// What every queue strategy promises as a timer queue its owner polls; exact
// strategies also keep FIFO order among equal deadlines.
constexpr PromiseSet kQueuePromises = PromiseSet(kDelivery) | kExactlyOnce | kNeverEarly |
                                      kAccurateCancel | kPendingCount | kVirtualTime;
// What every engine promises besides its own: nothing lost, nothing twice, never
// early, cancel results that tell the truth, exact pending counts, and no data race.
constexpr PromiseSet kEnginePromises = PromiseSet(kDelivery) | kExactlyOnce | kNeverEarly |
                                       kAccurateCancel | kPendingCount | kThreadSafe;

// Engines, in selection order (subjects.h): the first whose primary role the
// scenario has. timer_thread may join every row that has a timer service.
const std::array<SubjectInfo, 9> kEngineSubjects{{
    {"coroutine_loop",
     SubjectOrigin::kEngine,
     SubjectKind::kCoroutineLoop,
     kEnginePromises | kContainsErrors | kNoSpuriousTimeout | kReentrant | kNextPass,
     {R::kCoroutineTask},
     {R::kCoroutineTask, R::kScheduler},
     {},
     true,
     "EventLoop<Q, P>: co_await with_timeout(sleep_for(delay), timeout) (seed 004); a "
     "scheduler's timers are coroutines awaiting with_timeout(Event, delay)",
     &runner::run_coroutine_engine,
     nullptr,
     {{{"fire_lateness", {}}}},
     nullptr,
     ""},
    {"executor",
     SubjectOrigin::kEngine,
     SubjectKind::kExecutor,
     kEnginePromises | kContainsErrors | kReentrant,
     {R::kWorkerChurn},
     {R::kWorkerChurn, R::kScheduler, R::kCanceller, R::kThrower},
     {},
     false,
     "seed 003's Executor<P>: per-worker wheels, metronome, merge queue; the strategy is "
     "recorded, not used",
     &runner::run_executor_engine,
     &builtin::executor_bench,
     {{{"fire_lateness", {}}}},
     // `--subject executor`: the executor as a program uses it (2 workers that never
     // stop), on the generic driver; its promises are the descriptor's
     // (builtin/executor.h), which has no pending count and no thrower.
     &builtin::executor_abi,
     ""},
    {"timed_mutex",
     SubjectOrigin::kEngine,
     SubjectKind::kTimedWait,
     kEnginePromises | kMutualExclusion | kNoSpuriousTimeout,
     {R::kMutexContender},
     {R::kMutexContender, R::kTimerThread},
     {},
     true,
     "TimedMutex<P, token_bits> (RFC 0014's lock?(timeout)) on TimerService<Q, P>",
     &runner::run_mutex_engine,
     nullptr,
     {{{"fire_lateness", {}}}},
     nullptr,
     ""},
    {"timed_wait_group",
     SubjectOrigin::kEngine,
     SubjectKind::kTimedWait,
     kEnginePromises | kCounterFloor | kNoSpuriousTimeout,
     {R::kWaitGroupMember, R::kWaitGroupWaiter},
     {R::kWaitGroupMember, R::kWaitGroupWaiter, R::kTimerThread},
     {},
     true,
     "TimedWaitGroup<P> (seed 002's split counter), one group per round, on TimerService<Q, P>",
     &runner::run_wait_group_engine,
     nullptr,
     {{{"fire_lateness", {}}}},
     nullptr,
     ""},
    {"pool",
     SubjectOrigin::kEngine,
     SubjectKind::kTimedWait,
     kEnginePromises | kMutualExclusion | kNoSpuriousTimeout,
     {R::kPoolClient},
     {R::kPoolClient, R::kTimerThread},
     {},
     true,
     "Pool<int, P, token_bits> of engine.pool_size objects: timed checkout, exclusive hold",
     &runner::run_pool_engine,
     nullptr,
     {{{"fire_lateness", {}}}},
     nullptr,
     ""},
    {"timer_service",
     SubjectOrigin::kEngine,
     SubjectKind::kTimerFacility,
     kEnginePromises | kContainsErrors | kFifoTies | kVirtualTime | kReentrant | kNextPass,
     {R::kWaiter, R::kScheduler, R::kThrower},
     {R::kWaiter, R::kCanceller, R::kScheduler, R::kThrower, R::kTimerThread},
     {R::kScheduler, R::kThrower, R::kCanceller},
     true,
     "Waiter<P, token_bits> and TimerTasks on TimerService<Q, P> (seeds 000 and 001)",
     &runner::run_service_engine,
     nullptr,
     {{{"fire_lateness", {}}, {"cancel_to_resume", {R::kWaiter, R::kCanceller}}}},
     nullptr,
     ""},
    // No engine driver of its own (never selected by roles): it runs only as
    // `--subject timed_semaphore`, through the generic timed-wait driver.
    {"timed_semaphore",
     SubjectOrigin::kEngine,
     SubjectKind::kTimedWait,
     PromiseSet(kDelivery) | kNeverEarly | kMutualExclusion | kThreadSafe | kNoSpuriousTimeout,
     {},
     {},
     {},
     false,
     "TimedSemaphore<StdPlatform> (RFC 0014 token hand-off) timed by a TimerService thread",
     nullptr,
     nullptr,
     {},
     &builtin::sync_abi},
    // No engine driver of its own either: `--subject sharded_service` (the generic
    // facility driver) and scenarios naming it in engine.subject (sharded_races).
    // Two rows, two configurations (builtin/sharded_service.h), each the one that
    // check and compare both run.
    {"sharded_service",
     SubjectOrigin::kEngine,
     SubjectKind::kTimerFacility,
     PromiseSet(kDelivery) | kExactlyOnce | kNeverEarly | kAccurateCancel | kThreadSafe,
     {},
     {},
     {},
     false,
     "ShardedTimerService<binary_heap, P>: 4 locked shards, timers spread round robin, one timer "
     "thread on the earliest head",
     nullptr,
     &builtin::sharded_service_bench,
     {},
     &builtin::sharded_service_abi},
    {"sharded_service_per_thread",
     SubjectOrigin::kEngine,
     SubjectKind::kTimerFacility,
     PromiseSet(kDelivery) | kExactlyOnce | kNeverEarly | kAccurateCancel | kThreadSafe,
     {},
     {},
     {},
     false,
     "ShardedTimerService<hierarchical_wheel, P>: a locked shard per hardware thread, each caller "
     "on its own shard, one timer thread on the earliest head",
     nullptr,
     &builtin::sharded_service_bench,
     {},
     &builtin::sharded_service_abi},
}};

// Peers, with the promises their documentation makes (each subjects/builtin/peer_*.cc
// cites the pages and says why each other promise is not made); the same bits as
// their ABI descriptors (subjects/builtin/peers.h), which is how a scenario runs
// on them (`--subject libuv`) and how compare measures them.
const std::array<SubjectInfo, 4> kPeerSubjects{{
    {"libuv",
     SubjectOrigin::kPeer,
     SubjectKind::kTimerFacility,
     PromiseSet(kDelivery) | kExactlyOnce | kAccurateCancel | kPendingCount | Promise::kNextPass |
         Promise::kReentrant,
     {},
     {},
     {},
     false,
     "uv_timer_start / uv_timer_stop on a uv_loop_t (loop-driven, one thread; ms timeouts from "
     "the cached loop time)",
     nullptr,
     &builtin::libuv_bench,
     {},
     &builtin::libuv_subject},
    {"libevent",
     SubjectOrigin::kPeer,
     SubjectKind::kTimerFacility,
     PromiseSet(kDelivery) | kExactlyOnce | kAccurateCancel | Promise::kReentrant,
     {},
     {},
     {},
     false,
     "evtimer_add / evtimer_del on an event_base (loop-driven, NOLOCK: one thread, or calls "
     "serialised)",
     nullptr,
     &builtin::libevent_bench,
     {},
     &builtin::libevent_subject},
    {"asio",
     SubjectOrigin::kPeer,
     SubjectKind::kTimerFacility,
     PromiseSet(kDelivery) | kExactlyOnce | kNeverEarly | kAccurateCancel | Promise::kReentrant,
     {},
     {},
     {},
     false,
     "asio::steady_timer expires_after / async_wait / cancel on an io_context",
     nullptr,
     &builtin::asio_bench,
     {},
     &builtin::asio_subject},
    {"java_timer_heap",
     SubjectOrigin::kPeer,
     SubjectKind::kTimerFacility,
     PromiseSet(kDelivery) | kExactlyOnce | kNeverEarly | kAccurateCancel | kFifoTies | kThreadSafe,
     {},
     {},
     {},
     false,
     "std::priority_queue + mutex + condition variable: java.util.Timer's design (seed 001)",
     nullptr,
     &builtin::heap_bench,
     {},
     &builtin::heap_subject},
}};

std::vector<SubjectInfo> build_table() {
  std::vector<SubjectInfo> rows;
  // A strategy is also an ABI subject (`--subject binary_heap`): the descriptor
  // of QueueSubject<Q>, the adapter users export their own queues through.
  for (const StrategyInfo& s : kStrategyInfo) {
    rows.push_back({s.name,
                    SubjectOrigin::kStrategy,
                    SubjectKind::kTimerQueue,
                    s.exact ? kQueuePromises | kFifoTies : kQueuePromises,
                    {},
                    {},
                    {},
                    false,
                    s.summary,
                    nullptr,
                    &builtin::strategy_bench,
                    {},
                    &builtin::strategy_abi});
  }
  rows.insert(rows.end(), kEngineSubjects.begin(), kEngineSubjects.end());
  rows.insert(rows.end(), kPeerSubjects.begin(), kPeerSubjects.end());
  return rows;
}

}  // namespace

std::string_view name_of(SubjectOrigin o) {
  switch (o) {
    case SubjectOrigin::kStrategy:
      return "strategy";
    case SubjectOrigin::kEngine:
      return "engine";
    case SubjectOrigin::kPeer:
      return "peer";
  }
  return "?";
}

std::string_view name_of(SubjectKind k) {
  switch (k) {
    case SubjectKind::kTimerQueue:
      return "timer_queue";
    case SubjectKind::kTimerFacility:
      return "timer_facility";
    case SubjectKind::kTimedWait:
      return "timed_wait";
    case SubjectKind::kExecutor:
      return "executor";
    case SubjectKind::kCoroutineLoop:
      return "coroutine_loop";
  }
  return "?";
}

std::string RoleSet::names() const {
  std::string out;
  for (const RoleInfo& r : kRoleInfo) {
    if (!has(r.id)) continue;
    if (!out.empty()) out += ", ";
    out += r.name;
  }
  return out;
}

const std::vector<SubjectInfo>& subjects() {
  static const std::vector<SubjectInfo> table = build_table();
  return table;
}

const SubjectInfo* find_subject(std::string_view name) {
  for (const SubjectInfo& s : subjects()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

const SubjectInfo* engine_for(const Scenario& s, std::string& why, std::string* pointer) {
  auto at = [&](const char* p) {
    if (pointer != nullptr) *pointer = p;
  };
  at("/actors");
  std::array<bool, kRoleCount> has{};
  for (const Actor& a : s.actors) has[static_cast<std::size_t>(a.role)] = a.count > 0;
  const SubjectInfo* chosen = nullptr;
  for (const SubjectInfo& row : subjects()) {
    if (row.origin != SubjectOrigin::kEngine || row.run_case == nullptr) continue;
    bool primary = false;
    for (std::size_t i = 0; i < kRoleCount; ++i)
      primary = primary || (has[i] && row.primary.has(static_cast<Role>(i)));
    if (!primary) continue;
    for (std::size_t i = 0; i < kRoleCount; ++i) {
      if (has[i] && !row.accepts.has(static_cast<Role>(i))) {
        why = fmt::format("role {} cannot join this engine's roles", kRoleInfo[i].name);
        return nullptr;
      }
    }
    chosen = &row;
    break;
  }
  if (chosen == nullptr) {
    why = "no actor does work (add a waiter, scheduler, thrower, contender, ... )";
    return nullptr;
  }
  for (std::size_t i = 0; i < s.actors.size(); ++i) {
    if (s.actors[i].stale_probability.value_or(0) > 0) {
      if (pointer != nullptr) *pointer = fmt::format("/actors/{}/stale_probability", i);
      why =
          "stale_probability is for a subject (--subject): only the generic driver cancels "
          "settled timers' handles; tlab's own engines test stale tokens with token_bits "
          "(aba_wraparound). Remove it, set 0, or run with --subject";
      return nullptr;
    }
    if (s.actors[i].role == Role::kScheduler && s.actors[i].mode != ScheduleMode::kOnce &&
        chosen->name != "timer_service") {
      if (pointer != nullptr) *pointer = fmt::format("/actors/{}/mode", i);
      why = fmt::format(
          "periodic modes are for the timer_service engine and subjects (--subject); the {} "
          "engine's timers are one-shot. Remove mode, or run with --subject",
          chosen->name);
      return nullptr;
    }
    if (s.actors[i].rearm_probability > 0 && chosen->name != "timer_service") {
      if (pointer != nullptr) *pointer = fmt::format("/actors/{}/rearm_probability", i);
      why = fmt::format(
          "rearm_probability is for a subject (--subject: the generic driver re-arms a held "
          "timer) or the timer_service engine (TimerService::reschedule); the {} engine does "
          "not re-arm. Remove it, set 0, or run with --subject",
          chosen->name);
      return nullptr;
    }
  }
  if (s.engine.max_pending > 0 && chosen->name != "timer_service") {
    at("/engine/max_pending");
    why = fmt::format(
        "engine.max_pending caps TimerService (TimerServiceOptions::max_pending); the {} "
        "engine has no such cap. Remove it",
        chosen->name);
    return nullptr;
  }
  if (runner::count_of(s, Role::kTimerThread) > 1) {
    why = "timer_thread count must be 1: the timer service has one thread";
    return nullptr;
  }
  const auto& widths = runner::kSupportedTokenBits;
  if (std::find(widths.begin(), widths.end(), s.engine.token_bits) == widths.end()) {
    at("/engine/token_bits");
    why = fmt::format(
        "engine.token_bits {} is not instantiated in this runner (supported: 3, 4, 8, 16, 32)",
        s.engine.token_bits);
    return nullptr;
  }
  if (s.engine.clock == ClockKind::kVirtual) {
    at("/engine/clock");
    bool ok = !chosen->virtual_roles.empty();
    for (std::size_t i = 0; ok && i < kRoleCount; ++i) {
      ok = !has[i] || chosen->virtual_roles.has(static_cast<Role>(i));
    }
    if (!ok) {
      why =
          "engine.clock virtual needs a timer-service scenario whose actors are only schedulers, "
          "throwers and cancellers (no blocking actor, no timer thread): it runs on one thread";
      return nullptr;
    }
  }
  return chosen;
}

std::optional<std::string> sim_refusal(const Scenario& s) {
  if (!s.engine.subject.empty()) {
    return fmt::format(
        "engine.subject {}: a subject runs on real threads through the generic "
        "driver, which is not ported to SimPlatform",
        s.engine.subject);
  }
  std::string why;
  const SubjectInfo* engine = engine_for(s, why);
  if (engine == nullptr) return why;
  if (engine->sim_refusal.empty()) return std::nullopt;
  return fmt::format("engine {}: {}", engine->name, engine->sim_refusal);
}

bool check_runnable(const Scenario& s, const std::string& file, InputErrors& errors) {
  if (!s.engine.subject.empty()) {
    // The generic driver checks the roles against the subject's kind when it runs.
    const SubjectInfo* row = find_subject(s.engine.subject);
    if (row == nullptr || row->abi == nullptr) {
      errors.push_back({file, "/engine/subject",
                        fmt::format("'{}' is not a built-in subject with a descriptor (`tlab "
                                    "list subjects`; a plugin is named with --subject)",
                                    s.engine.subject)});
      return false;
    }
    if (s.run.sim) {
      errors.push_back(
          {file, "/run/sim",
           "run.sim: " + *sim_refusal(s) + "; remove run.sim to run it on real threads"});
      return false;
    }
    return true;
  }
  std::string why, pointer;
  const SubjectInfo* engine = engine_for(s, why, &pointer);
  if (engine == nullptr) {
    errors.push_back({file, pointer, "no engine can run this scenario: " + why});
    return false;
  }
  if (s.run.sim && !engine->sim_refusal.empty()) {
    errors.push_back({file, "/run/sim",
                      fmt::format("run.sim: engine {} does not run under simulation: {}; remove "
                                  "run.sim to run it on real threads",
                                  engine->name, engine->sim_refusal)});
    return false;
  }
  std::array<bool, kRoleCount> has{};
  for (const Actor& a : s.actors) has[static_cast<std::size_t>(a.role)] = a.count > 0;
  const std::size_t before = errors.size();
  for (const LatencyBoundInfo& b : kLatencyBoundInfo) {
    const LatencyBound& bound =
        b.histogram == "fire_lateness" ? s.expect.fire_lateness_us : s.expect.cancel_to_resume_us;
    if (!bound.p50_max && !bound.p90_max && !bound.p99_max && !bound.p999_max && !bound.max) {
      continue;
    }
    const auto m =
        std::find_if(engine->measures.begin(), engine->measures.end(),
                     [&](const LatencyMeasure& x) { return x.histogram == b.histogram; });
    const std::string ptr = fmt::format("/expect/{}", b.key);
    if (m == engine->measures.end()) {
      errors.push_back({file, ptr,
                        fmt::format("engine {} never records {}; this bound would never be checked",
                                    engine->name, b.histogram)});
      continue;
    }
    for (const RoleInfo& r : kRoleInfo) {
      if (m->needs.has(r.id) && !has[static_cast<std::size_t>(r.id)]) {
        errors.push_back(
            {file, ptr,
             fmt::format("engine {} records {} only with {} actors (this scenario has no {}); "
                         "this bound would never be checked",
                         engine->name, b.histogram, m->needs.names(), r.name)});
        break;
      }
    }
  }
  return errors.size() == before;
}

PromiseSet promises_of_case(const SubjectInfo& engine, std::string_view strategy) {
  if (!engine.takes_strategy) return engine.promises;
  const SubjectInfo* q = find_subject(strategy);
  if (q != nullptr && q->promises.has(kFifoTies)) return engine.promises;
  return engine.promises.without(kFifoTies);
}

}  // namespace tlab::tool
