// tlab/subject_adapter.h: QueueSubject<Q>, the subject ABI (tlab/subject.h) for any
// type that satisfies the TimerQueue concept (tlab/queue/timer_queue.h).
//
// A timer queue is a pure data structure its owner polls; a subject is a timer
// facility tlab drives through C function pointers. QueueSubject<Q> is the owner:
// it holds one Q per instance and turns each ABI call into one queue call, so a
// user who has written (or wrapped) a TimerQueue gets tlab's scenarios, oracles
// and property tests with one line,
//
//     using MyQueue = my::Wheel<std::uint64_t>;   // Payload must be std::uint64_t
//     TLAB_EXPORT_QUEUE_SUBJECT(MyQueue, "my_wheel", "my hashed wheel, 1 ms tick")
//
// which defines the exported `tlab_subject_entry`. tlab's own strategies are
// served by the same template (tool/subjects/builtin/strategies.cc), so
// `--subject binary_heap` runs exactly the code a user's plugin runs.
//
// clang-format off
//   | ABI call                       | queue call                       | result                         |
//   |--------------------------------|----------------------------------|--------------------------------|
//   | create(config)                 | Q(QueueConfig{start = now_ns,    | TLAB_EINVAL: config NULL, short|
//   |                                |   tick = tick_ns if > 0})        | or without fired()             |
//   | schedule(now, delay, cookie)   | insert(now + delay, cookie),     | TLAB_EINVAL: delay < 0 (core's |
//   |                                | saturating at Instant::max()     | contract, clock.h); nothing    |
//   |                                |                                  | armed                          |
//   | cancel(handle)                 | cancel(handle)                   | true: PREVENTED, false:        |
//   |                                |                                  | TOO_LATE (never UNKNOWN)       |
//   | poll(now)                      | expire(now, sink): fired(host,   | TLAB_EINVAL: now before the    |
//   |                                | cookie) per entry, in due order  | previous poll's now            |
//   | pending(count)                 | size()                           |                                |
//   | destroy()                      | ~Q(): pending entries dropped    |                                |
// clang-format on
//
// Promises: what the TimerQueue contract makes every conforming queue keep:
// DELIVERY, EXACTLY_ONCE, NEVER_EARLY, ACCURATE_CANCEL (cancel() is true iff the
// entry was pending, so TOO_LATE is exact: the handle's entry fired, or was
// cancelled, or never existed), PENDING_COUNT, VIRTUAL (the queue keeps time only
// through the instants it is given); FIFO_TIES only when Q::kExact. Not
// THREAD_SAFE: a queue is single-owner. max_delay_ns is 0 (any delay >= 0).
//
// Handles: a TimerHandle {index, generation} crosses the ABI as
// (generation << 32) | index, and comes back unchanged: a stale handle is the
// queue's own business (its generation check), which is exactly what tlab tests.
//
// Ticks: tick_ns is the lateness tlab allows; a ticked queue (kExact false) uses it
// as its tick, so "fires no later than the first poll at or after deadline +
// tick_ns" is the TimerQueue contract's "no later than due(d)". With tick_ns <= 0
// a ticked queue keeps QueueConfig's default tick (1 ms), and tlab may then see it
// fire up to 1 ms late; an exact queue ignores tick_ns.
//
// Cost: one indirect call from tlab plus the queue operation; schedule and poll
// add one saturating add and one compare, cancel a shift and a mask. One heap
// allocation per create().
//
// Ground rules: every function is noexcept at the boundary: std::bad_alloc becomes
// TLAB_ENOMEM, any other exception TLAB_EFAIL (nothing unwinds into C). A
// TLAB_CHECK inside Q (a broken invariant) still aborts: that is a crash of the
// case, and tlab reports it as one. The sink passed to expire() calls the host's
// fired(), which never calls back into the subject (subject.h), so the queue's
// "no re-entry from the sink" rule holds.
//
// Memory ordering: none. An instance is single-owner state; because the
// descriptor does not promise THREAD_SAFE, tlab serialises every call on one
// instance with its own mutex, and that mutex orders them.
#pragma once

#include <concepts>
#include <cstdint>
#include <new>
#include <string_view>

#include "tlab/clock.h"
#include "tlab/queue/timer_queue.h"
#include "tlab/subject.h"
#include "tlab/subject_guard.h"

// TLAB_SUBJECT_EXPORT: gives the entry point default visibility, so a plugin
// built with -fvisibility=hidden (tlab_add_subject does) still exports it.
#if defined(_WIN32)
#define TLAB_SUBJECT_EXPORT __declspec(dllexport)
#else
#define TLAB_SUBJECT_EXPORT __attribute__((visibility("default")))
#endif

namespace tlab {

// tlab::QueueSubjectType: a TimerQueue whose payload is the ABI's cookie.
template <class Q>
concept QueueSubjectType = TimerQueue<Q> && std::same_as<typename Q::Payload, std::uint64_t>;

// tlab::encode_subject_handle / decode_subject_handle: TimerHandle <-> the ABI's
// uint64_t handle; decode(encode(h)) == h for every h.
constexpr std::uint64_t encode_subject_handle(TimerHandle h) noexcept {
  return (static_cast<std::uint64_t>(h.generation) << 32) | h.index;
}
constexpr TimerHandle decode_subject_handle(std::uint64_t v) noexcept {
  return TimerHandle{static_cast<std::uint32_t>(v), static_cast<std::uint32_t>(v >> 32)};
}

template <QueueSubjectType Q>
class QueueSubject {
 public:
  static constexpr std::uint64_t kPromises =
      TLAB_PROMISE_DELIVERY | TLAB_PROMISE_EXACTLY_ONCE | TLAB_PROMISE_NEVER_EARLY |
      TLAB_PROMISE_ACCURATE_CANCEL | TLAB_PROMISE_PENDING_COUNT | TLAB_PROMISE_VIRTUAL |
      (Q::kExact ? TLAB_PROMISE_FIFO_TIES : 0);

