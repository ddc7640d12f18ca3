// The generic ABI driver on a timed wait (test_timed_wait.c): the correct
// semaphore passes the shipped timed-mutex and pool scenarios, and each seeded bug
// fails with the oracle that judges its promise.
#include <string>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "subjects/subject_case.h"

namespace tlab::tool {
namespace {

using namespace subject_case;

// Two contenders, one operation each: one holds for `hold_s`, past the other's 1 ms
// timeout and the watchdog's 500 ms grace.
Scenario held_long(int hold_s) {
  return load_text(fmt::format(R"({{"name": "held_long",
      "description": "one holder keeps the lock far past the other's timeout",
      "actors": [{{"role": "mutex_contender", "count": 2,
      "timeout_us": {{"fixed": 1000}}, "hold_us": {{"fixed": {}}}}}],
      "run": {{"operations": 2, "budget_s": 60}}}})",
                               hold_s * 1'000'000));
}

class CorrectTimedWait : public ::testing::TestWithParam<const char*> {};

// The correct semaphore passes mutex_timeout (permits 1) and pool_checkout_timeout
// (permits = pool_size 2): holders acquired, some waits timed out, nothing flagged.
TEST_P(CorrectTimedWait, PassesTheScenario) {
  const Ran ran = run_on(load(GetParam()), TLAB_TEST_WAIT_CORRECT);
  ASSERT_TRUE(ran.error.empty()) << ran.error;
  EXPECT_EQ(ran.r.verdict, Verdict::kPass) << summary(ran);
  EXPECT_TRUE(ran.r.violations.empty()) << summary(ran);
  EXPECT_GT(counter(ran, "acquired"), 0u) << summary(ran);
}
INSTANTIATE_TEST_SUITE_P(Scenarios, CorrectTimedWait,
                         ::testing::Values("mutex_timeout", "pool_checkout_timeout"));

// A semaphore that gives up after half its timeout is an early_fire, naming the
// call and how early it returned.
TEST(EngineSubjectWait, EarlyGiveUpIsEarlyFire) {
  const Ran ran = run_on(load("mutex_timeout"), TLAB_TEST_WAIT_EARLY);
  EXPECT_EQ(ran.r.verdict, Verdict::kFail) << summary(ran);
  ASSERT_GT(count_of(ran, "early_fire"), 0u) << summary(ran);
  EXPECT_NE(ran.r.violations.at("early_fire").first_example.find("acquire_for("),
            std::string::npos);
}

// A semaphore whose timed-out waiter takes the lock anyway breaks mutual exclusion.
TEST(EngineSubjectWait, TakingTheLockAfterATimeoutIsMutualExclusion) {
  const Ran ran = run_on(load("mutex_timeout"), TLAB_TEST_WAIT_EXCLUSION);
  EXPECT_EQ(ran.r.verdict, Verdict::kFail) << summary(ran);
  EXPECT_GT(count_of(ran, "mutual_exclusion"), 0u) << summary(ran);
}

// A waiter that ignores its timeout stays parked while the holder keeps the lock
// for 11 s: the runner's watchdog counts a lost_wakeup (2 contenders, 2
// operations, so the case still ends when the holder releases). 11 s because the
// watchdog flags a waiter parked 500 ms past its deadline: the second contender must
// start waiting while the first still holds for that long, and a loaded machine may
// start its thread late; so it gets 10 s (the hold is all this check costs).
TEST(EngineSubjectWait, IgnoringTheTimeoutIsALostWakeup) {
  const Scenario sc = held_long(11);
  const CaseResult r = run_in_runner(sc, TLAB_TEST_WAIT_NO_TIMEOUT, 60);
  EXPECT_EQ(r.verdict, Verdict::kFail) << r.message;
  ASSERT_EQ(r.violations.count("lost_wakeup"), 1u) << r.message;
  EXPECT_NE(r.violations.at("lost_wakeup").first_example.find("mutex_contender#"),
            std::string::npos);
}

// The same held-long case (1 s is enough: nothing here must start in time) on the
// correct semaphore: the waiter times out, no lost wakeup.
TEST(EngineSubjectWait, TheCorrectSemaphoreTimesOutWhileHeldLong) {
  const Scenario sc = held_long(1);
  const CaseResult r = run_in_runner(sc, TLAB_TEST_WAIT_CORRECT, 60);
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.message;
  EXPECT_GT(r.counters.count("timeouts"), 0u) << r.message;
}

