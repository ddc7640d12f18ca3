// tlab/tool/subjects/builtin/sync.h: tlab's own timed-wait primitives as subjects
// of the subject ABI (tlab/subject.h, TLAB_KIND_TIMED_WAIT), so that `--subject
// timed_semaphore` runs the generic timed-wait driver (runner/engine_subject.h)
// over the same core code the engine rows run with tlab's own waiters.
//
//   | subject          | acquire_for / release                                  |
//   |------------------|--------------------------------------------------------|
//   | timed_semaphore  | TimedSemaphore<StdPlatform> (config.permits permits)   |
//   |                  | timed by a TimerService<BinaryHeapQueue> with its own  |
//   |                  | thread, on the real clock                              |
//
// Cost: the primitive's own; one TimerService thread per instance. Ground rules:
// descriptors are static and immutable; instances are THREAD_SAFE as the
// primitive is.
#pragma once

#include <string_view>

#include "tlab/subject.h"

namespace tlab::tool::builtin {

// sync_abi: the descriptor of the timed-wait subject `name`, or nullptr.
const tlab_subject* sync_abi(std::string_view name);

}  // namespace tlab::tool::builtin
