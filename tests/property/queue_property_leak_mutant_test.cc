// tests/property/queue_property_leak_mutant_test.cc: the queue state machine
// (queue_property_machine.h) finds a counterexample on every strategy compiled with
// queue_cancel_leaks_entry, the one queue mutant all strategies carry (a typed suite,
// like the clean run in queue_property_test.cc).
#include <gtest/gtest.h>

#include "queue_property_machine.h"

namespace tlab::queue_property {
namespace {

template <class Q>
class QueuePropertyMutantCancelLeakTest : public ::testing::Test {};
using LeakyQueues = QueueTypes<Counted, MP<Mutant::kQueueCancelLeaksEntry>, ::testing::Types>;
TYPED_TEST_SUITE(QueuePropertyMutantCancelLeakTest, LeakyQueues);

// queue_cancel_leaks_entry: a cancelled entry still fires (or still counts in size()).
TYPED_TEST(QueuePropertyMutantCancelLeakTest, FindsCancelLeaksEntry) {
  expect_counterexample<TypeParam>(Mutant::kQueueCancelLeaksEntry);
}

}  // namespace
}  // namespace tlab::queue_property
