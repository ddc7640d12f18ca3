// tlab/platform/sim_scheduler.h: the deterministic scheduler behind SimPlatform
// (sim_platform.h): the shipped core/ templates run on cooperative tasks, one at
// a time, in an order chosen from a seed, on virtual time that really expires.
//
// A task is a real thread that runs only while it holds the baton; every atomic
// operation, lock, unlock, condition-variable wait and notify, fault point and
// yield of SimPlatform is a scheduling point (point()) at which the scheduler
// picks the next task to run. Between two points exactly one thread runs, so a run
// is a pure function of (the tasks' code, Options): the same seed gives the same
// schedule, the same trace hash and the same results, bit for bit.
//
//   | strategy | the next task at each point                                     |
//   |----------|-----------------------------------------------------------------|
//   | kRandom  | uniformly among the runnable tasks (a seeded random walk)       |
//   | kPct     | the runnable task of highest priority; priorities are a seeded  |
//   |          | permutation, and at pct_depth - 1 seeded change points (steps   |
//   |          | in [1, expected_steps]) the running task drops to the lowest   |
//   |          | priority (Burckhardt et al., "A Randomized Scheduler with       |
//   |          | Probabilistic Guarantees of Finding Bugs", ASPLOS 2010). A task |
//   |          | that yields (a spin loop) drops to the lowest priority too, or  |
//   |          | it would spin forever ahead of the task it waits for            |
//
// Time. now() starts at Options::epoch_ns (kSimEpoch by default) and moves only
// when no task can run: then it jumps to the earliest deadline of a timed block (a
// wait_until, a try_lock_for's wait), and every task blocked until then wakes
// timed out (with Options::step_ns, every point also costs that much virtual
// time, so code does not run in zero time). So a timed wait
// genuinely times out, at its virtual deadline, in exactly the schedules where
// nobody wakes it first; no wall-clock time passes (a run of hours of virtual time
// takes microseconds).
//
// Ends (Outcome::end): kCompleted, every task returned; kDeadlock, every task is
// blocked without a deadline (a lost notify: the tasks' names and what each
// waits on are in Outcome::blocked); kStepLimit, more than max_steps points (a
// livelock or a spin that never yields to progress). A run that does not complete
// leaves its tasks parked forever: their threads are detached and the state they
// share is kept alive, so the process can go on (a test process exits normally).
//
// Cost: one semaphore hand-off (two futex calls) per point that switches tasks;
// O(tasks) per choice. Ground rules: spawn() before run() from the driver thread,
// or from a running task; run() once, from a thread that is not a task. A task may
// block only through block(); any other blocking call (a std::mutex held across a
// point, I/O waiting on another task) hangs the run. Memory ordering: the baton
// hand-off is a release/acquire pair (std::binary_semaphore), so everything a task
// did before a point happens-before what the next task does after it; the tasks'
// own atomics may therefore be plain seq_cst std::atomics.
#pragma once

#include <cstdint>
#include <cstdio>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <semaphore>
#include <string>
#include <thread>
#include <vector>

#include "tlab/base/check.h"
#include "tlab/clock.h"

namespace tlab::sim {

enum class Strategy : std::uint8_t { kRandom, kPct };

struct Options {
  std::uint64_t seed = 1;
  Strategy strategy = Strategy::kRandom;
  int pct_depth = 3;                        // kPct: depth d (d - 1 change points)
  std::uint64_t expected_steps = 10'000;    // kPct: change points are drawn in [1, this]
  std::uint64_t max_steps = 10'000'000;     // beyond: End::kStepLimit
  std::int64_t epoch_ns = std::int64_t{1} << 40;  // now() when the run starts (kSimEpoch)
  // Virtual time one scheduling point takes (0: code runs in no time). With a cost,
  // a burst of operations spreads over time as on a real CPU, and a timed wait can
  // expire while other tasks still run.
  std::int64_t step_ns = 0;
};

enum class End : std::uint8_t { kCompleted, kDeadlock, kStepLimit };

struct Outcome {
  End end = End::kCompleted;
  std::uint64_t steps = 0;       // scheduling points passed
  std::uint64_t switches = 0;    // points at which another task was chosen
  std::uint64_t trace_hash = 0;  // FNV-1a over the task chosen at every point
  std::int64_t virtual_ns = 0;   // now() - Options::epoch_ns at the end
  std::string blocked;           // kDeadlock: "name#index (what it waits for)" per blocked task
};

// Where virtual time starts: far from 0 and from INT64_MAX, so that deadlines on
// both sides of it are representable.
inline constexpr std::int64_t kSimEpoch = std::int64_t{1} << 40;

class Scheduler {
 public:
  explicit Scheduler(Options o) : s_(std::make_shared<Shared>(o)) {}
  ~Scheduler() = default;
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // spawn: a new task running `body`, runnable from the next point (or run()).
  void spawn(std::string name, std::function<void()> body) {
    s_->spawn(std::move(name), std::move(body));
  }
  // run: runs every task to its end; the driver thread waits.
  Outcome run() { return s_->run(); }

