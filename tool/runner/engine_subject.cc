// tlab/tool/runner/engine_subject.cc: see engine_subject.h. Which scenarios a
// subject can run, and the dispatch by kind; the facility case is in
// engine_subject_facility*.cc, the timed wait in engine_subject_wait.cc.
//
// What a scenario's roles mean on a subject (scenarios/README.md, "On a subject"):
//   | role            | facility (TLAB_KIND_FACILITY)         | timed wait (TLAB_KIND_TIMED_WAIT) |
//   |-----------------|---------------------------------------|-----------------------------------|
//   | scheduler       | schedule() per operation (mode once;  | refused                           |
//   |                 | a periodic mode: schedule_periodic,   |                                   |
//   |                 | refused unless the subject has that   |                                   |
//   |                 | kind), cancel_probability, stale      |                                   |
//   |                 | cancels, re-arms (rearm_probability)  |                                   |
//   | canceller       | cancel() of a random outstanding timer| refused                           |
//   |                 | or a stale cancel (stale_probability) |                                   |
//   | timer_thread    | the poll loop (count 1); a SELF       | nothing to poll: noted            |
//   |                 | subject's own threads take its place  |                                   |
//   | mutex_contender | refused                               | acquire_for / hold / release      |
//   | pool_client     | refused                               | the same, permits = pool_size     |
//   | thrower         | an exec subject with the feature      | refused                           |
//   |                 | "fail": schedules whose callbacks     |                                   |
//   |                 | fail after firing (SubjectExtras)     |                                   |
//   | any other       | refused: it needs tlab's own engine   | refused                           |
#include "runner/engine_subject.h"

#include <stdexcept>

#include <fmt/format.h>

#include "runner/engine_subject_calls.h"

