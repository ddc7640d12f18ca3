// tlab/tool/runner/executor_case.h: the kExecutor engine's case (engines.h): seed 003's
// Executor<P> with worker churn, P = StressPlatform on real threads, or SimPlatform
// under deterministic simulation (run_in_sim): the actors, the workers and the
// metronome are tasks of one seeded scheduler on virtual time, the runner's own
// locks are SimMutexes (a handle's lock is held across Executor::cancel, a
// scheduling point), and the drain and shutdown are bounded by virtual time and by
// the scheduler (a shutdown that never returns ends the run as a deadlock).
//
// The executor always uses its per-worker wheels (that is its design, seed 003); the
// case's strategy is recorded but not used, and the message says so.
//
// Actors:
//   scheduler     one handle per operation (waiting while run.max_pending handles
//                 are live), armed delay_us ahead from outside the
//                 executor (the submission path); with cancel_probability it is
//                 cancelled at once and, if that won, RE-ARMED two ticks later than
//                 before: the re-arm after a cancel is where a generation bug bites
//   thrower       handles whose callback throws
//   canceller     after delay_us, cancels a random live handle
//   worker_churn  every period_us stops a random worker and restarts it. Right
//                 before each stop it posts kWindowTasks tasks to that worker, each
//                 scheduling (on the worker, the local path) a timer one sampled
//                 period_us ahead: work still running when the stop begins (issue
//                 10 section 6). After the run, a final drain does the same to
//                 every worker in turn, with no restart, before shutdown(); there
//                 the worker is first held inside a task until the stop has been
//                 called, so that the window's tasks are still queued when the
//                 stop begins even on a loaded machine.
//
// Oracles (each handle keeps a record of its arming under a mutex; the callback
// checks it): early_fire (a fire before the current arming's deadline: the old
// entry of a re-armed handle), fired_after_cancel, double_resume (two fires of one
// arming), lost_timer (due before the drain horizon, never fired), task_exceptions
// (throws not counted in Stats::callback_errors), conservation (the runner's
// armings = fired + cancelled + pending, and its counts equal Executor::stats()),
// stop_conservation (per stop, judged once shutdown() has settled every timer: each
// timer its stop window scheduled ended exactly once, fired, cancelled, or returned
// by shutdown(); and shutdown()'s count equals the handles it returned).
//
// Memory: records cost O(live handles) (Handle), plus kWindowTasks records per
// worker stop, kept to the end because a stop's ledger is judged after shutdown().
//
// The callback scripts are defined in executor_scripts.h, the end of the case
// (drain, final drain, shutdown, conservation) in executor_case_end.h; the engine
// (engine_executor.cc) includes both.
#pragma once

#include <array>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>

#include <fmt/format.h>

#include "base/stall_clock.h"
#include "runner/engines.h"
#include "runner/sim_run.h"
#include "tlab/executor.h"
#include "tlab/platform/sim_platform.h"
#include "tlab/platform/stress_platform.h"

namespace tlab::tool::runner::executor_engine {

template <class P>
inline constexpr bool kSim = std::is_same_v<P, SimPlatform>;

// The runner's own locks: std::mutex on real threads; simulated, SimMutex, since
// some are held across scheduling points (Handle::mu across Executor::cancel).
template <class P>
using CaseMutex = std::conditional_t<kSim<P>, SimMutex, std::mutex>;

enum class HState : std::uint8_t { kIdle, kArmed, kFired, kCancelled };

// Timer-scheduling tasks posted right before each stop: two, so that one may run in
// the worker's last ordinary run and the other in the stop itself, or both in it.
constexpr int kWindowTasks = 2;
// How long the drain's holding task keeps its worker busy after the stop is called:
// the stopper needs only a lock to mark the stop, and 5 ms outlasts a scheduling
// quantum on a loaded machine (CFS: a few ms), so the worker almost never resumes
// before the stop is marked. Three workers cost 15 ms per case.
constexpr std::int64_t kDrainHoldUs = 5000;
// The owner named in the final drain's findings.
const std::string kDrainName = "drain";

// A worker stop, and the ledger its window's timers are judged by.
struct StopRecord {
  std::size_t worker = 0;
  bool final = false;  // the drain before shutdown: no restart follows
};

// One handle's record while it can still change an oracle's answer. Owned by its
// timer's callback (shared_ptr) and by the live list until it is resolved (it fired,
// or a canceller's cancel won; the scheduler's own winning cancel re-arms it); then
// the counters hold its outcome and the live list drops it, so records cost O(live
// handles), not O(operations). A later fire (a bug) still finds it via the callback.
template <class P>
struct Handle {
  std::uint64_t id = 0;
  const std::string* owner = nullptr;  // ActorState::name: outlives the case
  bool thrower = false;
  const Actor* script = nullptr;  // the scheduler whose callback scripts it performs, or null
  // Its own timer, for re-arms from inside its callback: weak, since the timer's
  // callback owns this record (a cycle otherwise).
  std::weak_ptr<TimerCell<P>> self;
  std::size_t live_at = 0;  // handles_mu_: index in live_ while live
  std::uint64_t stop = 0;   // 1-based index into stops_ if a stop window's task arms it
  CaseMutex<P> mu;
  HState state = HState::kArmed;  // mu; kIdle until a stop window's task arms it
  std::uint64_t seq = 0;          // mu: armings of this handle
  std::int64_t deadline = 0;      // mu: current arming's deadline
  std::uint64_t fires = 0;        // mu
};

template <class P>
class ExecutorCase {
 public:
  using Exec = Executor<P>;
  using Stats = typename Exec::Stats;
  using Timer = typename Exec::Timer;
  using Handle = executor_engine::Handle<P>;
  using Mutex = CaseMutex<P>;

