// How the generic driver (tool/runner/engine_subject_facility.cc) judges cancels:
// two calls contradict each other only when one returned before the other began,
// so overlapping cancels of one timer are never a finding, while the seeded cancel
// bugs of test_subject.c still are; and stale cancels (of settled timers' handles,
// stale_probability) and re-arms (rearm_probability) catch a facility whose
// handles name a slot, not a timer.
#include <string>
#include <tuple>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "subjects/subject_case.h"
#include "subjects/subjects.h"

namespace tlab::tool {
namespace {

using namespace subject_case;

// Six cancellers race over at most 16 timers due 50 us out (the repro of a false
// wrong_result: a PREVENTED and a TOO_LATE answer for one timer, judged in the
// order their threads took the record lock rather than the order the calls ran).
Scenario concurrent_cancels() {
  return load_text(R"({
    "name": "concurrent_cancels", "description": "six cancellers, sixteen live timers",
    "engine": {"tick_us": 20, "clock": "steady"},
    "actors": [
      {"role": "scheduler", "count": 2, "delay_us": {"fixed": 50}},
      {"role": "canceller", "count": 6, "delay_us": {"uniform": [0, 40]}},
      {"role": "timer_thread", "count": 1}
    ],
    "run": {"operations": 60000, "budget_s": 20, "seed": 5, "max_pending": 16}})");
}

class ConcurrentCancels : public ::testing::TestWithParam<const char*> {};

// Overlapping cancels of one timer may be linearised either way: on the correct
// test subject and on binary_heap (which answers TOO_LATE to the second cancel)
// nothing is flagged, and cancels were both prevented and too late.
TEST_P(ConcurrentCancels, OverlappingCancelsAreNoContradiction) {
  const Ran ran = run_on(concurrent_cancels(), GetParam());
  ASSERT_TRUE(ran.error.empty()) << ran.error;
  EXPECT_EQ(ran.r.verdict, Verdict::kPass) << summary(ran);
  EXPECT_TRUE(ran.r.violations.empty()) << summary(ran);
  EXPECT_GT(counter(ran, "cancelled"), 0u) << summary(ran);
}
INSTANTIATE_TEST_SUITE_P(Subjects, ConcurrentCancels,
                         ::testing::Values(TLAB_TEST_SUBJECT_CORRECT, "binary_heap"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           return i.index == 0 ? std::string("test_subject")
                                               : std::string("binary_heap");
                         });

// A subject that loses timers never makes room under run.max_pending: timers
// overdue past the grace stop counting against it, so the schedulers go on and
// the case ends in lost_timer (verdict fail), not in a stall until the watchdog
// (verdict timeout). Through the runner, whose budget bounds the old behaviour.
TEST(LostTimers, DoNotStallSchedulersAtMaxPending) {
  // No canceller (a cancel of a lost timer would make room) and no stale cancels.
  const Scenario sc = load_text(R"({
    "name": "lost_at_max_pending", "description": "schedulers only, sixteen live timers",
    "engine": {"tick_us": 20, "clock": "steady"},
    "actors": [
      {"role": "scheduler", "count": 2, "delay_us": {"fixed": 50}, "stale_probability": 0},
      {"role": "timer_thread", "count": 1}
    ],
    "run": {"operations": 3000, "budget_s": 20, "seed": 5, "max_pending": 16}})");
  const CaseResult r = run_in_runner(sc, TLAB_TEST_SUBJECT_LOST, 60);
  EXPECT_EQ(r.verdict, Verdict::kFail) << r.message;
  ASSERT_TRUE(r.violations.contains("lost_timer")) << r.message;
  EXPECT_GT(r.violations.at("lost_timer").count, 0u);
}

struct CancelBug {
  const char* variant;
  const char* library;
  const char* oracle;
  const char* phrase;  // in the first example
};

class ConcurrentCancelBug : public ::testing::TestWithParam<CancelBug> {};

