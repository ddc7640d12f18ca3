// tlab/tool/compare/baselines.h: the operating-system and hardware limits every
// compare result is divided by.
//
//   | baseline                 | what it measures                                   | divides |
//   |--------------------------|----------------------------------------------------|------------------|
//   | clock_nanosleep lateness | wake time - deadline of TIMER_ABSTIME sleeps on    | lateness p99
//   | |                          | CLOCK_MONOTONIC, same deadlines as `lateness`, at  | | | | the
//   calling thread's timer slack                   |                  | | cv wake | notify (under
//   the mutex) -> waiter running, the    | cancel_to_resume | |                          | same
//   PingPong shape as cancel_to_resume            | p50              | | CAS uncontended          |
//   one successful compare_exchange_strong, one thread | single-thread    | | | | ns/op | | CAS
//   contended            | a CAS-increment loop on one word from 2 threads,   | mt ns/op         |
//   |                          | CPU ns per successful increment                    | |
//
// Cost: lateness takes samples x 200 us; cv wake samples x ~150 us; CAS ~2 x 20 ms.
// Ground rules: call from the compare thread; each function joins what it starts.
#pragma once

#include <cstdint>

#include "compare/subject.h"

namespace tlab::tool::compare {

// timer_slack_ns: prctl(PR_GET_TIMERSLACK) of the calling thread; -1 if unavailable.
std::int64_t timer_slack_ns();
// set_timer_slack_ns: prctl(PR_SET_TIMERSLACK); threads started later inherit it.
// Returns false on failure.
bool set_timer_slack_ns(std::int64_t ns);

Histogram clock_nanosleep_lateness(std::size_t samples);
Histogram cv_wake_latency(std::size_t samples);
double cas_uncontended_ns();
double cas_contended_ns(const CellSettings& s);

}  // namespace tlab::tool::compare
