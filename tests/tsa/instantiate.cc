// tests/tsa/instantiate.cc: every core template that holds a lock, instantiated
// for clang's thread-safety analysis (label clang-tsa; never linked, never run).
//
// The analysis checks function bodies, and a template's bodies exist only once
// it is instantiated: a core header that no translation unit instantiates is not
// checked at all. So this file instantiates each annotated template explicitly
// (which instantiates every non-template member) and calls each member template
// once, on two platforms:
//
//   StdPlatform     production; P::mutated() is constexpr false, so clang drops
//                   the mutant branches before the analysis sees them
//   StressPlatform  P::mutated() is a run-time call, so the mutant branches (a
//                   notify outside the lock, a split critical section) are
//                   checked too
//
// tests/support/manual_timer_source.h comes along: it is the one test helper
// with a lock. tests/tsa/CMakeLists.txt compiles this file with `clang++
// -fsyntax-only -Wthread-safety -Werror`; seeded_violation.cc proves that check
// can fail. Add a template here when core/ grows a new one that takes a lock.
#include <cstdint>
#include <vector>

#include "support/manual_timer_source.h"
#include "tlab/coro/event.h"
#include "tlab/coro/event_loop.h"
#include "tlab/coro/with_timeout.h"
#include "tlab/executor.h"
#include "tlab/platform/std_platform.h"
#include "tlab/platform/stress_platform.h"
#include "tlab/queue/binary_heap.h"
#include "tlab/queue/hashed_wheel.h"
#include "tlab/queue/hierarchical_wheel.h"
#include "tlab/queue/per_worker_wheel.h"
#include "tlab/queue/sorted_list.h"
#include "tlab/sharded_timer_service.h"
#include "tlab/sync/pool.h"
#include "tlab/sync/timed_mutex.h"
#include "tlab/sync/timed_semaphore.h"
#include "tlab/sync/timed_wait_group.h"
#include "tlab/timer_service.h"
#include "tlab/waiter.h"

namespace tlab {

// The class templates, on both platforms. TimerService, EventLoop and Executor are
// instantiated on every queue strategy they accept: the locked code is the same,
// but each strategy's expire() runs a sink lambda that touches guarded state.
#define TLAB_TSA_INSTANTIATE(P)                                               \
  template class Waiter<P>;                                                   \
  template class TimedMutex<P>;                                               \
  template class TimedSemaphore<P>;                                           \
  template class TimedWaitGroup<P>;                                           \
  template class Pool<int, P>;                                                \
  template class Executor<P>;                                                 \
  template struct ExecutorWorker<P>;                                          \
  template class TimerService<BinaryHeapQueue<TimerTaskPtr<P>, P>, P>;        \
  template class TimerService<HashedWheelQueue<TimerTaskPtr<P>, P>, P>;       \
  template class TimerService<HierarchicalWheelQueue<TimerTaskPtr<P>, P>, P>; \
  template class TimerService<SortedListQueue<TimerTaskPtr<P>, P>, P>;        \
  template class TimerService<PerWorkerWheelQueue<TimerTaskPtr<P>, P>, P>;    \
  template class EventLoop<BinaryHeapQueue, P>;                               \
  template class EventLoop<HashedWheelQueue, P>;                              \
  template class EventLoop<HierarchicalWheelQueue, P>;                        \
  template class EventLoop<SortedListQueue, P>;                               \
  template class EventLoop<PerWorkerWheelQueue, P>;                           \
  template class Event<int, EventLoop<BinaryHeapQueue, P>>;                   \
  template class ShardedTimerService<BinaryHeapQueue<ShardedCallback, P>, P>;        \
  template class ShardedTimerService<HierarchicalWheelQueue<ShardedCallback, P>, P>;

TLAB_TSA_INSTANTIATE(StdPlatform)
TLAB_TSA_INSTANTIATE(StressPlatform)

#undef TLAB_TSA_INSTANTIATE

namespace tsa {

// The member templates (a timed wait over a TimerSource) are instantiated by a
// call, over the production TimerSource (TimerService) and the tests' one
// (ManualTimerSource, whose own fields are TLAB_GUARDED_BY too).
template <class P, TimerSource S>
void timed_waits() {
  S timers;
  const Duration d = Duration::milliseconds(1);

  Waiter<P> w;
  (void)w.timeout(timers, d, [](typename Waiter<P>::Token) {});

  TimedMutex<P> m;
  if (m.lock_for(timers, d)) m.unlock();

  TimedSemaphore<P> sem(1);
  if (sem.acquire_for(timers, d)) sem.release();

  TimedWaitGroup<P> wg;
  (void)wg.wait_for(timers, d);

  Pool<int, P> pool(std::vector<int>(1));
  (void)pool.checkout_for(timers, d);
}

template void timed_waits<StdPlatform, TimerServiceOn<BinaryHeapQueue, StdPlatform>>();
template void timed_waits<StressPlatform, TimerServiceOn<BinaryHeapQueue, StressPlatform>>();
template void timed_waits<StdPlatform, testing::ManualTimerSource>();
template void timed_waits<StdPlatform, ShardedTimerServiceOn<BinaryHeapQueue, StdPlatform>>();

}  // namespace tsa
}  // namespace tlab
