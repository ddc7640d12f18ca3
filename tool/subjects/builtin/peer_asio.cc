// tlab/tool/subjects/builtin/peer_asio.cc: standalone asio timers (one
// steady_timer per arming: expires_after + async_wait, cancel) on a private
// io_context, as a loop-driven subject (peers.h).
//
// Driven as an asio user drives it: schedule is expires_after(delay) then
// async_wait; a completion with no error is a fire (fired()), one with
// operation_aborted is the trace of a prevented wait and is dropped; poll is
// io_context::poll() (after restart() when it ran out of work).
//
// Promises, from the documentation (https://think-async.com/Asio/asio-1.22.1/doc/,
// reference/basic_waitable_timer.html, .../basic_waitable_timer/async_wait.html,
// .../basic_waitable_timer/cancel.html, .../io_context/poll.html, restart.html):
//   delivery, exactly_once: async_wait: "For each call to async_wait(), the
//     completion handler will be called exactly once", when "the timer has
//     expired" or "the timer was cancelled" (then with operation_aborted).
//   never_early: a timer is "expired" once the clock reaches its expiry time, and
//     expires_after sets it "relative to now" (steady_clock, read inside the call,
//     so never before schedule's now + delay). asio saturates now + delay at
//     time_point::max(), so a huge delay cannot wrap into the past.
//   accurate_cancel: cancel() returns "the number of asynchronous operations that
//     were cancelled"; "If the timer has already expired when cancel() is called,
//     then the handlers ... can no longer be cancelled, and therefore are passed an
//     error code that indicates the successful completion of the wait". One wait
//     per timer: 1 is PREVENTED, 0 is TOO_LATE (it fired or its success is queued).
//   reentrant: a completion handler may start and cancel waits, its own timer's
//     included: the tutorial's Timer.3 ("Using a bound function as a handler")
//     re-arms the timer from inside its handler with expires_at + async_wait.
//   NOT next_pass: io_context::poll() runs "handlers that are ready to run", and a
//     wait started inside a handler on an already-expired timer becomes ready in
//     the same poll: no pass boundary is documented (tlab shows same_pass_fire).
//   NOT fifo_ties: the timer queue is a heap keyed by expiry alone; no order among
//     equal expiries is documented (and expires_after reads the clock per call).
//   NOT pending_count: asio does not expose the number of pending waits.
//   NOT thread_safe: basic_waitable_timer "Thread Safety: Distinct objects: Safe.
//     Shared objects: Unsafe", and io_context::restart() must not race with poll();
//     tlab serialises the calls.
//
// Limits: any delay is accepted; a negative one gives an already-expired timer
// (its wait completes at the next poll).
//
// Benchmark hook (bench_hook.h): the shape only; compare drives the io_context as
// the generic driver does (one owner; tlab serialises calls from many threads).
//
// Cost: schedule is a heap insert plus one operation allocation; cancel a heap
// erase plus queueing the aborted completion, which the next poll drains.
// Ground rules: one thread at a time; fired() is called from inside poll().
#define ASIO_STANDALONE 1
#include <asio.hpp>

#include <memory>

#include "subjects/builtin/peer_support.h"
#include "subjects/builtin/peers.h"

namespace tlab::tool::builtin {
// Named, so a unity batch (tool/CMakeLists.txt) can hold every peer's file.
namespace asio_peer {
namespace {

struct Asio {
  // Declared first, destroyed last: the timers below must go first (their
  // destructors cancel; the io_context's destructor then destroys the queued
  // completions without invoking them).
  asio::io_context io{1};
  HandleTable<asio::steady_timer> table;
  tlab_subject_config config{};
};

tlab_status create(const tlab_subject_config* config, void** out) {
  return guarded([&] {
    auto self = std::make_unique<Asio>();
    self->config = *config;
    *out = self.release();
    return TLAB_OK;
  });
}

void destroy(void* p) { delete static_cast<Asio*>(p); }

tlab_status schedule(void* p, std::int64_t, std::int64_t delay_ns, std::uint64_t cookie,
                     std::uint64_t* handle) {
  return guarded([&] {
    auto* self = static_cast<Asio*>(p);
    bool fresh = false;
    const std::uint32_t i = self->table.acquire(cookie, &fresh, self->io);
    auto& slot = self->table.at(i);
    try {
      slot.timer.expires_after(std::chrono::nanoseconds(delay_ns));
      slot.timer.async_wait([self, i, gen = slot.gen](const asio::error_code& ec) {
        if (ec) return;  // operation_aborted: cancel() prevented it
        auto& s = self->table.at(i);
        if (s.gen != gen || s.state != SlotState::kArmed) return;
        self->table.resolve(i, SlotState::kFired);
        self->config.fired(self->config.host, s.cookie);
      });
    } catch (...) {
      self->table.release_unused(i);
      throw;
    }
    *handle = self->table.handle(i);
    return TLAB_OK;
  });
}

tlab_status cancel(void* p, std::uint64_t handle, std::int32_t* result) {
  return guarded([&] {
    auto* self = static_cast<Asio*>(p);
    std::uint32_t i = 0;
    auto* slot = self->table.find_armed(handle, &i, result);
    if (slot == nullptr) return TLAB_OK;
    const std::size_t n = slot->timer.cancel();
    *result = n == 1 ? TLAB_CANCEL_PREVENTED : TLAB_CANCEL_TOO_LATE;
    if (n == 1) self->table.resolve(i, SlotState::kCancelled);
    return TLAB_OK;
  });
}

tlab_status poll(void* p, std::int64_t) {
  return guarded([&] {
    auto* self = static_cast<Asio*>(p);
    if (self->io.stopped()) self->io.restart();
    self->io.poll();
    return TLAB_OK;
  });
}

constexpr tlab_subject kDescriptor = facility(
    "asio",
    "asio::steady_timer expires_after / async_wait / cancel on an io_context (poll() polls)",
    TLAB_DRIVE_LOOP,
    TLAB_PROMISE_DELIVERY | TLAB_PROMISE_EXACTLY_ONCE | TLAB_PROMISE_NEVER_EARLY |
        TLAB_PROMISE_ACCURATE_CANCEL | TLAB_PROMISE_REENTRANT,
    {&create, &destroy, &schedule, &cancel, &poll, nullptr});

SubjectShape shape(void*) {
  return {"asio's timer heap (steady_timer)", 1, "one io_context"};
}

constexpr BenchHook kBench{&shape};

}  // namespace
}  // namespace asio_peer

const tlab_subject* asio_subject(std::string_view) { return &asio_peer::kDescriptor; }
const BenchHook* asio_bench(std::string_view) { return &asio_peer::kBench; }

}  // namespace tlab::tool::builtin
