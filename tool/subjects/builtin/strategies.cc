// tlab/tool/subjects/builtin/strategies.cc: see strategies.h.
#include "subjects/builtin/strategies.h"

#include <cstdint>
#include <optional>

#include "tlab/platform/std_platform.h"
#include "tlab/queue/strategy.h"
#include "tlab/subject_adapter.h"

namespace tlab::tool::builtin {

namespace {

// nul_terminated: `s` views a whole C string (the catalogue's literals do), so its
// data() can be the descriptor's `const char*`.
constexpr bool nul_terminated(std::string_view s) { return s.data()[s.size()] == '\0'; }

// descriptor_of: Q's descriptor, in static storage, built on first use.
// shape_of: Q's shape (bench_hook.h): one queue, which its one owner fills.
template <class Q>
SubjectShape shape_of(void*) {
  return {std::string(Q::kName), 1, "the owner's one queue (tlab serialises calls)"};
}

template <class Q>
const tlab_subject* descriptor_of() {
  static_assert(nul_terminated(Q::kName) && nul_terminated(Q::kSummary),
                "a strategy's kName and kSummary must be string literals");
  static constexpr tlab_subject kDescriptor =
      QueueSubject<Q>::descriptor(Q::kName.data(), Q::kSummary.data());
  return &kDescriptor;
}

// bench_of: Q's benchmark hook: the shape only; a queue is measured as its owner
// drives it, which is what the generic path does with a loop subject.
template <class Q>
const BenchHook* bench_of() {
  static constexpr BenchHook kBench{&shape_of<Q>};
  return &kBench;
}

}  // namespace

const tlab_subject* strategy_abi(std::string_view name) {
  const std::optional<Strategy> s = strategy_from_name(name);
  if (!s) return nullptr;
  return with_queue_type<std::uint64_t, StdPlatform>(*s,
                                                     []<class Q>() { return descriptor_of<Q>(); });
}

const BenchHook* strategy_bench(std::string_view name) {
  const std::optional<Strategy> s = strategy_from_name(name);
  if (!s) return nullptr;
  return with_queue_type<std::uint64_t, StdPlatform>(*s, []<class Q>() { return bench_of<Q>(); });
}

}  // namespace tlab::tool::builtin
