// tests/property/queue_property_test.cc: every timer-queue strategy against the
// reference model of queue_property_machine.h (what it generates and checks, and
// how to replay a seed, is said there). The mutant tests that show the machine
// failing are in queue_property_mutant_test.cc and queue_property_leak_mutant_test.cc.
#include <gtest/gtest.h>

#include <string>

#include "queue_property_machine.h"

namespace tlab::queue_property {
namespace {

template <class Q>
class QueuePropertyTest : public ::testing::Test {};
using AllQueues = QueueTypes<Counted, StdPlatform, ::testing::Types>;
TYPED_TEST_SUITE(QueuePropertyTest, AllQueues);

// Random insert/cancel/reschedule/advance sequences agree with the reference model.
TYPED_TEST(QueuePropertyTest, MatchesReferenceModel) {
  const auto result = check_queue<TypeParam>(std::string(TypeParam::kName) + " vs model");
  EXPECT_TRUE(result.template is<rc::detail::SuccessResult>());
}

}  // namespace
}  // namespace tlab::queue_property
