// tlab/platform/sim_explore.h: deterministic simulation of YOUR code, templated
// over the Platform as core/ is: run a test body on SimPlatform over many seeded
// schedules, stop at the first that breaks an invariant, and replay it exactly.
//
//   #include "tlab/platform/sim_explore.h"
//   TLAB_SIM_MAIN([](tlab::sim::Scheduler& s) {
//     auto latch = std::make_shared<MyLatch<tlab::SimPlatform>>();
//     s.spawn("opener", [latch] { latch->open(); });
//     s.spawn("waiter", [latch] {
//       const bool opened = latch->wait_for(1ms);
//       tlab::sim::expect(opened || !latch->opened_before_deadline(), "lost notify");
//     });
//   })
//
// explore() runs `setup` on a fresh Scheduler (sim_scheduler.h) for each seed in
// [first_seed, first_seed + seeds); a run fails when a task calls expect(false,
// ...), when every task blocks with no deadline (kDeadlock: a notify that never
// comes), or at the step limit (a livelock). The failing seed replays the same
// schedule bit for bit (same seed, same trace hash). Timed waits of SimPlatform
// time out at their virtual deadlines (sim_platform.h), so timeouts are explored
// as they happen in production.
//
// explore_main() is a test's main: it reads TLAB_SIM_SEEDS (how many seeds,
// default 1000), TLAB_SIM_SEED (replay this one seed), TLAB_SIM_STRATEGY (random
// or pct), TLAB_SIM_PCT_DEPTH and TLAB_SIM_EXPECT_FAILURE=1 (a known bug: exit 0
// only if a seed fails). It prints the failing seed and how to replay it. Exit 0
// (no failure; or with EXPECT_FAILURE, one found), 1 (a failure; or with
// EXPECT_FAILURE, none found), 2 (a bad variable, named). The CMake function
// tlab_add_sim_test (TlabSim.cmake, installed) builds and registers one.
//
// Cost: per seed, one simulation (sim_scheduler.h: a semaphore hand-off per point
// that switches tasks); an idle seed is microseconds. Ground rules: one
// exploration at a time per process (expect() reports to the running one); the
// setup spawns tasks and returns; state shared by tasks must outlive the run
// (capture shared_ptrs); a task may block only through SimPlatform. Memory
// ordering: that of sim_scheduler.h (one task runs at a time).
#pragma once

#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "tlab/platform/sim_platform.h"
#include "tlab/platform/sim_scheduler.h"

namespace tlab::sim {

struct ExploreOptions {
  std::uint64_t first_seed = 1;
  std::uint64_t seeds = 1000;
  Strategy strategy = Strategy::kRandom;
  int pct_depth = 3;
  std::uint64_t max_steps = 1'000'000;
};

struct ExploreResult {
  std::uint64_t runs = 0;                    // seeds run
  std::optional<std::uint64_t> failing_seed; // the first that failed
  std::string failure;                       // what failed in it
  Outcome outcome;                           // the last run's (the failing one's)
};

namespace detail {
inline std::string*& current_failure() {
  static std::string* f = nullptr;
  return f;
}
}  // namespace detail

// expect: inside a task of a running exploration, records a broken invariant
// (the first one of the run is kept); the run goes on to its end.
inline void expect(bool ok, std::string_view what) {
  std::string* f = detail::current_failure();
  TLAB_CHECK(f != nullptr, "tlab::sim::expect outside an exploration");
  if (!ok && f->empty()) f->assign(what);
}

// explore: the seeds of `o` in order, stopping at the first failing one.
inline ExploreResult explore(const ExploreOptions& o,
                             const std::function<void(Scheduler&)>& setup) {
  ExploreResult r;
  for (std::uint64_t i = 0; i < o.seeds; ++i) {
    const std::uint64_t seed = o.first_seed + i;
    Options so;
    so.seed = seed;
    so.strategy = o.strategy;
    so.pct_depth = o.pct_depth;
    so.max_steps = o.max_steps;
    std::string failure;
    detail::current_failure() = &failure;
    Scheduler s(so);
    setup(s);
    r.outcome = s.run();
    ++r.runs;
    if (r.outcome.end == End::kDeadlock) {
      failure = "deadlock: every task blocked with no deadline: " + r.outcome.blocked;
    } else if (r.outcome.end == End::kStepLimit && failure.empty()) {
      failure = "step limit: a livelock, or a spin that never lets the awaited task run";
    }
    // A run that did not complete leaves its tasks parked; they still point at
    // `failure`, so it must not be read by them again: they never resume.
    detail::current_failure() = nullptr;
    if (!failure.empty()) {
      r.failing_seed = seed;
      r.failure = failure;
      return r;
    }
  }
  return r;
}

namespace detail {
// env_u64: the variable's value, `fallback` when unset; nullopt (after saying
// why on stderr) when it is not a number in [lo, hi].
inline std::optional<std::uint64_t> env_u64(const char* name, std::uint64_t fallback,
                                            std::uint64_t lo, std::uint64_t hi) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  std::uint64_t n = 0;
  const std::string_view s(v);
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
  if (ec != std::errc() || end != s.data() + s.size() || n < lo || n > hi) {
    std::fprintf(stderr, "%s: '%s' is not a number in [%llu, %llu]\n", name, v,
                 static_cast<unsigned long long>(lo), static_cast<unsigned long long>(hi));
    return std::nullopt;
  }
  return n;
}
}  // namespace detail

