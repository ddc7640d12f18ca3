// tests/property/sharded_service_property_test.cc: ShardedTimerService
// (sharded_timer_service.h) in driver mode against a reference model, on the exact
// strategies (binary_heap, sorted_list: a timer is due exactly at its deadline).
//
// A random sequence of: schedule on a random shard with a random delay (equal
// deadlines and zero delays included), cancel a random earlier timer (pending,
// fired or cancelled: any shard, from this thread's shard), and advance the clock
// and run_due(). The model is a map from timer to deadline. Checked after every
// step: cancel() is true iff the model has the timer pending; run_due() runs
// exactly the pending timers whose deadline has come, each once, none early;
// pending() and the per-shard accounting (check_invariants) agree.
//
// The mutant test runs the same property on sharded_cancel_wrong_shard and
// expects rapidcheck to find a counterexample (a cancel of a pending timer on
// another shard answers false). Set RC_PARAMS="seed=N" to replay.
#include <map>
#include <vector>

#include "time_arithmetic_support.h"
#include "tlab/sharded_timer_service.h"

namespace tlab::time_arith {
namespace {

template <class Q, class P>
void matches_model() {
  using Service = ShardedTimerService<typename Rebind<Q, ShardedCallback, P>::type, P>;
  ManualClock clock;
  const std::size_t shards = *rc::gen::inRange<std::size_t>(1, 5);
  Service svc(clock, {.shards = shards, .start_thread = false});
  std::vector<typename Service::TimerId> ids;
  std::vector<int> runs;                  // runs[k]: how often timer k ran
  bool early = false;                     // a callback ran before its deadline
  std::map<std::size_t, Instant> model;   // pending timers and their deadlines
  const int steps = *rc::gen::inRange(1, 60);
  for (int step = 0; step < steps; ++step) {
    const int op = *rc::gen::inRange(0, 3);
    if (op == 0) {
      const std::size_t k = ids.size();
      const Instant d = clock.now() + Duration::microseconds(*rc::gen::inRange(0, 50));
      runs.push_back(0);
      // No RC_ASSERT in a callback: the service contains what a callback throws.
      const std::size_t shard = *rc::gen::inRange<std::size_t>(0, shards);
      ids.push_back(svc.schedule_on(shard, d, [&runs, &early, &clock, d, k] {
        early = early || clock.now() < d;
        ++runs[k];
      }));
      model[k] = d;
    } else if (op == 1 && !ids.empty()) {
      const std::size_t k = *rc::gen::inRange<std::size_t>(0, ids.size());
      const bool pending = model.erase(k) == 1;
      RC_ASSERT(svc.cancel(ids[k]) == pending);
    } else {
      clock.advance(Duration::microseconds(*rc::gen::inRange(0, 30)));
      svc.run_once();
      for (auto it = model.begin(); it != model.end();) {
        if (it->second <= clock.now()) {
          RC_ASSERT(runs[it->first] == 1);
          it = model.erase(it);
        } else {
          RC_ASSERT(runs[it->first] == 0);
          ++it;
        }
      }
    }
    RC_ASSERT(!early);
    for (int r : runs) RC_ASSERT(r <= 1);
    RC_ASSERT(svc.pending() == model.size());
    svc.check_invariants();
  }
}

template <class Q>
class ShardedServicePropertyTest : public ::testing::Test {};
using ExactQueues = ::testing::Types<BinaryHeapQueue<std::uint64_t, ManualStdPlatform>,
                                     SortedListQueue<std::uint64_t, ManualStdPlatform>>;
TYPED_TEST_SUITE(ShardedServicePropertyTest, ExactQueues);

// Schedules, cross-shard cancels and passes agree with the model on every step.
TYPED_TEST(ShardedServicePropertyTest, MatchesReferenceModel) {
  expect_holds(std::string(TypeParam::kName) + " sharded service",
               [] { matches_model<TypeParam, ManualStdPlatform>(); });
}

// sharded_cancel_wrong_shard: a cancel looks in the caller's shard; the model
// finds a pending timer whose cancel answered false.
TEST(ShardedServicePropertyMutant, FindsCancelWrongShard) {
  using M = MP<Mutant::kShardedCancelWrongShard>;
  expect_counterexample(Mutant::kShardedCancelWrongShard, "binary_heap sharded service",
                        [] { matches_model<BinaryHeapQueue<std::uint64_t, M>, M>(); });
}

}  // namespace
}  // namespace tlab::time_arith