// One contender, two operations: the first takes the free permit and releases it
// at once; the second waits 700 ms, longer than the grace (lost_wakeup_grace_ns:
// 500 ms + 20 ticks of 1 us). One thread, so the order is fixed: nothing races.
Scenario release_then_wait() {
  return load_text(R"({"name": "release_then_wait",
      "description": "a release, then a wait that must find the released permit",
      "engine": {"tick_us": 1},
      "actors": [{"role": "mutex_contender", "count": 1,
      "timeout_us": {"fixed": 700000}, "hold_us": {"fixed": 1}}],
      "run": {"operations": 2, "budget_s": 60}})");
}

// A semaphore whose release() loses the permit: the second acquire_for times out
// though tlab's own release left the permit free (by its count) for longer than
// the grace: one undeserved_timeout naming the contender, which fails the case
// under NO_SPURIOUS_TIMEOUT and is reported, without failing it, when the subject
// does not make that promise.
TEST(EngineSubjectWait, ALostReleaseIsAnUndeservedTimeout) {
  const Ran ran = run_on(release_then_wait(), TLAB_TEST_WAIT_LOST_RELEASE);
  ASSERT_TRUE(ran.error.empty()) << ran.error;
  EXPECT_EQ(ran.r.verdict, Verdict::kFail) << summary(ran);
  ASSERT_EQ(count_of(ran, "undeserved_timeout"), 1u) << summary(ran);
  EXPECT_NE(ran.r.violations.at("undeserved_timeout")
                .first_example.find("mutex_contender#0: acquire_for called at"),
            std::string::npos)
      << summary(ran);
  CaseResult unpromised = ran.r;
  const PromiseSet without =
      promises_of_abi(TLAB_PROMISE_DELIVERY | TLAB_PROMISE_NEVER_EARLY |
                      TLAB_PROMISE_THREAD_SAFE | TLAB_PROMISE_MUTUAL_EXCLUSION);
  judge(release_then_wait().expect, without, unpromised, false);
  EXPECT_EQ(unpromised.verdict, Verdict::kPass);
  EXPECT_EQ(unpromised.violations.at("undeserved_timeout").count, 1u);
}

// The same case on the correct semaphore: the second wait takes the released
// permit at once.
TEST(EngineSubjectWait, TheCorrectSemaphoreFindsTheReleasedPermit) {
  const Ran ran = run_on(release_then_wait(), TLAB_TEST_WAIT_CORRECT);
  ASSERT_TRUE(ran.error.empty()) << ran.error;
  EXPECT_EQ(ran.r.verdict, Verdict::kPass) << summary(ran);
  EXPECT_EQ(counter(ran, "acquired"), 2u) << summary(ran);
}

// A timed wait refuses facility roles, and several threads on a subject that is
// not thread-safe (blocking calls cannot be serialised).
TEST(SubjectAcceptsWait, RefusesSchedulersOnATimedWait) {
  std::string err;
  const tlab_subject* d = open_subject(TLAB_TEST_WAIT_CORRECT, err);
  ASSERT_NE(d, nullptr) << err;
  const Scenario sc = load_text(R"({"name": "t", "description": "t", "actors": [
      {"role": "scheduler", "count": 1, "delay_us": {"fixed": 1}}],
      "run": {"operations": 1, "budget_s": 1}})");
  std::string why, ptr;
  EXPECT_FALSE(runner::subject_accepts(sc, *d, why, ptr));
  EXPECT_EQ(ptr, "/actors/0/role");
  tlab_subject unsafe = *d;
  unsafe.promises &= ~TLAB_PROMISE_THREAD_SAFE;
  EXPECT_FALSE(runner::subject_accepts(load("mutex_timeout"), unsafe, why, ptr));
  EXPECT_NE(why.find("TLAB_PROMISE_THREAD_SAFE"), std::string::npos) << why;
  EXPECT_TRUE(runner::subject_accepts(load("mutex_timeout"), *d, why, ptr)) << why;
}

}  // namespace
}  // namespace tlab::tool
