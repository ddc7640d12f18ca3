// The generic ABI driver (tool/runner/engine_subject.h) on test_subject.c: the
// correct facility passes every facility scenario, and each seeded bug fails with
// the oracle that judges its promise. Cases run in this process through
// run_subject_engine (the driver the case child calls), and the verdict is decided
// by judge() with the subject's own promises, as the runner does.
#include <string>
#include <tuple>

#include <gtest/gtest.h>

#include "subjects/subject_case.h"

namespace tlab::tool {
namespace {

using namespace subject_case;

class CorrectSubject : public ::testing::TestWithParam<std::tuple<const char*, const char*>> {};

// The correct facility, loop-driven on tlab's clock and self-driven on its own,
// passes each facility scenario (real clock, virtual clock, huge and negative
// delays): nothing is flagged, timers fired, and destroy() ran with timers pending.
TEST_P(CorrectSubject, PassesTheFacilityScenario) {
  const auto [library, scenario] = GetParam();
  const Ran ran = run_on(load(scenario), library);
  ASSERT_TRUE(ran.error.empty()) << ran.error;
  EXPECT_EQ(ran.r.verdict, Verdict::kPass) << summary(ran);
  EXPECT_TRUE(ran.r.violations.empty()) << summary(ran);
  EXPECT_GT(counter(ran, "fired"), 0u) << summary(ran);
  EXPECT_GT(counter(ran, "pending_at_destroy"), 0u) << summary(ran);
  EXPECT_EQ(counter(ran, "idle_probes"), 4u) << summary(ran);  // every probe fired
  EXPECT_GT(ran.r.latency.count("fire_lateness"), 0u);
  EXPECT_GT(ran.r.latency.count("schedule_cost"), 0u);
}
INSTANTIATE_TEST_SUITE_P(Scenarios, CorrectSubject,
                         ::testing::Combine(::testing::Values(TLAB_TEST_SUBJECT_CORRECT,
                                                              TLAB_TEST_SUBJECT_SELF,
                                                              TLAB_TEST_SUBJECT_V1SIZE),
                                            ::testing::Values("facility_races", "facility_ties",
                                                              "huge_and_negative_delays")));

// A plugin built before the descriptor grew (struct_size TLAB_SUBJECT_V1_SIZE)
// loads, and the fields it lacks read as 0.
TEST(EngineSubject, AFirstReleasePluginLoadsWithItsLaterFieldsZero) {
  std::string err;
  const tlab_subject* d = open_subject(TLAB_TEST_SUBJECT_V1SIZE, err);
  ASSERT_NE(d, nullptr) << err;
  EXPECT_EQ(d->struct_size, sizeof(tlab_subject));  // tlab's whole copy
  EXPECT_EQ(d->resolution_ns, 0);
}

// A subject that cannot run on tlab's clock runs a virtual scenario on the real
// clock, and the case message says so; a self-driven one says its own threads fire.
TEST(EngineSubject, VirtualScenarioOnARealClockSubjectIsNoted) {
  const Ran ran = run_on(load("facility_ties"), TLAB_TEST_SUBJECT_SELF);
  EXPECT_NE(ran.r.message.find("ran on the real clock"), std::string::npos) << ran.r.message;
  EXPECT_NE(ran.r.message.find("TLAB_DRIVE_SELF"), std::string::npos) << ran.r.message;
}

// huge_and_negative_delays on the correct subject: negative delays are refused
// with TLAB_EINVAL (counted, not a violation) and huge ones saturate, never fire.
TEST(EngineSubject, NegativeDelaysAreRefusedAndCounted) {
  const Ran ran = run_on(load("huge_and_negative_delays"), TLAB_TEST_SUBJECT_CORRECT);
  EXPECT_GT(counter(ran, "refused"), 0u) << summary(ran);
  EXPECT_EQ(ran.r.verdict, Verdict::kPass) << summary(ran);
}

// The cancels of facility_races reach the subject: some PREVENTED (counted as
// cancelled) and the cancel-cost histogram is recorded.
TEST(EngineSubject, CancelsArePreventedAndTimed) {
  const Ran ran = run_on(load("facility_races"), TLAB_TEST_SUBJECT_CORRECT);
  EXPECT_GT(counter(ran, "cancelled"), 0u) << summary(ran);
  EXPECT_GT(ran.r.latency.count("cancel_cost"), 0u);
}

struct Bug {
  const char* variant;
  const char* library;
  const char* scenario;
  const char* oracle;
  // The scenario without its cancellers: for a bug that shows only on timers no
  // cancel took (see SeededBug).
  bool without_cancellers = false;
};

class SeededBug : public ::testing::TestWithParam<Bug> {};

// Each seeded bug fails the case with the oracle that judges it, and the first
// example is a sentence that names a cookie or the call. (One tick early is shown
// on the virtual clock only: on a loaded machine every real poll may come a tick
// late, and then the early timer is not early.) On the real clock, lost and double
// show only on timers no cancel took, and a canceller picks among the live timers,
// where a lost one stays for ever: on a loaded machine facility_races' cancellers
// left 7 of the lost bug's 60. Without them a timer is cancelled only by its own
// scheduler's seeded draw (0.3, for two schedulers of three), which knows nothing
// of the bug's every 50th timer, so each of the 60 escapes with p >= 0.7 and all
// are taken with p <= 0.3^60.
TEST_P(SeededBug, FailsWithItsOracle) {
  const Bug& b = GetParam();
  Scenario sc = load(b.scenario);
  if (b.without_cancellers) {
    std::erase_if(sc.actors, [](const Actor& a) { return a.role == Role::kCanceller; });
  }
  const Ran ran = run_on(sc, b.library);
  ASSERT_TRUE(ran.error.empty()) << ran.error;
  EXPECT_EQ(ran.r.verdict, Verdict::kFail) << summary(ran);
  EXPECT_GT(count_of(ran, b.oracle), 0u) << summary(ran);
  auto it = ran.r.violations.find(b.oracle);
  if (it != ran.r.violations.end()) {
    const std::string& ex = it->second.first_example;
    EXPECT_TRUE(ex.find("cookie") != std::string::npos || ex.find("pending()") != std::string::npos)
        << ex;
  }
}
INSTANTIATE_TEST_SUITE_P(
    Variants, SeededBug,
    ::testing::Values(
        Bug{"early_virtual", TLAB_TEST_SUBJECT_EARLY, "facility_ties", "early_fire"},
        Bug{"late_virtual", TLAB_TEST_SUBJECT_LATE, "facility_ties", "late_fire"},
        // Real clock: the poller polls every half tick, so each of the ~1000 timers
        // has 18 polls between due + tick and the fire ten ticks late; one of them
        // is enough, and a poller starved through all of them for every timer is
        // what the soak would show, not a run.
        Bug{"late_real", TLAB_TEST_SUBJECT_LATE, "facility_races", "late_fire"},
        Bug{"double_virtual", TLAB_TEST_SUBJECT_DOUBLE, "facility_ties", "double_resume"},
        Bug{"double_real", TLAB_TEST_SUBJECT_DOUBLE, "facility_races", "double_resume", true},
        Bug{"after_cancel_virtual", TLAB_TEST_SUBJECT_AFTER_CANCEL, "facility_ties",
            "fired_after_cancel"},
        Bug{"after_cancel_real", TLAB_TEST_SUBJECT_AFTER_CANCEL, "facility_races",
            "fired_after_cancel"},
        Bug{"lost_virtual", TLAB_TEST_SUBJECT_LOST, "facility_ties", "lost_timer"},
        Bug{"lost_real", TLAB_TEST_SUBJECT_LOST, "facility_races", "lost_timer", true},
        Bug{"wrong_cancel_virtual", TLAB_TEST_SUBJECT_WRONG_CANCEL, "facility_ties",
            "wrong_result"},
        Bug{"wrong_cancel_real", TLAB_TEST_SUBJECT_WRONG_CANCEL, "facility_races", "wrong_result"},
        Bug{"fifo_virtual", TLAB_TEST_SUBJECT_FIFO, "facility_ties", "fifo_order"},
        Bug{"einval_virtual", TLAB_TEST_SUBJECT_EINVAL, "facility_ties", "lost_timer"},
        Bug{"pending_virtual", TLAB_TEST_SUBJECT_PENDING, "facility_ties", "conservation"},
        Bug{"pending_real", TLAB_TEST_SUBJECT_PENDING, "facility_races", "conservation"},
        Bug{"idle_sleep_real", TLAB_TEST_SUBJECT_SELF_IDLE_SLEEP, "facility_races", "lost_timer"},
        Bug{"idle_sleep_virtual_scenario", TLAB_TEST_SUBJECT_SELF_IDLE_SLEEP, "facility_ties",
            "lost_timer"}),
    [](const ::testing::TestParamInfo<Bug>& i) { return std::string(i.param.variant); });

// Through the runner, the correct subject passes and the report says whose
// promises were judged; a seeded bug fails the same way as in process.
TEST(EngineSubjectRunner, CorrectPassesAndFifoBugFails) {
  const Scenario sc = load("facility_ties");
  const CaseResult ok = run_in_runner(sc, TLAB_TEST_SUBJECT_CORRECT, 60);
  EXPECT_EQ(ok.verdict, Verdict::kPass) << ok.message;
  EXPECT_EQ(ok.subject, "test_subject_correct");
  const CaseResult bad = run_in_runner(sc, TLAB_TEST_SUBJECT_FIFO, 60);
  EXPECT_EQ(bad.verdict, Verdict::kFail) << bad.message;
  EXPECT_EQ(bad.violations.count("fifo_order"), 1u) << bad.message;
}

// A status the ABI does not allow here (TLAB_EFAIL from schedule) is a driver
// error naming the call: the runner's verdict is error.
TEST(EngineSubjectRunner, EfailIsADriverErrorNamingTheCall) {
  const CaseResult r = run_in_runner(load("facility_ties"), TLAB_TEST_SUBJECT_EFAIL, 60);
  EXPECT_EQ(r.verdict, Verdict::kError) << r.message;
  EXPECT_NE(r.message.find("returned TLAB_EFAIL"), std::string::npos) << r.message;
  EXPECT_NE(r.message.find("schedule("), std::string::npos) << r.message;
}

// A subject that segfaults inside poll() kills only its case's process: the
// verdict is a fail with the crash finding naming the SEGV.
TEST(EngineSubjectRunner, CrashInPollIsTheCasesCrash) {
  const CaseResult r = run_in_runner(load("facility_ties"), TLAB_TEST_SUBJECT_CRASH, 60);
  EXPECT_EQ(r.verdict, Verdict::kFail) << r.message;
  ASSERT_EQ(r.violations.count("crash"), 1u) << r.message;
  // Killed by SIGSEGV; under a sanitizer its handler reports the SEGV and exits.
  const std::string& ex = r.violations.at("crash").first_example;
  EXPECT_TRUE(ex.find("signal 11") != std::string::npos || ex.find("SEGV") != std::string::npos)
      << ex;
}

// A subject whose poll() never returns is the case's timeout at its budget, with
// the actors' states: the loop thread is stuck in its poll. The subject hangs after
// 200 schedules, so the budget (10 s) is what those get however loaded the machine
// (at 0.5 s, a slow start left the loop thread waiting for the call lock, "locking").
TEST(EngineSubjectRunner, HangInPollIsTheCasesTimeout) {
  const CaseResult r = run_in_runner(load("facility_races"), TLAB_TEST_SUBJECT_HANG, 10);
  EXPECT_EQ(r.verdict, Verdict::kTimeout) << r.message;
  EXPECT_NE(r.message.find("timer_thread#0: working"), std::string::npos) << r.message;
}

// A self-driven subject whose destroy() leaves its thread firing: the timers
// left pending at the end fire after destroy() returned (fired_after_cancel).
TEST(EngineSubjectRunner, FiringAfterDestroyIsFiredAfterCancel) {
  const CaseResult r =
      run_in_runner(load("facility_races"), TLAB_TEST_SUBJECT_SELF_AFTER_DESTROY, 60);
  EXPECT_EQ(r.verdict, Verdict::kFail) << r.message;
  ASSERT_EQ(r.violations.count("fired_after_cancel"), 1u) << r.message;
  EXPECT_NE(
      r.violations.at("fired_after_cancel").first_example.find("after destroy() had returned"),
      std::string::npos);
}

// A self-driven subject that parks while idle and is told of a new timer only
// when others were pending: the actors keep it busy, so it may pass the race, but
// the drain's idle probes find it: a probe into the drained subject is lost
// (the first, or the second when the first wakes a thread parked on a timer the
// race left behind), named as such, and probing stops there.
TEST(EngineSubject, TimerAddedWhileIdleIsLostAndProbed) {
  const Ran ran = run_on(load("facility_races"), TLAB_TEST_SUBJECT_SELF_IDLE_SLEEP);
  ASSERT_TRUE(ran.error.empty()) << ran.error;
  ASSERT_GE(count_of(ran, "lost_timer"), 1u) << summary(ran);
  const std::string& ex = ran.r.violations.at("lost_timer").first_example;
  EXPECT_NE(ex.find("idle probe"), std::string::npos) << ex;
  EXPECT_NE(ex.find("into a drained subject"), std::string::npos) << ex;
  EXPECT_GE(counter(ran, "idle_probes"), 1u) << summary(ran);
  EXPECT_LE(counter(ran, "idle_probes"), 2u) << summary(ran);
}

// A timeout's actor report gives an actor that never changed phase its age in the
// case (it once printed the host's uptime: "timer_thread#0: starting for 14045s").
TEST(EngineSubject, ActorReportAgesAnUntouchedActorFromItsRegistration) {
  const CaseSpec spec = spec_of(load("facility_races"), TLAB_TEST_SUBJECT_CORRECT, 1);
  runner::CaseContext ctx(spec, runner::steady_ns());
  ctx.add_actor("idle#0");
  const std::string report = ctx.actor_report();
  const std::string want = "idle#0: starting for ";
  ASSERT_EQ(report.rfind(want, 0), 0u) << report;
  const std::string age = report.substr(want.size(), report.find(' ', want.size()) - want.size());
  EXPECT_TRUE(age.ends_with("ns") || age.ends_with("us") || age.ends_with("ms")) << report;
}

// ---- which scenarios a subject accepts ----

const tlab_subject& correct_descriptor() {
  std::string err;
  const tlab_subject* d = open_subject(TLAB_TEST_SUBJECT_CORRECT, err);
  EXPECT_NE(d, nullptr) << err;
  return *d;
}

std::string accepts(const std::string& actors, const std::string& clock, std::string* pointer) {
  const Scenario sc =
      load_text(R"({"name": "t", "description": "t", "engine": {"clock": ")" + clock +
                R"("}, "actors": [)" + actors + R"(], "run": {"operations": 10, "budget_s": 1}})");
  std::string why, ptr;
  const bool ok = runner::subject_accepts(sc, correct_descriptor(), why, ptr);
  if (pointer != nullptr) *pointer = ptr;
  return ok ? "" : why;
}

