// tlab/tool/runner/sync_cases.h: the kMutex, kWaitGroup and kPool engines' cases
// (engine_sync.cc), templated over the Platform: StressPlatform on real threads,
// and SimPlatform under deterministic simulation (engine_sync_sim.cc,
// runner/sim_run.h).
//
//   kMutex     mutex_contender: lock_for(timeout_us) on one TimedMutex; holds it
//              hold_us, then pauses delay_us (if set). Oracles: mutual_exclusion (two holders at once, checked
//              with an atomic holder count), early_fire (a false return before the
//              timeout), double_resume (the contenders' Waiter counters),
//              lost_wakeup (the mutex held by nobody at the end: a hand-off lost),
//              undeserved_timeout (a lock_for timed out while the mutex was free,
//              by the contenders' own count, for the grace of its wait).
//   kWaitGroup rounds, one per operation: a TimedWaitGroup add(members); each
//              wait_group_member calls done() after delay_us, each
//              wait_group_waiter wait_for(timeout_us) (after its own delay_us, if
//              set); a RoundBarrier<P>
//              separates rounds. Oracles: wait_group_negative (pending() < 0 after a done()),
//              early_fire (false before the timeout), wrong_result (true while a
//              member had not called done()), undeserved_timeout (false although
//              every member's done() had returned the grace before its deadline).
//   kPool      pool_client: checkout_for(timeout_us) on Pool<int> of
//              engine.pool_size objects; holds hold_us, then pauses delay_us (if
//              set). Oracles: mutual_exclusion
//              (one object leased twice), early_fire, double_resume,
//              conservation (objects/permits missing once every lease is back),
//              undeserved_timeout (a checkout_for timed out while fewer than
//              pool_size leases were out, for the grace of its wait).
//
// undeserved_timeout's availability (oracles/availability_ledger.h) is recorded
// by the actors from their own calls: a unit is held from the acquire's true
// return until the release returned; a wait group's count from add() until each
// done() returned. Its grace is undeserved_timeout_grace_ns (engines.h).
//
// Under simulation every actor and the service's timer thread are tasks of one
// seeded scheduler: times are virtual, mapped into the case's steady frame
// (case_ns), holds are timed blocks, and a lost hand-off leaves every task blocked,
// which the scheduler ends as a lost_wakeup. The wait group's rounds are separated
// by RoundBarrier<P>, built on P::Mutex and P::CondVar, so under simulation its
// actors block inside the scheduler too.
//
// Cost: the actors' operations. Ground rules: each case runs on the case child's
// main thread, or on the simulation's driver task; it joins every actor. Memory
// ordering: the holder counts are acq_rel pairs (commented where used); the
// counters are relaxed and read after the joins.
#pragma once

#include <deque>
#include <thread>
#include <type_traits>

#include <fmt/format.h>

#include "runner/engines.h"
#include "runner/sim_run.h"
#include "tlab/platform/platform.h"
#include "tlab/platform/sim_platform.h"
#include "tlab/platform/stress_platform.h"
#include "tlab/queue/strategy.h"
#include "tlab/sync/pool.h"
#include "tlab/sync/timed_mutex.h"
#include "tlab/sync/timed_wait_group.h"
#include "tlab/timer_service.h"

