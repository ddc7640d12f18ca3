// tlab/tool/subjects/builtin/sync.cc: see sync.h.
#include "subjects/builtin/sync.h"

#include "tlab/platform/std_platform.h"
#include "tlab/queue/binary_heap.h"
#include "tlab/subject_guard.h"
#include "tlab/sync/timed_semaphore.h"
#include "tlab/timer_service.h"

namespace tlab::tool::builtin {

namespace {

struct SemaphoreSubject {
  explicit SemaphoreSubject(std::uint32_t permits) : sem(permits) {}
  TimerServiceOn<BinaryHeapQueue, StdPlatform> timers;  // its own thread
  TimedSemaphore<StdPlatform> sem;
};

tlab_status sem_create(const tlab_subject_config* config, void** self) {
  if (config == nullptr || config->struct_size < sizeof(tlab_subject_config) ||
      config->permits == 0) {
    return TLAB_EINVAL;
  }
  return subject_guarded([&] {
    *self = new SemaphoreSubject(config->permits);
    return TLAB_OK;
  });
}

void sem_destroy(void* self) { delete static_cast<SemaphoreSubject*>(self); }

tlab_status sem_acquire_for(void* self, std::int64_t timeout_ns, std::int32_t* acquired) {
  if (timeout_ns < 0) return TLAB_EINVAL;  // core rejects negative delays
  auto* s = static_cast<SemaphoreSubject*>(self);
  return subject_guarded([&] {
    *acquired = s->sem.acquire_for(s->timers, Duration::nanoseconds(timeout_ns)) ? 1 : 0;
    return TLAB_OK;
  });
}

tlab_status sem_release(void* self) {
  static_cast<SemaphoreSubject*>(self)->sem.release(1);
  return TLAB_OK;
}

constexpr tlab_subject kSemaphore = {
    TLAB_SUBJECT_ABI_VERSION,
    sizeof(tlab_subject),
    "timed_semaphore",
    "TimedSemaphore<StdPlatform> (RFC 0014 token hand-off) timed by a TimerService thread",
    TLAB_KIND_TIMED_WAIT,
    TLAB_DRIVE_SELF,
    TLAB_CLOCK_MONOTONIC,
    0,
    TLAB_PROMISE_DELIVERY | TLAB_PROMISE_NEVER_EARLY | TLAB_PROMISE_MUTUAL_EXCLUSION |
        TLAB_PROMISE_THREAD_SAFE | TLAB_PROMISE_NO_SPURIOUS_TIMEOUT,
    0,
    &sem_create,
    &sem_destroy,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    &sem_acquire_for,
    &sem_release,
    0,
    0,
    0,
    nullptr,
};

}  // namespace

const tlab_subject* sync_abi(std::string_view name) {
  return name == kSemaphore.name ? &kSemaphore : nullptr;
}

}  // namespace tlab::tool::builtin