// Under the same racing cancellers, the real cancel bugs are still caught: TOO_LATE
// for a pending timer that is then removed (never fires), and PREVENTED for a timer
// left armed (it fires after the call returned).
TEST_P(ConcurrentCancelBug, IsStillCaught) {
  const CancelBug& b = GetParam();
  const Ran ran = run_on(concurrent_cancels(), b.library);
  ASSERT_TRUE(ran.error.empty()) << ran.error;
  EXPECT_EQ(ran.r.verdict, Verdict::kFail) << summary(ran);
  ASSERT_GT(count_of(ran, b.oracle), 0u) << summary(ran);
  EXPECT_NE(ran.r.violations.at(b.oracle).first_example.find(b.phrase), std::string::npos)
      << summary(ran);
}
INSTANTIATE_TEST_SUITE_P(
    Variants, ConcurrentCancelBug,
    ::testing::Values(
        CancelBug{"wrong_cancel", TLAB_TEST_SUBJECT_WRONG_CANCEL, "wrong_result", "TOO_LATE"},
        CancelBug{"after_cancel", TLAB_TEST_SUBJECT_AFTER_CANCEL, "fired_after_cancel",
                  "had returned TLAB_CANCEL_PREVENTED"}),
    [](const ::testing::TestParamInfo<CancelBug>& i) { return std::string(i.param.variant); });

// ---- stale handles (ABA) ----

class StaleHandles : public ::testing::TestWithParam<const char*> {};

// The built-in suite's facility scenarios, with no stale_probability of their own
// (so the driver's default), fail examples/subjects/c_timer_heap built with
// TIMER_HEAP_ABA (handle = bare slot index): a stale cancel of a fired timer's
// handle cancels the slot's new tenant and says PREVENTED (wrong_result), and the
// tenant never fires (lost_timer).
TEST_P(StaleHandles, AbaHeapFailsTheBuiltInScenario) {
  const Ran ran = run_on(load(GetParam()), TLAB_EXAMPLE_C_HEAP_ABA);
  ASSERT_TRUE(ran.error.empty()) << ran.error;
  EXPECT_EQ(ran.r.verdict, Verdict::kFail) << summary(ran);
  EXPECT_GT(count_of(ran, "wrong_result"), 0u) << summary(ran);
  EXPECT_GT(count_of(ran, "lost_timer"), 0u) << summary(ran);
  ASSERT_EQ(ran.r.violations.count("wrong_result"), 1u);
  EXPECT_NE(ran.r.violations.at("wrong_result").first_example.find("a stale cancel"),
            std::string::npos)
      << summary(ran);
}

// The same scenarios pass on the correct heap ({slot, generation} handles): its
// stale cancels are answered TOO_LATE and touch no other timer.
TEST_P(StaleHandles, CorrectHeapPassesTheBuiltInScenario) {
  const Ran ran = run_on(load(GetParam()), TLAB_EXAMPLE_C_HEAP);
  ASSERT_TRUE(ran.error.empty()) << ran.error;
  EXPECT_EQ(ran.r.verdict, Verdict::kPass) << summary(ran);
  EXPECT_TRUE(ran.r.violations.empty()) << summary(ran);
  EXPECT_GT(counter(ran, "stale_cancels"), 0u) << summary(ran);
}
// missed_notify (no canceller, 300 schedules) is left out: its few stale cancels
// from schedulers hit a reused slot on some seeds only.
INSTANTIATE_TEST_SUITE_P(BuiltInSuite, StaleHandles,
                         ::testing::Values("facility_races", "facility_ties", "expiry_storm",
                                           "huge_and_negative_delays"),
                         [](const ::testing::TestParamInfo<const char*>& i) {
                           return std::string(i.param);
                         });

// stale_probability 0 turns stale cancels off: the ABA heap then passes
// facility_ties, which is what every scenario did before the driver made them.
TEST(StaleProbability, ZeroTurnsStaleCancelsOff) {
  Scenario sc = load("facility_ties");
  for (Actor& a : sc.actors) a.stale_probability = 0.0;
  const Ran ran = run_on(sc, TLAB_EXAMPLE_C_HEAP_ABA);
  EXPECT_EQ(ran.r.verdict, Verdict::kPass) << summary(ran);
  EXPECT_EQ(counter(ran, "stale_cancels"), 0u) << summary(ran);
}

