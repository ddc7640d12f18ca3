// tlab/tool/runner/engine_subject_wait.cc: one scenario case on a timed wait that
// speaks the subject ABI (TLAB_KIND_TIMED_WAIT: a timed mutex, a semaphore, a
// pool's checkout).
//
// Each mutex_contender or pool_client thread, per operation: acquire_for(
// timeout_us), and when acquired, hold for hold_us and release(); between two
// operations it pauses delay_us, if the actor has one. Always on the
// real clock (the calls block). config.permits is engine.pool_size when the
// scenario has pool_client actors (a pool of that many), else 1 (a timed mutex).
//
//   | oracle           | finding                                                         |
//   |------------------|-----------------------------------------------------------------|
//   | mutual_exclusion | more than `permits` holders at once (counted between           |
//   |                  | acquire_for's return and the call to release)                   |
//   | early_fire       | acquire_for(t > 0) returned "not acquired" before t had elapsed |
//   |                  | (steady time around the call)                                   |
//   | lost_wakeup      | blocked in acquire_for past t + lost_wakeup_grace_ns: the actor |
//   |                  | is published kParked with its deadline, the watchdog judges it  |
//   | undeserved_      | acquire_for said "not acquired" though fewer than `permits`     |
//   | timeout          | holders (tlab's count: from acquire_for's "acquired" until      |
//   |                  | release() returned) for lost_wakeup_grace_ns of the call        |
//   |                  | (oracles/availability_ledger.h)                                 |
// Status codes: TLAB_EINVAL for a negative timeout is a refusal (counter
// "refused"); any other non-OK status is a driver error.
//
// Ground rules: blocking calls are never serialised (a holder must be able to
// release while another thread waits), so subject_accepts refuses several
// threads on a subject that is not THREAD_SAFE. holders_ is an atomic count.
#include <atomic>
#include <optional>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

#include "runner/engine_subject_calls.h"
#include "runner/engines.h"

namespace tlab::tool::runner {

namespace {

class TimedWaitCase {
 public:
  TimedWaitCase(CaseContext& ctx, const tlab_subject& d) : ctx_(ctx), s_(ctx.scenario()), d_(d) {}

  void run() {
    permits_ = count_of(s_, Role::kPoolClient) > 0 ? static_cast<std::uint32_t>(s_.engine.pool_size)
                                                    : 1;
    if (s_.engine.clock == ClockKind::kVirtual) {
      ctx_.note("engine.clock virtual: a timed wait blocks, so the case ran on the real clock");
    }
    if (!s_.faults.empty()) ctx_.note("faults not injected (core fault points)");
    struct Run {
      const Actor* spec;
      ActorState* st;
      std::size_t index;
      std::uint64_t quota = 0;
    };
    std::vector<Run> runs;
    std::array<int, kRoleCount> per_role{};
    for (const Actor& a : s_.actors) {
      if (a.role == Role::kTimerThread) {
        ctx_.note("timer_thread: a timed wait keeps its own timers; tlab polls nothing");
        continue;
      }
      for (int i = 0; i < a.count; ++i) {
        const int n = per_role[static_cast<std::size_t>(a.role)]++;
        runs.push_back({&a, &ctx_.add_actor(fmt::format("{}#{}", name_of(a.role), n)),
                        runs.size()});
      }
    }
    for (std::size_t k = 0; k < runs.size(); ++k) runs[k].quota = ctx_.share(k, runs.size());
    tlab_subject_config config{};
    config.struct_size = sizeof config;
    config.permits = permits_;
    config.now_ns = monotonic_ns();
    config.tick_ns = s_.engine.tick_us * 1000;
    config.host = this;
    config.fired = &TimedWaitCase::fired_cb;
    const std::int32_t st = d_.create(&config, &self_);
    if (st != TLAB_OK) {
      throw std::runtime_error(fmt::format("subject {}: create(permits={}) returned {}", d_.name,
                                           permits_, status_name(st)));
    }
    avail_.emplace(ctx_, permits_);
    ctx_.actors_ready();
    std::vector<std::thread> threads;
    for (Run& r : runs) {
      threads.emplace_back([this, &r] {
        std::mt19937_64 rng = ctx_.rng_for(r.index);
        holder_loop(*r.spec, *r.st, ctx_.log_of(*r.st), r.quota, rng);
        r.st->set(Phase::kDone);
      });
    }
    for (std::thread& t : threads) t.join();
    {
      std::lock_guard lk(err_mu_);
      if (!error_.empty()) throw std::runtime_error(error_);
    }
    d_.destroy(self_);
    ctx_.set_counter("permits", permits_);
  }

 private:
  static void fired_cb(void* host, std::uint64_t) {
    static_cast<TimedWaitCase*>(host)->ctx_.add("fired_calls_from_a_timed_wait");
  }