  explicit ExecutorCase(CaseContext& ctx) : ctx_(ctx), s_(ctx.scenario()) {}

  void run() {
    ctx_.note(fmt::format("the executor uses per-worker wheels by design; strategy {} is not used",
                          ctx_.spec().strategy));
    typename Exec::Config cfg;
    cfg.workers = static_cast<std::size_t>(s_.engine.workers);
    cfg.resolution = Duration::microseconds(s_.engine.tick_us);
    exec_ = std::make_unique<Exec>(cfg, clock_);
    workers_log_ = &ctx_.log_of(ctx_.add_actor("workers#0"));
    struct Run {
      const Actor* a;
      ActorState* st;
      std::size_t index;
      std::uint64_t quota;
    };
    std::vector<Run> runs;
    std::size_t index = 0, producers_n = 0, k = 0;
    for (const Actor& a : s_.actors) {
      if (a.role == Role::kScheduler || a.role == Role::kThrower) producers_n += a.count;
    }
    for (const Actor& a : s_.actors) {
      if (a.role == Role::kScheduler && a.mode != ScheduleMode::kOnce) {
        throw std::invalid_argument("executor timers are one-shot: scheduler mode must be once");
      }
      for (int i = 0; i < a.count; ++i, ++index) {
        const bool producer = a.role == Role::kScheduler || a.role == Role::kThrower;
        runs.push_back({&a, &ctx_.add_actor(fmt::format("{}#{}", name_of(a.role), i)), index,
                        producer ? ctx_.share(k++, producers_n) : 0});
      }
    }
    ctx_.actors_ready();
    std::vector<ThreadOf<P>> producers, others;
    for (Run& r : runs) {
      auto body = [this, r]() mutable {
        stress::seed_thread(ctx_.thread_seed(r.index));
        std::mt19937_64 rng = ctx_.rng_for(r.index);
        ActorLog& log = ctx_.log_of(*r.st);
        switch (r.a->role) {
          case Role::kWorkerChurn:
            churn_loop(*r.a, *r.st, rng);
            break;
          case Role::kCanceller:
            canceller_loop(*r.a, *r.st, rng, log);
            break;
          default:
            producer_loop(*r.a, *r.st, rng, log, r.quota);
            break;
        }
        r.st->set(Phase::kDone);
      };
      const bool producer = r.a->role == Role::kScheduler || r.a->role == Role::kThrower;
      (producer ? producers : others).push_back(spawn_thread<P>(body));
    }
    for (auto& t : producers) t.join();
    producers_done_.store(true, std::memory_order::release);  // pairs with the loops' acquire
    {
      // Scripts act until the latest deadline the producers armed: a chain that
      // always re-arms ends there, and the drain after it.
      std::lock_guard lk(script_mu_);
      scripts_until_.store(latest_armed_, std::memory_order::relaxed);
    }
    for (auto& t : others) t.join();
    finish();
  }

 private:
  struct Live {
    std::shared_ptr<Handle> h;
    Timer timer;
  };

