// tlab/tool/compare/baselines.cc: see baselines.h.
#include "compare/baselines.h"

#include <sys/prctl.h>

#include <condition_variable>
#include <mutex>
#include <thread>

namespace tlab::tool::compare {

std::int64_t timer_slack_ns() {
  const int v = ::prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0);
  return v >= 0 ? v : -1;
}

bool set_timer_slack_ns(std::int64_t ns) {
  return ::prctl(PR_SET_TIMERSLACK, static_cast<unsigned long>(ns), 0, 0, 0) == 0;
}

Histogram clock_nanosleep_lateness(std::size_t samples) {
  Histogram h;
  const std::int64_t first = mono_ns() + kLatenessLeadNs;
  for (std::size_t i = 0; i < samples; ++i) {
    const std::int64_t d = first + kLatenessStepNs * static_cast<std::int64_t>(i);
    const timespec ts{static_cast<time_t>(d / 1'000'000'000), static_cast<long>(d % 1'000'000'000)};
    while (::clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) != 0) {
    }
    h.record(mono_ns() - d);
  }
  return h;
}

Histogram cv_wake_latency(std::size_t samples) {
  std::mutex m;
  std::condition_variable cv;
  bool woken = false;  // guarded by m
  PingPong pp;
  Histogram h;  // waiter thread only until joined
  std::thread waiter([&] {
    for (std::size_t i = 0; i < samples; ++i) {
      std::unique_lock<std::mutex> lk(m);
      pp.published.store(i + 1);
      cv.wait(lk, [&] { return woken; });
      woken = false;
      lk.unlock();
      h.record(mono_ns() - pp.t0.load());
      pp.resumed.store(i + 1);
    }
  });
  for (std::size_t i = 0; i < samples; ++i) {
    pp.await_published(i);
    pp.t0.store(mono_ns());
    {
      std::lock_guard<std::mutex> lk(m);
      woken = true;
    }
    cv.notify_one();
    pp.await_resumed(i);
  }
  waiter.join();
  return h;
}

double cas_uncontended_ns() {
  std::atomic<std::uint64_t> word{0};
  CellSettings s;
  s.cell_ns = 20'000'000;
  const CostResult r = run_batches(s.cell_ns, 1024, [&] {
    for (int i = 0; i < 1024; ++i) {
      std::uint64_t v = word.load(std::memory_order::relaxed);  // relaxed: single thread
      while (!word.compare_exchange_strong(v, v + 1)) {
      }
    }
  });
  return r.ns_per_op;
}

double cas_contended_ns(const CellSettings& s) {
  std::atomic<std::uint64_t> word{0};
  CellSettings c = s;
  c.cell_ns = 40'000'000;
  const CostResult r = run_threads(c, [&](std::size_t, std::uint64_t) {
    std::uint64_t v = word.load(std::memory_order::relaxed);  // relaxed: the CAS validates it
    while (!word.compare_exchange_strong(v, v + 1)) {
    }
  });
  return r.ns_per_op;
}

}  // namespace tlab::tool::compare
