/* tests/subjects/test_subject.c: a small, correct, loop-driven host-clock timer
 * facility behind the subject ABI (tlab/subject.h), and, under one compile-time
 * define each, the bugs the generic driver's oracles must catch.
 *
 * The facility: a slot table (handle = generation << 32 | slot index) and an
 * array of pending slots kept sorted by (deadline, schedule sequence), so equal
 * deadlines fire in schedule order. poll(now) fires every timer due at or before
 * now, earliest first: it first takes the timers due at its start out of the
 * sorted array into a ready list, then fires them, skipping one a callback of
 * the same pass cancelled; a timer a callback schedules waits for the next poll.
 * Not thread-safe (tlab serialises its calls); VIRTUAL, REENTRANT, NEXT_PASS.
 * Built with TLAB_TEST_SELF_DRIVEN it is its own loop (see the table).
 *
 *   | define                    | bug                                             | oracle              |
 *   |---------------------------|-------------------------------------------------|---------------------|
 *   | (none)                    | correct                                         | none                |
 *   | TLAB_TEST_BUG_EARLY       | fires one tick early                            | early_fire          |
 *   | TLAB_TEST_BUG_EARLY_      | the same, but the facility does not promise     | early_fire, not     |
 *   |   UNPROMISED              | never_early: a passed case with a finding       | promised (a pass)   |
 *   | TLAB_TEST_BUG_LATE        | fires ten ticks late (polls skip what is due    | late_fire           |
 *   |                           | within ten ticks of now)                        |                     |
 *   | TLAB_TEST_BUG_SAME_PASS   | poll fires while the earliest timer is due, so a| same_pass_fire,     |
 *   |                           | timer a callback armed at 0 fires in that pass  | starvation (chains) |
 *   | TLAB_TEST_BUG_SIBLING_CANCEL| fires its whole ready list: a timer a callback| fired_after_cancel  |
 *   |                           | of the same pass cancelled (PREVENTED) still runs|                    |
 *   | TLAB_TEST_BUG_CANCEL_SELF | marks a timer fired only after its callback: a  | wrong_result        |
 *   |                           | cancel from its own callback says PREVENTED     |                     |
 *   | TLAB_TEST_BUG_DOUBLE      | fires every 50th timer twice                    | double_resume       |
 *   | TLAB_TEST_BUG_AFTER_CANCEL| cancel says PREVENTED but leaves the timer armed| fired_after_cancel  |
 *   | TLAB_TEST_BUG_LOST        | drops every 50th timer (schedule says OK)       | lost_timer          |
 *   | TLAB_TEST_BUG_WRONG_CANCEL| TOO_LATE for pending timers, and removes them   | wrong_result        |
 *   | TLAB_TEST_BUG_FIFO        | LIFO among equal deadlines                      | fifo_order          |
 *   | TLAB_TEST_BUG_PENDING     | pending() one too many                          | conservation        |
 *   | TLAB_TEST_BUG_EINVAL      | refuses every 50th delay in range (TLAB_EINVAL) | lost_timer          |
 *   | TLAB_TEST_BUG_EFAIL       | schedule returns TLAB_EFAIL after 200 schedules | error (verdict)     |
 *   | TLAB_TEST_BUG_CRASH       | segfaults in poll after 200 schedules           | crash (verdict)     |
 *   | TLAB_TEST_BUG_HANG        | poll spins forever after 200 schedules          | timeout (verdict)   |
 *   | TLAB_TEST_BUG_PERIODIC_   | a fixed-rate series' next run is due a period   | late_fire           |
 *   |   DRIFT                   | after the poll that ran it, not on the grid     |                     |
 *   | TLAB_TEST_BUG_PERIODIC_   | a cancel from inside a series' own callback     | fired_after_cancel  |
 *   |   STOP                    | says PREVENTED, but the re-arm after the        |                     |
 *   |                           | callback overrides it: the series runs on       |                     |
 *   | TLAB_TEST_BUG_V1SIZE      | (not a bug) the correct facility with the first | none                |
 *   |                           | release's struct_size (TLAB_SUBJECT_V1_SIZE): a |                     |
 *   |                           | plugin built before resolution_ns existed       |                     |
 *   | TLAB_TEST_SELF_DRIVEN     | (not a bug) the same facility self-driven: its  | none                |
 *   |                           | own thread polls CLOCK_MONOTONIC every 50 us;   |                     |
 *   |                           | calls lock one mutex (THREAD_SAFE, MONOTONIC)   |                     |
 *   | + TLAB_TEST_BUG_SELF_AFTER_DESTROY | destroy() neither stops the thread nor | fired_after_cancel  |
 *   |                           | drops pending timers                            |                     |
 *   | + TLAB_TEST_BUG_SELF_IDLE_SLEEP | with nothing pending the thread parks on a | lost_timer (the     |
 *   |                           | condvar that schedule signals only when timers  | drain's idle probes)|
 *   |                           | were already pending: a timer added to an idle  |                     |
 *   |                           | facility waits for the next schedule, for ever  |                     |
 *   |                           | if none comes (the lost wake at idle)           |                     |
 *
 * Periodic series of all three kinds (schedule_periodic): a series keeps its slot,
 * re-armed after each run's callback unless stopped meanwhile.
 *
 * Cost: schedule and cancel O(pending) (array insert/erase), poll O(fired).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tlab/subject.h"

#ifdef TLAB_TEST_BUG_EARLY_UNPROMISED
#define TLAB_TEST_BUG_EARLY
#define SUBJECT_NEVER_EARLY 0
#else
#define SUBJECT_NEVER_EARLY TLAB_PROMISE_NEVER_EARLY
#endif

#ifndef TLAB_TEST_SUBJECT_NAME
#define TLAB_TEST_SUBJECT_NAME "test_subject_correct"
#endif

#ifdef TLAB_TEST_BUG_CRASH
/* NULL, but the compiler cannot know it (volatile): the store is kept and faults. */
int* volatile g_nowhere = NULL;
#endif

