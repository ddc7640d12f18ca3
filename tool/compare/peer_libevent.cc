// tlab/tool/compare/peer_libevent.cc: libevent timers (evtimer_add / evtimer_del on
// an event_base) as a compare subject.
//
// libevent keeps timers in a min-heap of event pointers (min_heap.h), with
// microsecond timevals; evtimer_add outside the loop reads the monotonic clock.
// Memory is counted through event_set_mem_functions (count_peer_allocations).
// Thread safety: libevent's own story. evthread_use_pthreads() is enabled once;
// the single-thread cost workloads use a base created with EVENT_BASE_FLAG_NOLOCK
// (what a single-threaded program gets), the mt workloads and cancel_to_resume a
// locking base whose loop runs in its own thread while other threads call
// evtimer_add/evtimer_del/event_active directly (the base lock serialises them and
// wakes the loop).
#include <event2/event.h>
#include <event2/thread.h>

#include <thread>

#include "compare/subjects.h"

namespace tlab::tool::compare {
namespace {

timeval to_tv(std::int64_t ns) {
  if (ns <= 0) return timeval{0, 0};
  const std::int64_t us = (ns + 999) / 1000;  // round up: never ask for an early fire
  return timeval{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
}

event_base* new_base(bool locking) {
  event_config* cfg = event_config_new();
  if (!locking) event_config_set_flag(cfg, EVENT_BASE_FLAG_NOLOCK);
  event_base* b = event_base_new_with_config(cfg);
  event_config_free(cfg);
  if (b == nullptr) throw std::runtime_error("libevent: event_base_new_with_config failed");
  return b;
}

class EventAdapter {
 public:
  explicit EventAdapter(std::size_t slots, bool locking = false)
      : base_(new_base(locking)), events_(slots) {
    for (auto& e : events_) e = evtimer_new(base_, &EventAdapter::on_fire, this);
  }
  ~EventAdapter() {
    for (event* e : events_) event_free(e);
    event_base_free(base_);
  }
  void arm(std::size_t slot, std::int64_t delay_ns) {
    const timeval tv = to_tv(delay_ns);
    evtimer_add(events_[slot], &tv);
  }
  void disarm(std::size_t slot) { evtimer_del(events_[slot]); }
  std::size_t poll() {
    const std::uint64_t before = fired_;
    event_base_loop(base_, EVLOOP_NONBLOCK);
    return fired_ - before;
  }
  std::uint64_t fired() const { return fired_; }
  void housekeeping() {}
  event_base* base() { return base_; }

 private:
  static void on_fire(evutil_socket_t, short, void* self) {
    ++static_cast<EventAdapter*>(self)->fired_;
  }
  event_base* base_;
  std::vector<event*> events_;
  std::uint64_t fired_ = 0;
};

class EventSubject final : public Subject {
 public:
  std::string name() const override { return "libevent"; }
  bool is_peer() const override { return true; }
  std::string note() const override {
    return "libevent " + std::string(event_get_version()) +
           ": evtimer_add/evtimer_del (min-heap, us timevals); single-thread costs on a "
           "NOLOCK base; the mt workloads and cancel_to_resume on a locking base "
           "(evthread_use_pthreads) with its loop in its own thread (which fires mt_churn's "
           "timers)";
  }
  CostResult cost(Workload w, std::size_t pending, const CellSettings& s) override {
    if (!is_mt(w)) return run_cost<EventAdapter>(w, pending, s);
    const MtOps ops(w);
    EventAdapter a(pending + ops.slots(s.threads), /*locking=*/true);
    for (std::size_t i = 0; i < pending; ++i) a.arm(i, background_delay(i, pending));
    auto arm = [&](std::size_t slot, std::int64_t d) { a.arm(pending + slot, d); };
    auto disarm = [&](std::size_t slot) { a.disarm(pending + slot); };
    ops.prearm(s.threads, arm);
    std::thread loop([&] { event_base_loop(a.base(), EVLOOP_NO_EXIT_ON_EMPTY); });
    CostResult r = run_threads(s, [&](std::size_t t, std::uint64_t k) { ops.step(t, k, arm, disarm); });
    // Stop through an activated event, not a bare event_base_loopbreak(): the
    // loop clears its break flag when it starts, so a break issued before the loop
    // thread got going would be lost and join() would hang.
    event* stop = event_new(
        a.base(), -1, 0, [](evutil_socket_t, short, void* b) {
          event_base_loopbreak(static_cast<event_base*>(b));
        },
        a.base());
    event_active(stop, 0, 0);
    loop.join();
    event_free(stop);
    return r;
  }
  Histogram lateness(const CellSettings& s) override {
    struct Sample {
      event* ev;
      std::int64_t deadline;
      Histogram* h;
    };
    Histogram h;
    event_base* base = new_base(false);
    std::vector<Sample> samples(s.samples);
    const std::int64_t first = mono_ns() + kLatenessLeadNs;
    for (std::size_t i = 0; i < s.samples; ++i) {
      Sample& x = samples[i];
      x.deadline = first + kLatenessStepNs * static_cast<std::int64_t>(i);
      x.h = &h;
      x.ev = evtimer_new(
          base,
          [](evutil_socket_t, short, void* p) {
            auto* y = static_cast<Sample*>(p);
            y->h->record(mono_ns() - y->deadline);
          },
          &x);
      const timeval tv = to_tv(x.deadline - mono_ns());
      evtimer_add(x.ev, &tv);
    }
    event_base_dispatch(base);
    for (Sample& x : samples) event_free(x.ev);
    event_base_free(base);
    return h;
  }
  Histogram cancel_to_resume(const CellSettings& s) override {
    struct State {
      event_base* base;
      event* timer;
      event* wake;
      PingPong pp;
      Histogram h;
      std::size_t round = 0;
      std::size_t samples = 0;
    } st;
    st.samples = s.samples;
    st.base = new_base(true);
    st.timer = evtimer_new(
        st.base, [](evutil_socket_t, short, void*) {}, nullptr);
    st.wake = event_new(
        st.base, -1, 0,
        [](evutil_socket_t, short, void* p) {
          auto* x = static_cast<State*>(p);
          evtimer_del(x->timer);
          x->h.record(mono_ns() - x->pp.t0.load());
          x->pp.resumed.store(++x->round);
          if (x->round == x->samples) {
            event_base_loopbreak(x->base);
            return;
          }
          const timeval ten{10, 0};
          evtimer_add(x->timer, &ten);
          x->pp.published.store(x->round + 1);
        },
        &st);
    const timeval ten{10, 0};
    evtimer_add(st.timer, &ten);
    st.pp.published.store(1);
    std::thread loop([&] { event_base_loop(st.base, EVLOOP_NO_EXIT_ON_EMPTY); });
    for (std::size_t i = 0; i < s.samples; ++i) {
      st.pp.await_published(i);
      st.pp.t0.store(mono_ns());
      event_active(st.wake, 0, 0);
      st.pp.await_resumed(i);
    }
    loop.join();
    event_free(st.wake);
    event_free(st.timer);
    event_base_free(st.base);
    return st.h;
  }
};

}  // namespace

std::unique_ptr<Subject> make_libevent_subject(std::string_view) {
  count_peer_allocations();
  // Before the first locking base is made (evthread_use_pthreads' requirement).
  static const bool ready = [] { return evthread_use_pthreads() == 0; }();
  if (!ready) throw std::runtime_error("libevent: evthread_use_pthreads failed");
  return std::make_unique<EventSubject>();
}

}  // namespace tlab::tool::compare