  void holder_loop(const Actor& a, ActorState& st, ActorLog& log, std::uint64_t quota,
                   std::mt19937_64& rng) {
    bool first = true;
    while (ctx_.take_op(quota)) {
      // The think time (delay_us) between two acquisitions: sparse contention.
      if (!first && a.delay_us) {
        if (const std::int64_t us = a.delay_us->sample(rng); us > 0) sleep_us(ctx_, us);
      }
      first = false;
      const std::int64_t timeout = a.timeout_us->sample(rng) * 1000;  // |us| <= 9e15: fits
      std::int32_t acquired = 0;
      const std::int64_t t0 = steady_ns();
      st.deadline_ns.store(timeout >= 0 ? sat_add(t0, timeout) : 0, std::memory_order::relaxed);
      st.set(Phase::kParked, static_cast<std::uint64_t>(std::max<std::int64_t>(timeout, 0)));
      const AvailabilityLedger::Wait wait = avail_->ledger.begin();
      const std::int32_t rc = d_.acquire_for(self_, timeout, &acquired);
      // A refused or failed call waited for nothing: its window is empty (deadline t0).
      avail_->ledger.end(wait, rc == TLAB_OK && acquired != 0,
                         rc == TLAB_OK ? sat_add(t0, timeout) : t0, st.name);
      const std::int64_t t1 = steady_ns();
      st.deadline_ns.store(0, std::memory_order::relaxed);
      st.set(Phase::kWorking);
      st.ops.fetch_add(1, std::memory_order::relaxed);
      if (rc == TLAB_EINVAL && timeout < 0) {
        ctx_.add("refused");
        continue;
      }
      if (rc != TLAB_OK) {
        return fail(fmt::format("{}: acquire_for({} ns) at {} returned {}", st.name, timeout,
                                ctx_.at(t0), status_name(rc)));
      }
      if (acquired == 0) {
        ctx_.add("timeouts");
        if (timeout <= 0) continue;
        log.sample(Latency::kFireLateness, (t1 - t0) - timeout);
        if (t1 - t0 < timeout) {
          ctx_.violation(Oracle::kEarlyFire,
                         fmt::format("{}: acquire_for({} ns) called at {} returned \"not "
                                     "acquired\" at {}, after {}: {} before its timeout",
                                     st.name, timeout, ctx_.at(t0), ctx_.at(t1), fmt_ns(t1 - t0),
                                     fmt_ns(timeout - (t1 - t0))));
        }
        continue;
      }
      ctx_.add("acquired");
      // relaxed: a count of holders; the subject's own acquire/release order them.
      const std::uint32_t held = holders_.fetch_add(1, std::memory_order::relaxed) + 1;
      if (held > permits_) {
        ctx_.violation(Oracle::kMutualExclusion,
                       fmt::format("{}: acquire_for({} ns) returned \"acquired\" at {} while {} "
                                   "other holders had not released (permits {})",
                                   st.name, timeout, ctx_.at(t1), held - 1, permits_));
      }
      st.set(Phase::kHolding);
      if (a.hold_us) sleep_us(ctx_, a.hold_us->sample(rng));
      holders_.fetch_sub(1, std::memory_order::relaxed);
      const std::int32_t rr = d_.release(self_);
      avail_->ledger.released();
      if (rr != TLAB_OK) {
        return fail(fmt::format("{}: release() after a hold at {} returned {}", st.name,
                                ctx_.at(steady_ns()), status_name(rr)));
      }
    }
  }

  void fail(const std::string& what) {
    {
      std::lock_guard lk(err_mu_);
      if (error_.empty()) error_ = fmt::format("subject {}: {}", d_.name, what);
    }
    ctx_.stop();
  }

  // Avail: the undeserved_timeout judge over `permits` units, on the steady clock.
  struct Avail {
    Avail(CaseContext& ctx, std::uint32_t permits)
        : ledger(availability_ledger(ctx, {permits, 0, "a permit", "acquire_for", true},
                                     [] { return steady_ns(); })) {}
    AvailabilityLedger ledger;
  };

  CaseContext& ctx_;
  const Scenario& s_;
  const tlab_subject& d_;
  std::optional<Avail> avail_;  // built in run(), once permits_ is known
  void* self_ = nullptr;
  std::uint32_t permits_ = 1;
  std::atomic<std::uint32_t> holders_{0};
  std::mutex err_mu_;
  std::string error_;  // err_mu_
};

}  // namespace

void run_timed_wait_case(CaseContext& ctx, const tlab_subject& d) {
  TimedWaitCase c(ctx, d);
  c.run();
}

}  // namespace tlab::tool::runner
