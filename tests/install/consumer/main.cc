// A user's program on the installed engine: a TimerService on every queue
// strategy, in driver mode on a ManualClock, must run a task at its deadline and
// not before, and a cancelled task never. Prints one line per strategy and exits
// non-zero on the first broken promise.
#include <iostream>

#include "tlab/platform/std_platform.h"
#include "tlab/queue/strategy.h"
#include "tlab/timer_service.h"

namespace {

using P = tlab::ManualStdPlatform;

template <class Q>
bool check() {
  tlab::ManualClock clock;
  tlab::TimerService<Q, P> svc(clock, tlab::TimerServiceOptions{.start_thread = false});
  int ran = 0;
  bool cancelled_ran = false;
  auto task = tlab::TimerTask<P>::make([&] { ++ran; });
  auto doomed = tlab::TimerTask<P>::make([&] { cancelled_ran = true; });
  svc.schedule(task, tlab::Duration::milliseconds(10));
  svc.schedule(doomed, tlab::Duration::milliseconds(5));
  const bool cancel_won = svc.cancel(doomed);
  clock.set(tlab::Instant::from_ns(0) + tlab::Duration::milliseconds(9));
  svc.run_once();
  const bool early = ran != 0;
  clock.set(tlab::Instant::from_ns(0) + tlab::Duration::milliseconds(20));
  svc.run_once();
  const bool ok = cancel_won && !early && ran == 1 && !cancelled_ran;
  std::cout << Q::kName << (ok ? " ok" : " BROKEN") << "\n";
  return ok;
}

// Every strategy of the installed StrategyList, in order; stops at the first failure.
template <class... Qs>
struct CheckAll {
  static bool run() { return (check<Qs>() && ...); }
};

}  // namespace

int main() { return tlab::QueueTypes<tlab::TimerTaskPtr<P>, P, CheckAll>::run() ? 0 : 1; }