namespace tlab::tool::runner {

template <class P>
inline constexpr bool kSimulated = std::is_same_v<P, SimPlatform>;

// case_ns: now in the case's steady frame (what ctx.at() takes): the steady clock,
// or simulated time mapped onto the case's start.
template <class P>
std::int64_t case_ns(const CaseContext& ctx) {
  if constexpr (kSimulated<P>) return sim_case_ns(ctx);
  return steady_ns();
}


struct ActorRef {
  const Actor* a;
  ActorState* st;
  std::size_t index;
  std::uint64_t quota = 0;  // its share of run.operations
};

inline std::vector<ActorRef> make_actors(CaseContext& ctx) {
  std::vector<ActorRef> out;
  std::size_t index = 0;
  for (const Actor& a : ctx.scenario().actors) {
    if (a.role == Role::kTimerThread) continue;
    for (int i = 0; i < a.count; ++i, ++index) {
      out.push_back({&a, &ctx.add_actor(fmt::format("{}#{}", name_of(a.role), i)), index});
    }
  }
  for (std::size_t i = 0; i < out.size(); ++i) out[i].quota = ctx.share(i, out.size());
  return out;
}

template <class P, class F>
void run_threads(CaseContext& ctx, std::vector<ActorRef>& actors, F&& body) {
  ctx.actors_ready();
  std::vector<ThreadOf<P>> threads;
  for (ActorRef& r : actors) {
    threads.push_back(spawn_thread<P>([&ctx, &body, r]() mutable {
      stress::seed_thread(ctx.thread_seed(r.index));
      std::mt19937_64 rng = ctx.rng_for(r.index);
      body(r, rng, ctx.log_of(*r.st));
      r.st->set(Phase::kDone);
    }));
  }
  for (auto& t : threads) t.join();
}

// Holds for `us` microseconds: short holds spin on real threads (a sleep would be
// 50 us at best); simulated, a timed block on virtual time.
template <class P>
void hold_for(CaseContext& ctx, std::int64_t us) {
  if (!kSimulated<P> && us < 50) {
    const std::int64_t end = steady_ns() + us * 1000;
    while (steady_ns() < end) std::this_thread::yield();
  } else {
    case_sleep_us(ctx, us);
  }
}

// pause_between: actor r's think time between two timed acquisitions (delay_us, if
// it has one; a negative sample is no pause). Sparse contention: without it, the
// next contender's hand-off ends a lost wakeup's wait before its timeout can show it.
template <class P>
void pause_between(CaseContext& ctx, ActorRef& r, std::mt19937_64& rng) {
  if (!r.a->delay_us) return;
  const std::int64_t us = r.a->delay_us->sample(rng);
  if (us > 0) hold_for<P>(ctx, us);
}

// RoundBarrier: std::barrier's arrive_and_wait on P::Mutex and P::CondVar, so it
// blocks inside the simulation's scheduler under SimPlatform (a std::barrier would
// block outside it). A generation count tells a round's release from the next
// round's arrivals. Memory ordering: mu_ orders what a party wrote before it
// arrived before what every party reads after the release.
template <class P>
class RoundBarrier {
 public:
  explicit RoundBarrier(std::size_t parties) : parties_(parties) {}

  void arrive_and_wait() {
    typename P::Lock lk(mu_);
    const std::uint64_t round = round_;
    if (++arrived_ == parties_) {
      arrived_ = 0;
      ++round_;
      P::notify_all(cv_);
      return;
    }
    while (round_ == round) P::wait(cv_, lk);
  }

