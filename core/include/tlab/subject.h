/* tlab/subject.h: the subject ABI: how a timer facility or timed wait written in
 * any language is put under tlab's scenarios, oracles and properties.
 *
 * Plain C (C99), usable from C, C++, Rust (a cdylib with #[repr(C)] mirrors) and
 * Go (c-shared). A subject is a shared library exporting one function,
 *
 *     const tlab_subject* tlab_subject_entry(uint32_t host_abi_version);
 *
 * (or another name, given as `--subject lib.so:name`). It returns a descriptor
 * with static storage duration, or NULL when it cannot serve `host_abi_version`.
 * tlab checks the descriptor before any case runs: a wrong abi_version, a short
 * struct_size, a NULL name or required function, unknown promise bits or a
 * promise the subject cannot keep (PENDING_COUNT without `pending`, VIRTUAL
 * without CLOCK_HOST ...) is exit 2 naming the library and the field.
 *
 * Two kinds of subject:
 *
 *   | kind                 | calls                                    | fires                          |
 *   |----------------------|------------------------------------------|--------------------------------|
 *   | TLAB_KIND_FACILITY   | schedule(now, delay, cookie) -> handle,  | config->fired(host, cookie)    |
 *   |                      | cancel(handle) -> prevented / too_late / | from inside poll(now)          |
 *   |                      | unknown, pending() (optional)            | (TLAB_DRIVE_LOOP) or from the  |
 *   |                      |                                          | subject's own threads (SELF)   |
 *   | TLAB_KIND_TIMED_WAIT | acquire_for(timeout) -> acquired or not, | (blocking calls)               |
 *   |                      | release()                                |                                |
 *
 * Clock. A subject with TLAB_CLOCK_HOST keeps time only through the now_ns
 * arguments tlab passes (to create, schedule, poll): tlab may then run it on a
 * virtual clock, one thread, replayable from a seed. A subject with
 * TLAB_CLOCK_MONOTONIC reads CLOCK_MONOTONIC itself (libuv, libevent, asio do);
 * tlab passes CLOCK_MONOTONIC readings and judges against them.
 *
 * Deadlines. A timer scheduled by schedule(self, now_ns, delay_ns, ...) is due at
 * now_ns + delay_ns, saturated at INT64_MAX ("never"). A delay above max_delay_ns,
 * or below 0, may be refused with TLAB_EINVAL (nothing is then armed); if it is
 * accepted, it is judged like any other: a negative delay is due at once (its
 * lateness counts from the call, not from now_ns + delay_ns in the past), a huge
 * one must not fire early (wrapping now + delay into the past is an early fire).
 * A delay is measured from the now_ns passed to that schedule() call (a
 * TLAB_CLOCK_HOST subject), never from the now_ns of an earlier poll(): on the
 * real clock tlab's schedule() may run ahead of the last poll. A
 * TLAB_CLOCK_MONOTONIC subject measures it from its own reading inside the call.
 *
 * Lateness (TLAB_DRIVE_LOOP). A LOOP subject fires a timer no later than the first
 * poll that begins after its schedule() returned with a now at or after its due
 * time + max(config.tick_ns, resolution_ns); a later fire is `late_fire`, judged
 * under DELIVERY. The now_ns tlab passes to poll() never decreases, and may reach
 * INT64_MAX: the property layer runs its clock to the end of time, where every
 * timer, one due at INT64_MAX included, is due. A SELF subject's lateness is
 * measured, not judged: tlab does not see its polls.
 *
 * Periodic timers (optional: `periodic` names the kinds schedule_periodic arms).
 * schedule_periodic(self, now_ns, delay_ns, period_ns, kind, cookie, &handle) arms
 * a series: its first run is due at now_ns + delay_ns (as schedule()), and every run
 * calls fired(host, cookie) with the same cookie until a cancel(handle) stops it.
 * period_ns > 0; a kind not in `periodic` is TLAB_EINVAL. Where run k+1 is due
 * (run k was due at D_k; S_k is the now of its poll, or its start on the
 * subject's clock; E_k when its callback returned):
 *
 *   | kind                    | run k+1 is due at                   | like                |
 *   |-------------------------|-------------------------------------|---------------------|
 *   | TLAB_PERIODIC_FIXED_RATE| D_0 + (k+1) * period: on the grid;  | Java fixed rate,    |
 *   |                         | missed runs are caught up, back to  | tokio Burst         |
 *   |                         | back (a LOOP subject: in that poll) |                     |
 *   | ..._FIXED_RATE_SKIP     | the first grid point after S_k:     | Go Ticker, tokio    |
 *   |                         | missed grid points are skipped      | Skip                |
 *   | ..._FIXED_DELAY         | at or after S_k + period, and no    | Java fixed delay,   |
 *   |                         | later than E_k + period             | libuv repeat        |
 *
 * Each run is judged as a one-shot timer due then: never early (NEVER_EARLY), not
 * late by the lateness bound below, nor lost at the end (DELIVERY: a fixed-rate
 * series that falls ever further behind its grid is lost at the drain); one run at
 * a time (EXACTLY_ONCE: a fired() for the series while its previous fired() has not
 * returned is a second run in flight). cancel(handle) of a live series answers
 * PREVENTED (it stopped the runs not yet begun; from inside the series' own
 * callback too) and TOO_LATE only if the series was already stopped; once it has
 * returned PREVENTED no run begins (ACCURATE_CANCEL: a later fire is
 * fired_after_cancel; a run already begun may finish). destroy() drops live
 * series. A series counts as one pending timer until stopped. A script (below)
 * runs in every run's callback.
 *
 * Promises (TLAB_PROMISE_*), judged by the oracles named in docs/your-own-timer.md;
 * a promise not made is measured and reported but never fails a case:
 *
 *   | bit            | the subject promises                                           |
 *   |----------------|----------------------------------------------------------------|
 *   | DELIVERY       | every accepted timer due before the end fires or is cancelled; |
 *   |                | a timed wait returns within its timeout (plus grace)           |
 *   | EXACTLY_ONCE   | fired(cookie) at most once per schedule                        |
 *   | NEVER_EARLY    | fired(cookie) only at or after the deadline; acquire_for never |
 *   |                | gives up before timeout_ns has elapsed                         |
 *   | ACCURATE_CANCEL| cancel says PREVENTED iff this call stopped the timer: it had  |
 *   |                | not fired, no earlier cancel had stopped it, and it now never  |
 *   |                | will; TOO_LATE if it has fired or is firing (or an earlier     |
 *   |                | cancel already stopped it)                                     |
 *   | FIFO_TIES      | timers with equal deadlines, scheduled from one thread, fire   |
 *   |                | in the order they were scheduled                               |
 *   | PENDING_COUNT  | pending() == scheduled - fired - prevented (needs `pending`)   |
 *   | THREAD_SAFE    | every call may come from any thread, concurrently with the     |
 *   |                | others (and with poll); without it tlab serialises its calls   |
 *   |                | on one mutex per instance                                      |
 *   | MUTUAL_EXCLUSION| (timed wait) at most `permits` holders at once                |
 *   | NO_SPURIOUS_   | (timed wait) acquire_for says "not acquired" only if no permit |
 *   |  TIMEOUT       | was free (by tlab's count of its own acquires and releases)    |
 *   |                | for a grace's length of the call (wake latency)                |
 *   | VIRTUAL        | a capability: runs on tlab's clock (needs TLAB_CLOCK_HOST and  |
 *   |                | TLAB_DRIVE_LOOP), so cases replay exactly                      |
 *   | REENTRANT      | a capability: fired() may call schedule() and cancel() of the  |
 *   |                | same instance, on the firing thread, before it returns (below) |
 *   |                | (needs TLAB_DRIVE_LOOP or THREAD_SAFE)                          |
 *   | NEXT_PASS      | (LOOP, REENTRANT) a timer scheduled from inside fired() never  |
 *   |                | fires in the poll() that was running: a callback that re-arms  |
 *   |                | itself at delay 0 runs again in the next poll, never the same  |
 *   |                | one, so a poll always returns                                  |
 *
 * Ground rules of every call:
 *   - Errors and limits cross as tlab_status return codes; nothing unwinds
 *     through the ABI (a C++ exception escaping a call is a crash of the case).
 *   - config->fired must be called exactly once per firing, never after destroy()
 *     has returned, and never from inside schedule() or cancel(). Without
 *     REENTRANT the host's fired() never calls back into the subject, so a subject
 *     may hold its own locks while calling it.
 *   - Callbacks that act (REENTRANT). A scenario gives a timer a script, and the
 *     host's fired() performs it before returning, on the firing thread: schedule
 *     a new timer (a re-arm, at a delay that may be 0 or negative), cancel another
 *     live timer (one due in the same poll when there is one), cancel the firing
 *     timer itself (it is firing: TOO_LATE or UNKNOWN is the answer). Each answer is
 *     judged as any other. A subject that is not THREAD_SAFE gets these calls
 *     without tlab's call mutex: the firing thread is inside the poll() that tlab
 *     made under that mutex, so no other tlab call overlaps them. Inside poll(now_ns)
 *     such a schedule() is passed that poll's now_ns. A SELF subject (THREAD_SAFE)
 *     gets them on its own thread, concurrently with tlab's other calls. tlab stops
 *     performing scripts once its producers are done (the drain), and stops
 *     feeding a chain of re-arms that keeps one poll from returning (`starvation`).
 *   - Handles are chosen by the subject and opaque to tlab (0 is a valid handle);
 *     cancel() on a handle whose timer fired or was cancelled long ago must not
 *     touch another timer: that is what TOO_LATE or UNKNOWN are for.
 *   - destroy() drops pending timers without firing them and joins the
 *     subject's threads.
 *   - Memory ordering: a fired() call happens-after the schedule() that armed it
 *     returned or (SELF subjects) is concurrent with it only if THREAD_SAFE; tlab
 *     synchronises its own records itself.
 *
 * Cost: tlab adds one indirect call per operation, plus one mutex acquisition per
 * call for a subject that is not THREAD_SAFE.
 */
