// Engine hot-path microbenchmarks (label bench; never part of the default run).
// queue_bench.cc covers the raw queue strategies; this file covers what sits on
// top of them:
//
//   BM_TokenArmResolve/<platform>     TimeoutToken arm() + resolve(), one thread
//                                     (RFC 0014's fast path: a store and a CAS)
//   BM_ServiceScheduleCancel/<strategy>/<pending>
//                                     TimerService::schedule_at + cancel with its
//                                     timer thread running, `pending` tasks queued
//                                     5-15 s out (one lock each, a task allocation)
//   BM_ExecutorScheduleCancel/<pending>
//                                     Executor::schedule + cancel from a non-worker
//                                     thread (inbox path + one CAS), manual mode so
//                                     no thread adopts or fires in between
//   BM_PlatformOverhead/<platform>    a BinaryHeapQueue insert + cancel instantiated
//                                     on StdPlatform and on StressPlatform with no
//                                     fault plan and no mutant: the cost of the
//                                     runtime switchboard checks tlab runs pay
#include <benchmark/benchmark.h>

#include <cstdint>
#include <random>
#include <vector>

#include "tlab/executor.h"
#include "tlab/platform/std_platform.h"
#include "tlab/platform/stress_platform.h"
#include "tlab/queue/strategy.h"
#include "tlab/timeout_token.h"
#include "tlab/timer_service.h"

namespace tlab {
namespace {

std::vector<std::int64_t> delays_ns() {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<std::int64_t> d(5'000'000'000, 15'000'000'000);
  std::vector<std::int64_t> v(4096);
  for (auto& x : v) x = d(rng);
  return v;
}

template <class P>
void BM_TokenArmResolve(benchmark::State& state) {
  TimeoutToken<P> token;
  for (auto _ : state) {
    const auto t = token.arm();
    benchmark::DoNotOptimize(token.resolve(t));
  }
  state.SetItemsProcessed(state.iterations());
}

template <class Q>
void BM_ServiceScheduleCancel(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  TimerService<Q, StdPlatform> svc;
  const Instant t0 = svc.now();
  for (std::size_t i = 0; i < pending; ++i) {
    svc.schedule_at(
        t0 + Duration::nanoseconds(5'000'000'000 +
                                   static_cast<std::int64_t>(i) *
                                       (10'000'000'000 / static_cast<std::int64_t>(pending))),
        [] {});
  }
  const auto delays = delays_ns();
  std::size_t k = 0;
  for (auto _ : state) {
    auto id = svc.schedule_at(svc.now() + Duration::nanoseconds(delays[k++ & 4095]), [] {});
    benchmark::DoNotOptimize(svc.cancel(id));
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_ExecutorScheduleCancel(benchmark::State& state) {
  const auto pending = static_cast<std::size_t>(state.range(0));
  Executor<StdPlatform>::Config cfg;
  cfg.workers = 2;
  cfg.worker_threads = false;
  cfg.metronome_thread = false;
  SteadyClock clock;
  Executor<StdPlatform> ex(cfg, clock);
  std::vector<Executor<StdPlatform>::Timer> background;
  background.reserve(pending);
  for (std::size_t i = 0; i < pending; ++i) {
    background.push_back(Executor<StdPlatform>::make_timer([] {}));
    ex.schedule(background.back(), Duration::seconds(10));
  }
  ex.run_worker_once(0);
  ex.run_worker_once(1);
  auto timer = Executor<StdPlatform>::make_timer([] {});
  const auto delays = delays_ns();
  std::size_t k = 0;
  for (auto _ : state) {
    ex.schedule(timer, Duration::nanoseconds(delays[k++ & 4095]));
    benchmark::DoNotOptimize(ex.cancel(timer));
    if ((k & 1023) == 0) {
      state.PauseTiming();  // adopt the stale inbox entries so the inbox stays small
      ex.run_worker_once(0);
      ex.run_worker_once(1);
      state.ResumeTiming();
    }
  }
  state.SetItemsProcessed(state.iterations());
}

template <class P>
void BM_PlatformOverhead(benchmark::State& state) {
  QueueConfig cfg;
  BinaryHeapQueue<std::uint64_t, P> q(cfg);
  for (std::uint64_t i = 0; i < 1000; ++i)
    q.insert(Instant::from_ns(5'000'000'000 + static_cast<std::int64_t>(i)), std::uint64_t{i});
  const auto delays = delays_ns();
  std::size_t k = 0;
  for (auto _ : state) {
    const TimerHandle h = q.insert(Instant::from_ns(delays[k & 4095]), std::uint64_t{k});
    ++k;
    benchmark::DoNotOptimize(q.cancel(h));
  }
  state.SetItemsProcessed(state.iterations());
}

template <class Q>
void register_service(std::string_view name) {
  benchmark::RegisterBenchmark(("BM_ServiceScheduleCancel/" + std::string(name)).c_str(),
                               BM_ServiceScheduleCancel<Q>)
      ->Arg(1'000)
      ->Arg(100'000);
}

template <class... Qs>
void register_services(std::tuple<Qs...>*) {
  (register_service<Qs>(Qs::kName), ...);
}

}  // namespace
}  // namespace tlab

int main(int argc, char** argv) {
  using namespace tlab;
  benchmark::RegisterBenchmark("BM_TokenArmResolve/std", BM_TokenArmResolve<StdPlatform>);
  benchmark::RegisterBenchmark("BM_TokenArmResolve/stress", BM_TokenArmResolve<StressPlatform>);
  register_services(static_cast<QueueTypes<TimerTaskPtr<StdPlatform>, StdPlatform>*>(nullptr));
  benchmark::RegisterBenchmark("BM_ExecutorScheduleCancel", BM_ExecutorScheduleCancel)
      ->Arg(1'000)
      ->Arg(100'000);
  benchmark::RegisterBenchmark("BM_PlatformOverhead/std", BM_PlatformOverhead<StdPlatform>);
  benchmark::RegisterBenchmark("BM_PlatformOverhead/stress", BM_PlatformOverhead<StressPlatform>);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
