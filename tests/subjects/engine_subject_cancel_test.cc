// How the generic driver (tool/runner/engine_subject_facility.cc) judges cancels
// that race each other: two calls contradict each other only when one returned
// before the other began, so overlapping cancels of one timer are never a finding,
// while the seeded cancel bugs of test_subject.c still are.
#include <string>

#include <gtest/gtest.h>

#include "subjects/subject_case.h"

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

}  // namespace
}  // namespace tlab::tool