/* After this many schedules the efail, crash and hang variants misbehave. */
#define BUG_AFTER_OPS 200

/* SLOT_READY: due, taken into a poll's ready list, not fired yet (cancelable).
 * SLOT_RUNNING: a periodic series in its run's callback (a cancel stops it; it is
 * re-armed when the callback returns). */
enum slot_state { SLOT_FREE, SLOT_PENDING, SLOT_READY, SLOT_FIRED, SLOT_CANCELLED, SLOT_RUNNING };

/* One entry of a poll's ready list: the slot and the generation it had then, so
 * a slot freed and reused by a callback is not mistaken for the timer. */
typedef struct ready_entry {
  uint32_t index;
  uint32_t generation;
} ready_entry;

typedef struct slot {
  uint32_t generation;
  uint32_t state;
  int64_t deadline;
  uint64_t seq;
  uint64_t cookie;
  int64_t period; /* > 0: a periodic series (schedule_periodic) */
  uint32_t kind;  /* its TLAB_PERIODIC_* kind */
} slot;

typedef struct facility {
  tlab_subject_config config;
  slot* slots;
  uint32_t nslots, cap_slots;
  uint32_t* free_list; /* slot indices */
  uint32_t nfree;
  uint32_t* sorted; /* pending slot indices by (deadline, seq) */
  uint32_t npending, cap_sorted;
  uint64_t seq, schedules;
  /* TLAB_TEST_SELF_DRIVEN only */
  pthread_mutex_t mu; /* guards everything above */
  pthread_t thread;
  pthread_cond_t idle; /* TLAB_TEST_BUG_SELF_IDLE_SLEEP: the parked thread's */
  int stop; /* mu */
} facility;

static int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) return b > 0 ? INT64_MAX : INT64_MIN;
  return r;
}

/* before: whether pending slot a fires before slot b. */
static int before(const facility* f, uint32_t a, uint32_t b) {
  const slot* x = &f->slots[a];
  const slot* y = &f->slots[b];
  if (x->deadline != y->deadline) return x->deadline < y->deadline;
#ifdef TLAB_TEST_BUG_FIFO
  return x->seq > y->seq;
#else
  return x->seq < y->seq;
#endif
}

static tlab_status create(const tlab_subject_config* config, void** self) {
  facility* f = calloc(1, sizeof *f);
  if (f == NULL) return TLAB_ENOMEM;
  f->config = *config;
  *self = f;
  return TLAB_OK;
}

static void destroy(void* self) {
  facility* f = self;
  free(f->slots);
  free(f->free_list);
  free(f->sorted);
  free(f);
}

static int grow(void** p, uint32_t* cap, size_t elem) {
  const uint32_t n = *cap == 0 ? 64 : *cap * 2;
  void* q = realloc(*p, n * elem);
  if (q == NULL) return 0;
  *p = q;
  *cap = n;
  return 1;
}

