// Tests of the one verdict decision (tool/oracles/oracles.h) and of the case
// result's one JSON form (tool/types/case_result.h).
#include "oracles/oracles.h"

#include <gtest/gtest.h>

#include "scenario/scenario.h"
#include "types/case_result.h"

namespace tlab::tool {
namespace {

constexpr PromiseSet kAll = PromiseSet(Promise::kDelivery) | Promise::kExactlyOnce |
                            Promise::kNeverEarly | Promise::kAccurateCancel | Promise::kFifoTies |
                            Promise::kPendingCount | Promise::kContainsErrors |
                            Promise::kThreadSafe;

CaseResult with_violation(const std::string& key, std::uint64_t count) {
  CaseResult r;
  r.violations[key] = {count, "example"};
  return r;
}

// A count within the scenario's allowance passes; one more fails.
TEST(OraclesTest, CountsAreJudgedAgainstTheirBound) {
  Expectations e;
  e.max_violations[static_cast<std::size_t>(Oracle::kLostWakeup)] = 2;
  CaseResult ok = with_violation("lost_wakeup", 2);
  judge(e, kAll, ok, false);
  EXPECT_EQ(ok.verdict, Verdict::kPass);
  CaseResult bad = with_violation("lost_wakeup", 3);
  judge(e, kAll, bad, false);
  EXPECT_EQ(bad.verdict, Verdict::kFail);
  EXPECT_TRUE(over_bound(e, "lost_wakeup", 3));
  EXPECT_FALSE(over_bound(e, "lost_wakeup", 2));
}

// Non-boundable findings (fifo_order, crash, sanitizer, latency.*) allow none.
TEST(OraclesTest, UnboundableFindingsAllowNone) {
  Expectations e;
  for (const char* key : {"fifo_order", "crash", "sanitizer", "latency.fire_lateness"}) {
    CaseResult r = with_violation(key, 1);
    judge(e, kAll, r, false);
    EXPECT_EQ(r.verdict, Verdict::kFail) << key;
  }
}

// A finding whose promise the subject does not make is reported, not judged.
TEST(OraclesTest, OnlyPromisedOraclesAreJudged) {
  Expectations e;
  CaseResult r = with_violation("fifo_order", 5);
  judge(e, kAll.without(Promise::kFifoTies), r, false);
  EXPECT_EQ(r.verdict, Verdict::kPass);
  EXPECT_EQ(r.violations.at("fifo_order").count, 5u);
  EXPECT_FALSE(r.promises.has(Promise::kFifoTies));
  CaseResult crash = with_violation("crash", 1);
  judge(e, PromiseSet{}, crash, false);
  EXPECT_EQ(crash.verdict, Verdict::kFail) << "a crash is judged for every subject";
}

// expect.at_least: too few violations is itself a failure, named at_least.<oracle>.
TEST(OraclesTest, AtLeastRequirementFailsWhenUnmet) {
  Expectations e;
  e.max_violations[static_cast<std::size_t>(Oracle::kWrongResult)] = 100;
  e.min_violations[static_cast<std::size_t>(Oracle::kWrongResult)] = 1;
  CaseResult none;
  judge(e, kAll, none, false);
  EXPECT_EQ(none.verdict, Verdict::kFail);
  EXPECT_EQ(none.violations.count("at_least.wrong_result"), 1u);
  CaseResult seen = with_violation("wrong_result", 3);
  judge(e, kAll, seen, false);
  EXPECT_EQ(seen.verdict, Verdict::kPass);
}

// A latency bound is checked against the histogram's percentile.
TEST(OraclesTest, LatencyBoundIsJudged) {
  Expectations e;
  e.fire_lateness_us.p99_max = 5;  // 5 us
  CaseResult r;
  for (int i = 0; i < 100; ++i) r.latency["fire_lateness"].record(i < 95 ? 1000 : 50'000);
  judge(e, kAll, r, false);
  EXPECT_EQ(r.verdict, Verdict::kFail);
  ASSERT_EQ(r.violations.count("latency.fire_lateness"), 1u);
  EXPECT_NE(r.violations.at("latency.fire_lateness").first_example.find("p99"), std::string::npos);
  e.fire_lateness_us.p99_max = 100;
  CaseResult ok;
  for (int i = 0; i < 100; ++i) ok.latency["fire_lateness"].record(1000);
  judge(e, kAll, ok, false);
  EXPECT_EQ(ok.verdict, Verdict::kPass);
}

// A virtual-clock scenario's bound is not judged on a case that ran on the real
// clock (kOffClockCounter): the same broken histogram passes, and is kept.
TEST(OraclesTest, LatencyBoundOfAVirtualScenarioIsNotJudgedOnTheRealClock) {
  Expectations e;
  e.fire_lateness_us.p99_max = 5;
  CaseResult r;
  for (int i = 0; i < 100; ++i) r.latency["fire_lateness"].record(50'000);
  r.counters[std::string(kOffClockCounter)] = 1;
  judge(e, kAll, r, false);
  EXPECT_EQ(r.verdict, Verdict::kPass);
  EXPECT_EQ(r.violations.count("latency.fire_lateness"), 0u);
  EXPECT_EQ(r.latency.at("fire_lateness").count(), 100u);
}

// A forced verdict (timeout, error) stands; the findings are still added.
TEST(OraclesTest, ForcedVerdictStands) {
  Expectations e;
  CaseResult r;
  r.verdict = Verdict::kTimeout;
  r.sanitizer_reports = {"WARNING: ThreadSanitizer: data race"};
  judge(e, kAll, r, /*forced=*/true);
  EXPECT_EQ(r.verdict, Verdict::kTimeout);
  EXPECT_EQ(r.violations.at("sanitizer").count, 1u);
}

// The result's JSON round-trips exactly, histograms included: the child and the
// report serialise through this one form.
TEST(CaseResultTest, JsonRoundTripIsExact) {
  CaseResult r = with_violation("early_fire", 7);
  r.verdict = Verdict::kFail;
  r.counters["armed"] = 42;
  r.sanitizer_reports = {"report"};
  r.subject = "timer_service";
  r.promises = kAll;
  r.duration_s = 1.5;
  r.message = "engine timer_service";
  for (std::int64_t v :
       std::initializer_list<std::int64_t>{-5, 0, 1, 127, 128, 1000000, 123456789012})
    r.latency["x"].record(v, 3);
  const CaseResult back = CaseResult::from_json(nlohmann::json::parse(r.to_json().dump()));
  EXPECT_EQ(back.to_json(), r.to_json());
  const Histogram& h = back.latency.at("x");
  EXPECT_EQ(h.count(), 21u);
  EXPECT_EQ(h.negative_count(), 3u);
  EXPECT_EQ(h.min(), -5);
  EXPECT_EQ(h.percentile(50), r.latency.at("x").percentile(50));
  EXPECT_DOUBLE_EQ(h.mean(), r.latency.at("x").mean());
}

// A histogram document whose buckets do not add up is refused, not half-read.
TEST(CaseResultTest, InconsistentHistogramIsRefused) {
  Histogram h;
  h.record(10);
  auto j = nlohmann::json::parse(h.to_json(true).dump());
  j["count"] = 2;
  EXPECT_THROW(Histogram::from_json(j), std::invalid_argument);
}

}  // namespace
}  // namespace tlab::tool