namespace tlab::tool::runner {

namespace {

// The roles that need one of tlab's own engines, and which.
std::string_view own_engine_of(Role r) {
  switch (r) {
    case Role::kWaiter:
      return "Waiter (a thread parked on a token, resumed by cancel or expiry)";
    case Role::kThrower:
      return "TimerService (tasks that throw; a subject's fired() must not throw)";
    case Role::kWorkerChurn:
      return "Executor (workers stopped and restarted)";
    case Role::kWaitGroupMember:
    case Role::kWaitGroupWaiter:
      return "TimedWaitGroup";
    case Role::kCoroutineTask:
      return "EventLoop (co_await with_timeout)";
    default:
      return "engine";
  }
}

}  // namespace

bool plays_on(const Actor& a, std::uint32_t periodic) {
  const std::uint32_t kind = periodic_kind_of(a.mode);
  return a.role != Role::kScheduler || kind == 0 || (periodic & kind) != 0;
}

// Reads only kind, drive, promises and periodic of `s` (the CLI passes a shape without a
// name or functions: subject_option.h), so `why` never names the subject.
bool subject_accepts(const Scenario& sc, const tlab_subject& s, std::string& why,
                     std::string& pointer, const SubjectExtras& extras) {
  auto refuse = [&](std::string p, std::string w) {
    pointer = std::move(p);
    why = std::move(w);
    return false;
  };
  const bool facility = s.kind == TLAB_KIND_FACILITY;
  const std::string_view kind =
      facility ? "a timer facility (schedule/cancel/poll)" : "a timed wait (acquire_for/release)";
  if (sc.engine.max_pending > 0) {
    return refuse("/engine/max_pending",
                  "engine.max_pending caps tlab's own TimerService; the subject ABI has no "
                  "cap to set. Remove it");
  }
  int schedulers = 0, pollers = 0, holders = 0;
  std::string lacking_at, lacking;  // the first scheduler left out (plays_on)
  for (std::size_t i = 0; i < sc.actors.size(); ++i) {
    const Actor& a = sc.actors[i];
    const std::string at = fmt::format("/actors/{}", i);
    switch (a.role) {
      case Role::kTimerThread:
        if (!facility) break;  // a timed wait keeps its own timers (noted by the case)
        [[fallthrough]];
      case Role::kScheduler:
      case Role::kCanceller:
        if (!facility) {
          return refuse(at + "/role",
                        fmt::format("role {} needs a timer facility; this subject is {}",
                                    name_of(a.role), kind));
        }
        if (a.role == Role::kScheduler) {
          if (!plays_on(a, s.periodic)) {
            // Left out of the case (noted there); the scenario is refused here
            // only if no scheduler is left.
            if (lacking_at.empty()) {
              lacking_at = at + "/mode";
              lacking = fmt::format(
                  "mode {}: this subject has no such periodic timers (its "
                  "descriptor's periodic field lacks {}; subject.h, \"Periodic "
                  "timers\"), and no scheduler of a kind it has is left",
                  mode_name(a.mode), periodic_kind_name(periodic_kind_of(a.mode)));
            }
            break;
          }
          ++schedulers;
        }
        if (a.role == Role::kTimerThread) {
          if (a.count != 1) {
            return refuse(
                at + "/count",
                fmt::format("a subject has one loop: timer_thread count must be 1, not {}",
                            a.count));
          }
          ++pollers;
        }
        break;
      case Role::kThrower:
        if (!facility || extras.schedule_failing == nullptr) {
          return refuse(at + "/role",
                        fmt::format("role thrower needs tlab's own {}, or an exec subject whose "
                                    "hello lists the feature \"fail\" (docs/protocol.md); this "
                                    "subject is {}",
                                    own_engine_of(a.role), kind));
        }
        ++schedulers;
        break;
      case Role::kMutexContender:
      case Role::kPoolClient:
        if (facility) {
          return refuse(at + "/role",
                        fmt::format("role {} needs a timed-wait subject (TLAB_KIND_TIMED_WAIT); "
                                    "this subject is {}",
                                    name_of(a.role), kind));
        }
        holders += a.count;
        break;
      default:
        return refuse(at + "/role",
                      fmt::format("role {} needs tlab's own {}; a subject is reached only through "
                                  "the subject ABI, and this subject is {}",
                                  name_of(a.role), own_engine_of(a.role), kind));
    }
  }
  if (!facility) {
    if (holders == 0) {
      return refuse("/actors", fmt::format("this subject is {}: the scenario needs a "
                                           "mutex_contender or pool_client actor",
                                           kind));
    }
    if (holders > 1 && (s.promises & TLAB_PROMISE_THREAD_SAFE) == 0) {
      return refuse("/actors",
                    fmt::format("{} threads would call this subject at once, but it does not "
                                "promise TLAB_PROMISE_THREAD_SAFE (blocking calls cannot be "
                                "serialised: a holder must release while another waits)",
                                holders));
    }
    return true;
  }
  if (schedulers == 0 && !lacking_at.empty()) return refuse(lacking_at, lacking);
  if (schedulers == 0) {
    return refuse("/actors", fmt::format("this subject is {}: the scenario needs a scheduler "
                                         "actor (the only role that schedules)",
                                         kind));
  }
  // A loop subject on the real clock is polled by the timer_thread actor. On a
  // virtual scenario it is polled anyway: by the driver (VIRTUAL) or, when it
  // cannot run on tlab's clock, by a poller thread on the real clock (noted).
  if (s.drive == TLAB_DRIVE_LOOP && sc.engine.clock != ClockKind::kVirtual && pollers == 0) {
    return refuse("/actors",
                  std::string("this subject is loop-driven (TLAB_DRIVE_LOOP) and the scenario "
                              "runs on the real clock without a timer_thread actor: who would "
                              "poll? Add {\"role\": \"timer_thread\", \"count\": 1}"));
  }
  return true;
}

void run_abi_case(CaseContext& ctx, const tlab_subject& s, const SubjectExtras& extras) {
  if (s.kind == TLAB_KIND_FACILITY) {
    run_facility_case(ctx, s, extras);
  } else {
    run_timed_wait_case(ctx, s);
  }
}

void run_subject_engine(CaseContext& ctx, const SubjectOpener& open) {
  const OpenedSubject opened = open(ctx);
  const tlab_subject& d = *opened.descriptor;
  std::string why, pointer;
  if (!subject_accepts(ctx.scenario(), d, why, pointer, opened.extras)) {
    throw std::runtime_error(fmt::format("subject {} cannot play scenario {}: {}: {}", d.name,
                                         ctx.scenario().name, pointer, why));
  }
  run_abi_case(ctx, d, opened.extras);
}

}  // namespace tlab::tool::runner
