// tlab/tool/compare/sharded_service.cc: ShardedTimerService
// (core/include/tlab/sharded_timer_service.h) as a compare subject.
//
// The service runs on the hierarchical wheel (1 ms tick, QueueConfig's default,
// as strategies.cc's wheels) with one shard per hardware thread (at least 2).
//   | workload            | how                                                      |
//   |---------------------|----------------------------------------------------------|
//   | insert_cancel,      | the service in driver mode on the compare thread: arm is  |
//   | insert_expire,      | schedule_at, disarm cancel, poll run_once (so its costs   |
//   | churn               | are the service's, shard lock included, not a raw queue's)|
//   | mt_schedule_cancel, | its own timer thread; compare thread t schedules and      |
//   | mt_churn            | cancels on shard t mod shards (schedule_on): each thread  |
//   |                     | on its own shard, the `pending` timers spread over all;   |
//   |                     | the timer thread fires mt_churn's timers                  |
//   | lateness,           | its own timer thread; Waiter on it for cancel_to_resume,  |
//   | cancel_to_resume    | as strategies.cc does for TimerService                    |
#include <algorithm>
#include <thread>

#include "compare/service_workloads.h"
#include "compare/subjects.h"
#include "tlab/platform/std_platform.h"
#include "tlab/queue/hierarchical_wheel.h"
#include "tlab/sharded_timer_service.h"

namespace tlab::tool::compare {
namespace {

using P = StdPlatform;
using Service = ShardedTimerServiceOn<HierarchicalWheelQueue, P>;

std::size_t shard_count() { return std::max(2u, std::thread::hardware_concurrency()); }

// QueueConfig's default wheel tick, which the service's queues use.
constexpr Duration kTick = Duration::milliseconds(1);

// run_cost's adapter (subject.h) over the service in driver mode.
class ServiceAdapter {
 public:
  explicit ServiceAdapter(std::size_t slots)
      : svc_(ShardedTimerServiceOptions{.shards = shard_count(), .start_thread = false}),
        ids_(slots) {}
  void arm(std::size_t slot, std::int64_t delay_ns) {
    // "Already due" (delay 0) is one tick in the past, as strategies.cc's adapter
    // does: a wheel fires a past deadline on its next pass, `now` only at the tick.
    const Instant now = svc_.now();
    const Instant d = delay_ns == 0 ? now - kTick : now + Duration::nanoseconds(delay_ns);
    ids_[slot] = svc_.schedule_at(d, [this] { ++fired_; });
  }
  void disarm(std::size_t slot) { svc_.cancel(ids_[slot]); }
  std::size_t poll() { return svc_.run_once(); }
  std::uint64_t fired() const { return fired_; }
  void housekeeping() {}

 private:
  std::uint64_t fired_ = 0;  // the compare thread only (driver mode)
  Service svc_;
  std::vector<Service::TimerId> ids_;
};

class ShardedServiceSubject final : public Subject {
 public:
  std::string name() const override { return "sharded_service"; }
  bool is_peer() const override { return false; }
  std::string note() const override {
    return "ShardedTimerService on the hierarchical wheel, one shard per hardware thread: "
           "driver mode for single-thread costs; its timer thread, each compare thread on its "
           "own shard, for the mt workloads; Waiter on it for cancel_to_resume";
  }

  CostResult cost(Workload w, std::size_t pending, const CellSettings& s) override {
    if (!is_mt(w)) return run_cost<ServiceAdapter>(w, pending, s);
    Service svc(ShardedTimerServiceOptions{.shards = shard_count()});
    const Instant t0 = svc.now();
    for (std::size_t i = 0; i < pending; ++i) {
      svc.schedule_on(i % svc.shards(), t0 + Duration::nanoseconds(background_delay(i, pending)),
                      [] {});
    }
    const MtOps ops(w);
    std::vector<Service::TimerId> ids(ops.slots(s.threads));  // slot: its thread's only
    auto arm = [&](std::size_t slot, std::int64_t d) {
      ids[slot] = svc.schedule_on(ops.thread_of(slot) % svc.shards(),
                                  svc.now() + Duration::nanoseconds(d), [] {});
    };
    auto disarm = [&](std::size_t slot) { svc.cancel(ids[slot]); };
    ops.prearm(s.threads, arm);
    return run_threads(s, [&](std::size_t t, std::uint64_t k) { ops.step(t, k, arm, disarm); });
  }

  Histogram lateness(const CellSettings& s) override {
    Service svc(ShardedTimerServiceOptions{.shards = shard_count()});
    return timer_lateness(s, svc.now(), [&](std::size_t i, Instant d, ShardedCallback cb) {
      svc.schedule_on(i % svc.shards(), d, std::move(cb));
    });
  }

  Histogram cancel_to_resume(const CellSettings& s) override {
    Service svc(ShardedTimerServiceOptions{.shards = shard_count()});
    return waiter_cancel_to_resume<P>(svc, s);
  }
};

}  // namespace

std::unique_ptr<Subject> make_sharded_service_subject(std::string_view) {
  return std::make_unique<ShardedServiceSubject>();
}

}  // namespace tlab::tool::compare
