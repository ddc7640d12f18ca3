/* subject.c: the C half of the Go timer subject (timer.go). cgo forbids C
 * definitions in the preamble of a file with //export, so the descriptor, the
 * entry point and the call of tlab's fired() live here; every call forwards to
 * an exported Go function (_cgo_export.h).
 *
 * `self` is a runtime/cgo.Handle (an integer naming the Go facility), never a Go
 * pointer: tlab keeps it across calls. Built with -DGO_TIMER_AFTER_CANCEL (the
 * `go_timer_heap_after_cancel` subject) the Go code carries a seeded bug:
 * cancel says PREVENTED but leaves the timer in the heap (fired_after_cancel).
 */
#include <stdint.h>

#include "_cgo_export.h"
#include "tlab/subject.h"

#ifdef GO_TIMER_AFTER_CANCEL
#define GO_TIMER_NAME "go_timer_heap_after_cancel"
#define GO_TIMER_SUMMARY "Go container/heap timer; BUG: cancel leaves the timer armed"
int go_timer_seeded_bug(void) { return 1; }
#else
#define GO_TIMER_NAME "go_timer_heap"
#define GO_TIMER_SUMMARY "Go container/heap timer, FIFO ties, {slot, generation} handles"
int go_timer_seeded_bug(void) { return 0; }
#endif

/* Go cannot call a C function pointer: timer.go calls this. */
void go_timer_call_fired(void (*fired)(void*, uint64_t), void* host, uint64_t cookie) {
  fired(host, cookie);
}

static tlab_status subject_create(const tlab_subject_config* config, void** self) {
  if (config == NULL || self == NULL || config->fired == NULL ||
      config->struct_size < sizeof(tlab_subject_config)) {
    return TLAB_EINVAL;
  }
  *self = (void*)(uintptr_t)goCreate(config->host, config->fired);
  return TLAB_OK;
}
static void subject_destroy(void* self) { goDestroy((uintptr_t)self); }
static tlab_status subject_schedule(void* self, int64_t now_ns, int64_t delay_ns, uint64_t cookie,
                                    uint64_t* handle) {
  *handle = goSchedule((uintptr_t)self, now_ns, delay_ns, cookie);
  return TLAB_OK;
}
static tlab_status subject_cancel(void* self, uint64_t handle, int32_t* result) {
  *result = goCancel((uintptr_t)self, handle);
  return TLAB_OK;
}
static tlab_status subject_poll(void* self, int64_t now_ns) {
  goPoll((uintptr_t)self, now_ns);
  return TLAB_OK;
}
static tlab_status subject_pending(void* self, uint64_t* count) {
  *count = goPending((uintptr_t)self);
  return TLAB_OK;
}

static const tlab_subject kSubject = {
    .abi_version = TLAB_SUBJECT_ABI_VERSION,
    .struct_size = sizeof(tlab_subject),
    .name = GO_TIMER_NAME,
    .summary = GO_TIMER_SUMMARY,
    .kind = TLAB_KIND_FACILITY,
    .drive = TLAB_DRIVE_LOOP,
    .clock = TLAB_CLOCK_HOST,
    .promises = TLAB_PROMISE_DELIVERY | TLAB_PROMISE_EXACTLY_ONCE | TLAB_PROMISE_NEVER_EARLY |
                TLAB_PROMISE_ACCURATE_CANCEL | TLAB_PROMISE_FIFO_TIES |
                TLAB_PROMISE_PENDING_COUNT | TLAB_PROMISE_VIRTUAL,
    .create = subject_create,
    .destroy = subject_destroy,
    .schedule = subject_schedule,
    .cancel = subject_cancel,
    .poll = subject_poll,
    .pending = subject_pending,
};

__attribute__((visibility("default"))) const tlab_subject* tlab_subject_entry(
    uint32_t host_abi_version) {
  return host_abi_version == TLAB_SUBJECT_ABI_VERSION ? &kSubject : NULL;
}