#ifndef TLAB_SUBJECT_H
#define TLAB_SUBJECT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TLAB_SUBJECT_ABI_VERSION 1u
#define TLAB_SUBJECT_ENTRY_NAME "tlab_subject_entry"

/* Return codes of every call. */
typedef enum tlab_status {
  TLAB_OK = 0,
  TLAB_EINVAL = 1,  /* refused argument (negative or too large delay, bad handle) */
  TLAB_ENOMEM = 2,  /* out of memory or capacity; nothing was armed */
  TLAB_ESTATE = 3,  /* not allowed now (e.g. release without a hold) */
  TLAB_EFAIL = 4    /* any other failure; the case reports it */
} tlab_status;

typedef enum tlab_subject_kind {
  TLAB_KIND_FACILITY = 1,
  TLAB_KIND_TIMED_WAIT = 2
} tlab_subject_kind;

typedef enum tlab_drive {
  TLAB_DRIVE_LOOP = 1, /* tlab calls poll(now_ns); fired() is called from inside it */
  TLAB_DRIVE_SELF = 2  /* the subject fires from its own threads; poll is NULL */
} tlab_drive;

typedef enum tlab_clock {
  TLAB_CLOCK_HOST = 1,     /* time only through the now_ns arguments */
  TLAB_CLOCK_MONOTONIC = 2 /* reads CLOCK_MONOTONIC itself */
} tlab_clock;

