// tlab/tool/subjects/builtin/peer_libuv.cc: libuv timers (uv_timer_start /
// uv_timer_stop on a private uv_loop_t) as a loop-driven subject (peers.h).
//
// Driven as a libuv user drives it: schedule is uv_timer_start with the delay
// rounded UP to whole milliseconds, relative to the loop's cached time (uv_now);
// poll is uv_update_time + uv_run(UV_RUN_NOWAIT). tlab does not correct libuv's
// cached-time semantics; it observes them.
//
// Promises, from the documentation (https://docs.libuv.org/en/v1.x/timer.html,
// https://docs.libuv.org/en/v1.x/handle.html, https://docs.libuv.org/en/v1.x/design.html):
//   delivery, exactly_once: a single-shot timer "fires first after timeout
//     milliseconds" (repeat 0: once), on a loop that is run.
//   accurate_cancel: uv_timer_stop: "the callback will not be called anymore";
//     uv_is_active: a uv_foo_t is active from uv_foo_start() until uv_foo_stop()
//     (or, for a single-shot timer, until it has fired). So cancel answers
//     PREVENTED iff the handle was active, read before stopping it.
//   pending_count: the number of active timer handles, counted with uv_walk and
//     uv_is_active (both documented), never from our own bookkeeping.
//   NOT never_early: uv_timer_start "does not update the event loop's concept of
//     now", and the loop's time is whole milliseconds: a timer is due at
//     uv_now() + ceil(delay), and uv_now() may be many ms stale (it is refreshed
//     only when the loop runs), so a timer may fire before schedule's now + delay.
//     Observed: compare's lateness through this descriptor (polled in a busy loop,
//     so uv_now is at most one poll stale), 266 of 1000 timers early, the
//     earliest by 0.46 ms: the floor of the millisecond loop clock.
//   reentrant: a timer callback may start and stop timers (the documented way to
//     re-arm is uv_timer_start or uv_timer_again from the callback, timer.html).
//   next_pass: uv_timer_start: "If timeout is zero, the callback fires on the next
//     event loop iteration" (timer.html): a timer started from a callback never
//     runs in the uv_run pass that started it.
//   periodic, fixed delay: uv_timer_start's repeat: "If repeat is non-zero, the
//     callback fires first after timeout milliseconds and then repeatedly after
//     repeat milliseconds", and uv_timer_set_repeat: "the timer will be scheduled
//     to run on the given interval, regardless of the callback execution duration
//     ... if a 50ms repeating timer first runs for 17ms, it will be scheduled to
//     run again 33ms later" (timer.html): the next run is a period after the
//     run's start on the loop clock (TLAB_PERIODIC_FIXED_DELAY, measured from the
//     start); uv_timer_stop stops the series, from its own callback too. The
//     period is rounded up to whole milliseconds, as a delay is.
//   resolution_ns 1 ms: the loop clock and the timeouts are whole milliseconds, so
//     a timer is due up to 1 ms after schedule's now + delay (the floor of the loop
//     time plus the ceiling of the delay), and the lateness tlab allows is at
//     least that (subject.h, "Lateness").
//   NOT fifo_ties: the implementation orders equal timeouts by start order (its
//     timer heap breaks ties with a start counter), but the documentation does not
//     promise it, and equal host deadlines need not map to equal libuv timeouts.
//   NOT thread_safe: "The libuv event loop (or any other API involving the loop or
//     handles, for that matter) is not thread-safe except where stated otherwise"
//     (design.html, "The I/O loop").
//
// Limits: a negative delay is refused with TLAB_EINVAL (uv_timer_start takes an
// unsigned millisecond count; there is no "in the past"); any delay up to
// INT64_MAX ns is accepted (libuv clamps loop time + timeout at UINT64_MAX).
//
// Benchmark hook (bench_hook.h): the shape only; compare drives the loop as the
// generic driver does (one owner; tlab serialises calls from many threads).
//
// Cost: schedule and cancel are libuv's heap insert / remove, O(log n); pending is
// O(handles ever created) (uv_walk). Ground rules: one thread at a time (tlab
// serialises calls: not THREAD_SAFE); fired() is called from inside poll().
#include <uv.h>

#include <memory>

#include "subjects/builtin/peer_support.h"
#include "subjects/builtin/peers.h"