static void erase_sorted(facility* f, uint32_t index) {
  for (uint32_t i = 0; i < f->npending; ++i) {
    if (f->sorted[i] != index) continue;
    memmove(&f->sorted[i], &f->sorted[i + 1], (f->npending - i - 1) * sizeof f->sorted[0]);
    --f->npending;
    return;
  }
}

/* insert_sorted: queues slot `index` (its deadline and seq set) by (deadline, seq). */
static tlab_status insert_sorted(facility* f, uint32_t index) {
  if (f->npending == f->cap_sorted && !grow((void**)&f->sorted, &f->cap_sorted, sizeof(uint32_t)))
    return TLAB_ENOMEM;
  uint32_t at = f->npending;
  while (at > 0 && before(f, index, f->sorted[at - 1])) --at;
  memmove(&f->sorted[at + 1], &f->sorted[at], (f->npending - at) * sizeof f->sorted[0]);
  f->sorted[at] = index;
  ++f->npending;
  return TLAB_OK;
}

static tlab_status schedule(void* self, int64_t now_ns, int64_t delay_ns, uint64_t cookie,
                            uint64_t* handle) {
  facility* f = self;
  if (delay_ns < 0) return TLAB_EINVAL;
#ifdef TLAB_TEST_BUG_EINVAL
  if (f->seq % 50 == 49 && delay_ns > 0) {
    ++f->seq;
    return TLAB_EINVAL;
  }
#endif
#ifdef TLAB_TEST_BUG_EFAIL
  if (f->schedules >= BUG_AFTER_OPS) return TLAB_EFAIL;
#endif
  uint32_t index;
  if (f->nfree > 0) {
    index = f->free_list[--f->nfree];
  } else {
    if (f->nslots == f->cap_slots) {
      uint32_t cap = f->cap_slots;
      if (!grow((void**)&f->slots, &cap, sizeof(slot))) return TLAB_ENOMEM;
      uint32_t fcap = f->cap_slots;
      if (!grow((void**)&f->free_list, &fcap, sizeof(uint32_t))) return TLAB_ENOMEM;
      f->cap_slots = cap;
    }
    index = f->nslots++;
    f->slots[index].generation = 0;
  }
  slot* s = &f->slots[index];
  ++s->generation;
  s->state = SLOT_PENDING;
  s->deadline = sat_add(now_ns, delay_ns);
  s->seq = ++f->seq;
  s->cookie = cookie;
  s->period = 0;
  s->kind = 0;
  *handle = (uint64_t)s->generation << 32 | index;
  ++f->schedules;
#ifdef TLAB_TEST_BUG_LOST
  if (f->schedules % 50 == 0) {
    s->state = SLOT_FIRED; /* dropped: never queued, never fired */
    f->free_list[f->nfree++] = index;
    return TLAB_OK;
  }
#endif
  return insert_sorted(f, index);
}

static tlab_status schedule_periodic(void* self, int64_t now_ns, int64_t delay_ns,
                                     int64_t period_ns, uint32_t kind, uint64_t cookie,
                                     uint64_t* handle) {
  facility* f = self;
  if (period_ns <= 0 || (kind & TLAB_PERIODIC_ALL) == 0 || (kind & (kind - 1)) != 0)
    return TLAB_EINVAL;
  const tlab_status st = schedule(f, now_ns, delay_ns, cookie, handle);
  if (st != TLAB_OK) return st;
  slot* s = &f->slots[(uint32_t)*handle];
  s->period = period_ns;
  s->kind = kind;
  return TLAB_OK;
}

/* next_run: the deadline of a series' next run, its run due at s->deadline having
 * been taken by the poll at now_ns (subject.h, "Periodic timers"). */
__attribute__((unused)) /* the same_pass variant's poll has no series */
static int64_t next_run(const slot* s, int64_t now_ns) {
#ifdef TLAB_TEST_BUG_PERIODIC_DRIFT
  if (s->kind == TLAB_PERIODIC_FIXED_RATE) return sat_add(now_ns, s->period); /* BUG: drifts */
#endif
  switch (s->kind) {
    case TLAB_PERIODIC_FIXED_DELAY:
      return sat_add(now_ns, s->period);
    case TLAB_PERIODIC_FIXED_RATE_SKIP: {
      const int64_t next = sat_add(s->deadline, s->period);
      if (next > now_ns || next == INT64_MAX) return next;
      /* the first grid point after now: the missed ones are skipped */
      const int64_t k = (now_ns - s->deadline) / s->period + 1;
      return k > (INT64_MAX - s->deadline) / s->period ? INT64_MAX : s->deadline + k * s->period;
    }
    default: /* TLAB_PERIODIC_FIXED_RATE: every grid point; the poll catches up */
      return sat_add(s->deadline, s->period);
  }
}

