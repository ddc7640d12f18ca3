// models/waiter_model.cc: Relacy model of the RFC 0014 Waiter, timeout against resolve.
//
// Property checked: every arming of a Waiter resumes its owner exactly once, and
// timeout() returns the result of whoever won resolve(): kCanceled iff a canceller's
// cancel(token) returned true, kExpired iff the timer's callback won (and then not
// before the deadline on the timers' clock). Concretely, at the end of a run:
//   - Counters: resumes == armings, no double resume, no stale wakeup,
//     cancels == number of cancel() calls that returned true, cancels + expiries ==
//     armings;
//   - per arming: kCanceled iff a canceller won it; at most one canceller wins;
//   - a stale token (arming 1's, presented while arming 2 is live) never wins;
//   - every timer the Waiter scheduled was either cancelled or ran (the drain), and
//     timeout() returned only after that.
//
// Core code instantiated: core/include/tlab/waiter.h, the shipped
// Waiter<RelacyPlatform, 32>::timeout(), ::cancel() and its private on_timer()
// expiry path, on top of TimeoutToken<RelacyPlatform, 32> (timeout_token.h). The
// TimerSource is ModelTimerSource (model_timer_source.h): TEST SCAFFOLDING whose
// "fire" is run by a model thread, the timer thread below, standing where
// TimerService's thread stands in production; the Waiter is the real code.
//
// Threads (static; the token reaches cancellers through a model mutex, as it does
// through a sync/ primitive's waiting list):
//   0 waiter      for k in 1..K: timeout(timers, 10 ms, publish(k, token)).
//   1 timer       ModelTimerSource::run_timer_thread(): fires each scheduled expiry
//                 unless the Waiter's cancel(id) removed it first.
//   2 canceller   waits for arming 1's token, cancel(t1); with K = 2 waits for
//                 arming 2 to be published and presents t1 AGAIN (a stale canceller).
//   3 canceller B (racing_cancellers only) the same as 2 with K = 1.
//
// Tests (name: armings K, cancellers; expected outcome):
//   cancel_vs_expiry    K = 1, 1 canceller   pass: canceller vs expiry
//   racing_cancellers   K = 1, 2 cancellers  pass: two cancellers and the expiry
//   stale_cancel        K = 2, 1 canceller   pass: t1 never resolves arming 2
//
// Mutants (core/include/tlab/platform/mutant.h), each must fail:
//   waiter_resume_on_lost_resolve  cancel_vs_expiry, racing_cancellers: the loser
//                                  of resolve resumes the waiter too (double resume)
//   token_load_store_resolve       racing_cancellers, cancel_vs_expiry: two
//                                  resolvers both "win" (double resume / two winners)
//   token_flag_only                stale_cancel: t1 == t2, the stale cancel wins
//                                  arming 2 (kCanceled with no live canceller)
//   token_relaxed_resolve does not apply here: the token travels under a mutex and
//   the result under the Waiter's mutex, so a relaxed CAS loses no ordering the
//   Waiter relies on (token_model.cc checks it with a non-synchronising hand-off).
//
// Bounds: 3 or 4 threads, K <= 2 armings, no spin loops (every wait blocks).
//   random  10^5 iterations by default (--iterations).
//   bound   context bound 1 exhausts every test, bound 2 cancel_vs_expiry and
//           stale_cancel; bound 3 (and racing_cancellers at 2) under label slow.
//   full    does not finish within minutes on the clean code (Relacy also
//           enumerates which store each load reads); used for mutants only, where
//           it stops at the first failure.
// Measured rates and detection iterations: models/README.md.
#include <array>

#include "model_runner.h"
#include "model_timer_source.h"
#include "tlab/waiter.h"

namespace tlab::models {
namespace {

using P = RelacyPlatform;
using W = Waiter<P, 32>;
using Token = W::Token;

constexpr Duration kDelay = Duration::milliseconds(10);

template <int K, int Cancellers>
struct WaiterModel : rl::test_suite<WaiterModel<K, Cancellers>, 2 + Cancellers> {
  static_assert(K == 1 || (K == 2 && Cancellers == 1));

  ModelTimerSource timers_{/*clients=*/1};
  W waiter_;

  // Token hand-over, as a sync/ primitive's list does it (under a mutex).
  P::Mutex pub_mu_;
  P::CondVar pub_cv_;
  int published_ = 0;                  // guarded by pub_mu_: armings published
  std::array<Token, K + 1> tokens_{};  // guarded by pub_mu_

  // Outcomes, each written by one thread and read in after().
  std::array<TimeoutResult, K + 1> result_{};
  std::array<std::array<bool, K + 1>, Cancellers> won_{};  // won_[c][attempt]

