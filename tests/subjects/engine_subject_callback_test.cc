// Callbacks that act (tool/runner/engine_subject_facility.h, "Callback scripts"):
// the generic driver performs a timer's script inside the subject's fire. The
// correct facility passes callback_chains with every kind of action performed;
// each seeded re-entrancy bug fails with the oracle of its class; a chain re-armed
// at 0 on a facility that fires within the pass ends in starvation, not a hang;
// a subject that does not declare REENTRANT gets no scripts, and says so.
#include <dlfcn.h>

#include <string>

#include <gtest/gtest.h>

#include "subjects/subject_case.h"

namespace tlab::tool {
namespace {

using namespace subject_case;

// scenarios/callback_chains.json: built in (tlab's own engines run it without
// the scripts).
Scenario callback_chains() { return load("callback_chains"); }

TEST(CallbackScripts, TheCorrectFacilityPassesWithEveryActionPerformed) {
  const Ran ran = run_on(callback_chains(), TLAB_TEST_SUBJECT_CORRECT);
  ASSERT_TRUE(ran.error.empty()) << ran.error;
  EXPECT_EQ(ran.r.verdict, Verdict::kPass) << summary(ran);
  EXPECT_TRUE(ran.r.violations.empty()) << summary(ran);
  EXPECT_GT(counter(ran, "callback_rearms"), 100u) << summary(ran);
  EXPECT_GT(counter(ran, "callback_cancels"), 100u) << summary(ran);
  EXPECT_GT(counter(ran, "callback_self_cancels"), 100u) << summary(ran);
  EXPECT_GT(counter(ran, "cancelled"), 0u) << summary(ran);
}

struct CallbackBug {
  const char* variant;
  const char* library;
  const char* oracle;
};
class CallbackBugs : public ::testing::TestWithParam<CallbackBug> {};

// Each bug shows on callback_chains with its oracle, named by a cookie.
TEST_P(CallbackBugs, FailsWithItsOracle) {
  const CallbackBug& b = GetParam();
  const Ran ran = run_on(callback_chains(), b.library);
  ASSERT_TRUE(ran.error.empty()) << ran.error;
  EXPECT_EQ(ran.r.verdict, Verdict::kFail) << summary(ran);
  ASSERT_GT(count_of(ran, b.oracle), 0u) << summary(ran);
  EXPECT_NE(ran.r.violations.at(b.oracle).first_example.find("cookie"), std::string::npos)
      << summary(ran);
}
INSTANTIATE_TEST_SUITE_P(
    Variants, CallbackBugs,
    ::testing::Values(CallbackBug{"same_pass", TLAB_TEST_SUBJECT_SAME_PASS, "same_pass_fire"},
                      CallbackBug{"sibling_cancel", TLAB_TEST_SUBJECT_SIBLING_CANCEL,
                                  "fired_after_cancel"},
                      CallbackBug{"cancel_self", TLAB_TEST_SUBJECT_CANCEL_SELF, "wrong_result"}),
    [](const auto& info) { return std::string(info.param.variant); });

// A callback that always re-arms at 0, on a facility that fires what is due
// within the pass: the chain would keep the first poll from ever returning. tlab
// stops feeding it after TimerLedger::kDefaultStarvationAfter fires, and the case
// ends with a starvation finding; the correct facility runs the same chains one
// poll at a time.
TEST(CallbackScripts, AChainReArmedAtZeroWithinThePassIsStarvationNotAHang) {
  const char* kChain = R"({
    "name": "rearm_at_zero",
    "description": "one scheduler whose every callback re-arms at 0",
    "engine": {"strategies": ["all"], "tick_us": 100, "clock": "virtual"},
    "actors": [{"role": "scheduler", "count": 1, "delay_us": {"fixed": 100},
                "callback_rearm_probability": 1.0, "callback_rearm_delay_us": {"fixed": 0}}],
    "run": {"operations": 20, "budget_s": 20, "seed": 1}
  })";
  const Ran bad = run_on(load_text(kChain), TLAB_TEST_SUBJECT_SAME_PASS);
  ASSERT_TRUE(bad.error.empty()) << bad.error;
  EXPECT_EQ(bad.r.verdict, Verdict::kFail) << summary(bad);
  ASSERT_GT(count_of(bad, "starvation"), 0u) << summary(bad);
  EXPECT_NE(bad.r.violations.at("starvation").first_example.find("fired 1000 timers"),
            std::string::npos)
      << summary(bad);
  // Through the runner (a forked case child, its watchdog): a verdict, well
  // within the budget, and the child is gone (run_case reaps it).
  const Scenario chain = load_text(kChain);
  const CaseResult r = run_in_runner(chain, TLAB_TEST_SUBJECT_SAME_PASS, 60);
  EXPECT_EQ(r.verdict, Verdict::kFail) << r.message;
  EXPECT_GT(r.violations.count("starvation"), 0u) << r.message;
  const Ran good = run_on(load_text(kChain), TLAB_TEST_SUBJECT_CORRECT);
  EXPECT_EQ(good.r.verdict, Verdict::kPass) << summary(good);
  EXPECT_GT(counter(good, "callback_rearms"), 0u) << summary(good);
}

