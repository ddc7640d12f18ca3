/* timer_heap.c: a small timer facility in C99, exported to tlab through the
 * subject ABI (tlab/subject.h) directly, without any C++.
 *
 * A binary min-heap of pending timers ordered by (deadline, sequence number), the
 * design of java.util.Timer's TaskQueue and of most hand-written event loops. Each
 * timer lives in a slot of a growable array; the heap holds slot indices and every
 * slot remembers its heap position, so cancel removes it in O(log n). Freed slots
 * go on a LIFO free list, so the next schedule() reuses the slot just freed.
 *
 *   schedule  O(log n): take a slot, append to the heap, sift up
 *   cancel    O(log n): move the last heap element into the hole, sift
 *   poll      O(log n) per fired timer: pop the root while it is due
 *   pending   O(1)
 *
 * Handles are {slot, generation}: (generation << 32) | slot. A slot's generation
 * changes every time its timer fires or is cancelled, so a handle kept after that
 * names no timer, and cancel() on it says TOO_LATE without touching the slot's
 * next tenant.
 *
 * Built with TIMER_HEAP_ABA (the `c_timer_heap_aba` target) the handle is the bare
 * slot index, a bug seen in real code that "knows" handles are only cancelled
 * while pending. A late cancel, arriving after its timer fired and the slot was
 * reused, cancels the newer timer instead and says PREVENTED: tlab reports
 * wrong_result (PREVENTED for a timer that had fired) and lost_timer (the newer
 * timer neither fires nor is cancelled by its owner). late_cancels.json provokes
 * it by racing cancels against fires; the generic driver's stale cancels (of
 * recently settled handles, scenarios/README.md "On a subject") make the built-in
 * suite catch it too (`tlab check --subject` with no scenario).
 *
 * Promises: DELIVERY, EXACTLY_ONCE, NEVER_EARLY, ACCURATE_CANCEL, FIFO_TIES (the
 * sequence number), PENDING_COUNT, VIRTUAL (time comes only from now_ns). A
 * negative delay is accepted and due at once; now + delay saturates.
 *
 * Ground rules: single owner, not THREAD_SAFE (tlab serialises calls on an
 * instance); fired() is called from inside poll() after the timer has left the
 * heap, so the heap is consistent whatever the host does in it.
 */
#include <stdint.h>
#include <stdlib.h>

#include "tlab/subject.h"

#if defined(__GNUC__)
#define TIMER_HEAP_EXPORT __attribute__((visibility("default")))
#else
#define TIMER_HEAP_EXPORT
#endif

#ifdef TIMER_HEAP_ABA
#define TIMER_HEAP_NAME "c_timer_heap_aba"
#define TIMER_HEAP_SUMMARY "C binary min-heap; BUG: handles are bare slot indices (ABA)"
#else
#define TIMER_HEAP_NAME "c_timer_heap"
#define TIMER_HEAP_SUMMARY "C binary min-heap, FIFO ties, {slot, generation} handles"
#endif

#define NO_POS UINT32_MAX
#define MAX_SLOTS (UINT32_MAX - 1u)

typedef struct slot {
  int64_t deadline;
  uint64_t seq; /* schedule order: the FIFO tie-break */
  uint64_t cookie;
  uint32_t generation; /* bumped when the timer fires or is cancelled */
  uint32_t pos;        /* index in heap, or NO_POS when free */
  uint32_t next_free;  /* free list link while free */
} slot;

typedef struct timer_heap {
  slot* slots;
  uint32_t* heap; /* slot indices; heap[0] is the earliest */
  uint32_t size, capacity, free_head;
  uint64_t next_seq;
  void* host;
  void (*fired)(void* host, uint64_t cookie);
} timer_heap;

static int before(const timer_heap* h, uint32_t a, uint32_t b) {
  const slot* x = &h->slots[h->heap[a]];
  const slot* y = &h->slots[h->heap[b]];
  return x->deadline < y->deadline || (x->deadline == y->deadline && x->seq < y->seq);
}

static void put(timer_heap* h, uint32_t pos, uint32_t index) {
  h->heap[pos] = index;
  h->slots[index].pos = pos;
}

static void swap(timer_heap* h, uint32_t a, uint32_t b) {
  const uint32_t ia = h->heap[a];
  put(h, a, h->heap[b]);
  put(h, b, ia);
}

static void sift_up(timer_heap* h, uint32_t pos) {
  while (pos > 0 && before(h, pos, (pos - 1) / 2)) {
    swap(h, pos, (pos - 1) / 2);
    pos = (pos - 1) / 2;
  }
}

static void sift_down(timer_heap* h, uint32_t pos) {
  for (;;) {
    const uint32_t l = 2 * pos + 1, r = l + 1;
    uint32_t m = pos;
    if (l < h->size && before(h, l, m)) m = l;
    if (r < h->size && before(h, r, m)) m = r;
    if (m == pos) return;
    swap(h, pos, m);
    pos = m;
  }
}