 private:
  const std::size_t parties_;
  typename P::Mutex mu_;
  typename P::CondVar cv_;
  std::size_t arrived_ = 0;  // mu_
  std::uint64_t round_ = 0;  // mu_: releases so far
};

inline void early_check(CaseContext& ctx, const ActorState& st, std::int64_t back, std::int64_t deadline,
                 const char* what) {
  if (back < deadline) {
    ctx.violation(Oracle::kEarlyFire,
                  fmt::format("{}: {} gave up at {}, {} before its timeout's deadline {}", st.name,
                              what, ctx.at(back), fmt_ns(deadline - back), ctx.at(deadline)));
  }
}

// timed_acquire: one timed acquisition by actor r (TimedMutex::lock_for,
// Pool::checkout_for). Samples r's timeout, shows the watchdog r parked with that
// deadline while acquire(timeout) runs, tells `avail` the wait (a true result holds
// a unit; a timeout is judged), counts the operation and, on a timeout (a falsy
// result), counts it, records the fire lateness and checks it did not give up
// early. Returns acquire's result and the instant it returned.
template <class P, class F>
auto timed_acquire(CaseContext& ctx, ActorRef& r, std::mt19937_64& rng, ActorLog& log,
                   std::atomic<std::uint64_t>& timeouts, AvailabilityLedger& avail,
                   const char* what, F&& acquire) {
  const std::int64_t d_us = r.a->timeout_us->sample(rng);
  const AvailabilityLedger::Wait wait = avail.begin();
  const std::int64_t deadline = case_ns<P>(ctx) + d_us * 1000;
  // The watchdog unparks real threads; a simulated lost wakeup is a deadlock.
  if constexpr (!kSimulated<P>) r.st->deadline_ns.store(deadline, std::memory_order::relaxed);
  r.st->set(Phase::kParked);
  auto result = acquire(Duration::microseconds(d_us));
  avail.end(wait, static_cast<bool>(result), deadline, r.st->name);
  const std::int64_t back = case_ns<P>(ctx);
  r.st->deadline_ns.store(0, std::memory_order::relaxed);
  r.st->ops.fetch_add(1, std::memory_order::relaxed);
  if (!result) {
    timeouts.fetch_add(1, std::memory_order::relaxed);
    log.sample(Latency::kFireLateness, back - deadline);
    early_check(ctx, *r.st, back, deadline, what);
  }
  return std::pair{std::move(result), back};
}

template <class P, unsigned Bits>
void waiter_counters(CaseContext& ctx, const ActorState& st, const Waiter<P, Bits>& w) {
  const auto c = w.counters();
  if (c.double_resumes + c.stale_wakeups > 0) {
    ctx.violation(
        Oracle::kDoubleResume,
        fmt::format("{}: its Waiter counted {} double resumes and {} stale wakeups over {} "
                    "armings (woken by a resolver that did not win its token)",
                    st.name, c.double_resumes, c.stale_wakeups, c.armings));
  }
}

// ---- mutex ---------------------------------------------------------------------------

template <class Q, class P, unsigned Bits>
void mutex_case(CaseContext& ctx) {
  TimerService<Q, P> service(TimerServiceOptions{true, queue_config_of(ctx.scenario())});
  TimedMutex<P, Bits> mu;
  std::atomic<int> holders{0};
  std::atomic<std::uint64_t> acquired{0}, timeouts{0};
  AvailabilityLedger avail = availability_ledger(ctx, {1, 0, "the mutex", "lock_for", true},
                                                 [&ctx] { return case_ns<P>(ctx); });
  std::vector<ActorRef> actors = make_actors(ctx);
  std::deque<Waiter<P, Bits>> waiters(actors.size());
  run_threads<P>(ctx, actors, [&](ActorRef& r, std::mt19937_64& rng, ActorLog& log) {
    Waiter<P, Bits>& self = waiters[r.index];
    while (ctx.take_op(r.quota)) {
      const auto [ok, back] =
          timed_acquire<P>(ctx, r, rng, log, timeouts, avail, "lock_for",
                        [&](Duration d) { return mu.lock_for(service, d, self); });
      if (!ok) {
        pause_between<P>(ctx, r, rng);
        continue;
      }
      acquired.fetch_add(1, std::memory_order::relaxed);
      const int before = holders.fetch_add(1, std::memory_order::acq_rel);  // pairs with fetch_sub
      if (before != 0) {
        ctx.violation(
            Oracle::kMutualExclusion,
            fmt::format("{}: lock_for returned true at {} while {} other holder(s) held the mutex",
                        r.st->name, ctx.at(back), before));
      }
      r.st->set(Phase::kHolding);
      if (r.a->hold_us) hold_for<P>(ctx, r.a->hold_us->sample(rng));
      holders.fetch_sub(1, std::memory_order::acq_rel);  // pairs with fetch_add
      mu.unlock();
      avail.released();
      r.st->set(Phase::kWorking);
      pause_between<P>(ctx, r, rng);
    }
  });
  for (ActorRef& r : actors) waiter_counters<P>(ctx, *r.st, waiters[r.index]);
  ctx.set_counter("acquired", acquired.load());
  ctx.set_counter("timeouts", timeouts.load());
  if (mu.held() && !ctx.stopping()) {
    ctx.violation(
        Oracle::kLostWakeup,
        fmt::format("the mutex is still held at {} though every contender has returned and "
                    "unlocked: a hand-off was lost (waiting: {})",
                    ctx.at(case_ns<P>(ctx)), mu.waiting()));
  }
}

// ---- wait group ----------------------------------------------------------------------

template <class Q, class P>
void wait_group_case(CaseContext& ctx) {
  TimerService<Q, P> service(TimerServiceOptions{true, queue_config_of(ctx.scenario())});
  std::vector<ActorRef> actors = make_actors(ctx);
  int members = 0;
  for (const ActorRef& r : actors) members += r.a->role == Role::kWaitGroupMember;
  RoundBarrier<P> sync(actors.size() + 1);
  std::unique_ptr<TimedWaitGroup<P>> group;  // replaced by the driver between rounds
  std::atomic<int> done_calls{0};
  bool quit = false;  // written by the driver before the first barrier of a round
  std::uint64_t rounds = 0;
  std::atomic<std::uint64_t> timeouts{0};
  // The earliest deadline any waiter of the round armed: the first one to pass
  // times the group out for every waiter, so that is what "early" is measured to.
  std::atomic<std::int64_t> min_deadline{INT64_MAX};
  AvailabilityLedger avail = availability_ledger(
      ctx, {1, 0, "the wait group (every member done)", "wait_for", false},
      [&ctx] { return case_ns<P>(ctx); });
  ctx.actors_ready();
  std::vector<ThreadOf<P>> threads;
  for (ActorRef& r : actors) {
    threads.push_back(spawn_thread<P>([&, r]() mutable {
      stress::seed_thread(ctx.thread_seed(r.index));
      std::mt19937_64 rng = ctx.rng_for(r.index);
      ActorLog& log = ctx.log_of(*r.st);
      for (;;) {
        r.st->set(Phase::kWaiting);
        sync.arrive_and_wait();
        if (quit) break;
        if (r.a->role == Role::kWaitGroupMember) {
          r.st->set(Phase::kSleeping);
          case_sleep_us(ctx, r.a->delay_us->sample(rng));
          // Counted BEFORE done(): a waiter that sees the group complete must see
          // every member's count (acq_rel pairs with the waiter's acquire load).
          done_calls.fetch_add(1, std::memory_order::acq_rel);
          group->done();
          avail.released();
          const std::int64_t p = group->pending();
          if (p < 0) {
            ctx.violation(
                Oracle::kWaitGroupNegative,
                fmt::format("{}: done() at {} left the wait group's counter at {} (a done() "
                            "after the timeout decremented a zeroed counter)",
                            r.st->name, ctx.at(case_ns<P>(ctx)), p));
          }
        } else {
          // A waiter that starts late (delay_us) waits across members' done() calls,
          // not only from the round's start.
          if (r.a->delay_us) {
            r.st->set(Phase::kSleeping);
            if (const std::int64_t us = r.a->delay_us->sample(rng); us > 0) case_sleep_us(ctx, us);
          }
          const std::int64_t d_us = r.a->timeout_us->sample(rng);
          const std::int64_t t0 = case_ns<P>(ctx);
          std::int64_t seen = min_deadline.load(std::memory_order::acquire);
          while (t0 + d_us * 1000 < seen &&
                 !min_deadline.compare_exchange_weak(seen, t0 + d_us * 1000,
                                                     std::memory_order::acq_rel)) {
          }
          // The watchdog unparks real threads; a simulated lost wakeup is a deadlock.
          if constexpr (!kSimulated<P>) {
            r.st->deadline_ns.store(t0 + d_us * 1000, std::memory_order::relaxed);
          }
          r.st->set(Phase::kParked);
          const AvailabilityLedger::Wait wait = avail.begin();
          const bool ok = group->wait_for(service, Duration::microseconds(d_us));
          avail.end(wait, ok, t0 + d_us * 1000, r.st->name);
          const std::int64_t back = case_ns<P>(ctx);
          r.st->deadline_ns.store(0, std::memory_order::relaxed);
          if (!ok) {
            timeouts.fetch_add(1, std::memory_order::relaxed);
            log.sample(Latency::kFireLateness, back - (t0 + d_us * 1000));
            early_check(ctx, *r.st, back, min_deadline.load(std::memory_order::acquire),
                        "wait_for");
          } else if (const int n = done_calls.load(std::memory_order::acquire); n < members) {
            ctx.violation(
                Oracle::kWrongResult,
                fmt::format("{}: wait_for returned true (all done) at {} but only {} of {} members "
                            "had called done()",
                            r.st->name, ctx.at(back), n, members));
          }
        }
        r.st->ops.fetch_add(1, std::memory_order::relaxed);
        r.st->set(Phase::kWaiting);
        sync.arrive_and_wait();
      }
      r.st->set(Phase::kDone);
    }));
  }
  for (;;) {
    const bool more = ctx.take_op();
    if (more) {
      group = std::make_unique<TimedWaitGroup<P>>();
      group->add(static_cast<std::uint32_t>(members));
      avail.held(static_cast<std::uint32_t>(members));
      done_calls.store(0, std::memory_order::relaxed);  // before the barrier publishes it
      min_deadline.store(INT64_MAX, std::memory_order::relaxed);
      ++rounds;
    }
    quit = !more;
    sync.arrive_and_wait();
    if (quit) break;
    sync.arrive_and_wait();
  }
  for (auto& t : threads) t.join();
  ctx.set_counter("rounds", rounds);
  ctx.set_counter("timeouts", timeouts.load());
}

// ---- pool ----------------------------------------------------------------------------

template <class Q, class P, unsigned Bits>
void pool_case(CaseContext& ctx) {
  TimerService<Q, P> service(TimerServiceOptions{true, queue_config_of(ctx.scenario())});
  const int size = ctx.scenario().engine.pool_size;
  std::vector<int> objects(static_cast<std::size_t>(size));
  for (int i = 0; i < size; ++i) objects[static_cast<std::size_t>(i)] = i;
  Pool<int, P, Bits> pool(objects);
  std::unique_ptr<std::atomic<int>[]> in_use(new std::atomic<int>[static_cast<std::size_t>(size)]);
  for (int i = 0; i < size; ++i) in_use[static_cast<std::size_t>(i)].store(0);
  std::atomic<std::uint64_t> leases{0}, timeouts{0};
  AvailabilityLedger avail = availability_ledger(
      ctx, {static_cast<std::uint32_t>(size), 0, "a pool object", "checkout_for", true},
      [&ctx] { return case_ns<P>(ctx); });
  std::vector<ActorRef> actors = make_actors(ctx);
  std::deque<Waiter<P, Bits>> waiters(actors.size());
  run_threads<P>(ctx, actors, [&](ActorRef& r, std::mt19937_64& rng, ActorLog& log) {
    Waiter<P, Bits>& self = waiters[r.index];
    while (ctx.take_op(r.quota)) {
      auto [lease, back] =
          timed_acquire<P>(ctx, r, rng, log, timeouts, avail, "checkout_for",
                        [&](Duration d) { return pool.checkout_for(service, d, self); });
      if (!lease) {
        pause_between<P>(ctx, r, rng);
        continue;
      }
      leases.fetch_add(1, std::memory_order::relaxed);
      const int obj = **lease;
      const int before =
          in_use[static_cast<std::size_t>(obj)].fetch_add(1, std::memory_order::acq_rel);
      if (before != 0) {
        ctx.violation(Oracle::kMutualExclusion,
                      fmt::format("{}: checked out object {} at {} while it was already leased",
                                  r.st->name, obj, ctx.at(back)));
      }
      r.st->set(Phase::kHolding, static_cast<std::uint64_t>(obj) + 1);
      if (r.a->hold_us) hold_for<P>(ctx, r.a->hold_us->sample(rng));
      in_use[static_cast<std::size_t>(obj)].fetch_sub(1, std::memory_order::acq_rel);
      lease->reset();
      avail.released();
      r.st->set(Phase::kWorking);
      pause_between<P>(ctx, r, rng);
    }
  });
  for (ActorRef& r : actors) waiter_counters<P>(ctx, *r.st, waiters[r.index]);
  ctx.set_counter("leases", leases.load());
  ctx.set_counter("timeouts", timeouts.load());
  const std::size_t free_objects = pool.available();
  const std::uint32_t permits = pool.semaphore().available();
  ctx.set_counter("available_at_end", free_objects);
  if (!ctx.stopping() &&
      (free_objects != static_cast<std::size_t>(size) || permits != free_objects)) {
    ctx.violation(
        Oracle::kConservation,
        fmt::format("every lease is back at {}, yet the pool has {} of {} objects free and its "
                    "semaphore {} permits (a permit was lost)",
                    ctx.at(case_ns<P>(ctx)), free_objects, size, permits));
  }
}

template <class P, class F>
void on_strategy(CaseContext& ctx, F&& f) {
  const auto strategy = strategy_from_name(ctx.spec().strategy);
  if (!strategy) throw std::invalid_argument("unknown strategy " + ctx.spec().strategy);
  with_queue_type<TimerTaskPtr<P>, P>(*strategy, std::forward<F>(f));
}

}  // namespace tlab::tool::runner