// tlab's own engines do not make stale cancels: a scenario that asks for them is
// refused at its actor's field (0 is accepted: it asks for nothing).
TEST(StaleProbability, BuiltInEnginesRefuseIt) {
  Scenario sc = load("facility_races");
  std::string why, pointer;
  ASSERT_NE(engine_for(sc, why, &pointer), nullptr) << why;
  sc.actors[2].stale_probability = 0.0;
  EXPECT_NE(engine_for(sc, why, &pointer), nullptr) << why;
  sc.actors[2].stale_probability = 0.5;
  EXPECT_EQ(engine_for(sc, why, &pointer), nullptr);
  EXPECT_EQ(pointer, "/actors/2/stale_probability");
  EXPECT_NE(why.find("--subject"), std::string::npos) << why;
}

// ---- re-arms (rearm_probability) ----

// `name` with every scheduler re-arming its held timer with probability `p`, and
// no stale cancels: what is found is found through the re-arms alone.
Scenario with_rearms(const char* name, double p) {
  Scenario sc = load(name);
  for (Actor& a : sc.actors) {
    a.stale_probability = 0.0;
    if (a.role == Role::kScheduler) a.rearm_probability = p;
  }
  return sc;
}

// On the virtual clock the held timer of facility_ties' delay-0 scheduler has
// fired before its re-arm, and the ABA heap then cancels the slot's new tenant
// and says PREVENTED (wrong_result naming the re-arm), losing the tenant; with
// rearm_probability 0 (and no stale cancels) the same run passes.
TEST(Rearms, CatchTheAbaHeapOnTheVirtualClock) {
  const Ran ran = run_on(with_rearms("facility_ties", 0.5), TLAB_EXAMPLE_C_HEAP_ABA);
  ASSERT_TRUE(ran.error.empty()) << ran.error;
  EXPECT_EQ(ran.r.verdict, Verdict::kFail) << summary(ran);
  EXPECT_GT(counter(ran, "rearmed"), 0u) << summary(ran);
  EXPECT_GT(count_of(ran, "lost_timer"), 0u) << summary(ran);
  ASSERT_EQ(ran.r.violations.count("wrong_result"), 1u) << summary(ran);
  EXPECT_NE(ran.r.violations.at("wrong_result").first_example.find("a re-arm"),
            std::string::npos)
      << summary(ran);

  const Ran off = run_on(with_rearms("facility_ties", 0.0), TLAB_EXAMPLE_C_HEAP_ABA);
  EXPECT_EQ(off.r.verdict, Verdict::kPass) << summary(off);
  EXPECT_EQ(counter(off, "rearmed"), 0u) << summary(off);
}

// The same virtual run replays exactly: equal seeds make equal re-arms.
TEST(Rearms, ReplayExactlyOnTheVirtualClock) {
  const Ran a = run_on(with_rearms("facility_ties", 0.5), TLAB_EXAMPLE_C_HEAP);
  const Ran b = run_on(with_rearms("facility_ties", 0.5), TLAB_EXAMPLE_C_HEAP);
  EXPECT_GT(counter(a, "rearmed"), 0u) << summary(a);
  EXPECT_EQ(counter(a, "rearmed"), counter(b, "rearmed"));
  EXPECT_EQ(counter(a, "scheduled"), counter(b, "scheduled"));
  EXPECT_EQ(counter(a, "cancelled"), counter(b, "cancelled"));
}

// The test names of RearmsOnCorrectSubjects' subjects, in their Values order.
std::string rearm_subject_name(std::size_t i) {
  return i == 0 ? "test_subject" : i == 1 ? "binary_heap" : "c_timer_heap";
}

class RearmsOnCorrectSubjects
    : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