// A waiter needs tlab's own Waiter: refused at its role's pointer, naming it.
TEST(SubjectAccepts, RefusesRolesThatNeedTlabsOwnEngine) {
  std::string ptr;
  const std::string why = accepts(R"({"role": "scheduler", "count": 1, "delay_us": {"fixed": 1}},
                 {"role": "waiter", "count": 1, "timeout_us": {"fixed": 1}},
                 {"role": "timer_thread", "count": 1})",
                                  "steady", &ptr);
  EXPECT_EQ(ptr, "/actors/1/role");
  EXPECT_NE(why.find("Waiter"), std::string::npos) << why;
}

// A periodic mode runs on a subject that has that kind of periodic timer, and is
// refused at the mode, naming the kind, on one that lacks it.
TEST(SubjectAccepts, PeriodicModesNeedTheSubjectsKind) {
  const std::string actors =
      R"({"role": "scheduler", "count": 1, "delay_us": {"fixed": 1}, "mode": "fixed_rate",
          "period_us": {"fixed": 10}}, {"role": "timer_thread", "count": 1})";
  std::string ptr;
  EXPECT_EQ(accepts(actors, "steady", &ptr), "");
  const Scenario sc =
      load_text(R"({"name": "t", "description": "t", "engine": {"clock": "steady"}, "actors": [)" +
                actors + R"(], "run": {"operations": 10, "budget_s": 1}})");
  tlab_subject delay_only = correct_descriptor();
  delay_only.periodic = TLAB_PERIODIC_FIXED_DELAY;
  std::string why;
  EXPECT_FALSE(runner::subject_accepts(sc, delay_only, why, ptr));
  EXPECT_EQ(ptr, "/actors/0/mode");
  EXPECT_NE(why.find("TLAB_PERIODIC_FIXED_RATE"), std::string::npos) << why;
}

// A loop subject on the real clock with no timer_thread has nobody to poll it;
// on a virtual scenario the driver polls, so the same actors are accepted.
TEST(SubjectAccepts, LoopSubjectOnRealClockNeedsATimerThread) {
  const std::string actors = R"({"role": "scheduler", "count": 1, "delay_us": {"fixed": 1}})";
  std::string ptr;
  const std::string why = accepts(actors, "steady", &ptr);
  EXPECT_EQ(ptr, "/actors");
  EXPECT_NE(why.find("who would poll"), std::string::npos) << why;
  EXPECT_EQ(accepts(actors, "virtual", nullptr), "");
}

// A timed-wait role on a facility is refused at its role.
TEST(SubjectAccepts, RefusesTimedWaitRolesOnAFacility) {
  std::string ptr;
  const std::string why = accepts(
      R"({"role": "mutex_contender", "count": 1, "timeout_us": {"fixed": 1}})", "steady", &ptr);
  EXPECT_EQ(ptr, "/actors/0/role");
  EXPECT_NE(why.find("TLAB_KIND_TIMED_WAIT"), std::string::npos) << why;
}

}  // namespace
}  // namespace tlab::tool