  // tlab::QueueSubject::descriptor: the ABI descriptor of Q, named `name`.
  // Requires: name and summary outlive every use of the descriptor (string
  // literals do); name is 1 to 64 characters of [A-Za-z0-9_.-] (tlab checks it).
  // Ensures: a loop-driven, host-clock, VIRTUAL facility (see the header table).
  static constexpr tlab_subject descriptor(const char* name, const char* summary) noexcept {
    tlab_subject d{};
    d.abi_version = TLAB_SUBJECT_ABI_VERSION;
    d.struct_size = sizeof(tlab_subject);
    d.name = name;
    d.summary = summary;
    d.kind = TLAB_KIND_FACILITY;
    d.drive = TLAB_DRIVE_LOOP;
    d.clock = TLAB_CLOCK_HOST;
    d.reserved = 0;
    d.promises = kPromises;
    d.max_delay_ns = 0;
    d.create = &create;
    d.destroy = &destroy;
    d.schedule = &schedule;
    d.cancel = &cancel;
    d.poll = &poll;
    d.pending = &pending;
    d.acquire_for = nullptr;
    d.release = nullptr;
    return d;
  }

 private:
  struct Instance {
    Q queue;
    void* host;
    void (*fired)(void* host, std::uint64_t cookie);
    Instant last_poll;  // the latest poll()'s now (the creation time at first)
  };

  static Instance& self(void* p) noexcept { return *static_cast<Instance*>(p); }

  // guarded: f() with every exception turned into a status (subject_guard.h).
  template <class F>
  static tlab_status guarded(F&& f) noexcept {
    return subject_guarded(std::forward<F>(f));
  }

  static tlab_status create(const tlab_subject_config* config, void** out) noexcept {
    if (config == nullptr || out == nullptr || config->fired == nullptr ||
        config->struct_size < sizeof(tlab_subject_config)) {
      return TLAB_EINVAL;
    }
    return guarded([&] {
      QueueConfig qc;
      qc.start = Instant::from_ns(config->now_ns);
      if (config->tick_ns > 0) qc.tick = Duration::nanoseconds(config->tick_ns);
      *out = new Instance{Q(qc), config->host, config->fired, qc.start};
      return TLAB_OK;
    });
  }

  static void destroy(void* p) noexcept { delete static_cast<Instance*>(p); }

  static tlab_status schedule(void* p, std::int64_t now_ns, std::int64_t delay_ns,
                              std::uint64_t cookie, std::uint64_t* handle) noexcept {
    if (p == nullptr || handle == nullptr || delay_ns < 0) return TLAB_EINVAL;
    return guarded([&] {
      // Saturating: a huge delay is Instant::max() ("never"), not a time in the past.
      const Instant deadline = Instant::from_ns(now_ns) + Duration::nanoseconds(delay_ns);
      *handle = encode_subject_handle(self(p).queue.insert(deadline, std::uint64_t{cookie}));
      return TLAB_OK;
    });
  }

  static tlab_status cancel(void* p, std::uint64_t handle, std::int32_t* result) noexcept {
    if (p == nullptr || result == nullptr) return TLAB_EINVAL;
    return guarded([&] {
      const bool prevented = self(p).queue.cancel(decode_subject_handle(handle));
      *result = prevented ? TLAB_CANCEL_PREVENTED : TLAB_CANCEL_TOO_LATE;
      return TLAB_OK;
    });
  }

  static tlab_status poll(void* p, std::int64_t now_ns) noexcept {
    if (p == nullptr) return TLAB_EINVAL;
    Instance& s = self(p);
    const Instant now = Instant::from_ns(now_ns);
    // Time going backwards is refused loudly (the queue would abort on it); it is
    // never clamped.
    if (now < s.last_poll) return TLAB_EINVAL;
    return guarded([&] {
      s.last_poll = now;
      s.queue.expire(now, [&s](std::uint64_t&& cookie, Instant) { s.fired(s.host, cookie); });
      return TLAB_OK;
    });
  }

  static tlab_status pending(void* p, std::uint64_t* count) noexcept {
    if (p == nullptr || count == nullptr) return TLAB_EINVAL;
    *count = self(p).queue.size();
    return TLAB_OK;
  }
};

}  // namespace tlab

// TLAB_EXPORT_QUEUE_SUBJECT(Queue, name, summary): defines the exported entry point
// `tlab_subject_entry` of a plugin serving QueueSubject<Queue>, named `name` (a
// string literal of [A-Za-z0-9_.-]) with the one-line `summary`. Use it once per
// shared library, at namespace scope. A queue type with a comma in it needs an
// alias first (`using MyQueue = X<std::uint64_t, Y>;`).
#define TLAB_EXPORT_QUEUE_SUBJECT(Queue, name, summary)                               \
  extern "C" TLAB_SUBJECT_EXPORT const tlab_subject* tlab_subject_entry(              \
      std::uint32_t host_abi_version) {                                               \
    static constexpr tlab_subject kTlabDescriptor =                                   \
        ::tlab::QueueSubject<Queue>::descriptor(name, summary);                       \
    return host_abi_version == TLAB_SUBJECT_ABI_VERSION ? &kTlabDescriptor : nullptr; \
  }