typedef enum tlab_cancel_result {
  TLAB_CANCEL_PREVENTED = 1, /* this call stopped it: it had not fired and never will */
  TLAB_CANCEL_TOO_LATE = 2,  /* it has fired or is firing, or was already stopped */
  TLAB_CANCEL_UNKNOWN = 3    /* the subject cannot tell (judged as no claim) */
} tlab_cancel_result;

#define TLAB_PROMISE_DELIVERY (UINT64_C(1) << 0)
#define TLAB_PROMISE_EXACTLY_ONCE (UINT64_C(1) << 1)
#define TLAB_PROMISE_NEVER_EARLY (UINT64_C(1) << 2)
#define TLAB_PROMISE_ACCURATE_CANCEL (UINT64_C(1) << 3)
#define TLAB_PROMISE_FIFO_TIES (UINT64_C(1) << 4)
#define TLAB_PROMISE_PENDING_COUNT (UINT64_C(1) << 5)
#define TLAB_PROMISE_THREAD_SAFE (UINT64_C(1) << 6)
#define TLAB_PROMISE_MUTUAL_EXCLUSION (UINT64_C(1) << 7)
#define TLAB_PROMISE_VIRTUAL (UINT64_C(1) << 8)
#define TLAB_PROMISE_NO_SPURIOUS_TIMEOUT (UINT64_C(1) << 9)
#define TLAB_PROMISE_REENTRANT (UINT64_C(1) << 10)
#define TLAB_PROMISE_NEXT_PASS (UINT64_C(1) << 11)
#define TLAB_PROMISE_ALL (UINT64_C(0xfff))

