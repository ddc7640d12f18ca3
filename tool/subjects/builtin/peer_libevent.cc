// tlab/tool/subjects/builtin/peer_libevent.cc: libevent timers (evtimer_add /
// evtimer_del on a private event_base) as a loop-driven subject (peers.h).
//
// Driven as a libevent user drives it: schedule is evtimer_add with the delay as
// a timeval (rounded UP to whole microseconds); poll is
// event_base_loop(base, EVLOOP_NONBLOCK). The base is created with the default
// timing mechanism (no EVENT_BASE_FLAG_PRECISE_TIMER), as most programs do.
//
// Promises, from the documentation (the libevent book,
// http://www.wangafu.net/~nickm/libevent-book/Ref4_event.html and
// Ref2_eventbase.html; the doxygen of event2/event.h, 2.1):
//   delivery, exactly_once: a pending event whose timeout expires "becomes active,
//     and its (user-provided) callback function is run"; a non-persistent one
//     "stops being pending when its callback runs" (Ref4): once per evtimer_add.
//   accurate_cancel: Ref4, event_del: an event deleted after it became active but
//     before its callback ran is not run; event_pending tells whether the event is
//     pending or active. cancel answers PREVENTED iff evtimer_pending was true just
//     before evtimer_del.
//   NOT never_early: event.h, EVENT_BASE_FLAG_PRECISE_TIMER: "Ordinarily, Libevent
//     implements its time and timeout code using the fastest monotonic timer that
//     we have" (on Linux, CLOCK_MONOTONIC_COARSE: one scheduler tick, ~4 ms), and a
//     timeout added from a callback is relative to the loop's cached time
//     (Ref3_eventloop, event_base_gettimeofday_cached): a timer may fire before
//     schedule's CLOCK_MONOTONIC now + delay. Observed: compare's lateness through
//     this descriptor, 551 of 1000 timers early, the earliest by 3.0 ms.
//   resolution_ns 10 ms: with that coarse clock a timeout is judged against a time
//     up to one scheduler tick old (1 to 10 ms for HZ 1000 to 100), so a timer may
//     come that much after schedule's now + delay; the lateness tlab allows is at
//     least that (subject.h, "Lateness").
//   NOT fifo_ties: timers live in a min-heap keyed by the timeout alone; no order
//     among equal timeouts is documented.
//   NOT pending_count: event_base_get_num_events(EVENT_BASE_COUNT_ADDED) "may
//     return more than the number of events you added ... the user shouldn't rely
//     on the exact value" (event.h).
//   reentrant: Ref4, "About Event Persistence": a non-persistent event "stops being
//     pending when its callback runs ... if you want to make the event pending
//     again, you can call event_add() on it again from inside the callback
//     function"; and event_del of an active event before its callback ran keeps it
//     from running (above): callbacks may add and delete timers.
//   NOT next_pass: no documented pass boundary. Ref3_eventloop says EVLOOP_NONBLOCK
//     "will only check whether any events are ready to trigger immediately, and
//     run their callbacks if so"; whether a timer added by such a callback runs
//     in the same event_base_loop call is not said.
//   NOT thread_safe, a decision: libevent makes event_add/event_del callable from
//     any thread once evthread_use_pthreads() was called before the base was made
//     (Ref1_libsetup, "Locks and threading"), but the accurate cancel result needs
//     evtimer_pending + evtimer_del to be one step, which the base lock cannot give
//     a caller, and event_del on another thread's running callback blocks until
//     it returns. So this base is EVENT_BASE_FLAG_NOLOCK ("unsafe and nonfunctional
//     to access it from multiple threads", Ref2) and tlab serialises the calls.
//
// Limits: a negative delay is refused with TLAB_EINVAL (event_add's timeval is the
// size of the timeout, Ref4; a negative size is not documented); any delay up to
// INT64_MAX ns is accepted.
//
// Benchmark hook (bench_hook.h): the shape only; compare measures this NOLOCK base
// as the generic driver runs it (tlab serialises calls from many threads), not a
// locking base (evthread), which would be another configuration.
//
// Cost: schedule and cancel are libevent's min-heap insert / erase, O(log n).
// Ground rules: one thread at a time; fired() is called from inside poll().
#include <event2/event.h>

#include <memory>

#include "subjects/builtin/peer_support.h"
#include "subjects/builtin/peers.h"