  std::int64_t now() const { return clock_.now().ns(); }
  // at: an instant of clock_ in ctx_'s timeline ("t=1.234ms").
  std::string at(std::int64_t clock_ns) const {
    if constexpr (kSim<P>) return ctx_.at(sim_case_ns(ctx_, clock_ns));
    return ctx_.at(clock_ns);
  }

  std::uint64_t live_count() {
    std::lock_guard lk(handles_mu_);
    return live_.size();
  }

  // The live handles still armed with a deadline at or before `t`.
  std::vector<std::shared_ptr<Handle>> armed_due_by(std::int64_t t) {
    std::vector<std::shared_ptr<Handle>> out;
    std::lock_guard lk(handles_mu_);
    for (const Live& l : live_) {
      std::lock_guard hk(l.h->mu);
      if (l.h->state == HState::kArmed && l.h->deadline <= t) out.push_back(l.h);
    }
    return out;
  }

  void on_fire(const std::shared_ptr<Handle>& hp) {
    Handle* h = hp.get();
    const std::int64_t t = now();
    std::int64_t deadline;
    bool resolved = false;
    {
      std::lock_guard lk(h->mu);
      deadline = h->deadline;
      if (h->state == HState::kCancelled) {
        ctx_.violation(
            Oracle::kFiredAfterCancel,
            fmt::format("handle #{} of {}: arming {} was cancelled (cancel returned true) yet "
                        "fired at {}",
                        h->id, *h->owner, h->seq, at(t)));
      } else if (h->state == HState::kFired) {
        ctx_.violation(Oracle::kDoubleResume,
                       fmt::format("handle #{} of {}: arming {} fired twice (again at {})", h->id,
                                   *h->owner, h->seq, at(t)));
      }
      if (t < deadline) {
        ctx_.violation(
            Oracle::kEarlyFire,
            fmt::format("handle #{} of {}: fired at {}, {} before the deadline {} of its "
                        "current arming {} (an entry of an earlier arming fired)",
                        h->id, *h->owner, at(t), fmt_ns(deadline - t), at(deadline), h->seq));
      }
      if (h->state == HState::kArmed) {
        h->state = HState::kFired;
        fired_.fetch_add(1, std::memory_order::relaxed);
        resolved = true;
      }
      ++h->fires;
    }
    if (resolved) retire(*h);
    {
      std::lock_guard lk(log_mu_);
      workers_log_->sample(Latency::kFireLateness, t - deadline);
    }
    if (resolved && h->script != nullptr) perform_script(hp);
    if (h->thrower) {
      thrown_.fetch_add(1, std::memory_order::relaxed);
      throw std::runtime_error(fmt::format("thrower handle #{} throws by design", h->id));
    }
  }

  // The handle is resolved: the live list drops it. Thread safety: once per
  // resolution, by the thread that resolved it.
  void retire(Handle& h) {
    std::lock_guard lk(handles_mu_);
    Live& last = live_.back();
    last.h->live_at = h.live_at;
    std::swap(live_[h.live_at], last);
    live_.pop_back();
  }

  // A new live handle: filled in under handles_mu_ (cancellers pick handles under
  // it), and these fields are immutable afterwards. A stop window's handle is also
  // kept in window_ for its stop's ledger.
  Live new_live(const std::string* owner, bool thrower, std::uint64_t stop,
                const Actor* script = nullptr) {
    auto h = std::make_shared<Handle>();
    h->owner = owner;
    h->thrower = thrower;
    h->stop = stop;
    h->script = script;
    if (stop != 0) h->state = HState::kIdle;
    Live l{h, Exec::make_timer([this, h] { on_fire(h); })};
    h->self = l.timer;
    std::lock_guard lk(handles_mu_);
    h->id = ++next_id_;
    h->live_at = live_.size();
    live_.push_back(l);
    if (stop != 0) window_.push_back(l);
    return l;
  }

  // A resolved handle re-armed from inside its callback is live again.
  void relive(const Live& l) {
    std::lock_guard lk(handles_mu_);
    l.h->live_at = live_.size();
    live_.push_back(l);
  }

  // The callback script of handle h, on the firing worker, after on_fire resolved
  // its arming (the header above). No runner lock is held across a draw and an
  // Executor call together except a handle's own mu (CaseMutex, as cancel() does).
  void perform_script(const std::shared_ptr<Handle>& hp);

  // The script's re-arm: the handle's next arming, from inside its own callback.
  void rearm_from_callback(const Live& l, std::int64_t delay_ns);

