// tlab/tool/compare/strategies.cc: our queue strategies as compare subjects.
//
// Cost workloads drive the raw queue (QueueAdapter): the owner of a queue (an
// event loop, a TimerService, an executor worker) hands it absolute deadlines
// computed from the now of its last pass, exactly as libuv does with its cached
// loop time. The tick is QueueConfig's default, 1 ms, for every wheel.
// The mt workloads, lateness and cancel_to_resume go through TimerService (its
// own timer thread, one mutex), the production TimerSource, and Waiter.
#include <thread>

#include "compare/service_workloads.h"
#include "compare/subjects.h"
#include "tlab/platform/std_platform.h"
#include "tlab/timer_service.h"
#include "tlab/waiter.h"

namespace tlab::tool::compare {
namespace {

template <class Q>
class QueueAdapter {
 public:
  explicit QueueAdapter(std::size_t slots)
      : now_(SteadyClock{}.now()), q_(config(now_)), handles_(slots) {}

  void arm(std::size_t slot, std::int64_t delay_ns) {
    // "Already due" (delay 0) is one tick before the last pass: a ticked queue puts
    // it on its due list, as libuv does with a 0 ms timeout at its cached time.
    const Instant d = delay_ns == 0 ? now_ - q_.tick() : now_ + Duration::nanoseconds(delay_ns);
    handles_[slot] = q_.insert(d, std::uint64_t{slot});
  }
  void disarm(std::size_t slot) { q_.cancel(handles_[slot]); }
  std::size_t poll() {
    now_ = SteadyClock{}.now();
    const std::size_t n = q_.expire(now_, [](std::uint64_t&&, Instant) {});
    fired_ += n;
    return n;
  }
  std::uint64_t fired() const { return fired_; }
  void housekeeping() {}

 private:
  static QueueConfig config(Instant start) {
    QueueConfig cfg;
    cfg.start = start;
    return cfg;
  }
  Instant now_;
  Q q_;
  std::vector<TimerHandle> handles_;
  std::uint64_t fired_ = 0;
};

using P = StdPlatform;
using TaskPtr = TimerTaskPtr<P>;

class StrategySubject final : public Subject {
 public:
  explicit StrategySubject(Strategy s) : s_(s) {}
  std::string name() const override { return std::string(tlab::name_of(s_)); }
  bool is_peer() const override { return false; }
  std::string note() const override {
    return "raw queue for single-thread costs (deadlines from the last pass's now, 1 ms tick "
           "for wheels); TimerService (one mutex, its own timer thread) for "
           "the mt workloads and lateness; Waiter on TimerService for cancel_to_resume";
  }

  CostResult cost(Workload w, std::size_t pending, const CellSettings& s) override {
    if (!is_mt(w)) {
      return with_queue_type<std::uint64_t, P>(
          s_, [&]<class Q>() { return run_cost<QueueAdapter<Q>>(w, pending, s); });
    }
    return with_queue_type<TaskPtr, P>(s_, [&]<class Q>() {
      using Service = TimerService<Q, P>;
      Service svc;
      const Instant t0 = svc.now();
      for (std::size_t i = 0; i < pending; ++i) {
        svc.schedule_at(t0 + Duration::nanoseconds(background_delay(i, pending)), [] {});
      }
      const MtOps ops(w);
      std::vector<typename Service::TimerId> ids(ops.slots(s.threads));  // slot: its thread's
      auto arm = [&](std::size_t slot, std::int64_t d) {
        ids[slot] = svc.schedule_at(svc.now() + Duration::nanoseconds(d), [] {});
      };
      auto disarm = [&](std::size_t slot) { svc.cancel(ids[slot]); };
      ops.prearm(s.threads, arm);
      return run_threads(s, [&](std::size_t t, std::uint64_t k) { ops.step(t, k, arm, disarm); });
    });
  }

  Histogram lateness(const CellSettings& s) override {
    return with_queue_type<TaskPtr, P>(s_, [&]<class Q>() {
      TimerService<Q, P> svc;
      return timer_lateness(s, svc.now(), [&](std::size_t, Instant d, std::function<void()> cb) {
        svc.schedule_at(d, std::move(cb));
      });
    });
  }

  Histogram cancel_to_resume(const CellSettings& s) override {
    return with_queue_type<TaskPtr, P>(s_, [&]<class Q>() {
      TimerService<Q, P> svc;
      return waiter_cancel_to_resume<P>(svc, s);
    });
  }

 private:
  Strategy s_;
};

}  // namespace

std::unique_ptr<Subject> make_strategy_subject(std::string_view strategy) {
  const auto s = strategy_from_name(strategy);
  if (!s) return nullptr;
  return std::make_unique<StrategySubject>(*s);
}

}  // namespace tlab::tool::compare