static tlab_status cancel(void* self, uint64_t handle, int32_t* result) {
  facility* f = self;
  const uint32_t index = (uint32_t)handle;
  const uint32_t generation = (uint32_t)(handle >> 32);
  if (index >= f->nslots || f->slots[index].generation != generation) {
    *result = TLAB_CANCEL_UNKNOWN; /* the slot was reused: that timer is long gone */
    return TLAB_OK;
  }
  slot* s = &f->slots[index];
  if (s->state == SLOT_FIRED) {
    *result = TLAB_CANCEL_TOO_LATE;
    return TLAB_OK;
  }
  if (s->state == SLOT_RUNNING) { /* a series stopped from inside its own run */
#ifndef TLAB_TEST_BUG_PERIODIC_STOP
    s->state = SLOT_CANCELLED; /* BUG variant: left RUNNING, so it is re-armed */
    f->free_list[f->nfree++] = index;
#endif
    *result = TLAB_CANCEL_PREVENTED;
    return TLAB_OK;
  }
  if (s->state == SLOT_READY) { /* due in the running pass, not fired yet */
    s->state = SLOT_CANCELLED;
    f->free_list[f->nfree++] = index;
    *result = TLAB_CANCEL_PREVENTED;
    return TLAB_OK;
  }
  if (s->state != SLOT_PENDING) {
    *result = TLAB_CANCEL_UNKNOWN;
    return TLAB_OK;
  }
#ifdef TLAB_TEST_BUG_AFTER_CANCEL
  *result = TLAB_CANCEL_PREVENTED; /* but it stays queued */
  return TLAB_OK;
#endif
  erase_sorted(f, index);
  s->state = SLOT_CANCELLED;
  f->free_list[f->nfree++] = index;
#ifdef TLAB_TEST_BUG_WRONG_CANCEL
  *result = TLAB_CANCEL_TOO_LATE;
#else
  *result = TLAB_CANCEL_PREVENTED;
#endif
  return TLAB_OK;
}

