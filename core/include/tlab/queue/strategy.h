// tlab/queue/strategy.h: the catalogue of timer-queue strategies, written once.
//
// StrategyList is the one list of timer-queue class templates, each an
// `XQueue<T, P = StdPlatform>` satisfying TimerQueue (timer_queue.h). Every other
// enumeration of strategies is derived from it at compile time:
//
//   Strategy, kStrategyCount      a strategy as a value: its index in StrategyList
//   strategy_of<XQueue>           the Strategy of one class template
//   kStrategyInfo                 rows {id, name, exact, summary} from each class's
//                                 kName, kExact, kSummary (`tlab list strategies`)
//   name_of, strategy_from_name   Strategy <-> CLI spelling
//   with_queue_type<T, P>(s, f)   f.template operator()<Q<T, P>>() for s's class Q:
//                                 how a runtime `--strategy hashed_wheel` becomes a
//                                 type for code templated on the queue (TimerService,
//                                 the runner, the benchmarks)
//   with_queue_template(s, f)     f.template operator()<Q>() with the template Q
//                                 itself (EventLoop<Q, P> takes the template)
//   QueueTypes<T, P, List>        List<Q<T, P>...>, e.g. ::testing::Types for typed
//                                 suites, std::tuple for benchmarks
//   StrategyList::Wrap<W, List>   List<W<Q>...>, e.g. the coroutine suites' tags
//
// How to add a strategy: one header plus one line in StrategyList (and its
// #include). Write queue/<name>.h with a class template XQueue<T, P = StdPlatform>
// that satisfies TimerQueue, catalogue facts included (kName, kExact,
// kExactNextDeadline, kSummary; the concept says what each means), #include it
// below, and insert the line `XQueue,` into StrategyList above its last entry. The
// CLI (`--strategy`, `tlab list`), the runner's engines, `tlab compare`, the typed
// unit, property and coroutine suites (tests/support/coro_loops.h) and the
// benchmarks then cover it; nothing else lists strategies. A class that misses a
// fact fails the TimerQueue check; a kName already taken, or a template listed
// twice, fails the static_asserts below (tests/unit/strategy_test.cc shows both).
//
// Cost: everything is computed at compile time. At run time strategy_from_name
// scans kStrategyCount rows; with_queue_type and with_queue_template are a chain of
// at most kStrategyCount integer compares, then one call.
//
// Ground rules: constants only; no state; safe from any thread. Code outside this
// header never lists strategies by hand: a hand-kept list silently skips the next
// strategy added. Strategy has no named enumerators for the same reason (they
// would be a second list): spell one as strategy_of<BinaryHeapQueue>. Ids are
// list positions; reports and the CLI carry names, so reordering is harmless.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "tlab/platform/std_platform.h"
#include "tlab/queue/binary_heap.h"
#include "tlab/queue/hashed_wheel.h"
#include "tlab/queue/hierarchical_wheel.h"
#include "tlab/queue/per_worker_wheel.h"
#include "tlab/queue/sorted_list.h"
#include "tlab/queue/timer_queue.h"

namespace tlab {

namespace detail {

// detail::visit_template: f.template operator()<Q>() for the i-th of Q, Rest...
// (counting from I); throws std::invalid_argument past the end.
template <std::size_t I, template <class, class> class Q, template <class, class> class... Rest,
          class F>
constexpr decltype(auto) visit_template(std::size_t i, F& f) {
  if constexpr (sizeof...(Rest) == 0) {
    if (i != I) throw std::invalid_argument("not a strategy: " + std::to_string(i));
    return f.template operator()<Q>();
  } else {
    if (i == I) return f.template operator()<Q>();
    return visit_template<I + 1, Rest...>(i, f);
  }
}

// detail::OnQueueType: calls f's operator()<Q<T, P>>() when called with template
// Q (a named class, not a lambda: GCC 12 rejects a template lambda inside a function
// template that has a defaulted template parameter).
template <class T, class P, class F>
struct OnQueueType {
  F& f;
  template <template <class, class> class Q>
  constexpr decltype(auto) operator()() const {
    return f.template operator()<Q<T, P>>();
  }
};

}  // namespace detail

// tlab::QueueTemplates: a compile-time list of timer-queue class templates Q<T, P>.
template <template <class, class> class... Qs>
struct QueueTemplates {
  static constexpr std::size_t kSize = sizeof...(Qs);

  // QueueTemplates::Apply: List<Q<T, P>...>, every class on payload T, platform P.
  template <class T, class P, template <class...> class List>
  using Apply = List<Qs<T, P>...>;

  // QueueTemplates::Wrap: List<W<Q>...>, every template wrapped in W.
  template <template <template <class, class> class> class W, template <class...> class List>
  using Wrap = List<W<Qs>...>;

  // QueueTemplates::index_of: the position of Q's first occurrence, or kSize.
  template <template <class, class> class Q>
  static constexpr std::size_t index_of() {
    std::size_t i = 0;
    (void)((std::is_same_v<Q<int, StdPlatform>, Qs<int, StdPlatform>> ? false : (++i, true)) &&
           ...);
    return i;
  }