// The self-driven facility does not declare REENTRANT: no script is performed,
// the case passes, and its message says why.
TEST(CallbackScripts, ASubjectWithoutReentrantGetsNoScriptsAndSaysSo) {
  const Ran ran = run_on(callback_chains(), TLAB_TEST_SUBJECT_SELF);
  EXPECT_EQ(ran.r.verdict, Verdict::kPass) << summary(ran);
  EXPECT_EQ(counter(ran, "callback_rearms"), 0u);
  EXPECT_NE(ran.r.message.find("TLAB_PROMISE_REENTRANT"), std::string::npos) << ran.r.message;
}

// libuv documents that a timer started with timeout 0 "fires on the next event
// loop iteration" (timer.html), so its peer promises next_pass. libuv before
// 1.48 runs such a timer, started from a callback, in the same uv_run pass
// (libuv#4245, "uv_timer_start behavior with timeout == 0 does not match
// documentation and can lead to starvation", fixed by libuv#4250 in 1.48.0): the
// built-in peer shows it as same_pass_fire (a failure: promised), and nothing
// else it promises. From 1.48 on (expired timers are queued, then run) it passes.
// The version is read from the libuv this binary runs with (tlab links it).
TEST(CallbackScripts, LibuvKeepsItsNextIterationPromiseOnlyFrom1_48) {
  using VersionFn = unsigned (*)();
  const auto uv_version = reinterpret_cast<VersionFn>(::dlsym(RTLD_DEFAULT, "uv_version"));
  ASSERT_NE(uv_version, nullptr) << "tlab links libuv";
  const unsigned v = uv_version();  // 0xMMmmpp
  const Ran ran = run_on(callback_chains(), "libuv");
  ASSERT_TRUE(ran.error.empty()) << ran.error;
  EXPECT_GT(counter(ran, "callback_rearms"), 100u) << summary(ran);
  if (v >= 0x013000) {
    EXPECT_EQ(ran.r.verdict, Verdict::kPass) << summary(ran);
  } else {
    EXPECT_EQ(ran.r.verdict, Verdict::kFail) << summary(ran);
    EXPECT_GT(count_of(ran, "same_pass_fire"), 0u) << summary(ran);
    // (starvation may follow: a poll whose callbacks' timers run within it can
    // reach the bound when many chains start in one poll.)
    expect_quiet(ran, {"lost_timer", "double_resume", "fired_after_cancel", "wrong_result",
                       "conservation", "late_fire"});
  }
}

// libevent documents re-adding an event from inside its callback (Ref4, "About
// Event Persistence"), and asio's tutorial re-arms a timer from inside its own
// completion handler (Timer.3), so both peers are REENTRANT: the scripts run inside
// their callbacks and every promised judge stays quiet. Neither documents a pass
// boundary, so a timer re-armed at 0 that runs within the same event_base_loop or
// io_context::poll call is a same_pass_fire finding that is shown, never failed.
TEST(CallbackScripts, ReentrantPeersRunTheScriptsAndKeepWhatTheyPromise) {
  for (const char* peer : {"libevent", "asio"}) {
    SCOPED_TRACE(peer);
    const Ran ran = run_on(callback_chains(), peer);
    ASSERT_TRUE(ran.error.empty()) << ran.error;
    EXPECT_EQ(ran.r.verdict, Verdict::kPass) << summary(ran);
    EXPECT_GT(counter(ran, "callback_rearms"), 100u) << summary(ran);
    EXPECT_GT(counter(ran, "callback_cancels"), 0u) << summary(ran);
    expect_quiet(ran, {"lost_timer", "double_resume", "fired_after_cancel", "wrong_result",
                       "late_fire", "starvation"});
  }
}

// tlab's sharded services run callbacks with no lock held (sharded_timer_service.h),
// so their subjects are REENTRANT: the scripts run on the service's timer thread,
// a sibling a pass already took answers TOO_LATE and runs, and nothing they
// promise breaks, with chains that always re-arm at 0 too (rearm_at_zero).
TEST(CallbackScripts, OwnThreadedBuiltinsRunTheScriptsAndKeepWhatTheyPromise) {
  for (const char* subject : {"sharded_service", "sharded_service_per_thread", "executor"}) {
    SCOPED_TRACE(subject);
    const Ran ran = run_on(callback_chains(), subject);
    ASSERT_TRUE(ran.error.empty()) << ran.error;
    EXPECT_EQ(ran.r.verdict, Verdict::kPass) << summary(ran);
    EXPECT_GT(counter(ran, "callback_rearms"), 100u) << summary(ran);
    EXPECT_GT(counter(ran, "callback_cancels"), 0u) << summary(ran);
    EXPECT_GT(counter(ran, "callback_self_cancels"), 0u) << summary(ran);
    const Ran chain = run_on(load("rearm_at_zero"), subject);
    ASSERT_TRUE(chain.error.empty()) << chain.error;
    EXPECT_EQ(chain.r.verdict, Verdict::kPass) << summary(chain);
    EXPECT_GT(counter(chain, "callback_rearms"), 0u) << summary(chain);
  }
}

}  // namespace
}  // namespace tlab::tool