static tlab_status poll_timers(void* self, int64_t now_ns) {
  facility* f = self;
#ifdef TLAB_TEST_BUG_CRASH
  if (f->schedules >= BUG_AFTER_OPS) *g_nowhere = 1;
#endif
#ifdef TLAB_TEST_BUG_HANG
  while (f->schedules >= BUG_AFTER_OPS) __asm__ volatile("");
#endif
#ifdef TLAB_TEST_BUG_EARLY
  now_ns = sat_add(now_ns, f->config.tick_ns);
#endif
#ifdef TLAB_TEST_BUG_LATE
  now_ns = sat_add(now_ns, -10 * f->config.tick_ns);
#endif
#ifdef TLAB_TEST_BUG_SAME_PASS
  /* BUG: re-reads the head after every callback, so a timer a callback armed
   * due now fires in this pass. */
  while (f->npending > 0 && f->slots[f->sorted[0]].deadline <= now_ns) {
    const uint32_t index = f->sorted[0];
    memmove(&f->sorted[0], &f->sorted[1], (f->npending - 1) * sizeof f->sorted[0]);
    --f->npending;
    slot* s = &f->slots[index];
    s->state = SLOT_FIRED;
    f->free_list[f->nfree++] = index;
    f->config.fired(f->config.host, s->cookie);
  }
  return TLAB_OK;
#else
  /* The timers due at the start of the pass become its ready list; a callback may
   * schedule (into `sorted`, for the next poll) and cancel (a READY slot becomes
   * CANCELLED and is skipped). Callbacks may grow every array: indices only. */
  uint32_t n = 0;
  while (n < f->npending && f->slots[f->sorted[n]].deadline <= now_ns) ++n;
  if (n == 0) return TLAB_OK;
  ready_entry* ready = malloc(n * sizeof *ready); /* this pass's own: a callback cannot touch it */
  if (ready == NULL) return TLAB_ENOMEM;
  for (uint32_t i = 0; i < n; ++i) {
    slot* s = &f->slots[f->sorted[i]];
    s->state = SLOT_READY;
    ready[i].index = f->sorted[i];
    ready[i].generation = s->generation;
  }
  memmove(&f->sorted[0], &f->sorted[n], (f->npending - n) * sizeof f->sorted[0]);
  f->npending -= n;
  for (uint32_t i = 0; i < n; ++i) {
    slot* s = &f->slots[ready[i].index];
    if (s->generation != ready[i].generation) continue; /* cancelled, and reused since */
#ifndef TLAB_TEST_BUG_SIBLING_CANCEL
    if (s->state != SLOT_READY) continue; /* a callback of this pass cancelled it */
#endif
    const uint64_t cookie = s->cookie;
    const uint64_t seq = s->seq;
#ifdef TLAB_TEST_BUG_CANCEL_SELF
    f->config.fired(f->config.host, cookie); /* BUG: still READY during its callback */
    s = &f->slots[ready[i].index];
    if (s->state == SLOT_READY) {
      s->state = SLOT_FIRED;
      f->free_list[f->nfree++] = ready[i].index;
    }
#else
    if (s->period > 0) {
      /* A run of a series: it stays this slot's; re-armed once its callback
       * returns, unless the callback (or another) stopped it. A fixed-rate
       * series runs the grid points it missed at once, back to back. */
      for (;;) {
        s->state = SLOT_RUNNING;
        f->config.fired(f->config.host, cookie);
        s = &f->slots[ready[i].index];
        if (s->generation != ready[i].generation || s->state != SLOT_RUNNING) break;
        s->deadline = next_run(s, now_ns);
        if (s->kind == TLAB_PERIODIC_FIXED_RATE && s->deadline <= now_ns) continue;
        s->seq = ++f->seq;
        s->state = SLOT_PENDING;
        if (insert_sorted(f, ready[i].index) != TLAB_OK) {
          free(ready);
          return TLAB_ENOMEM;
        }
        break;
      }
      continue;
    }
    if (s->state == SLOT_READY) f->free_list[f->nfree++] = ready[i].index;
    s->state = SLOT_FIRED;
    f->config.fired(f->config.host, cookie);
#endif
#ifdef TLAB_TEST_BUG_DOUBLE
    if (seq % 50 == 0) f->config.fired(f->config.host, cookie);
#endif
    (void)seq;
  }
  free(ready);
  return TLAB_OK;
#endif
}

static tlab_status pending(void* self, uint64_t* count) {
  const facility* f = self;
#ifdef TLAB_TEST_BUG_PENDING
  *count = f->npending + 1;
#else
  *count = f->npending;
#endif
  return TLAB_OK;
}

#ifdef TLAB_TEST_SELF_DRIVEN

static int64_t monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The subject's own timer thread: polls its own clock every 50 us, firing under
 * the facility's lock (the ABI allows it: fired() never calls back). */
static void* timer_thread(void* arg) {
  facility* f = arg;
  for (;;) {
    pthread_mutex_lock(&f->mu);
    const int stop = f->stop;
    if (!stop) poll_timers(f, monotonic_ns());
#ifdef TLAB_TEST_BUG_SELF_IDLE_SLEEP
    while (f->npending == 0 && !f->stop) pthread_cond_wait(&f->idle, &f->mu);
#endif
    pthread_mutex_unlock(&f->mu);
    if (stop) return NULL;
    const struct timespec nap = {0, 50000};
    nanosleep(&nap, NULL);
  }
}

static tlab_status self_create(const tlab_subject_config* config, void** self) {
  const tlab_status st = create(config, self);
  if (st != TLAB_OK) return st;
  facility* f = *self;
  pthread_mutex_init(&f->mu, NULL);
  pthread_cond_init(&f->idle, NULL);
  if (pthread_create(&f->thread, NULL, timer_thread, f) != 0) {
    destroy(f);
    return TLAB_EFAIL;
  }
  return TLAB_OK;
}

static void self_destroy(void* self) {
#ifdef TLAB_TEST_BUG_SELF_AFTER_DESTROY
  (void)self; /* the thread keeps running and firing; the facility is never freed */
#else
  facility* f = self;
  pthread_mutex_lock(&f->mu);
  f->stop = 1;
  pthread_cond_broadcast(&f->idle);
  pthread_mutex_unlock(&f->mu);
  pthread_join(f->thread, NULL);
  pthread_cond_destroy(&f->idle);
  pthread_mutex_destroy(&f->mu);
  destroy(f);
#endif
}