  // QueueTemplates::visit: f.template operator()<Q>() for the i-th template Q.
  // Requires: i < kSize; otherwise throws std::invalid_argument.
  template <class F>
  static constexpr decltype(auto) visit(std::size_t i, F&& f) {
    return detail::visit_template<0, Qs...>(i, f);
  }
};

// tlab::StrategyList: every strategy, once. The trailing comments are the cost
// table (exact: 1 ns tick and FIFO ties; ticked: rounded up to the wheel's tick).
using StrategyList = QueueTemplates<  //
    BinaryHeapQueue,                  // exact   O(log n) insert, O(log n) cancel
    HashedWheelQueue,                 // ticked  O(1) insert, O(1) cancel
    HierarchicalWheelQueue,           // ticked  O(1) insert, O(1) cancel
    PerWorkerWheelQueue,              // ticked  O(1) insert, O(1) lazy cancel
    SortedListQueue                   // exact   O(n) insert, O(1) cancel
    >;

inline constexpr std::size_t kStrategyCount = StrategyList::kSize;
static_assert(kStrategyCount >= 1 && kStrategyCount <= 256, "Strategy is a uint8_t index");

// tlab::Strategy: a strategy as a value, its index in StrategyList (see the header
// comment for why there are no named enumerators).
enum class Strategy : std::uint8_t {};

// tlab::strategy_of: the Strategy of class template Q.
// Requires: Q is in StrategyList (otherwise it does not compile).
template <template <class, class> class Q>
inline constexpr Strategy strategy_of = [] {
  static_assert(StrategyList::index_of<Q>() < kStrategyCount, "strategy_of: not in StrategyList");
  return static_cast<Strategy>(StrategyList::index_of<Q>());
}();

struct StrategyInfo {
  Strategy id;
  std::string_view name;  // CLI spelling; the class's kName
  bool exact;             // the class's kExact: tick() is 1 ns, equal deadlines fire FIFO
  std::string_view summary;
};

// tlab::catalogue_of: one StrategyInfo row per template of list L, in list order.
// Each class is read on payload int and StdPlatform: the facts do not depend on
// either.
template <template <class, class> class... Qs>
constexpr std::array<StrategyInfo, sizeof...(Qs)> catalogue_of(QueueTemplates<Qs...>) {
  static_assert((TimerQueue<Qs<int, StdPlatform>> && ...),
                "every strategy satisfies TimerQueue, catalogue facts included");
  using L = QueueTemplates<Qs...>;
  return {
      {StrategyInfo{static_cast<Strategy>(L::template index_of<Qs>()), Qs<int, StdPlatform>::kName,
                    Qs<int, StdPlatform>::kExact, Qs<int, StdPlatform>::kSummary}...}};
}

// tlab::catalogue_is_sound: row i has id i (so no template is listed twice), every
// name is non-empty, and no two rows share a name (so strategy_from_name is a
// bijection).
template <std::size_t N>
constexpr bool catalogue_is_sound(const std::array<StrategyInfo, N>& rows) {
  for (std::size_t i = 0; i < N; ++i) {
    if (static_cast<std::size_t>(rows[i].id) != i || rows[i].name.empty()) return false;
    for (std::size_t j = 0; j < i; ++j) {
      if (rows[j].name == rows[i].name) return false;
    }
  }
  return true;
}

inline constexpr std::array<StrategyInfo, kStrategyCount> kStrategyInfo =
    catalogue_of(StrategyList{});
static_assert(catalogue_is_sound(kStrategyInfo),
              "StrategyList: a template listed twice, or a kName empty or already taken");

// tlab::name_of: the CLI spelling of s.
// Requires: s < kStrategyCount.
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

// tlab::QueueTypes: every strategy's class on payload T and platform P, in list
// order, as List<...> (std::tuple, ::testing::Types).
template <class T, class P = StdPlatform, template <class...> class List = std::tuple>
using QueueTypes = StrategyList::Apply<T, P, List>;

// tlab::with_queue_template: returns f.template operator()<Q>() for the class
// template Q of strategy s; f is a lambda like
// [&]<template <class, class> class Q>() { run<EventLoop<Q, P>>(); }.
// Requires: s < kStrategyCount; otherwise throws std::invalid_argument.
template <class F>
constexpr decltype(auto) with_queue_template(Strategy s, F&& f) {
  return StrategyList::visit(static_cast<std::size_t>(s), f);
}

// tlab::with_queue_type: returns f.template operator()<Q<T, P>>() for the class
// template Q of strategy s; f is a lambda like [&]<class Q>() { run<Q>(); }.
// Every strategy's branch is instantiated.
// Requires: s < kStrategyCount; otherwise throws std::invalid_argument.
template <class T, class P = StdPlatform, class F>
constexpr decltype(auto) with_queue_type(Strategy s, F&& f) {
  return with_queue_template(s, detail::OnQueueType<T, P, F>{f});
}

}  // namespace tlab
