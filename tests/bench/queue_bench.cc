// Queue strategy microbenchmarks: the hot paths at a steady pending size.
//
//   BM_InsertCancel/<strategy>/<pending>
//       `pending` timers are live with deadlines spread over a 10 s horizon; each
//       iteration inserts one timer at a random deadline in that horizon and
//       cancels it (the connection-pool / RPC-timeout pattern: most timers never
//       fire). ns/op is the cost of one insert plus one cancel.
//   BM_InsertExpire/<strategy>/<pending>
//       `pending` timers are live, spaced one step apart, so each step of time
//       makes exactly one due. Each iteration advances time one step, expires
//       (firing one timer) and inserts a replacement at the far end. ns/op is
//       the cost of one insert plus one fire at constant occupancy.
//
// Wheels run with a 1 us tick (QueueConfig::tick), fine enough that the
// 1-per-step workload exercises the tick path, not a coarse-slot shortcut.
// Run: build/release/tests/bench/queue_bench --benchmark_filter=... (label bench,
// never part of the default ctest run).
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "tlab/queue/strategy.h"

namespace tlab {
namespace {

constexpr Duration kTick = Duration::microseconds(1);

QueueConfig bench_config(std::size_t pending) {
  QueueConfig cfg;
  cfg.start = Instant::from_ns(0);
  cfg.tick = kTick;
  cfg.capacity_hint = pending + 16;
  return cfg;
}

template <class Q>
void BM_InsertCancel(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  const Duration horizon = Duration::seconds(10);
  Q q(bench_config(pending));
  // Prefill in increasing deadline order so even the O(n) baseline fills in O(n).
  const std::int64_t step = horizon.ns() / static_cast<std::int64_t>(pending);
  for (std::size_t i = 0; i < pending; ++i) {
    q.insert(Instant::from_ns(1'000 + static_cast<std::int64_t>(i) * step), std::uint64_t{i});
  }
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<std::int64_t> when(1'000, horizon.ns());
  std::vector<std::int64_t> deadlines(4096);
  for (auto& d : deadlines) d = when(rng);
  std::size_t k = 0;
  for (auto _ : state) {
    const TimerHandle h = q.insert(Instant::from_ns(deadlines[k & 4095]), std::uint64_t{k});
    ++k;
    benchmark::DoNotOptimize(q.cancel(h));
  }
  if (q.size() != pending) state.SkipWithError("pending size drifted");
  state.SetItemsProcessed(state.iterations());
}

template <class Q>
void BM_InsertExpire(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  Q q(bench_config(pending));
  const std::int64_t step = kTick.ns();
  std::int64_t now = 0;
  std::int64_t next_deadline = step;
  for (std::size_t i = 0; i < pending; ++i, next_deadline += step) {
    q.insert(Instant::from_ns(next_deadline), std::uint64_t{i});
  }
  std::uint64_t fired = 0;
  auto sink = [&fired](std::uint64_t&&, Instant) { ++fired; };
  for (auto _ : state) {
    now += step;
    q.expire(Instant::from_ns(now), sink);
    q.insert(Instant::from_ns(next_deadline), std::uint64_t{fired});
    next_deadline += step;
  }
  if (fired != static_cast<std::uint64_t>(state.iterations())) {
    state.SkipWithError("expected exactly one fire per step");
  }
  state.SetItemsProcessed(state.iterations());
}

template <class Q>
void register_queue(std::string_view name) {
  const std::string n(name);
  benchmark::RegisterBenchmark(("BM_InsertCancel/" + n).c_str(), BM_InsertCancel<Q>)
      ->Arg(1'000)
      ->Arg(1'000'000);
  benchmark::RegisterBenchmark(("BM_InsertExpire/" + n).c_str(), BM_InsertExpire<Q>)
      ->Arg(1'000)
      ->Arg(1'000'000);
}

template <class... Qs>
void register_all(std::tuple<Qs...>*) {
  (register_queue<Qs>(Qs::kName), ...);
}

}  // namespace
}  // namespace tlab

int main(int argc, char** argv) {
  tlab::register_all(static_cast<tlab::QueueTypes<std::uint64_t>*>(nullptr));
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