  // A live handle other than `self` to cancel: one still armed and due by now_ns
  // among kSiblingTries random picks, else the first armed one picked. The picks
  // are copied under handles_mu_ and judged after it is released (a handle's mu is
  // taken alone, as everywhere).
  Live pick_sibling(const Handle& self, std::int64_t now_ns);

  // `log` is null on a worker (a stop window's task): actor logs are single-threaded.
  // Returns the arming's deadline.
  std::int64_t arm(Handle& h, const Timer& timer, Duration d, ActorLog* log) {
    const std::int64_t t0 = now();
    const std::int64_t deadline = (Instant::from_ns(t0) + d).ns();
    {
      std::lock_guard lk(h.mu);
      h.state = HState::kArmed;
      ++h.seq;
      h.deadline = deadline;
    }
    exec_->schedule_at(timer, Instant::from_ns(t0) + d);
    if (log != nullptr) log->sample(Latency::kScheduleCost, now() - t0);
    armings_.fetch_add(1, std::memory_order::relaxed);
    return deadline;
  }

  // cancel: `rearm` says the caller re-arms the handle after a win (it stays live).
  // `log` is null on a worker (a callback's script).
  bool cancel(Handle& h, const Timer& timer, ActorLog* log, bool rearm) {
    {
      std::lock_guard lk(h.mu);
      if (h.state != HState::kArmed) return false;
      const std::int64_t t0 = now();
      const bool won = exec_->cancel(timer);
      if (log != nullptr) log->sample(Latency::kCancelCost, now() - t0);
      if (!won) return false;
      h.state = HState::kCancelled;
      cancelled_.fetch_add(1, std::memory_order::relaxed);
    }
    if (!rearm) retire(h);
    return true;
  }

  void producer_loop(const Actor& a, ActorState& st, std::mt19937_64& rng, ActorLog& log,
                     std::uint64_t quota) {
    const bool thrower = a.role == Role::kThrower;
    const bool scripted = !thrower && a.scripts_callbacks();
    std::int64_t latest = INT64_MIN;  // the latest deadline this producer armed
    while (ctx_.take_op(quota)) {
      while (live_count() >= s_.run.max_pending && !ctx_.stopping()) {
        st.set(Phase::kWaiting);
        case_sleep_us(ctx_, 100);
      }
      const Live l = new_live(&st.name, thrower, 0, scripted ? &a : nullptr);
      Handle* h = l.h.get();
      const Timer& timer = l.timer;
      const std::int64_t d_us = a.delay_us->sample(rng);
      st.set(Phase::kWorking, h->id);
      latest = std::max(latest, arm(*h, timer, Duration::microseconds(d_us), &log));
      st.ops.fetch_add(1, std::memory_order::relaxed);
      if (!thrower && a.cancel_probability > 0 &&
          std::bernoulli_distribution(a.cancel_probability)(rng)) {
        if (cancel(*h, timer, &log, /*rearm=*/true)) {
          latest = std::max(
              latest, arm(*h, timer, Duration::microseconds(d_us + 2 * s_.engine.tick_us), &log));
        }
      }
    }
    std::lock_guard lk(script_mu_);
    latest_armed_ = std::max(latest_armed_, latest);
  }

  void canceller_loop(const Actor& a, ActorState& st, std::mt19937_64& rng, ActorLog& log) {
    while (!producers_done_.load(std::memory_order::acquire) && !ctx_.stopping()) {
      st.set(Phase::kSleeping);
      case_sleep_us(ctx_, a.delay_us->sample(rng));
      Live l;
      {
        std::lock_guard lk(handles_mu_);
        if (!live_.empty()) {
          l = live_[std::uniform_int_distribution<std::size_t>(0, live_.size() - 1)(rng)];
        }
      }
      if (l.h == nullptr) continue;
      st.set(Phase::kWorking, l.h->id);
      cancel(*l.h, l.timer, &log, /*rearm=*/false);
      st.ops.fetch_add(1, std::memory_order::relaxed);
    }
  }

  void churn_loop(const Actor& a, ActorState& st, std::mt19937_64& rng) {
    const std::size_t n = static_cast<std::size_t>(s_.engine.workers);
    while (!producers_done_.load(std::memory_order::acquire) && !ctx_.stopping()) {
      st.set(Phase::kSleeping);
      case_sleep_us(ctx_, a.period_us->sample(rng));
      const std::size_t w = std::uniform_int_distribution<std::size_t>(0, n - 1)(rng);
      st.set(Phase::kWorking, w + 1);
      stop_with_window(w, false, &st.name, Duration::microseconds(a.period_us->sample(rng)));
      case_sleep_us(ctx_, 0);
      exec_->start_worker(w);
      st.ops.fetch_add(1, std::memory_order::relaxed);
    }
  }

