// Periodic timers on a subject (subject.h, "Periodic timers"; the ledger's
// "Periodic series"): the correct facility runs series of the three kinds, stopped
// from other threads and from their own callbacks, and the built-in periodic
// scenarios, without a finding; a series that drifts off its grid is late_fire,
// one that a stop from its own callback does not end is fired_after_cancel; a
// subject without periodic timers is refused a periodic scenario, naming the field.
#include <string>

#include <gtest/gtest.h>

#include "runner/engine_subject.h"
#include "subjects/subject_case.h"

namespace tlab::tool {
namespace {

using namespace subject_case;

// scenarios/periodic_series.json: series of the three kinds, with scripts that
// stop a series from its own callback (tlab's own engines run it without them).
Scenario periodic_series() { return load("periodic_series"); }

TEST(PeriodicSubjects, TheCorrectFacilityRunsEveryKindWithoutAFinding) {
  const Ran ran = run_on(periodic_series(), TLAB_TEST_SUBJECT_CORRECT);
  ASSERT_TRUE(ran.error.empty()) << ran.error;
  EXPECT_EQ(ran.r.verdict, Verdict::kPass) << summary(ran);
  EXPECT_TRUE(ran.r.violations.empty()) << summary(ran);
  EXPECT_GT(counter(ran, "scheduled_periodic"), 100u) << summary(ran);
  EXPECT_GT(counter(ran, "periodic_runs"), 1000u) << summary(ran);
  EXPECT_GT(counter(ran, "callback_self_cancels"), 10u) << summary(ran);
  EXPECT_GT(counter(ran, "cancelled"), 15u) << summary(ran);
  // The fixed-rate scenarios tlab's own TimerService runs: on the subject too.
  for (const char* name : {"fixed_rate_drift", "missed_tick_skip"}) {
    const Ran built_in = run_on(load(name), TLAB_TEST_SUBJECT_CORRECT);
    ASSERT_TRUE(built_in.error.empty()) << name << ": " << built_in.error;
    EXPECT_EQ(built_in.r.verdict, Verdict::kPass) << name << ": " << summary(built_in);
    EXPECT_GT(counter(built_in, "periodic_runs"), 20u) << name << ": " << summary(built_in);
  }
}

// The self-driven facility (its own thread, CLOCK_MONOTONIC, not REENTRANT): the
// series run on the real clock, with no script performed, and pass.
TEST(PeriodicSubjects, TheSelfDrivenFacilityRunsSeriesOnTheRealClock) {
  const Ran ran = run_on(periodic_series(), TLAB_TEST_SUBJECT_SELF);
  ASSERT_TRUE(ran.error.empty()) << ran.error;
  EXPECT_EQ(ran.r.verdict, Verdict::kPass) << summary(ran);
  EXPECT_GT(counter(ran, "periodic_runs"), 0u) << summary(ran);
}

struct PeriodicBug {
  const char* variant;
  const char* library;
  const char* scenario;  // "": periodic_series; else a built-in scenario
  const char* oracle;
};
class PeriodicBugs : public ::testing::TestWithParam<PeriodicBug> {};

TEST_P(PeriodicBugs, FailsWithItsOracle) {
  const PeriodicBug& b = GetParam();
  const Scenario sc = *b.scenario == '\0' ? periodic_series() : load(b.scenario);
  const Ran ran = run_on(sc, b.library);
  ASSERT_TRUE(ran.error.empty()) << ran.error;
  EXPECT_EQ(ran.r.verdict, Verdict::kFail) << summary(ran);
  ASSERT_GT(count_of(ran, b.oracle), 0u) << summary(ran);
  EXPECT_NE(ran.r.violations.at(b.oracle).first_example.find("series"), std::string::npos)
      << summary(ran);
}
INSTANTIATE_TEST_SUITE_P(
    Variants, PeriodicBugs,
    ::testing::Values(
        PeriodicBug{"drift_series", TLAB_TEST_SUBJECT_PERIODIC_DRIFT, "", "late_fire"},
        PeriodicBug{"drift_built_in", TLAB_TEST_SUBJECT_PERIODIC_DRIFT, "fixed_rate_drift",
                    "late_fire"},
        PeriodicBug{"stop", TLAB_TEST_SUBJECT_PERIODIC_STOP, "", "fired_after_cancel"}),
    [](const auto& info) { return std::string(info.param.variant); });

// libuv's repeating timer is a fixed-delay series (timer.html: the next run is a
// repeat after the run's start): its peer runs fixed-delay scenarios, stopped from
// other threads and from its own callbacks, and keeps every promise; the
// millisecond loop clock's early runs are shown, not failed (not promised).
TEST(PeriodicSubjects, LibuvRepeatIsAFixedDelaySeries) {
  const Scenario sc = load_text(R"({
    "name": "fixed_delay_series",
    "description": "fixed-delay series, stopped from other threads and their own callbacks",
    "engine": {"strategies": ["all"], "tick_us": 1000},
    "actors": [
      {"role": "scheduler", "count": 2, "delay_us": {"uniform": [0, 5000]}, "mode": "fixed_delay",
       "period_us": {"uniform": [1000, 5000]}, "cancel_probability": 0.1,
       "callback_self_cancel_probability": 0.05},
      {"role": "canceller", "count": 1, "delay_us": {"uniform": [2000, 8000]}},
      {"role": "timer_thread", "count": 1}],
    "run": {"operations": 200, "budget_s": 20, "seed": 11}
  })");
  const Ran ran = run_on(sc, "libuv");
  ASSERT_TRUE(ran.error.empty()) << ran.error;
  EXPECT_EQ(ran.r.verdict, Verdict::kPass) << summary(ran);
  EXPECT_EQ(counter(ran, "scheduled_periodic"), 200u) << summary(ran);
  EXPECT_GT(counter(ran, "periodic_runs"), 0u) << summary(ran);
  expect_quiet(ran, {"lost_timer", "double_resume", "fired_after_cancel", "wrong_result",
                     "late_fire", "conservation"});
  // The fixed-rate kinds are not libuv's: of fixed_rate_drift only the fixed-delay
  // scheduler runs, and the case names the one left out; a scenario with no
  // fixed-delay scheduler is refused at the first mode libuv lacks.
  std::string err, why, pointer;
  const tlab_subject* uv = open_subject("libuv", err);
  ASSERT_NE(uv, nullptr) << err;
  EXPECT_TRUE(runner::subject_accepts(load("fixed_rate_drift"), *uv, why, pointer, {})) << why;
  const Ran mixed = run_on(load("fixed_rate_drift"), "libuv");
  ASSERT_TRUE(mixed.error.empty()) << mixed.error;
  EXPECT_NE(mixed.r.message.find("/actors/0 not run: mode fixed_rate needs "
                                 "TLAB_PERIODIC_FIXED_RATE series"),
            std::string::npos)
      << summary(mixed);
  EXPECT_GT(counter(mixed, "periodic_runs"), 0u) << summary(mixed);
  const Scenario rate_only = load_text(R"({
    "name": "fixed_rate_only",
    "description": "fixed-rate series only",
    "engine": {"strategies": ["all"], "tick_us": 1000},
    "actors": [
      {"role": "scheduler", "count": 1, "delay_us": {"fixed": 0}, "mode": "fixed_rate",
       "period_us": {"fixed": 1000}},
      {"role": "timer_thread", "count": 1}],
    "run": {"operations": 10, "budget_s": 20, "seed": 1}
  })");
  EXPECT_FALSE(runner::subject_accepts(rate_only, *uv, why, pointer, {}));
  EXPECT_EQ(pointer, "/actors/0/mode") << why;
}

// A plugin built before periodic timers (struct_size of the first release) has
// none: a periodic scenario is refused at the scheduler's mode.
TEST(PeriodicSubjects, ASubjectWithoutPeriodicTimersIsRefusedAtTheMode) {
  std::string err;
  const tlab_subject* d = open_subject(TLAB_TEST_SUBJECT_V1SIZE, err);
  ASSERT_NE(d, nullptr) << err;
  EXPECT_EQ(d->periodic, 0u);
  std::string why, pointer;
  EXPECT_FALSE(runner::subject_accepts(periodic_series(), *d, why, pointer, {}));
  EXPECT_EQ(pointer, "/actors/0/mode");
  EXPECT_NE(why.find("TLAB_PERIODIC_FIXED_RATE"), std::string::npos) << why;
  const tlab_subject* correct = open_subject(TLAB_TEST_SUBJECT_CORRECT, err);
  ASSERT_NE(correct, nullptr) << err;
  EXPECT_TRUE(runner::subject_accepts(periodic_series(), *correct, why, pointer, {})) << why;
}

}  // namespace
}  // namespace tlab::tool