// Correct subjects (the test subject, binary_heap, the {slot, generation} heap)
// answer every re-arm's cancel truthfully, PREVENTED or TOO_LATE, on the virtual
// clock (facility_ties) and the real one (facility_races): nothing is flagged.
TEST_P(RearmsOnCorrectSubjects, PassWithHalfTheTimersRearmed) {
  const auto [scenario, so] = GetParam();
  const Ran ran = run_on(with_rearms(scenario, 0.5), so);
  ASSERT_TRUE(ran.error.empty()) << ran.error;
  EXPECT_EQ(ran.r.verdict, Verdict::kPass) << summary(ran);
  EXPECT_TRUE(ran.r.violations.empty()) << summary(ran);
  EXPECT_GT(counter(ran, "rearmed"), 0u) << summary(ran);
}
INSTANTIATE_TEST_SUITE_P(
    Subjects, RearmsOnCorrectSubjects,
    ::testing::Combine(::testing::Values("facility_ties", "facility_races"),
                       ::testing::Values(TLAB_TEST_SUBJECT_CORRECT, "binary_heap",
                                         TLAB_EXAMPLE_C_HEAP)),
    [](const ::testing::TestParamInfo<std::tuple<const char*, const char*>>& i) {
      return std::string(std::get<0>(i.param)) + "_" + rearm_subject_name(i.index % 3);
    });

// The timer service engine re-arms through TimerService::reschedule; the other
// built-in engines do not re-arm, so a scenario that asks them to is refused at its
// actor's field (0 is accepted: it asks for nothing). engine.max_pending likewise
// belongs to the timer service alone.
TEST(RearmProbability, OnlyTheTimerServiceEngineTakesIt) {
  Scenario sc = load("facility_races");
  std::string why, pointer;
  sc.actors[0].rearm_probability = 0.5;
  const SubjectInfo* service = engine_for(sc, why, &pointer);
  ASSERT_NE(service, nullptr) << why;
  EXPECT_EQ(service->name, "timer_service");

  Scenario ex = load("worker_churn");
  std::size_t scheduler = ex.actors.size();
  for (std::size_t i = 0; i < ex.actors.size(); ++i) {
    if (ex.actors[i].role == Role::kScheduler) scheduler = i;
  }
  ASSERT_LT(scheduler, ex.actors.size());
  ex.actors[scheduler].rearm_probability = 0.0;
  ASSERT_NE(engine_for(ex, why, &pointer), nullptr) << why;
  ex.actors[scheduler].rearm_probability = 0.5;
  EXPECT_EQ(engine_for(ex, why, &pointer), nullptr);
  EXPECT_EQ(pointer, fmt::format("/actors/{}/rearm_probability", scheduler));
  EXPECT_NE(why.find("--subject"), std::string::npos) << why;

  ex.actors[scheduler].rearm_probability = 0.0;
  ex.engine.max_pending = 10;
  EXPECT_EQ(engine_for(ex, why, &pointer), nullptr);
  EXPECT_EQ(pointer, "/engine/max_pending");
}

// Periodic timers are the timer service's (and subjects'): the executor and the
// coroutine loop, whose scheduler timers are one-shot, refuse a periodic mode at
// the actor's field rather than fail inside the case.
TEST(SchedulerMode, PeriodicModesOnlyOnTheTimerServiceEngine) {
  for (const char* name : {"worker_churn", "coroutine_callbacks"}) {
    SCOPED_TRACE(name);
    Scenario sc = load(name);
    std::string why, pointer;
    std::size_t scheduler = sc.actors.size();
    for (std::size_t i = 0; i < sc.actors.size(); ++i) {
      if (sc.actors[i].role == Role::kScheduler) scheduler = i;
    }
    ASSERT_LT(scheduler, sc.actors.size());
    ASSERT_NE(engine_for(sc, why, &pointer), nullptr) << why;
    sc.actors[scheduler].mode = ScheduleMode::kFixedDelay;
    EXPECT_EQ(engine_for(sc, why, &pointer), nullptr);
    EXPECT_EQ(pointer, fmt::format("/actors/{}/mode", scheduler));
    EXPECT_NE(why.find("one-shot"), std::string::npos) << why;
  }
}

}  // namespace
}  // namespace tlab::tool