  // ---- called by tasks (through SimPlatform); each requires a task caller ----
  // in_task: whether the calling thread is a task of a running scheduler.
  static bool in_task() { return tls_task() != nullptr; }
  // point: a scheduling point; the calling task may be suspended here.
  static void point() { caller().point(false); }
  // yield_point: a point that marks a spin (Platform::yield): under kPct the
  // caller drops below every other task, so a spinning task cannot starve the one
  // it waits for (priority scheduling would otherwise run it forever).
  static void yield_point() { caller().point(true); }
  // block: suspends the calling task until wake(on) or, with a deadline, until
  // virtual time reaches it. Returns true when it timed out.
  static bool block(const void* on, std::optional<Instant> deadline) {
    return caller().block(on, deadline);
  }
  // wake: makes runnable one (chosen from the seed) or all tasks blocked on `on`.
  static void wake(const void* on, bool all) { caller().wake(on, all); }
  // now: the virtual time of the calling task's run.
  static Instant now() { return Instant::from_ns(caller().now_ns); }
  // spawn_here: a new task of the calling task's run (a thread the code under
  // test starts: SimPlatform::spawn); returns its handle for join_task/id_of.
  static void* spawn_here(std::string name, std::function<void()> body) {
    return caller().spawn(std::move(name), std::move(body));
  }
  // join_task: blocks the calling task until task `handle` has returned.
  static void join_task(void* handle) {
    Shared& sh = caller();
    auto* t = static_cast<Task*>(handle);
    while (t->state != Task::State::kDone) sh.block(t, std::nullopt);
  }
  static std::thread::id id_of(void* handle) { return static_cast<Task*>(handle)->thread.get_id(); }

 private:
  struct Task {
    std::string name;
    std::function<void()> body;
    enum class State : std::uint8_t { kRunnable, kBlocked, kDone } state = State::kRunnable;
    const void* on = nullptr;
    std::optional<Instant> deadline;
    bool timed_out = false;
    std::uint64_t priority = 0;  // kPct: higher runs first
    std::binary_semaphore baton{0};
    std::thread thread;
  };

  struct Shared : std::enable_shared_from_this<Shared> {
    explicit Shared(Options o) : opt(o), rng(o.seed ^ 0x9e3779b97f4a7c15ULL) {
      if (o.strategy == Strategy::kPct) {
        std::uniform_int_distribution<std::uint64_t> at(1, std::max<std::uint64_t>(1, o.expected_steps));
        for (int i = 1; i < o.pct_depth; ++i) change_points.push_back(at(rng));
      }
    }

    Options opt;
    std::mt19937_64 rng;
    std::vector<std::uint64_t> change_points;
    std::vector<std::unique_ptr<Task>> tasks;
    Task* running = nullptr;
    std::int64_t now_ns = opt.epoch_ns;
    std::uint64_t demotions = 0;  // kPct: change points passed so far
    Outcome out;
    bool started = false;
    bool ended = false;
    std::binary_semaphore done{0};

    Task* spawn(std::string name, std::function<void()> body) {
      auto t = std::make_unique<Task>();
      t->name = std::move(name);
      t->body = std::move(body);
      // kPct: a random priority above every demoted one (change points hand out
      // ever lower ones below 2^31).
      t->priority = (std::uint64_t{1} << 32) + (rng() >> 32);
      Task* raw = t.get();
      tasks.push_back(std::move(t));
      if (started) start(raw);
      return raw;
    }

    void start(Task* t) {
      std::shared_ptr<Shared> self = shared_from_this();
      t->thread = std::thread([self, t] {
        tls_shared() = self.get();
        tls_task() = t;
        t->baton.acquire();  // pairs with the release in hand_to()
        t->body();
        self->finish(t);
      });
    }

    Outcome run() {
      TLAB_CHECK(!started && tls_task() == nullptr);
      started = true;
      for (auto& t : tasks) start(t.get());
      Task* first = choose(nullptr);
      if (first == nullptr) {
        out.end = End::kCompleted;
        return out;
      }
      hand_to(first);
      done.acquire();  // pairs with the release in end_run()
      if (out.end == End::kCompleted) {
        for (auto& t : tasks) t->thread.join();
      } else {
        // Parked tasks never resume; they keep `self` (this state) alive.
        for (auto& t : tasks) {
          if (t->thread.joinable()) t->thread.detach();
        }
      }
      out.virtual_ns = now_ns - opt.epoch_ns;
      return out;
    }

    void hand_to(Task* next) {
      running = next;
      next->baton.release();
    }

    // record: one step choosing `t` (FNV-1a over task indices).
    void record(const Task* t) {
      std::uint64_t index = 0;
      while (tasks[index].get() != t) ++index;
      out.trace_hash = (out.trace_hash ^ (index + 1)) * 0x100000001b3ULL;
    }