  void thread(unsigned index) {
    if (index == 0) {
      run_waiter();
    } else if (index == 1) {
      timers_.run_timer_thread();
    } else {
      run_canceller(static_cast<int>(index) - 2);
    }
  }

  void run_waiter() {
    for (int k = 1; k <= K; ++k) {
      const Instant start = timers_.now();
      result_[k] = waiter_.timeout(timers_, kDelay, [this, k](Token t) { publish(k, t); });
      if (result_[k] == TimeoutResult::kExpired) {
        TLAB_MODEL_CHECK(timers_.now() >= start + kDelay, "an expiry resumed the waiter early");
      }
    }
    timers_.client_done();
  }

  void publish(int k, Token t) {
    P::Lock lock(pub_mu_);
    tokens_[k] = t;
    published_ = k;
    P::notify_all(pub_cv_);
  }

  Token await_published(int k) {
    P::Lock lock(pub_mu_);
    while (published_ < k) P::wait(pub_cv_, lock);
    return tokens_[1];  // always arming 1's token: a second attempt is a stale one
  }

  void run_canceller(int c) {
    const Token t1 = await_published(1);
    won_[c][1] = waiter_.cancel(t1);
    if constexpr (K == 2) {
      await_published(2);
      won_[c][2] = waiter_.cancel(t1);  // stale: arming 2 is live (or already over)
    }
  }

  void after() {
    const W::Counters c = waiter_.counters();
    TLAB_MODEL_CHECK(c.double_resumes == 0,
                     "a resolver that lost resumed the waiter (double resume)");
    TLAB_MODEL_CHECK(c.stale_wakeups == 0, "the waiter woke on a signal that was not its own");
    TLAB_MODEL_CHECK(c.armings == K && c.resumes == K, "every arming resumes the waiter once");
    TLAB_MODEL_CHECK(c.cancels + c.expiries == K, "every arming has exactly one winner");
    std::uint64_t cancel_wins = 0;
    for (int i = 0; i < Cancellers; ++i) {
      for (int a = 1; a <= K; ++a) cancel_wins += won_[i][a] ? 1 : 0;
    }
    TLAB_MODEL_CHECK(cancel_wins == c.cancels,
                     "a cancel() that returned true is the one that resumed");
    // A canceller's second attempt presents arming 1's token while arming 2 is live
    // or over: it must lose, and arming 2 (nobody else cancels it) must expire.
    TLAB_MODEL_CHECK(cancel_wins <= 1, "two cancellers won one arming");
    if constexpr (K == 2) {
      TLAB_MODEL_CHECK(!won_[0][2], "a stale token resolved a newer arming");
      TLAB_MODEL_CHECK(result_[2] == TimeoutResult::kExpired,
                       "an arming nobody cancelled ended CANCELED");
    }
    bool arming1_cancelled = false;
    for (int i = 0; i < Cancellers; ++i) arming1_cancelled = arming1_cancelled || won_[i][1];
    TLAB_MODEL_CHECK((result_[1] == TimeoutResult::kCanceled) == arming1_cancelled,
                     "timeout() returned a result that does not match who won");
    TLAB_MODEL_CHECK(timers_.scheduled() == K && timers_.all_settled(),
                     "every expiry timer was cancelled or ran (the drain)");
    TLAB_MODEL_CHECK(!waiter_.token_armed(), "the token ends disarmed");
  }
};

template <int K, int Cancellers>
bool simulate_waiter(rl::test_params& params) {
  return rl::simulate<WaiterModel<K, Cancellers>>(params);
}

constexpr ModelTest kTests[] = {
    {"cancel_vs_expiry",
     "1 arming: a canceller races the expiry, one winner, matching result",
     &simulate_waiter<1, 1>,
     "waiter_resume_on_lost_resolve token_load_store_resolve",
     CleanRun::kPasses,
     {.bound_quick = 2, .bound_slow = 3}},
    {"racing_cancellers",
     "1 arming: two cancellers race the expiry, one winner",
     &simulate_waiter<1, 2>,
     "waiter_resume_on_lost_resolve token_load_store_resolve",
     CleanRun::kPasses,
     {.bound_quick = 1, .bound_slow = 2}},
    {"stale_cancel",
     "2 armings: arming 1's token, presented again, never resolves arming 2",
     &simulate_waiter<2, 1>,
     "token_flag_only:bound",
     CleanRun::kPasses,
     {.bound_quick = 2, .bound_slow = 3}},
};

}  // namespace
}  // namespace tlab::models

int main(int argc, char** argv) {
  return tlab::models::model_main("waiter", tlab::models::kTests, argc, argv);
}