namespace tlab::tool::builtin {
// Named, so a unity batch (tool/CMakeLists.txt) can hold every peer's file.
namespace libuv_peer {
namespace {

struct Uv {
  uv_loop_t loop{};
  HandleTable<uv_timer_t> table;
  tlab_subject_config config{};
};

std::uint64_t ceil_ms(std::int64_t ns) {
  return static_cast<std::uint64_t>(ns / 1'000'000 + (ns % 1'000'000 != 0 ? 1 : 0));
}

void on_fire(uv_timer_t* t) {
  auto* self = static_cast<Uv*>(t->loop->data);
  const auto index = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(t->data));
  auto& slot = self->table.at(index);
  // A repeating timer stays armed (libuv re-started it before this callback).
  if (uv_timer_get_repeat(t) == 0) self->table.resolve(index, SlotState::kFired);
  self->config.fired(self->config.host, slot.cookie);
}

tlab_status create(const tlab_subject_config* config, void** out) {
  return guarded([&] {
    auto self = std::make_unique<Uv>();
    self->config = *config;
    if (uv_loop_init(&self->loop) != 0) return TLAB_EFAIL;
    self->loop.data = self.get();
    *out = self.release();
    return TLAB_OK;
  });
}

void destroy(void* p) {
  auto* self = static_cast<Uv*>(p);
  // uv_close stops a timer at once (no callback); run until every close callback
  // has run, then the loop can be closed and the handles' storage freed.
  uv_walk(
      &self->loop,
      [](uv_handle_t* h, void*) {
        if (!uv_is_closing(h)) uv_close(h, nullptr);
      },
      nullptr);
  uv_run(&self->loop, UV_RUN_DEFAULT);
  uv_loop_close(&self->loop);
  delete self;
}

// start: uv_timer_start of a fresh or reused slot; repeat_ms 0: a one-shot timer.
tlab_status start(void* p, std::int64_t delay_ns, std::uint64_t repeat_ms, std::uint64_t cookie,
                  std::uint64_t* handle) {
  if (delay_ns < 0) return TLAB_EINVAL;
  return guarded([&] {
    auto* self = static_cast<Uv*>(p);
    bool fresh = false;
    const std::uint32_t i = self->table.acquire(cookie, &fresh);
    uv_timer_t* t = &self->table.at(i).timer;
    if (fresh) {
      uv_timer_init(&self->loop, t);
      t->data = reinterpret_cast<void*>(static_cast<std::uintptr_t>(i));
    }
    if (uv_timer_start(t, &on_fire, ceil_ms(delay_ns), repeat_ms) != 0) {
      self->table.release_unused(i);
      return TLAB_EFAIL;
    }
    *handle = self->table.handle(i);
    return TLAB_OK;
  });
}

tlab_status schedule(void* p, std::int64_t, std::int64_t delay_ns, std::uint64_t cookie,
                     std::uint64_t* handle) {
  return start(p, delay_ns, 0, cookie, handle);
}

tlab_status schedule_periodic(void* p, std::int64_t, std::int64_t delay_ns, std::int64_t period_ns,
                              std::uint32_t kind, std::uint64_t cookie, std::uint64_t* handle) {
  if (period_ns <= 0 || kind != TLAB_PERIODIC_FIXED_DELAY) return TLAB_EINVAL;
  return start(p, delay_ns, ceil_ms(period_ns), cookie, handle);
}

tlab_status cancel(void* p, std::uint64_t handle, std::int32_t* result) {
  auto* self = static_cast<Uv*>(p);
  std::uint32_t i = 0;
  auto* slot = self->table.find_armed(handle, &i, result);
  if (slot == nullptr) return TLAB_OK;
  // Armed in our table means started and not yet called back; libuv's own word
  // decides, read before the stop.
  auto* h = reinterpret_cast<uv_handle_t*>(&slot->timer);
  const bool active = uv_is_active(h) != 0;
  uv_timer_stop(&slot->timer);
  *result = active ? TLAB_CANCEL_PREVENTED : TLAB_CANCEL_TOO_LATE;
  if (active) self->table.resolve(i, SlotState::kCancelled);
  return TLAB_OK;
}

tlab_status poll(void* p, std::int64_t) {
  auto* self = static_cast<Uv*>(p);
  uv_update_time(&self->loop);
  uv_run(&self->loop, UV_RUN_NOWAIT);
  return TLAB_OK;
}

tlab_status pending(void* p, std::uint64_t* count) {
  auto* self = static_cast<Uv*>(p);
  *count = 0;
  uv_walk(
      &self->loop,
      [](uv_handle_t* h, void* arg) {
        if (h->type == UV_TIMER && uv_is_active(h) != 0) ++*static_cast<std::uint64_t*>(arg);
      },
      count);
  return TLAB_OK;
}

constexpr std::int64_t kResolutionNs = 1'000'000;

constexpr tlab_subject kDescriptor = with_periodic(
    facility("libuv",
             "uv_timer_start / uv_timer_stop on a uv_loop_t: ms timeouts from the cached loop time "
             "(uv_run NOWAIT polls)",
             TLAB_DRIVE_LOOP,
             TLAB_PROMISE_DELIVERY | TLAB_PROMISE_EXACTLY_ONCE | TLAB_PROMISE_ACCURATE_CANCEL |
                 TLAB_PROMISE_PENDING_COUNT | TLAB_PROMISE_REENTRANT | TLAB_PROMISE_NEXT_PASS,
             {&create, &destroy, &schedule, &cancel, &poll, &pending}, kResolutionNs),
    TLAB_PERIODIC_FIXED_DELAY, &schedule_periodic);

SubjectShape shape(void*) {
  return {"libuv's timer heap (uv_timer_t, whole-ms timeouts)", 1, "one uv_loop_t"};
}

constexpr BenchHook kBench{&shape};

}  // namespace
}  // namespace libuv_peer

const tlab_subject* libuv_subject(std::string_view) { return &libuv_peer::kDescriptor; }
const BenchHook* libuv_bench(std::string_view) { return &libuv_peer::kBench; }

}  // namespace tlab::tool::builtin