// explore_main: a test's main (the variables and exit codes are in the header).
inline int explore_main(const std::function<void(Scheduler&)>& setup) {
  ExploreOptions o;
  const auto seeds = detail::env_u64("TLAB_SIM_SEEDS", o.seeds, 1, 100'000'000);
  const auto seed = detail::env_u64("TLAB_SIM_SEED", 0, 0, ~std::uint64_t{0});
  const auto depth = detail::env_u64("TLAB_SIM_PCT_DEPTH", 3, 1, 16);
  const auto expect_failure = detail::env_u64("TLAB_SIM_EXPECT_FAILURE", 0, 0, 1);
  const char* strategy = std::getenv("TLAB_SIM_STRATEGY");
  const std::string_view st = strategy == nullptr ? "random" : strategy;
  if (st != "random" && st != "pct") {
    std::fprintf(stderr, "TLAB_SIM_STRATEGY: '%s' is not random or pct\n", strategy);
    return 2;
  }
  if (!seeds || !seed || !depth || !expect_failure) return 2;
  o.seeds = *seed != 0 ? 1 : *seeds;
  o.first_seed = *seed != 0 ? *seed : 1;
  o.strategy = st == "pct" ? Strategy::kPct : Strategy::kRandom;
  o.pct_depth = static_cast<int>(*depth);
  const ExploreResult r = explore(o, setup);
  if (r.failing_seed) {
    std::printf("FAILED at seed %llu after %llu schedules (%llu steps, trace 0x%016llx): %s\n"
                "replay: TLAB_SIM_SEED=%llu TLAB_SIM_STRATEGY=%.*s TLAB_SIM_PCT_DEPTH=%d <this "
                "test>\n",
                static_cast<unsigned long long>(*r.failing_seed),
                static_cast<unsigned long long>(r.runs),
                static_cast<unsigned long long>(r.outcome.steps),
                static_cast<unsigned long long>(r.outcome.trace_hash), r.failure.c_str(),
                static_cast<unsigned long long>(*r.failing_seed), static_cast<int>(st.size()),
                st.data(), o.pct_depth);
  } else {
    std::printf("passed %llu schedules (%.*s)\n", static_cast<unsigned long long>(r.runs),
                static_cast<int>(st.size()), st.data());
  }
  std::fflush(stdout);
  const bool failed = r.failing_seed.has_value();
  if (*expect_failure == 1) {
    if (!failed) std::printf("EXPECTED a failure (TLAB_SIM_EXPECT_FAILURE=1): none found\n");
    return failed ? 0 : 1;
  }
  return failed ? 1 : 0;
}

}  // namespace tlab::sim

// TLAB_SIM_MAIN(setup): defines main() as explore_main(setup).
#define TLAB_SIM_MAIN(...) \
  int main() { return ::tlab::sim::explore_main(__VA_ARGS__); }