/* Kinds of periodic timers (bits of tlab_subject.periodic). */
#define TLAB_PERIODIC_FIXED_RATE (UINT32_C(1) << 0)
#define TLAB_PERIODIC_FIXED_RATE_SKIP (UINT32_C(1) << 1)
#define TLAB_PERIODIC_FIXED_DELAY (UINT32_C(1) << 2)
#define TLAB_PERIODIC_ALL (UINT32_C(0x7))

/* What tlab passes to create(). */
typedef struct tlab_subject_config {
  uint32_t struct_size; /* sizeof(tlab_subject_config) of the host */
  uint32_t permits;     /* timed wait: permits at creation (>= 1); facility: 0 */
  int64_t now_ns;       /* the host clock at creation (CLOCK_HOST: the origin) */
  int64_t tick_ns;      /* the lateness tlab allows: a LOOP subject fires a timer no later
                           than the first poll at or after deadline + tick_ns (an exact
                           subject ignores it; a wheel may use it as its tick) */
  void* host;           /* passed back to fired() */
  void (*fired)(void* host, uint64_t cookie);
} tlab_subject_config;

typedef struct tlab_subject {
  uint32_t abi_version; /* TLAB_SUBJECT_ABI_VERSION */
  uint32_t struct_size; /* sizeof(tlab_subject) the subject was built with */
  const char* name;     /* [A-Za-z0-9_.-]+, shown in reports */
  const char* summary;  /* one line for `tlab list subjects` */
  uint32_t kind;        /* tlab_subject_kind */
  uint32_t drive;       /* tlab_drive (facility) */
  uint32_t clock;       /* tlab_clock */
  uint32_t reserved;    /* 0 */
  uint64_t promises;    /* TLAB_PROMISE_* bits */
  int64_t max_delay_ns; /* largest delay schedule() accepts; 0 means INT64_MAX */

  tlab_status (*create)(const tlab_subject_config* config, void** self);
  void (*destroy)(void* self);

  /* TLAB_KIND_FACILITY (NULL for a timed wait) */
  tlab_status (*schedule)(void* self, int64_t now_ns, int64_t delay_ns, uint64_t cookie,
                          uint64_t* handle);
  tlab_status (*cancel)(void* self, uint64_t handle, int32_t* result /* tlab_cancel_result */);
  tlab_status (*poll)(void* self, int64_t now_ns); /* TLAB_DRIVE_LOOP only */
  tlab_status (*pending)(void* self, uint64_t* count); /* optional */

  /* TLAB_KIND_TIMED_WAIT (NULL for a facility) */
  tlab_status (*acquire_for)(void* self, int64_t timeout_ns, int32_t* acquired /* 0 or 1 */);
  tlab_status (*release)(void* self);

  /* Added after the first release of ABI version 1: tlab reads a field only when
   * struct_size covers it, and reads it as 0 otherwise, so a subject built
   * before it loads and runs unchanged (TLAB_SUBJECT_V1_SIZE is the first
   * release's size, the least struct_size tlab accepts). */
  int64_t resolution_ns; /* the granularity of the subject's deadlines (a library that
                            counts in milliseconds: 1000000); a LOOP subject may fire up
                            to max(tick_ns, resolution_ns) after its due time (above);
                            0: as fine as tick_ns. At most 1 s. */
  uint32_t periodic;  /* TLAB_PERIODIC_* bits: the kinds schedule_periodic arms; 0: none */
  uint32_t reserved2; /* 0 */
  /* Arms a periodic series of kind `kind` (one bit of `periodic`): "Periodic
   * timers" above. NULL when periodic is 0. A facility only. */
  tlab_status (*schedule_periodic)(void* self, int64_t now_ns, int64_t delay_ns,
                                   int64_t period_ns, uint32_t kind, uint64_t cookie,
                                   uint64_t* handle);
} tlab_subject;

/* sizeof(tlab_subject) in the first release of ABI version 1 (up to `release`). */
#define TLAB_SUBJECT_V1_SIZE (offsetof(tlab_subject, resolution_ns))

typedef const tlab_subject* (*tlab_subject_entry_fn)(uint32_t host_abi_version);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TLAB_SUBJECT_H */
