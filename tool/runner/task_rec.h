// tlab/tool/runner/task_rec.h: TaskRec, the kService engine's record of one timer
// task (service_tasks.h's TaskBook keeps them; service_scripts.h adds what a
// callback script needs). Cost: one allocation per task, a std::mutex and plain
// fields. Ground rules and memory ordering: as each field's comment says (mu, or
// written before the task is scheduled and so ordered by the service's mutex).
#pragma once

#include <array>
#include <cstdint>
#include <mutex>
#include <string>

#include "runner/engines.h"
#include "tlab/timer_service.h"

namespace tlab::tool::runner {

// One task's record while it can still change an oracle's answer. Owned by the
// task's callback (shared_ptr) and by the driver's live list until the task is
// resolved (a one-shot's first run or winning cancel; a periodic task's winning
// cancel); then its outcome is in the counters and the live list drops it, so
// records cost O(live tasks), not O(operations). A run or cancel after resolution
// (a bug) still finds the record through the callback or the canceller's copy.
template <class P>
struct TaskRec {
  std::uint64_t id = 0;
  const ActorState* owner = nullptr;  // its name outlives the case
  TaskKind kind = TaskKind::kOnce;
  bool thrower = false;
  bool aligned = false;             // scheduled with schedule_at on a tick: FIFO ties
  std::int64_t first_deadline = 0;  // engine clock ns, saturating
  std::int64_t period = 0;
  TimerTask<P>* task = nullptr;  // valid during its own callback
  // Callback scripts (service_scripts.h): the scheduler whose callback_* draws each
  // run makes (null: none); the virtual driver's pass a callback armed it in (0:
  // armed outside a callback, or no passes are counted); its chain's first task and
  // the chain's same-pass links up to the callback that armed it. Written before
  // the task is scheduled, read by its runs.
  const Actor* script = nullptr;
  std::uint64_t armed_pass = 0;
  // The virtual driver's pass count when the task was (re)scheduled: the first pass
  // that may run it is the next one (late_fire).
  std::uint64_t queued_pass = 0;
  std::uint64_t root = 0;
  std::uint64_t parent_links = 0;
  std::size_t live_at = 0;  // recs_mu_: index in live_recs_ while live
  std::mutex mu;
  std::uint64_t fires = 0;                    // mu
  std::int64_t first_start = 0;               // mu: start of run 0
  std::int64_t first_due = 0;                 // mu: the service's due time of run 0
  std::int64_t prev_start = 0;                // mu: start of the latest run
  std::array<std::int64_t, 2> last_starts{};  // mu: the two latest run starts
  bool resolved = false;                      // mu: counted as fired or cancelled
  bool cancel_won = false;                    // mu
  std::uint64_t runs_after_cancel = 0;        // mu: periodic runs started after the win
  std::int64_t cancel_returned = 0;           // mu
  const std::string* canceller = nullptr;     // mu
  bool via_service = false;                   // mu
};

}  // namespace tlab::tool::runner