  // Posts kWindowTasks timer-scheduling tasks to worker w, then stops it at once:
  // the tasks run in w's last ordinary run or in the stop itself. With `final`
  // (the drain), w is first held inside a task (see kDrainHoldUs), so the window's
  // tasks, posted after that task began, are left for the stop to run.
  void stop_with_window(std::size_t w, bool final, const std::string* owner, Duration d) {
    const std::uint64_t stop = record_stop(w, final);
    // 0 posted, 1 the holding task runs, 2 the stop is being called. The holding
    // task ends before stop_worker() returns (it joins w), so `gate` outlives it.
    std::atomic<int> gate{0};
    const bool held = final && exec_->post(w, [this, &gate] {
      gate.store(1, std::memory_order::release);  // pairs with the stopper's acquire
      // acquire: pairs with the stopper's release store of 2.
      while (gate.load(std::memory_order::acquire) < 2 && !ctx_.stopping()) {
        case_sleep_us(ctx_, 0);
      }
      case_sleep_us(ctx_, kDrainHoldUs);
    });
    // acquire: pairs with the holding task's release store of 1.
    while (held && gate.load(std::memory_order::acquire) < 1 && !ctx_.stopping()) {
      case_sleep_us(ctx_, 0);
    }
    for (int i = 0; i < kWindowTasks; ++i) {
      const Live l = new_live(owner, false, stop);
      exec_->post(w, [this, l, d] { arm(*l.h, l.timer, d, nullptr); });
    }
    gate.store(2, std::memory_order::release);
    exec_->stop_worker(w);
    ctx_.add("worker_stops");
  }

  std::uint64_t record_stop(std::size_t w, bool final) {
    std::lock_guard lk(stops_mu_);
    stops_.push_back(StopRecord{w, final});
    return stops_.size();
  }

  // finish: the drain, the final drain, the shutdown and every end-of-case check
  // (executor_case_end.h).
  void finish();

  // Shuts down with a bound on real threads: a worker that cannot be stopped ends
  // the child.
  void shutdown_bounded();

  // Conservation, checked only once the executor is quiescent (after shutdown()
  // joined every thread): while workers run, timers due after the horizon keep
  // firing, so the runner's counters, its handle scan and Executor::stats() would
  // be read at different moments and disagree without any bug. Timers still
  // pending at shutdown are abandoned by the executor and stay armed here.
  void check_conservation(const Stats& after);

  // stop_conservation, after shutdown() (quiescent): per stop, each timer its
  // window scheduled ended exactly once: fired, cancelled (a cancel() that returned
  // true), or returned by shutdown() (still armed here, no longer pending in the
  // executor). A lost timer ends zero times, a fire after a cancel or a second fire
  // twice; so does a returned timer that also fired. Then shutdown()'s count must
  // equal the handles it returned, over all handles.
  void check_stop_conservation();

  CaseContext& ctx_;
  const Scenario& s_;
  typename P::Clock clock_;
  std::unique_ptr<Exec> exec_;
  ActorLog* workers_log_ = nullptr;  // log_mu_
  Mutex log_mu_;
  Mutex handles_mu_;
  std::vector<Live> live_;     // handles_mu_: unresolved handles (Handle says when one leaves)
  std::uint64_t next_id_ = 0;  // handles_mu_
  std::atomic<std::uint64_t> armings_{0}, fired_{0}, cancelled_{0}, thrown_{0};
  std::vector<Live> window_;  // handles_mu_ (appended); every stop window's handle
  std::atomic<bool> producers_done_{false};
  Mutex script_mu_;
  std::mt19937_64 script_rng_ = ctx_.rng_for(~std::size_t{0});  // script_mu_
  std::int64_t latest_armed_ = INT64_MIN;                       // script_mu_
  // relaxed: a late stop only lets a few more actions through.
  std::atomic<std::int64_t> scripts_until_{INT64_MAX};
  Mutex stops_mu_;
  std::deque<StopRecord> stops_;  // appended under stops_mu_; read after the joins
  std::size_t returned_ = 0;      // shutdown()'s count; read after its thread is joined
};

}  // namespace tlab::tool::runner::executor_engine
