// tlab/tool/runner/engine_executor.cc: the kExecutor engine (engines.h): seed 003's
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
// Callback scripts (a scheduler with callback_* probabilities, scenario.h): each
// fire of one of its handles draws, from one generator under script_mu_, what its
// callback does on the worker, inside the callback, before it returns:
//   self-cancel  Executor::cancel of its own handle: the arming is firing, so
//                true is fired_after_cancel (it prevented nothing)
//   sibling      cancel of another live handle, one due by now when one of
//                kSiblingTries random picks is (a sibling taken by the same poll,
//                not yet run): a win that fires anyway is fired_after_cancel
//   re-arm       the handle re-armed from inside its own callback (the executor's
//                idiom: a handle is kept and re-armed), callback_rearm_delay_us
//                ahead on the local path; a negative delay must be refused
//                (std::invalid_argument), else wrong_result. The new arming is
//                judged as any: early, lost, stop and shutdown conservation
// Scripts act until the latest deadline the producers armed (scripts_until_), so
// chains end; counters callback_self_cancels, callback_cancels, callback_rearms,
// callback_rearms_refused. The same draws replay exactly under simulation.
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

namespace tlab::tool::runner {

namespace {

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
  using Handle = runner::Handle<P>;
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
                        h->id, *h->owner, at(t), fmt_ns(deadline - t), at(deadline),
                        h->seq));
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
  void perform_script(const std::shared_ptr<Handle>& hp) {
    Handle& h = *hp;
    if (now() > scripts_until_.load(std::memory_order::relaxed)) return;
    const Actor& a = *h.script;
    bool self, sibling, rearm;
    std::int64_t delay_ns = 0;
    {
      std::lock_guard lk(script_mu_);
      auto draw = [this](double p) {
        return p > 0 && std::bernoulli_distribution(p)(script_rng_);
      };
      self = draw(a.callback_self_cancel_probability);
      sibling = draw(a.callback_cancel_probability);
      rearm = draw(a.callback_rearm_probability);
      // |callback_rearm_delay_us| <= 9e15 (the schema), so * 1000 fits.
      if (rearm && a.callback_rearm_delay_us) {
        delay_ns = a.callback_rearm_delay_us->sample(script_rng_) * 1000;
      }
    }
    const Timer me = h.self.lock();  // the firing worker holds its entry's timer
    if (me == nullptr) return;
    if (self) {
      ctx_.add("callback_self_cancels");
      if (exec_->cancel(me)) {
        ctx_.violation(Oracle::kFiredAfterCancel,
                       fmt::format("handle #{} of {}: cancel() from inside its own callback "
                                   "returned true at {}, but arming {} was already firing (its "
                                   "callback was running): the cancel prevented nothing",
                                   h.id, *h.owner, at(now()), h.seq));
      }
    }
    if (sibling) {
      const Live target = pick_sibling(h, now());
      if (target.h != nullptr) {
        ctx_.add("callback_cancels");
        cancel(*target.h, target.timer, nullptr, /*rearm=*/false);
      }
    }
    if (rearm) rearm_from_callback(Live{hp, me}, delay_ns);
  }

  // The script's re-arm: the handle's next arming, from inside its own callback.
  void rearm_from_callback(const Live& l, std::int64_t delay_ns) {
    Handle& h = *l.h;
    if (delay_ns >= 0) {
      relive(l);
      arm(h, l.timer, Duration::nanoseconds(delay_ns), nullptr);
      ctx_.add("callback_rearms");
      return;
    }
    const std::int64_t t0 = now();
    try {
      exec_->schedule(l.timer, Duration::nanoseconds(delay_ns));
    } catch (const std::invalid_argument&) {
      ctx_.add("callback_rearms_refused");
      return;
    }
    // Accepted: judged as an arming at once, so that the rest of the case stays exact.
    ctx_.violation(Oracle::kWrongResult,
                   fmt::format("handle #{} of {}: Executor::schedule with a negative delay ({}) "
                               "from inside its callback was accepted; it must throw "
                               "std::invalid_argument",
                               h.id, *h.owner, fmt_ns(delay_ns)));
    {
      std::lock_guard lk(h.mu);
      h.state = HState::kArmed;
      ++h.seq;
      h.deadline = t0;
    }
    relive(l);
    armings_.fetch_add(1, std::memory_order::relaxed);
  }

  // A live handle other than `self` to cancel: one still armed and due by now_ns
  // among kSiblingTries random picks, else the first armed one picked. The picks
  // are copied under handles_mu_ and judged after it is released (a handle's mu is
  // taken alone, as everywhere).
  Live pick_sibling(const Handle& self, std::int64_t now_ns) {
    std::array<Live, kSiblingTries> picked;
    std::size_t n = 0;
    {
      std::lock_guard lk(handles_mu_);
      std::lock_guard slk(script_mu_);
      for (; n < picked.size() && !live_.empty(); ++n) {
        picked[n] =
            live_[std::uniform_int_distribution<std::size_t>(0, live_.size() - 1)(script_rng_)];
      }
    }
    Live any;
    for (std::size_t i = 0; i < n; ++i) {
      const Live& l = picked[i];
      if (l.h.get() == &self) continue;
      std::int64_t due;
      {
        std::lock_guard lk(l.h->mu);
        if (l.h->state != HState::kArmed) continue;
        due = l.h->deadline;
      }
      if (due <= now_ns) return l;
      if (any.h == nullptr) any = l;
    }
    return any;
  }


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

  void finish() {
    const std::int64_t horizon = now();
    const std::int64_t budget_third = static_cast<std::int64_t>(ctx_.spec().budget_s * 1e9 / 3);
    // The drain's limit is counted on the stall clock (stall_clock.h): workers
    // starved of CPU on a loaded machine are given the time they lost. Simulated,
    // on virtual time, where nobody starves.
    const std::int64_t drain_ns =
        std::min(budget_third, std::max<std::int64_t>(100'000'000, 40 * s_.engine.tick_us * 1000));
    for (;;) {
      const bool settled = armed_due_by(horizon).empty();
      const std::int64_t waited =
          kSim<P> ? now() - horizon : stall_clock().effective_ns(horizon, now());
      if (settled || waited >= drain_ns || ctx_.stopping()) break;
      case_sleep_us(ctx_, 1000);
    }
    const Stats st = exec_->stats();
    for (const std::shared_ptr<Handle>& hp : armed_due_by(ctx_.stopping() ? INT64_MIN : horizon)) {
      const Handle& h = *hp;
      std::lock_guard lk(hp->mu);
      if (h.state == HState::kArmed) {
        ctx_.violation(
            Oracle::kLostTimer,
            fmt::format("handle #{} of {}: arming {} due at {} never fired nor was cancelled by "
                        "{} (entries migrated by worker stops so far: {})",
                        h.id, *h.owner, h.seq, at(h.deadline), at(now()), st.migrated));
      }
    }
    ctx_.set_counter("executor_migrated", st.migrated);
    ctx_.set_counter("executor_stale_skipped", st.stale_skipped);
    // The final drain: every worker stops in turn with work in its stop window and
    // stays stopped, so what the last stops hand over is returned by shutdown().
    if (!ctx_.stopping()) {
      for (std::size_t w = 0; w < static_cast<std::size_t>(s_.engine.workers); ++w) {
        stop_with_window(w, true, &kDrainName, Duration::microseconds(s_.engine.tick_us));
      }
    }
    if constexpr (kSim<P>) {
      // A shutdown that never returns leaves every task blocked (or spinning): the
      // scheduler ends the run as a deadlock (lost_wakeup) or at its step limit.
      returned_ = exec_->shutdown();
    } else {
      shutdown_bounded();
    }
    const std::uint64_t thrown = thrown_.load();
    const Stats after = exec_->stats();
    check_conservation(after);
    check_stop_conservation();
    if (after.callback_errors != thrown) {
      ctx_.violation(
          Oracle::kTaskExceptions,
          fmt::format("{} thrower callbacks threw but the executor counted {} callback errors",
                      thrown, after.callback_errors));
    }
  }

  // Shuts down with a bound on real threads: a worker that cannot be stopped ends
  // the child.
  void shutdown_bounded() {
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::thread t([this, done] {
      returned_ = exec_->shutdown();
      done->store(true, std::memory_order::release);  // pairs with the load below
    });
    const std::int64_t asked = steady_ns();
    constexpr std::int64_t kShutdownLimitNs = 2'000'000'000;
    while (!done->load(std::memory_order::acquire) &&
           stall_clock().effective_ns(asked, steady_ns()) < kShutdownLimitNs) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (!done->load(std::memory_order::acquire)) {
      t.detach();
      ctx_.violation(Oracle::kLostWakeup,
                     fmt::format("executor shutdown() did not return within {} of time the "
                                 "case's threads could run ({} of wall time)",
                                 fmt_ns(kShutdownLimitNs), fmt_ns(steady_ns() - asked)));
      emit_and_exit(ctx_, std::nullopt, "engine executor: shutdown hung; the case process exits");
    }
    t.join();
  }

  // Conservation, checked only once the executor is quiescent (after shutdown()
  // joined every thread): while workers run, timers due after the horizon keep
  // firing, so the runner's counters, its handle scan and Executor::stats() would
  // be read at different moments and disagree without any bug. Timers still
  // pending at shutdown are abandoned by the executor and stay armed here.
  void check_conservation(const Stats& after) {
    const std::uint64_t open = armed_due_by(INT64_MAX).size();
    const std::uint64_t armings = armings_.load(), fired = fired_.load(),
                        cancelled = cancelled_.load();
    ctx_.set_counter("armed", armings);
    ctx_.set_counter("fired", fired);
    ctx_.set_counter("cancelled", cancelled);
    ctx_.set_counter("pending", open);
    if (!ctx_.stopping() &&
        (armings != fired + cancelled + open || after.fired != fired ||
         after.cancelled != cancelled)) {
      ctx_.violation(
          Oracle::kConservation,
          fmt::format("runner: armed {} = fired {} + cancelled {} + pending {}?; executor "
                      "stats after shutdown: scheduled {} fired {} cancelled {} abandoned {}",
                      armings, fired, cancelled, open, after.scheduled, after.fired,
                      after.cancelled, after.abandoned));
    }
  }

  // stop_conservation, after shutdown() (quiescent): per stop, each timer its
  // window scheduled ended exactly once: fired, cancelled (a cancel() that returned
  // true), or returned by shutdown() (still armed here, no longer pending in the
  // executor). A lost timer ends zero times, a fire after a cancel or a second fire
  // twice; so does a returned timer that also fired. Then shutdown()'s count must
  // equal the handles it returned, over all handles.
  void check_stop_conservation() {
    if (ctx_.stopping()) return;
    struct Ledger {
      std::uint64_t scheduled = 0, fired = 0, cancelled = 0, returned = 0;
      std::string first_bad;
    };
    std::vector<Ledger> ledgers(stops_.size());
    std::uint64_t returned_total = 0, window_timers = 0;
    {
      std::lock_guard lk(handles_mu_);
      for (const Live& l : live_) {  // every unresolved handle, a window's or not
        std::lock_guard hk(l.h->mu);
        if (l.h->state == HState::kArmed && !TimerCell<P>::pending(l.timer->state())) {
          ++returned_total;
        }
      }
    }
    for (const Live& l : window_) {
      const Handle& h = *l.h;
      std::lock_guard lk(l.h->mu);
      if (h.seq == 0) continue;  // its post was refused
      const bool returned = h.state == HState::kArmed && !TimerCell<P>::pending(l.timer->state());
      Ledger& led = ledgers[h.stop - 1];
      const std::uint64_t cancelled = h.state == HState::kCancelled ? 1 : 0;
      const std::uint64_t ends = h.fires + cancelled + (returned ? 1 : 0);
      ++window_timers;
      led.scheduled += h.seq;
      led.fired += h.fires;
      led.cancelled += cancelled;
      led.returned += returned ? 1 : 0;
      if (ends != h.seq && led.first_bad.empty()) {
        led.first_bad = fmt::format(
            "handle #{} due at {} ended {} times (fires {}, cancelled {}, returned {}; {} in "
            "the executor)",
            h.id, at(h.deadline), ends, h.fires, cancelled, returned ? 1 : 0,
            TimerCell<P>::pending(l.timer->state()) ? "still pending" : "resolved");
      }
    }
    ctx_.set_counter("stop_window_timers", window_timers);
    for (std::size_t i = 0; i < ledgers.size(); ++i) {
      const Ledger& l = ledgers[i];
      if (l.first_bad.empty()) continue;
      ctx_.violation(
          Oracle::kStopConservation,
          fmt::format("stop #{} of worker {} ({}): scheduled {} != fired {} + "
                      "cancelled {} + returned {}, or a timer counted twice: {}",
                      i + 1, stops_[i].worker, stops_[i].final ? "final drain" : "restarted",
                      l.scheduled, l.fired, l.cancelled, l.returned, l.first_bad));
    }
    if (returned_total != returned_) {
      ctx_.violation(Oracle::kStopConservation,
                     fmt::format("shutdown() returned {} timers but {} handles were left armed "
                                 "and resolved by it",
                                 returned_, returned_total));
    }
  }

  CaseContext& ctx_;
  const Scenario& s_;
  typename P::Clock clock_;
  std::unique_ptr<Exec> exec_;
  ActorLog* workers_log_ = nullptr;  // log_mu_
  Mutex log_mu_;
  Mutex handles_mu_;
  std::vector<Live> live_;    // handles_mu_: unresolved handles (Handle says when one leaves)
  std::uint64_t next_id_ = 0;  // handles_mu_
  std::atomic<std::uint64_t> armings_{0}, fired_{0}, cancelled_{0}, thrown_{0};
  std::vector<Live> window_;  // handles_mu_ (appended); every stop window's handle
  std::atomic<bool> producers_done_{false};
  Mutex script_mu_;
  std::mt19937_64 script_rng_ = ctx_.rng_for(~std::size_t{0});  // script_mu_
  std::int64_t latest_armed_ = INT64_MIN;                        // script_mu_
  // relaxed: a late stop only lets a few more actions through.
  std::atomic<std::int64_t> scripts_until_{INT64_MAX};
  Mutex stops_mu_;
  std::deque<StopRecord> stops_;  // appended under stops_mu_; read after the joins
  std::size_t returned_ = 0;      // shutdown()'s count; read after its thread is joined
};

}  // namespace

void run_executor_engine(CaseContext& ctx) {
  if (!ctx.spec().sim) {
    ExecutorCase<StressPlatform>(ctx).run();
    return;
  }
  run_in_sim(ctx, sim::kSimEpoch, [&] { ExecutorCase<SimPlatform>(ctx).run(); });
}

}  // namespace tlab::tool::runner
