// tlab/tool/compare/peer_libuv.cc: libuv timers (uv_timer_start / uv_timer_stop on a
// uv_loop_t) as a compare subject.
//
// libuv keeps timers in an intrusive binary heap inside uv_timer_t, keyed by the
// loop's cached millisecond time, so timeouts are whole milliseconds (rounded up
// here so that nothing is asked to fire early). Its memory is counted through
// uv_replace_allocator (count_peer_allocations) plus our new[] of the uv_timer_t array.
// Thread safety: a loop is single-threaded. The mt workloads therefore serialise
// every uv_timer_start/uv_timer_stop from the worker threads on one std::mutex, with
// the loop run only by whoever holds it (mt_churn: one uv_run pass every 16th op
// of each thread; the usual "owner lock around foreign calls"); the cross-
// thread wake-up libuv offers, uv_async_send, is what cancel_to_resume uses.
#include <uv.h>

#include <mutex>
#include <thread>

#include "compare/subjects.h"

namespace tlab::tool::compare {
namespace {

std::uint64_t ceil_ms(std::int64_t ns) {
  return ns <= 0 ? 0 : static_cast<std::uint64_t>((ns + 999'999) / 1'000'000);
}

void close_all(uv_loop_t* loop) {
  uv_walk(
      loop,
      [](uv_handle_t* h, void*) {
        if (!uv_is_closing(h)) uv_close(h, nullptr);
      },
      nullptr);
  uv_run(loop, UV_RUN_DEFAULT);
  uv_loop_close(loop);
}

class UvAdapter {
 public:
  explicit UvAdapter(std::size_t slots) : timers_(new uv_timer_t[slots]), slots_(slots) {
    uv_loop_init(&loop_);
    loop_.data = this;
    for (std::size_t i = 0; i < slots; ++i) uv_timer_init(&loop_, &timers_[i]);
  }
  ~UvAdapter() { close_all(&loop_); }
  void arm(std::size_t slot, std::int64_t delay_ns) {
    uv_timer_start(&timers_[slot], &UvAdapter::on_fire, ceil_ms(delay_ns), 0);
  }
  void disarm(std::size_t slot) { uv_timer_stop(&timers_[slot]); }
  std::size_t poll() {
    const std::uint64_t before = fired_;
    uv_run(&loop_, UV_RUN_NOWAIT);
    return fired_ - before;
  }
  std::uint64_t fired() const { return fired_; }
  void housekeeping() {}

 private:
  static void on_fire(uv_timer_t* t) { ++static_cast<UvAdapter*>(t->loop->data)->fired_; }
  uv_loop_t loop_{};
  std::unique_ptr<uv_timer_t[]> timers_;
  std::size_t slots_;
  std::uint64_t fired_ = 0;
};

class UvSubject final : public Subject {
 public:
  std::string name() const override { return "libuv"; }
  bool is_peer() const override { return true; }
  std::string note() const override {
    return "libuv " + std::string(uv_version_string()) +
           ": uv_timer_start/uv_timer_stop, 1 ms timeouts from the cached loop time; "
           "the mt workloads serialise timer calls (and mt_churn's loop passes) on one "
           "std::mutex (loops are single-threaded); cancel_to_resume wakes the loop with uv_async_send";
  }
  CostResult cost(Workload w, std::size_t pending, const CellSettings& s) override {
    if (!is_mt(w)) return run_cost<UvAdapter>(w, pending, s);
    const MtOps ops(w);
    UvAdapter a(pending + ops.slots(s.threads));
    for (std::size_t i = 0; i < pending; ++i) a.arm(i, background_delay(i, pending));
    auto arm = [&](std::size_t slot, std::int64_t d) { a.arm(pending + slot, d); };
    auto disarm = [&](std::size_t slot) { a.disarm(pending + slot); };
    ops.prearm(s.threads, arm);
    std::mutex mu;
    return run_threads(s, [&](std::size_t t, std::uint64_t k) {
      std::lock_guard<std::mutex> lk(mu);
      ops.step(t, k, arm, disarm);
      if (ops.poll_due(k)) a.poll();  // the loop is whoever holds the lock
    });
  }
  Histogram lateness(const CellSettings& s) override {
    struct Sample {
      uv_timer_t timer;
      std::int64_t deadline;
      Histogram* h;
    };
    Histogram h;
    uv_loop_t loop;
    uv_loop_init(&loop);
    std::vector<Sample> samples(s.samples);
    uv_update_time(&loop);
    const std::int64_t first = mono_ns() + kLatenessLeadNs;
    for (std::size_t i = 0; i < s.samples; ++i) {
      Sample& x = samples[i];
      x.deadline = first + kLatenessStepNs * static_cast<std::int64_t>(i);
      x.h = &h;
      x.timer.data = &x;
      uv_timer_init(&loop, &x.timer);
      // Due at the first whole loop millisecond at or after the deadline.
      const std::uint64_t due_ms = ceil_ms(x.deadline);
      const std::uint64_t now_ms = uv_now(&loop);
      uv_timer_start(
          &x.timer,
          [](uv_timer_t* t) {
            auto* p = static_cast<Sample*>(t->data);
            p->h->record(mono_ns() - p->deadline);
          },
          due_ms > now_ms ? due_ms - now_ms : 0, 0);
    }
    uv_run(&loop, UV_RUN_DEFAULT);
    close_all(&loop);
    return h;
  }
  Histogram cancel_to_resume(const CellSettings& s) override {
    struct State {
      uv_loop_t loop;
      uv_timer_t timer;
      uv_async_t async;
      PingPong pp;
      Histogram h;
      std::size_t round = 0;
      std::size_t samples = 0;
    } st;
    st.samples = s.samples;
    uv_loop_init(&st.loop);
    st.loop.data = &st;
    uv_timer_init(&st.loop, &st.timer);
    uv_async_init(&st.loop, &st.async, [](uv_async_t* a) {
      auto* x = static_cast<State*>(a->loop->data);
      uv_timer_stop(&x->timer);
      x->h.record(mono_ns() - x->pp.t0.load());
      x->pp.resumed.store(++x->round);
      if (x->round == x->samples) {
        uv_close(reinterpret_cast<uv_handle_t*>(&x->async), nullptr);
        uv_close(reinterpret_cast<uv_handle_t*>(&x->timer), nullptr);
        return;
      }
      uv_timer_start(
          &x->timer, [](uv_timer_t*) {}, 10'000, 0);
      x->pp.published.store(x->round + 1);
    });
    uv_timer_start(
        &st.timer, [](uv_timer_t*) {}, 10'000, 0);
    st.pp.published.store(1);
    std::thread loop_thread([&] { uv_run(&st.loop, UV_RUN_DEFAULT); });
    for (std::size_t i = 0; i < s.samples; ++i) {
      st.pp.await_published(i);
      st.pp.t0.store(mono_ns());
      uv_async_send(&st.async);
      st.pp.await_resumed(i);
    }
    loop_thread.join();
    uv_loop_close(&st.loop);
    return st.h;
  }
};

}  // namespace

std::unique_ptr<Subject> make_libuv_subject(std::string_view) {
  count_peer_allocations();
  return std::make_unique<UvSubject>();
}

}  // namespace tlab::tool::compare