/* grow: doubles the slot and heap arrays, threading the new slots onto the free list. */
static int grow(timer_heap* h) {
  const uint32_t old = h->capacity;
  const uint32_t cap = old == 0 ? 16 : (old > MAX_SLOTS / 2 ? MAX_SLOTS : old * 2);
  if (cap == old) return 0;
  slot* s = (slot*)realloc(h->slots, (size_t)cap * sizeof(slot));
  if (s == NULL) return 0;
  h->slots = s;
  uint32_t* q = (uint32_t*)realloc(h->heap, (size_t)cap * sizeof(uint32_t));
  if (q == NULL) return 0;
  h->heap = q;
  for (uint32_t i = cap; i-- > old;) {
    h->slots[i].generation = 0;
    h->slots[i].pos = NO_POS;
    h->slots[i].next_free = h->free_head;
    h->free_head = i;
  }
  h->capacity = cap;
  return 1;
}

/* take_out: removes the timer in `index` from the heap and frees its slot. */
static void take_out(timer_heap* h, uint32_t index) {
  const uint32_t pos = h->slots[index].pos;
  const uint32_t last = --h->size;
  if (pos != last) {
    put(h, pos, h->heap[last]);
    sift_down(h, pos);
    sift_up(h, pos);
  }
  slot* s = &h->slots[index];
  s->pos = NO_POS;
  s->generation++;
  s->next_free = h->free_head;
  h->free_head = index;
}

static int64_t saturating_add(int64_t a, int64_t b) {
  if (b > 0 && a > INT64_MAX - b) return INT64_MAX;
  if (b < 0 && a < INT64_MIN - b) return INT64_MIN;
  return a + b;
}

static tlab_status heap_create(const tlab_subject_config* config, void** self) {
  if (config == NULL || self == NULL || config->fired == NULL ||
      config->struct_size < sizeof(tlab_subject_config)) {
    return TLAB_EINVAL;
  }
  timer_heap* h = (timer_heap*)calloc(1, sizeof(timer_heap));
  if (h == NULL) return TLAB_ENOMEM;
  h->free_head = NO_POS;
  h->host = config->host;
  h->fired = config->fired;
  *self = h;
  return TLAB_OK;
}

static void heap_destroy(void* self) {
  timer_heap* h = (timer_heap*)self;
  free(h->slots);
  free(h->heap);
  free(h);
}

static tlab_status heap_schedule(void* self, int64_t now_ns, int64_t delay_ns, uint64_t cookie,
                                 uint64_t* handle) {
  timer_heap* h = (timer_heap*)self;
  if (h->free_head == NO_POS && !grow(h)) return TLAB_ENOMEM;
  const uint32_t i = h->free_head;
  slot* s = &h->slots[i];
  h->free_head = s->next_free;
  s->deadline = saturating_add(now_ns, delay_ns);
  s->seq = h->next_seq++;
  s->cookie = cookie;
  put(h, h->size++, i);
  sift_up(h, s->pos);
#ifdef TIMER_HEAP_ABA
  *handle = i; /* BUG: no generation; a stale handle names the slot's next tenant */
#else
  *handle = ((uint64_t)s->generation << 32) | i;
#endif
  return TLAB_OK;
}

static tlab_status heap_cancel(void* self, uint64_t handle, int32_t* result) {
  timer_heap* h = (timer_heap*)self;
  const uint32_t i = (uint32_t)handle;
  int live = i < h->capacity && h->slots[i].pos != NO_POS;
#ifndef TIMER_HEAP_ABA
  live = live && h->slots[i].generation == (uint32_t)(handle >> 32);
#endif
  if (live) take_out(h, i);
  *result = live ? TLAB_CANCEL_PREVENTED : TLAB_CANCEL_TOO_LATE;
  return TLAB_OK;
}

static tlab_status heap_poll(void* self, int64_t now_ns) {
  timer_heap* h = (timer_heap*)self;
  while (h->size > 0 && h->slots[h->heap[0]].deadline <= now_ns) {
    const uint32_t i = h->heap[0];
    const uint64_t cookie = h->slots[i].cookie;
    take_out(h, i);
    h->fired(h->host, cookie);
  }
  return TLAB_OK;
}

static tlab_status heap_pending(void* self, uint64_t* count) {
  *count = ((timer_heap*)self)->size;
  return TLAB_OK;
}

static const tlab_subject kDescriptor = {
    TLAB_SUBJECT_ABI_VERSION,
    sizeof(tlab_subject),
    TIMER_HEAP_NAME,
    TIMER_HEAP_SUMMARY,
    TLAB_KIND_FACILITY,
    TLAB_DRIVE_LOOP,
    TLAB_CLOCK_HOST,
    0,
    TLAB_PROMISE_DELIVERY | TLAB_PROMISE_EXACTLY_ONCE | TLAB_PROMISE_NEVER_EARLY |
        TLAB_PROMISE_ACCURATE_CANCEL | TLAB_PROMISE_FIFO_TIES | TLAB_PROMISE_PENDING_COUNT |
        TLAB_PROMISE_VIRTUAL,
    0, /* max_delay_ns: any delay */
    heap_create,
    heap_destroy,
    heap_schedule,
    heap_cancel,
    heap_poll,
    heap_pending,
    NULL, /* acquire_for: a facility */
    NULL, /* release */
    0,    /* resolution_ns: deadlines as fine as the tick */
    0,    /* periodic: no periodic timers */
    0,    /* reserved2 */
    NULL, /* schedule_periodic */
};

TIMER_HEAP_EXPORT const tlab_subject* tlab_subject_entry(uint32_t host_abi_version) {
  return host_abi_version == TLAB_SUBJECT_ABI_VERSION ? &kDescriptor : NULL;
}