/* A MONOTONIC subject reads its own clock; now_ns is ignored. */
static tlab_status self_schedule(void* self, int64_t now_ns, int64_t delay_ns, uint64_t cookie,
                                 uint64_t* handle) {
  facility* f = self;
  (void)now_ns;
  pthread_mutex_lock(&f->mu);
  const int was_idle = f->npending == 0;
  const tlab_status st = schedule(f, monotonic_ns(), delay_ns, cookie, handle);
#ifdef TLAB_TEST_BUG_SELF_IDLE_SLEEP
  if (!was_idle) pthread_cond_signal(&f->idle); /* BUG: an idle thread is never told */
#else
  (void)was_idle;
  pthread_cond_signal(&f->idle); /* nobody waits on it: the thread polls every 50 us */
#endif
  pthread_mutex_unlock(&f->mu);
  return st;
}

static tlab_status self_schedule_periodic(void* self, int64_t now_ns, int64_t delay_ns,
                                          int64_t period_ns, uint32_t kind, uint64_t cookie,
                                          uint64_t* handle) {
  facility* f = self;
  (void)now_ns;
  pthread_mutex_lock(&f->mu);
  const tlab_status st =
      schedule_periodic(f, monotonic_ns(), delay_ns, period_ns, kind, cookie, handle);
  pthread_mutex_unlock(&f->mu);
  return st;
}

static tlab_status self_cancel(void* self, uint64_t handle, int32_t* result) {
  facility* f = self;
  pthread_mutex_lock(&f->mu);
  const tlab_status st = cancel(f, handle, result);
  pthread_mutex_unlock(&f->mu);
  return st;
}

static tlab_status self_pending(void* self, uint64_t* count) {
  facility* f = self;
  pthread_mutex_lock(&f->mu);
  const tlab_status st = pending(f, count);
  pthread_mutex_unlock(&f->mu);
  return st;
}

#define SUBJECT_DRIVE TLAB_DRIVE_SELF
#define SUBJECT_CLOCK TLAB_CLOCK_MONOTONIC
#define SUBJECT_PROMISES TLAB_PROMISE_THREAD_SAFE
#define SUBJECT_CALLS self_create, self_destroy, self_schedule, self_cancel, NULL, self_pending
#define SUBJECT_SCHEDULE_PERIODIC self_schedule_periodic
#else
#define SUBJECT_SCHEDULE_PERIODIC schedule_periodic
#define SUBJECT_DRIVE TLAB_DRIVE_LOOP
#define SUBJECT_CLOCK TLAB_CLOCK_HOST
#define SUBJECT_PROMISES TLAB_PROMISE_VIRTUAL | TLAB_PROMISE_REENTRANT | TLAB_PROMISE_NEXT_PASS
#define SUBJECT_CALLS create, destroy, schedule, cancel, poll_timers, pending
#endif

#ifdef TLAB_TEST_BUG_V1SIZE
/* What a plugin built against the first release's header says: tlab must read no
 * field past it (kSubject itself is whole, so reading past it would not fault;
 * the struct_size is what the check is about). */
#define SUBJECT_STRUCT_SIZE TLAB_SUBJECT_V1_SIZE
#else
#define SUBJECT_STRUCT_SIZE sizeof(tlab_subject)
#endif

static const tlab_subject kSubject = {
    TLAB_SUBJECT_ABI_VERSION,
    SUBJECT_STRUCT_SIZE,
    TLAB_TEST_SUBJECT_NAME,
    "tests/subjects/test_subject.c: a sorted-array facility (one bug per build)",
    TLAB_KIND_FACILITY,
    SUBJECT_DRIVE,
    SUBJECT_CLOCK,
    0,
    TLAB_PROMISE_DELIVERY | TLAB_PROMISE_EXACTLY_ONCE | SUBJECT_NEVER_EARLY |
        TLAB_PROMISE_ACCURATE_CANCEL | TLAB_PROMISE_FIFO_TIES | TLAB_PROMISE_PENDING_COUNT |
        SUBJECT_PROMISES,
    0,
    SUBJECT_CALLS,
    NULL,
    NULL,
    0,
    TLAB_PERIODIC_ALL,
    0,
    SUBJECT_SCHEDULE_PERIODIC,
};

__attribute__((visibility("default"))) const tlab_subject* tlab_subject_entry(
    uint32_t host_abi_version) {
  return host_abi_version == TLAB_SUBJECT_ABI_VERSION ? &kSubject : NULL;
}
