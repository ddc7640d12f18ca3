// tlab/tool/compare/service_workloads.h: lateness and cancel_to_resume (subject.h)
// over any TimerSource with its own timer thread, written once: TimerService on
// each strategy (strategies.cc) and the sharded service (sharded_service.cc).
//
//   timer_lateness(s, schedule)         s.samples timers kLatenessStepNs apart, the
//                                       first kLatenessLeadNs out, armed through
//                                       schedule(i, deadline, callback); fire time
//                                       minus deadline
//   waiter_cancel_to_resume<P>(svc, s)  a thread blocked in Waiter<P>::timeout on
//                                       svc, another cancels its token: cancel
//                                       call to blocked thread running
//
// Ground rules: called from the compare thread; each starts and joins its own
// threads (the timer thread is the source's). Memory ordering: seq_cst hand-offs,
// named at each use.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include "compare/subject.h"
#include "tlab/timer_source.h"
#include "tlab/waiter.h"

namespace tlab::tool::compare {

template <class Schedule>
Histogram timer_lateness(const CellSettings& s, Instant now, Schedule&& schedule) {
  Histogram h;  // timer thread only until `done` reaches s.samples
  std::atomic<std::size_t> done{0};
  const Instant first = now + Duration::nanoseconds(kLatenessLeadNs);
  for (std::size_t i = 0; i < s.samples; ++i) {
    const Instant d = first + Duration::nanoseconds(kLatenessStepNs * static_cast<std::int64_t>(i));
    schedule(i, d, std::function<void()>([&h, &done, d] {
               h.record(mono_ns() - d.ns());
               done.fetch_add(1);  // seq_cst: publishes h to the reader below
             }));
  }
  while (done.load() < s.samples) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  return h;
}

template <class P, TimerSource S>
Histogram waiter_cancel_to_resume(S& svc, const CellSettings& s) {
  Waiter<P> waiter;
  typename Waiter<P>::Token token{};  // written before `published`, read after it
  PingPong pp;
  Histogram h;  // blocked thread only until joined
  std::thread blocked([&] {
    for (std::size_t i = 0; i < s.samples; ++i) {
      waiter.timeout(svc, Duration::seconds(10), [&](typename Waiter<P>::Token t) {
        token = t;
        pp.published.store(i + 1);  // seq_cst: hand-off of `token`
      });
      h.record(mono_ns() - pp.t0.load());
      pp.resumed.store(i + 1);
    }
  });
  for (std::size_t i = 0; i < s.samples; ++i) {
    pp.await_published(i);
    pp.t0.store(mono_ns());
    waiter.cancel(token);
    pp.await_resumed(i);
  }
  blocked.join();
  return h;
}

}  // namespace tlab::tool::compare
