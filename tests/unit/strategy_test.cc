// tests/unit/strategy_test.cc: the strategy catalogue of queue/strategy.h is
// derived completely from StrategyList.
//
// Compile time: the soundness check rejects a list with a template listed twice
// or a kName already taken (so the header's own static_assert can fail); the
// dispatch reaches every listed class; QueueTypes and StrategyList::Wrap hold every
// class in list order. Run time: names round-trip, an out-of-range Strategy throws,
// and each class's catalogue facts match what the queue does.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "tlab/queue/strategy.h"

namespace tlab {
namespace {

using Id = std::uint64_t;

// A working queue that claims a name already in the catalogue.
template <class T, class P>
class ImpostorQueue : public SortedListQueue<T, P> {
 public:
  using SortedListQueue<T, P>::SortedListQueue;
  static constexpr std::string_view kName = BinaryHeapQueue<T, P>::kName;
};

// ---- compile time ---------------------------------------------------------------

// The check behind the header's static_assert accepts distinct templates and
// rejects a template listed twice and a name taken twice.
static_assert(catalogue_is_sound(catalogue_of(QueueTemplates<BinaryHeapQueue, SortedListQueue>{})));
static_assert(!catalogue_is_sound(
    catalogue_of(QueueTemplates<BinaryHeapQueue, SortedListQueue, BinaryHeapQueue>{})));
static_assert(!catalogue_is_sound(catalogue_of(QueueTemplates<BinaryHeapQueue, ImpostorQueue>{})));

// Row i of kStrategyInfo is the i-th class of QueueTypes, and with_queue_type
// reaches it: the dispatch has a branch for every listed class.
template <std::size_t... I>
constexpr bool rows_match_classes(std::index_sequence<I...>) {
  using Classes = QueueTypes<Id>;
  return ((kStrategyInfo[I].name == std::tuple_element_t<I, Classes>::kName &&
           kStrategyInfo[I].exact == std::tuple_element_t<I, Classes>::kExact &&
           kStrategyInfo[I].summary == std::tuple_element_t<I, Classes>::kSummary &&
           with_queue_type<Id>(static_cast<Strategy>(I), []<class Q>() { return Q::kName; }) ==
               kStrategyInfo[I].name) &&
          ...);
}
static_assert(std::tuple_size_v<QueueTypes<Id>> == kStrategyCount);
static_assert(rows_match_classes(std::make_index_sequence<kStrategyCount>{}));

// strategy_of names the row of its template; Wrap keeps the list's length.
template <template <class, class> class Q>
struct Tag {};
static_assert(name_of(strategy_of<HashedWheelQueue>) == HashedWheelQueue<Id>::kName);
static_assert(name_of(strategy_of<SortedListQueue>) == SortedListQueue<Id>::kName);
static_assert(std::tuple_size_v<StrategyList::Wrap<Tag, std::tuple>> == kStrategyCount);
static_assert(std::is_same_v<std::tuple_element_t<0, StrategyList::Wrap<Tag, std::tuple>>,
                             Tag<BinaryHeapQueue>>);

// ---- run time -------------------------------------------------------------------

// Every strategy's CLI name maps back to it, and the dispatchers pick the matching class.
TEST(StrategyTest, NamesRoundTripAndDispatch) {
  for (const StrategyInfo& row : kStrategyInfo) {
    EXPECT_EQ(strategy_from_name(row.name), row.id);
    EXPECT_EQ(name_of(row.id), row.name);
    EXPECT_EQ(with_queue_type<Id>(row.id, []<class Q>() { return Q::kName; }), row.name);
    EXPECT_EQ(
        with_queue_template(
            row.id, []<template <class, class> class Q>() { return Q<Id, StdPlatform>::kName; }),
        row.name);
  }
  EXPECT_FALSE(strategy_from_name("no_such_queue").has_value());
}

// A Strategy past the end of the list throws rather than picking a class.
TEST(StrategyTest, OutOfRangeThrows) {
  const auto past_end = static_cast<Strategy>(kStrategyCount);
  EXPECT_THROW(with_queue_type<Id>(past_end, []<class Q>() { return 0; }), std::invalid_argument);
  EXPECT_THROW(with_queue_template(past_end, []<template <class, class> class Q>() {}),
               std::invalid_argument);
}

template <class Q>
class StrategyFactsTest : public ::testing::Test {};
using AllQueues = QueueTypes<Id, StdPlatform, ::testing::Types>;
TYPED_TEST_SUITE(StrategyFactsTest, AllQueues);

// kExact is what the queue does: a 1 ns tick even when configured with 1 ms.
TYPED_TEST(StrategyFactsTest, ExactMeansNanosecondTick) {
  QueueConfig cfg;
  cfg.tick = Duration::milliseconds(1);
  const TypeParam q(cfg);
  EXPECT_EQ(TypeParam::kExact, q.tick() == Duration::nanoseconds(1)) << TypeParam::kName;
}

// kExactNextDeadline is what the queue does: with one entry 1.5 ticks and one
// 2.5 revolutions out, then the nearer one cancelled, an exact queue reports the
// remaining entry's due instant; a lower-bound wheel reports something earlier.
TYPED_TEST(StrategyFactsTest, ExactNextDeadlineMatchesBehaviour) {
  QueueConfig cfg;
  cfg.tick = Duration::milliseconds(1);
  cfg.wheel_slots = 8;
  TypeParam q(cfg);
  const Instant far = cfg.start + Duration::microseconds(20'500);  // 2.5 revolutions of 8 ms
  const TimerHandle near = q.insert(cfg.start + Duration::microseconds(1'500), Id{1});
  q.insert(far, Id{2});
  ASSERT_TRUE(q.cancel(near));
  const auto next = q.next_deadline();
  ASSERT_TRUE(next.has_value());
  const Instant due = TypeParam::kExact ? far : cfg.start + Duration::milliseconds(21);
  EXPECT_LE(*next, due) << TypeParam::kName;
  EXPECT_EQ(TypeParam::kExactNextDeadline, *next == due) << TypeParam::kName;
}

}  // namespace
}  // namespace tlab
