// Unit tests of SimPlatform (tlab/platform/sim_platform.h) and its deterministic
// scheduler (sim_scheduler.h): the shipped TimeoutToken runs on cooperative tasks;
// a run is a pure function of its seed (same schedule, same trace, same results in
// 20 of 20 replays); a seeded race bug is found and replays exactly; timed waits
// expire on virtual time; a lost notify is a deadlock naming the blocked tasks.
#include <gtest/gtest.h>

#include <array>
#include <optional>

#include "tlab/platform/sim_platform.h"
#include "tlab/platform/stress_control.h"
#include "tlab/timeout_token.h"

namespace {

using tlab::Instant;
using tlab::Mutant;
using tlab::SimPlatform;
using tlab::sim::End;
using tlab::sim::Options;
using tlab::sim::Outcome;
using tlab::sim::Scheduler;
using tlab::sim::Strategy;

struct RaceResult {
  Outcome outcome;
  int double_wins = 0;  // armings resolved by both resolvers
};

// Two resolvers race, each with the arming's token, for every arming of one token;
// the owner re-arms after each round. With correct code at most one resolver wins
// each arming.
RaceResult token_race(Options o, int rounds) {
  RaceResult r;
  Scheduler s(o);
  tlab::TimeoutToken<SimPlatform, 3> token;
  using Token = decltype(token)::Token;
  std::array<std::optional<Token>, 2> slot;  // the token each resolver is handed
  std::array<int, 2> won{};
  int round = 0;
  s.spawn("owner", [&] {
    for (round = 0; round < rounds; ++round) {
      const Token t = token.arm();
      won = {0, 0};
      slot = {t, t};
      // Wait (cooperatively) until both resolvers have tried.
      while (slot[0] || slot[1]) SimPlatform::yield();
      if (won[0] + won[1] > 1) ++r.double_wins;
      if (token.armed()) {
        (void)token.resolve(t);  // nobody won: the owner disarms it
      }
    }
  });
  for (int i = 0; i < 2; ++i) {
    s.spawn(i == 0 ? "resolver#0" : "resolver#1", [&, i] {
      for (int n = 0; n < rounds; ++n) {
        while (!slot[i]) SimPlatform::yield();
        const Token t = *slot[i];
        if (token.resolve(t)) ++won[i];
        slot[i].reset();
      }
    });
  }
  r.outcome = s.run();
  return r;
}

// The same seed gives the same schedule (trace hash, steps, switches) and the
// same results, 20 times in a row, for both strategies; different seeds explore
// different schedules.
TEST(SimPlatform, SameSeedSameRunBitForBit) {
  for (Strategy st : {Strategy::kRandom, Strategy::kPct}) {
    Options o;
    o.strategy = st;
    o.seed = 42;
    const RaceResult first = token_race(o, 20);
    ASSERT_EQ(first.outcome.end, End::kCompleted)
        << first.outcome.blocked << " steps " << first.outcome.steps << " switches "
        << first.outcome.switches;
    EXPECT_GT(first.outcome.switches, 20u);
    for (int replay = 0; replay < 20; ++replay) {
      const RaceResult again = token_race(o, 20);
      EXPECT_EQ(again.outcome.trace_hash, first.outcome.trace_hash);
      EXPECT_EQ(again.outcome.steps, first.outcome.steps);
      EXPECT_EQ(again.outcome.switches, first.outcome.switches);
      EXPECT_EQ(again.double_wins, first.double_wins);
    }
    o.seed = 43;
    EXPECT_NE(token_race(o, 20).outcome.trace_hash, first.outcome.trace_hash);
  }
}

// The shipped token never lets two resolvers win one arming, over 200 seeds of
// each strategy.
TEST(SimPlatform, CorrectTokenNeverDoubleWins) {
  for (Strategy st : {Strategy::kRandom, Strategy::kPct}) {
    for (std::uint64_t seed = 1; seed <= 200; ++seed) {
      Options o;
      o.strategy = st;
      o.seed = seed;
      const RaceResult r = token_race(o, 10);
      ASSERT_EQ(r.outcome.end, End::kCompleted);
      ASSERT_EQ(r.double_wins, 0) << "seed " << seed;
    }
  }
}

// The check-then-act mutant (token_load_store_resolve) is found by the random
// walk and by PCT within 200 seeds, and the failing seed replays exactly: 20 of
// 20 replays fail the same way with the same trace.
TEST(SimPlatform, SeededRaceIsFoundAndReplaysExactly) {
  tlab::stress::configure(Mutant::kTokenLoadStoreResolve, {});
  for (Strategy st : {Strategy::kRandom, Strategy::kPct}) {
    std::optional<std::uint64_t> failing;
    RaceResult bad;
    for (std::uint64_t seed = 1; seed <= 200 && !failing; ++seed) {
      Options o;
      o.strategy = st;
      o.seed = seed;
      bad = token_race(o, 10);
      if (bad.double_wins > 0) failing = seed;
    }
    ASSERT_TRUE(failing) << "the mutant survived 200 seeds";
    for (int replay = 0; replay < 20; ++replay) {
      Options o;
      o.strategy = st;
      o.seed = *failing;
      const RaceResult again = token_race(o, 10);
      EXPECT_EQ(again.double_wins, bad.double_wins);
      EXPECT_EQ(again.outcome.trace_hash, bad.outcome.trace_hash);
    }
  }
  tlab::stress::reset();
}

// A timed wait nobody notifies times out at its virtual deadline exactly (no
// wall-clock time passes); one notified first does not time out.
TEST(SimPlatform, TimedWaitExpiresOnVirtualTime) {
  for (const bool notify : {false, true}) {
    Scheduler s(Options{});
    SimPlatform::Mutex mu;
    SimPlatform::CondVar cv;
    bool timed_out = false;
    bool flag = false;
    std::int64_t woke_at = 0;
    s.spawn("waiter", [&] {
      SimPlatform::Lock lk(mu);
      const Instant deadline = SimPlatform::Clock{}.now() + tlab::Duration::seconds(5);
      while (!flag) {
        SimPlatform::wait_until(cv, lk, SimPlatform::Clock{}, deadline);
        if (SimPlatform::Clock{}.now() >= deadline) {
          timed_out = true;
          break;
        }
      }
      woke_at = SimPlatform::Clock{}.now().ns() - tlab::sim::kSimEpoch;
    });
    if (notify) {
      s.spawn("notifier", [&] {
        SimPlatform::Lock lk(mu);
        flag = true;
        SimPlatform::notify_one(cv);
      });
    }
    const Outcome o = s.run();
    ASSERT_EQ(o.end, End::kCompleted) << o.blocked;
    EXPECT_EQ(timed_out, !notify);
    EXPECT_EQ(woke_at, notify ? 0 : 5'000'000'000);
    EXPECT_EQ(o.virtual_ns, notify ? 0 : 5'000'000'000);
  }
}

// An untimed wait whose notify never comes ends the run as a deadlock that names
// the blocked task; a spin that never ends hits the step limit.
TEST(SimPlatform, LostNotifyIsADeadlockAndASpinHitsTheStepLimit) {
  {
    Scheduler s(Options{});
    SimPlatform::Mutex mu;
    SimPlatform::CondVar cv;
    s.spawn("sleeper", [&] {
      SimPlatform::Lock lk(mu);
      SimPlatform::wait(cv, lk);
    });
    const Outcome o = s.run();
    EXPECT_EQ(o.end, End::kDeadlock);
    EXPECT_NE(o.blocked.find("sleeper"), std::string::npos) << o.blocked;
  }
  {
    Options opt;
    opt.max_steps = 1000;
    Scheduler s(opt);
    s.spawn("spinner", [] {
      for (;;) SimPlatform::yield();
    });
    const Outcome o = s.run();
    EXPECT_EQ(o.end, End::kStepLimit);
    EXPECT_EQ(o.steps, 1001u);
  }
}

}  // namespace
