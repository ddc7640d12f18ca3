// tlab/queue/strategy.h: the catalogue of timer-queue strategies and a dispatcher.
//
// A Strategy names one TimerQueue class template (timer_queue.h). Code that is
// templated on the queue type (TimerService, the runner, the benchmarks) turns a
// runtime choice (`--strategy hashed_wheel`) into a type with with_queue_type():
//
//   with_queue_type<Task, P>(s, [&]<class Q>() { run<Q>(...); });
//
// calls the lambda's operator()<Q> with Q = the strategy's class instantiated as
// Q<T, P>. Every branch is instantiated, so an unknown value is impossible; the
// table and the enum are kept in step by a static_assert.
//
//   strategy             class                   exact  insert   cancel
//   binary_heap          BinaryHeapQueue         yes    O(log n) O(log n)
//   hashed_wheel         HashedWheelQueue        no     O(1)     O(1)
//   hierarchical_wheel   HierarchicalWheelQueue  no     O(1)     O(1)
//   per_worker_wheel     PerWorkerWheelQueue     no     O(1)     O(1) lazy
//   sorted_list          SortedListQueue         yes    O(n)     O(1)
//
// QueueTypes<T, P, List> lists the same classes for typed tests and benchmarks,
// e.g. QueueTypes<int, P, ::testing::Types>.
//
// Cost: from_name is a scan of five rows; with_queue_type is one switch.
// Ground rules: constants only; no state.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>

#include "tlab/platform/std_platform.h"
#include "tlab/queue/binary_heap.h"
#include "tlab/queue/hashed_wheel.h"
#include "tlab/queue/hierarchical_wheel.h"
#include "tlab/queue/per_worker_wheel.h"
#include "tlab/queue/sorted_list.h"

namespace tlab {

enum class Strategy : std::uint8_t {
  kBinaryHeap,
  kHashedWheel,
  kHierarchicalWheel,
  kPerWorkerWheel,
  kSortedList,
  kCount
};

inline constexpr std::size_t kStrategyCount = static_cast<std::size_t>(Strategy::kCount);

struct StrategyInfo {
  Strategy id;
  std::string_view name;  // CLI spelling; equals the class's kName
  bool exact;             // tick() is 1 ns and equal deadlines fire FIFO
  std::string_view summary;
};

inline constexpr std::array<StrategyInfo, kStrategyCount> kStrategyInfo{{
    {Strategy::kBinaryHeap, BinaryHeapQueue<int>::kName, true,
     "indexed 4-ary min-heap; O(log n) insert and cancel (java.util.Timer, asio)"},
    {Strategy::kHashedWheel, HashedWheelQueue<int>::kName, false,
     "hashed wheel with rounds; O(1) insert and cancel (Netty HashedWheelTimer)"},
    {Strategy::kHierarchicalWheel, HierarchicalWheelQueue<int>::kName, false,
     "6 levels x 64 slots with occupancy bitmaps; O(1) insert and cancel (tokio, Linux)"},
    {Strategy::kPerWorkerWheel, PerWorkerWheelQueue<int>::kName, false,
     "worker-local wheel with generation-checked lazy cancel (seed 003)"},
    {Strategy::kSortedList, SortedListQueue<int>::kName, true,
     "sorted doubly linked list; O(n) insert, O(1) cancel (the baseline)"},
}};

constexpr bool strategy_table_in_order() {
  for (std::size_t i = 0; i < kStrategyCount; ++i) {
    if (static_cast<std::size_t>(kStrategyInfo[i].id) != i) return false;
  }
  return true;
}
static_assert(strategy_table_in_order(), "kStrategyInfo rows must follow the Strategy enum order");

constexpr std::string_view name_of(Strategy s) {
  return kStrategyInfo[static_cast<std::size_t>(s)].name;
}

// tlab::strategy_from_name: the Strategy whose CLI name is `name`, or nullopt.
constexpr std::optional<Strategy> strategy_from_name(std::string_view name) {
  for (const auto& row : kStrategyInfo) {
    if (row.name == name) return row.id;
  }
  return std::nullopt;
}

// Whether Q::next_deadline() is the exact earliest due instant (true) or only a
// lower bound (the hashed wheel reports the next occupied bucket's tick, the
// per-worker wheel the next bucket holding a live entry). An owner that sleeps
// until a lower bound wakes early, finds nothing due, and asks again; TimerService
// and the coroutine event loop do exactly that.
template <class Q>
inline constexpr bool kExactNextDeadline = true;
template <class T, class P>
inline constexpr bool kExactNextDeadline<HashedWheelQueue<T, P>> = false;
template <class T, class P>
inline constexpr bool kExactNextDeadline<PerWorkerWheelQueue<T, P>> = false;

// Every strategy's class, in enum order, as List<...> (std::tuple, ::testing::Types).
template <class T, class P = StdPlatform, template <class...> class List = std::tuple>
using QueueTypes = List<BinaryHeapQueue<T, P>, HashedWheelQueue<T, P>, HierarchicalWheelQueue<T, P>,
                        PerWorkerWheelQueue<T, P>, SortedListQueue<T, P>>;

// tlab::with_queue_type: returns f.template operator()<Q<T, P>>() for the class Q
// of strategy s.
// Requires: s is one of the enumerators (not kCount); otherwise throws
// std::invalid_argument.
template <class T, class P = StdPlatform, class F>
decltype(auto) with_queue_type(Strategy s, F&& f) {
  switch (s) {
    case Strategy::kBinaryHeap:
      return f.template operator()<BinaryHeapQueue<T, P>>();
    case Strategy::kHashedWheel:
      return f.template operator()<HashedWheelQueue<T, P>>();
    case Strategy::kHierarchicalWheel:
      return f.template operator()<HierarchicalWheelQueue<T, P>>();
    case Strategy::kPerWorkerWheel:
      return f.template operator()<PerWorkerWheelQueue<T, P>>();
    case Strategy::kSortedList:
      return f.template operator()<SortedListQueue<T, P>>();
    case Strategy::kCount:
      break;
  }
  throw std::invalid_argument("with_queue_type: not a strategy: " +
                              std::to_string(static_cast<int>(s)));
}

}  // namespace tlab
