// tlab/tool/compare/peer_asio.cc: standalone asio timers (steady_timer expires_after /
// async_wait / cancel on an io_context) as a compare subject.
//
// asio keeps the pending waits of an io_context in a binary heap per clock type
// (detail/timer_queue.hpp) and wakes its reactor through a timerfd. A wait is an
// operation object allocated per async_wait; cancel() completes it with
// operation_aborted, so the aborted handlers are drained by io_context::poll()
// every 256 operations (housekeeping) and that cost is included.
// Thread safety: asio's own story: distinct timer objects on one io_context may
// be used from different threads (the timer queue is guarded by the reactor
// mutex); the mt workloads give each thread its own steady_timers with
// io_context::run() in one more thread (which fires mt_churn's timers). cancel_to_resume posts the cancel to the
// io_context (steady_timer itself is not safe to share), as asio code does.
#define ASIO_STANDALONE 1
#include <asio.hpp>

#include <deque>
#include <optional>
#include <thread>

#include "compare/subjects.h"

namespace tlab::tool::compare {
namespace {

class AsioAdapter {
 public:
  explicit AsioAdapter(std::size_t slots) : io_(1) {
    for (std::size_t i = 0; i < slots; ++i) timers_.emplace_back(io_);
  }
  void arm(std::size_t slot, std::int64_t delay_ns) {
    auto& t = timers_[slot];
    t.expires_after(std::chrono::nanoseconds(delay_ns));
    t.async_wait([this](const asio::error_code& ec) {
      if (!ec) ++fired_;
    });
  }
  void disarm(std::size_t slot) { timers_[slot].cancel(); }
  std::size_t poll() {
    const std::uint64_t before = fired_;
    if (io_.stopped()) io_.restart();
    io_.poll();
    return fired_ - before;
  }
  std::uint64_t fired() const { return fired_; }
  void housekeeping() { poll(); }
  asio::io_context& io() { return io_; }

 private:
  asio::io_context io_;
  std::deque<asio::steady_timer> timers_;
  std::uint64_t fired_ = 0;
};

class AsioSubject final : public Subject {
 public:
  std::string name() const override { return "asio"; }
  bool is_peer() const override { return true; }
  std::string note() const override {
    return "standalone asio " + std::to_string(ASIO_VERSION / 100000) + "." +
           std::to_string(ASIO_VERSION / 100 % 1000) + "." + std::to_string(ASIO_VERSION % 100) +
           ": steady_timer expires_after/async_wait/cancel, aborted waits drained by poll(); "
           "the mt workloads: each thread its own timers on a shared io_context run (and "
           "fired) by one more thread; cancel_to_resume posts the cancel to the io_context";
  }
  CostResult cost(Workload w, std::size_t pending, const CellSettings& s) override {
    if (!is_mt(w)) return run_cost<AsioAdapter>(w, pending, s);
    const MtOps ops(w);
    AsioAdapter a(pending + ops.slots(s.threads));
    for (std::size_t i = 0; i < pending; ++i) a.arm(i, background_delay(i, pending));
    auto arm = [&](std::size_t slot, std::int64_t d) { a.arm(pending + slot, d); };
    auto disarm = [&](std::size_t slot) { a.disarm(pending + slot); };
    ops.prearm(s.threads, arm);
    auto guard = asio::make_work_guard(a.io());
    std::thread runner([&] { a.io().run(); });
    CostResult r = run_threads(s, [&](std::size_t t, std::uint64_t k) { ops.step(t, k, arm, disarm); });
    guard.reset();
    a.io().stop();
    runner.join();
    return r;
  }
  Histogram lateness(const CellSettings& s) override {
    Histogram h;
    asio::io_context io(1);
    std::deque<asio::steady_timer> timers;
    const std::int64_t first = mono_ns() + kLatenessLeadNs;
    for (std::size_t i = 0; i < s.samples; ++i) {
      const std::int64_t d = first + kLatenessStepNs * static_cast<std::int64_t>(i);
      auto& t = timers.emplace_back(io);
      t.expires_at(std::chrono::steady_clock::time_point(std::chrono::nanoseconds(d)));
      t.async_wait([&h, d](const asio::error_code&) { h.record(mono_ns() - d); });
    }
    io.run();
    return h;
  }
  Histogram cancel_to_resume(const CellSettings& s) override {
    asio::io_context io(1);
    asio::steady_timer timer(io);
    PingPong pp;
    Histogram h;  // io thread only until joined
    std::size_t round = 0;
    std::function<void()> arm = [&] {
      timer.expires_after(std::chrono::seconds(10));
      timer.async_wait([&](const asio::error_code&) {
        h.record(mono_ns() - pp.t0.load());
        pp.resumed.store(++round);
        if (round < s.samples) {
          arm();
          pp.published.store(round + 1);
        }
      });
    };
    arm();
    pp.published.store(1);
    std::thread runner([&] { io.run(); });
    for (std::size_t i = 0; i < s.samples; ++i) {
      pp.await_published(i);
      pp.t0.store(mono_ns());
      asio::post(io, [&] { timer.cancel(); });
      pp.await_resumed(i);
    }
    runner.join();
    return h;
  }
};

}  // namespace

std::unique_ptr<Subject> make_asio_subject(std::string_view) { return std::make_unique<AsioSubject>(); }

}  // namespace tlab::tool::compare
