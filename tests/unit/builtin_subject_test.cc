// Tests of how `tlab compare` reaches a built-in subject
// (tool/compare/builtin_subject.h): for every row compare measures, `tlab compare
// --subject X` and `tlab check --subject X` run the same object, because compare
// has no definition of its own to drift.
#include "compare/builtin_subject.h"

#include <gtest/gtest.h>

#include <ostream>
#include <string>

#include "subjects/plugin.h"
#include "subjects/subjects.h"
#include "tlab/queue/strategy.h"

namespace tlab::tool {

// Failures print a shape as its three facts.
void PrintTo(const SubjectShape& s, std::ostream* os) {
  *os << "{queue " << s.queue << ", " << s.shards << " shards, placement " << s.placement << "}";
}

namespace {

void ignore_fire(void*, std::uint64_t) {}

// shape_of: the shape an instance of `d` reports, created and destroyed on this
// thread as the generic driver and compare create theirs.
SubjectShape shape_of(const tlab_subject& d, const BenchHook& hook) {
  tlab_subject_config c{sizeof(tlab_subject_config), 0, 0, 1'000'000, nullptr, &ignore_fire};
  void* self = nullptr;
  EXPECT_EQ(d.create(&c, &self), TLAB_OK) << d.name;
  if (self == nullptr) return {};
  SubjectShape s = hook.shape(self);
  d.destroy(self);
  return s;
}

// Every row compare measures: the descriptor compare measures is the very pointer
// check opens (open_subject, what the generic driver runs); the driven twin a hook
// may add for the single-thread workloads shares the descriptor's schedule, cancel
// and destroy; and every instance compare creates (the descriptor's for the mt and
// latency workloads, the twin's for the single-thread ones) reports the same
// queue, shard count and placement as the instance check creates, which compare's
// note shows.
TEST(BuiltinSubjectTest, CompareMeasuresTheObjectCheckRuns) {
  std::size_t measured = 0;
  for (const SubjectInfo& row : subjects()) {
    if (row.bench == nullptr) continue;
    SCOPED_TRACE(std::string(row.name));
    ++measured;
    std::string error;
    const tlab_subject* checked = open_subject(std::string(row.name), error);
    ASSERT_NE(checked, nullptr) << error;
    const std::optional<compare::BuiltinTarget> t = compare::builtin_target(row.name, error);
    ASSERT_TRUE(t) << error;
    EXPECT_EQ(t->row, &row);
    EXPECT_EQ(t->descriptor, checked);
    ASSERT_NE(t->hook, nullptr);
    ASSERT_NE(t->hook->shape, nullptr);
    const SubjectShape want = shape_of(*checked, *t->hook);
    EXPECT_FALSE(want.queue.empty());
    EXPECT_GE(want.shards, 1u);
    EXPECT_FALSE(want.placement.empty());
    EXPECT_EQ(shape_of(*t->descriptor, *t->hook), want);
    if (const tlab_subject* driven = t->hook->driven; driven != nullptr) {
      std::string field, why;
      EXPECT_TRUE(check_descriptor(*driven, field, why)) << field << " " << why;
      EXPECT_EQ(driven->drive, static_cast<std::uint32_t>(TLAB_DRIVE_LOOP));
      EXPECT_STREQ(driven->name, checked->name);
      EXPECT_EQ(driven->schedule, checked->schedule);
      EXPECT_EQ(driven->cancel, checked->cancel);
      EXPECT_EQ(driven->destroy, checked->destroy);
      EXPECT_EQ(shape_of(*driven, *t->hook), want);
    }
    const std::string note = compare::make_builtin_subject(*t)->note();
    EXPECT_NE(note.find(want.queue), std::string::npos) << note;
    EXPECT_NE(note.find(want.placement), std::string::npos) << note;
  }
  // Every strategy, the four peers, the executor and the two sharded services.
  EXPECT_EQ(measured, kStrategyInfo.size() + 4 + 3);
}

// The two sharded rows are two configurations, each one object: the scenarios'
// (binary heap, 4 shards, round robin) and a program's (hierarchical wheel, a shard
// per hardware thread, each caller on its own).
TEST(BuiltinSubjectTest, ShardedRowsAreTwoNamedConfigurations) {
  std::string error;
  const auto rr = compare::builtin_target("sharded_service", error);
  const auto pt = compare::builtin_target("sharded_service_per_thread", error);
  ASSERT_TRUE(rr && pt) << error;
  const SubjectShape a = shape_of(*rr->descriptor, *rr->hook);
  const SubjectShape b = shape_of(*pt->descriptor, *pt->hook);
  EXPECT_EQ(a.queue, "binary_heap");
  EXPECT_EQ(a.shards, 4u);
  EXPECT_NE(a.placement.find("round robin"), std::string::npos) << a.placement;
  EXPECT_NE(b.queue.find("hierarchical_wheel"), std::string::npos) << b.queue;
  EXPECT_GE(b.shards, 2u);
  EXPECT_NE(b.placement.find("calling thread"), std::string::npos) << b.placement;
}

// A row compare does not measure is refused by name, not measured some other way.
TEST(BuiltinSubjectTest, RowsWithoutAHookAreRefused) {
  std::string error;
  EXPECT_FALSE(compare::builtin_target("timed_semaphore", error));
  EXPECT_NE(error.find("timed_semaphore"), std::string::npos) << error;
  EXPECT_FALSE(compare::builtin_target("timer_service", error));
  EXPECT_FALSE(compare::builtin_target("no_such_subject", error));
}

}  // namespace
}  // namespace tlab::tool