    // choose: the next task to run, after advancing virtual time if nothing can
    // run; nullptr when nothing ever will (all done, or a deadlock).
    Task* choose(Task* cur) {
      if (opt.step_ns > 0) {
        now_ns += opt.step_ns;
        for (auto& t : tasks) {
          if (t->state == Task::State::kBlocked && t->deadline && t->deadline->ns() <= now_ns) {
            t->state = Task::State::kRunnable;
            t->timed_out = true;
          }
        }
      }
      std::vector<Task*> ready;
      for (auto& t : tasks) {
        if (t->state == Task::State::kRunnable) ready.push_back(t.get());
      }
      if (ready.empty()) {
        std::optional<Instant> earliest;
        for (auto& t : tasks) {
          if (t->state == Task::State::kBlocked && t->deadline &&
              (!earliest || *t->deadline < *earliest)) {
            earliest = t->deadline;
          }
        }
        if (!earliest) return nullptr;
        now_ns = std::max(now_ns, earliest->ns());
        for (auto& t : tasks) {
          if (t->state == Task::State::kBlocked && t->deadline && t->deadline->ns() <= now_ns) {
            t->state = Task::State::kRunnable;
            t->timed_out = true;
            ready.push_back(t.get());
          }
        }
      }
      Task* pick = nullptr;
      if (opt.strategy == Strategy::kRandom) {
        pick = ready[std::uniform_int_distribution<std::size_t>(0, ready.size() - 1)(rng)];
      } else {
        for (Task* t : ready) {
          if (pick == nullptr || t->priority > pick->priority) pick = t;
        }
      }
      record(pick);
      if (pick != cur) ++out.switches;
      return pick;
    }

    // switch_from: `cur` (the running task) gives up the baton to whoever is
    // chosen, and waits until it is chosen again.
    void switch_from(Task* cur) {
      Task* next = choose(cur);
      if (next == nullptr) {
        end_run(End::kDeadlock);
        park(cur);
      }
      if (next == cur) return;
      hand_to(next);
      cur->baton.acquire();  // pairs with the release in hand_to()
    }

    void point(bool yielding) {
      Task* cur = tls_task();
      TLAB_CHECK(cur != nullptr && cur == running);
      if (ended) park(cur);
      if (++out.steps > opt.max_steps) {
        end_run(End::kStepLimit);
        park(cur);
      }
      if (opt.strategy == Strategy::kPct) {
        for (std::uint64_t at : change_points) {
          // Below every initial priority (>= 2^32), and below earlier demotions.
          if (at == out.steps) cur->priority = (std::uint64_t{1} << 31) - ++demotions;
        }
        if (yielding) cur->priority = (std::uint64_t{1} << 31) - ++demotions;
      }
      switch_from(cur);
    }

    bool block(const void* on, std::optional<Instant> deadline) {
      Task* cur = tls_task();
      TLAB_CHECK(cur != nullptr && cur == running);
      cur->state = Task::State::kBlocked;
      cur->on = on;
      cur->deadline = deadline;
      cur->timed_out = false;
      ++out.steps;
      switch_from(cur);
      return cur->timed_out;
    }

    void wake(const void* on, bool all) {
      std::vector<Task*> waiting;
      for (auto& t : tasks) {
        if (t->state == Task::State::kBlocked && t->on == on) waiting.push_back(t.get());
      }
      if (waiting.empty()) return;
      if (!all) {
        Task* one = waiting[std::uniform_int_distribution<std::size_t>(0, waiting.size() - 1)(rng)];
        waiting.assign(1, one);
      }
      for (Task* t : waiting) {
        t->state = Task::State::kRunnable;
        t->timed_out = false;
      }
    }

    void finish(Task* t) {
      t->state = Task::State::kDone;
      wake(t, /*all=*/true);  // its joiners (join_task)
      bool all_done = true;
      for (auto& x : tasks) all_done = all_done && x->state == Task::State::kDone;
      if (all_done) {
        end_run(End::kCompleted);
        return;
      }
      Task* next = choose(t);
      if (next == nullptr) {
        end_run(End::kDeadlock);
        return;
      }
      hand_to(next);
    }

    void end_run(End e) {
      if (ended) return;
      ended = true;
      out.end = e;
      if (e == End::kDeadlock) {
        // Task names and indices, not addresses: the text must replay bit for bit.
        for (std::size_t i = 0; i < tasks.size(); ++i) {
          const Task& t = *tasks[i];
          if (t.state != Task::State::kBlocked) continue;
          bool joining = false;
          for (auto& x : tasks) joining = joining || t.on == x.get();
          out.blocked += (out.blocked.empty() ? "" : ", ") + t.name + "#" + std::to_string(i) +
                         (joining ? " (joining a task)" : " (waiting for a notify or unlock)");
        }
      }
      done.release();  // pairs with run()'s acquire
    }

    [[noreturn]] void park(Task* cur) {
      for (;;) cur->baton.acquire();  // nobody releases it again
    }
  };

  static Shared*& tls_shared() {
    thread_local Shared* s = nullptr;
    return s;
  }
  static Task*& tls_task() {
    thread_local Task* t = nullptr;
    return t;
  }
  static Shared& caller() {
    TLAB_CHECK(tls_shared() != nullptr);  // a SimPlatform operation outside a task
    return *tls_shared();
  }

  std::shared_ptr<Shared> s_;
};

}  // namespace tlab::sim