namespace tlab::tool::builtin {
// Named, so a unity batch (tool/CMakeLists.txt) can hold every peer's file.
namespace libevent_peer {
namespace {

struct Ev;
struct EvTimer {
  event* ev = nullptr;  // evtimer_new'd once, on the slot's first use
  Ev* self = nullptr;
  std::uint32_t index = 0;
};

struct Ev {
  event_base* base = nullptr;
  HandleTable<EvTimer> table;
  tlab_subject_config config{};
  ~Ev() {
    // event_free removes a pending event without running it.
    for (std::uint32_t i = 0; i < table.size(); ++i) {
      if (table.at(i).timer.ev != nullptr) event_free(table.at(i).timer.ev);
    }
    if (base != nullptr) event_base_free(base);
  }
};

timeval to_tv(std::int64_t ns) {
  const std::int64_t us = ns / 1000 + (ns % 1000 != 0 ? 1 : 0);  // round up: never ask early
  return timeval{static_cast<time_t>(us / 1'000'000), static_cast<suseconds_t>(us % 1'000'000)};
}

void on_fire(evutil_socket_t, short, void* arg) {
  auto* t = static_cast<EvTimer*>(arg);
  Ev* self = t->self;
  const std::uint64_t cookie = self->table.at(t->index).cookie;
  self->table.resolve(t->index, SlotState::kFired);
  self->config.fired(self->config.host, cookie);
}

tlab_status create(const tlab_subject_config* config, void** out) {
  return guarded([&] {
    auto self = std::make_unique<Ev>();
    self->config = *config;
    event_config* cfg = event_config_new();
    if (cfg == nullptr) return TLAB_ENOMEM;
    event_config_set_flag(cfg, EVENT_BASE_FLAG_NOLOCK);
    self->base = event_base_new_with_config(cfg);
    event_config_free(cfg);
    if (self->base == nullptr) return TLAB_EFAIL;
    *out = self.release();
    return TLAB_OK;
  });
}

void destroy(void* p) { delete static_cast<Ev*>(p); }

tlab_status schedule(void* p, std::int64_t, std::int64_t delay_ns, std::uint64_t cookie,
                     std::uint64_t* handle) {
  if (delay_ns < 0) return TLAB_EINVAL;
  return guarded([&] {
    auto* self = static_cast<Ev*>(p);
    bool fresh = false;
    const std::uint32_t i = self->table.acquire(cookie, &fresh);
    EvTimer& t = self->table.at(i).timer;
    if (fresh) {
      t.self = self;
      t.index = i;
    }
    if (t.ev == nullptr) t.ev = evtimer_new(self->base, &on_fire, &t);
    const timeval tv = to_tv(delay_ns);
    if (t.ev == nullptr || evtimer_add(t.ev, &tv) != 0) {
      self->table.release_unused(i);
      return t.ev == nullptr ? TLAB_ENOMEM : TLAB_EFAIL;
    }
    *handle = self->table.handle(i);
    return TLAB_OK;
  });
}

tlab_status cancel(void* p, std::uint64_t handle, std::int32_t* result) {
  auto* self = static_cast<Ev*>(p);
  std::uint32_t i = 0;
  auto* slot = self->table.find_armed(handle, &i, result);
  if (slot == nullptr) return TLAB_OK;
  // Pending or active (expired, callback not yet run): evtimer_del prevents it.
  const bool prevents = evtimer_pending(slot->timer.ev, nullptr) != 0;
  if (evtimer_del(slot->timer.ev) != 0) return TLAB_EFAIL;
  *result = prevents ? TLAB_CANCEL_PREVENTED : TLAB_CANCEL_TOO_LATE;
  if (prevents) self->table.resolve(i, SlotState::kCancelled);
  return TLAB_OK;
}

tlab_status poll(void* p, std::int64_t) {
  auto* self = static_cast<Ev*>(p);
  // 1 means "no events pending", which is not an error here.
  return event_base_loop(self->base, EVLOOP_NONBLOCK) < 0 ? TLAB_EFAIL : TLAB_OK;
}

constexpr std::int64_t kResolutionNs = 10'000'000;

constexpr tlab_subject kDescriptor =
    facility("libevent",
             "evtimer_add / evtimer_del on an event_base (NOLOCK; event_base_loop NONBLOCK polls; "
             "default coarse monotonic clock)",
             TLAB_DRIVE_LOOP,
             TLAB_PROMISE_DELIVERY | TLAB_PROMISE_EXACTLY_ONCE | TLAB_PROMISE_ACCURATE_CANCEL |
                 TLAB_PROMISE_REENTRANT,
             {&create, &destroy, &schedule, &cancel, &poll, nullptr}, kResolutionNs);

SubjectShape shape(void*) {
  return {"libevent's min-heap (us timevals)", 1, "one event_base (NOLOCK)"};
}

constexpr BenchHook kBench{&shape};

}  // namespace
}  // namespace libevent_peer

const tlab_subject* libevent_subject(std::string_view) { return &libevent_peer::kDescriptor; }
const BenchHook* libevent_bench(std::string_view) { return &libevent_peer::kBench; }

}  // namespace tlab::tool::builtin
