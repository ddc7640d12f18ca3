// Tests of compare over any subject-ABI facility (tool/compare/abi_subject.cc):
// every workload runs on each built-in peer descriptor (bare, as a plugin would be
// driven) and on each built-in subject with its benchmark hook
// (subjects/bench_hook.h, as compare drives it) with tiny cells and returns sane
// numbers; a subject whose calls fail stops the cell with an error naming it
// instead of hanging. Counts only; nothing asserts a duration.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>

#include "compare/builtin_subject.h"
#include "compare/isolated_subject.h"
#include "compare/subjects.h"
#include "subjects/subjects.h"

namespace tlab::tool::compare {
namespace {

CellSettings tiny() {
  CellSettings s;
  s.cell_ns = 2'000'000;  // 2 ms of CPU per cost cell
  s.samples = 20;
  s.threads = 2;
  return s;
}

// expect_cost_workloads_do_work: the five cost workloads do operations on
// `subject`, and insert_cancel measures bytes per timer (every subject measured
// here allocates per pending timer).
void expect_cost_workloads_do_work(Subject& subject) {
  for (Workload w : {Workload::kInsertCancel, Workload::kInsertExpire, Workload::kChurn,
                     Workload::kMtScheduleCancel, Workload::kMtChurn}) {
    const CostResult r = subject.cost(w, 1000, tiny());
    EXPECT_GT(r.ops, 0u) << name_of(w);
    EXPECT_GT(r.ns_per_op, 0) << name_of(w);
    if (w == Workload::kInsertCancel) {
      EXPECT_GT(r.bytes_per_timer, 0) << name_of(w);
    }
  }
}

class AbiCompareTest : public ::testing::TestWithParam<std::string> {};

// The cost workloads do work on the bare descriptor, as on a plugin.
TEST_P(AbiCompareTest, CostWorkloadsDoWork) {
  const SubjectInfo* row = find_subject(GetParam());
  ASSERT_NE(row, nullptr);
  auto subject = make_abi_subject(*row->abi(row->name), GetParam() + "_abi");
  EXPECT_EQ(subject->name(), GetParam() + "_abi");
  EXPECT_NE(subject->note().find(GetParam()), std::string::npos) << subject->note();
  expect_cost_workloads_do_work(*subject);
}

// lateness and cancel_to_resume record exactly one sample per timer.
TEST_P(AbiCompareTest, LatencyWorkloadsRecordOneSamplePerTimer) {
  const SubjectInfo* row = find_subject(GetParam());
  ASSERT_NE(row, nullptr);
  auto subject = make_abi_subject(*row->abi(row->name), GetParam());
  EXPECT_EQ(subject->lateness(tiny()).count(), 20u);
  EXPECT_EQ(subject->cancel_to_resume(tiny()).count(), 20u);
}

INSTANTIATE_TEST_SUITE_P(Peers, AbiCompareTest,
                         ::testing::Values("libuv", "libevent", "asio", "java_timer_heap"),
                         [](const auto& info) { return info.param; });

// As compare measures a built-in subject: its descriptor driven as its hook says.
class HookedCompareTest : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<Subject> subject() {
    std::string error;
    const auto t = builtin_target(GetParam(), error);
    EXPECT_TRUE(t) << error;
    return t ? make_builtin_subject(*t) : nullptr;
  }
};

// The cost workloads do work on the subject driven as its hook says.
TEST_P(HookedCompareTest, CostWorkloadsDoWork) {
  auto s = subject();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->name(), GetParam());
  expect_cost_workloads_do_work(*s);
}

// lateness and cancel_to_resume record exactly one sample per timer.
TEST_P(HookedCompareTest, LatencyWorkloadsRecordOneSamplePerTimer) {
  auto s = subject();
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->lateness(tiny()).count(), 20u);
  EXPECT_EQ(s->cancel_to_resume(tiny()).count(), 20u);
}

INSTANTIATE_TEST_SUITE_P(Builtin, HookedCompareTest,
                         ::testing::Values("binary_heap", "hierarchical_wheel", "libuv",
                                           "java_timer_heap", "sharded_service",
                                           "sharded_service_per_thread", "executor"),
                         [](const auto& info) { return info.param; });

// The executor runs one mt loop on each of its 2 workers: a cell asking for more
// threads fails (CellFailed, so compare reports it and goes on) instead of
// measuring something else.
TEST(HookedCompareErrorTest, MoreLoopsThanOwnThreadsFailTheCell) {
  std::string error;
  const auto t = builtin_target("executor", error);
  ASSERT_TRUE(t) << error;
  auto s = make_builtin_subject(*t);
  CellSettings three = tiny();
  three.threads = 3;
  EXPECT_THROW(s->cost(Workload::kMtScheduleCancel, 1000, three), CellFailed);
}

// A facility whose schedule always fails: every workload throws an error naming
// the subject and the call, and none hangs or terminates (the failing call is on a
// worker thread in the mt workloads and cancel_to_resume).
tlab_status ok_create(const tlab_subject_config*, void** self) {
  *self = nullptr;
  return TLAB_OK;
}
void no_destroy(void*) {}
tlab_status failing_schedule(void*, std::int64_t, std::int64_t, std::uint64_t, std::uint64_t*) {
  return TLAB_EFAIL;
}
tlab_status never_cancel(void*, std::uint64_t, std::int32_t* r) {
  *r = TLAB_CANCEL_UNKNOWN;
  return TLAB_OK;
}
tlab_status idle_poll(void*, std::int64_t) { return TLAB_OK; }

TEST(AbiCompareErrorTest, FailingCallsStopEveryWorkloadWithTheSubjectsName) {
  const tlab_subject broken{TLAB_SUBJECT_ABI_VERSION,
                            sizeof(tlab_subject),
                            "broken",
                            "schedule always fails",
                            TLAB_KIND_FACILITY,
                            TLAB_DRIVE_LOOP,
                            TLAB_CLOCK_MONOTONIC,
                            0,
                            TLAB_PROMISE_DELIVERY,
                            0,
                            &ok_create,
                            &no_destroy,
                            &failing_schedule,
                            &never_cancel,
                            &idle_poll,
                            nullptr,
                            nullptr,
                            nullptr,
                            0,
                            0,
                            0,
                            nullptr};
  auto subject = make_abi_subject(broken, "broken");
  auto expect_error = [](auto&& f, const char* what) {
    try {
      f();
      ADD_FAILURE() << what << " did not fail";
    } catch (const std::runtime_error& e) {
      const std::string m = e.what();
      EXPECT_NE(m.find("broken"), std::string::npos) << m;
      EXPECT_NE(m.find("schedule"), std::string::npos) << m;
    }
  };
  for (Workload w : {Workload::kInsertCancel, Workload::kInsertExpire, Workload::kChurn,
                     Workload::kMtScheduleCancel, Workload::kMtChurn}) {
    // pending 0: the first failing call is in the measured loop (for mt, on a worker).
    expect_error([&] { subject->cost(w, 0, tiny()); }, name_of(w));
  }
  expect_error([&] { subject->lateness(tiny()); }, "lateness");
  expect_error([&] { subject->cancel_to_resume(tiny()); }, "cancel_to_resume");
}

}  // namespace
}  // namespace tlab::tool::compare
