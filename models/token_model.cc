// models/token_model.cc: Relacy model of the RFC 0014 timeout token.
//
// Property checked: for every arming of a TimeoutToken, exactly one resolve()
// wins, only a holder of THAT arming's token can win it, and the winner sees
// everything the waiter wrote before arming (arm's release store pairs with
// resolve's acq_rel CAS). Concretely, per arming k:
//   - the waiter is resumed exactly once ("two winners" otherwise);
//   - the winner's token is arming k's ("a stale token resolved a newer arming");
//   - the winner reads the waiter's plain variable `arming_`, written before arm(),
//     with no data race (Relacy's happens-before race detector);
//   - at the end every arming was resolved and the word is disarmed.
//
// Core code instantiated: core/include/tlab/timeout_token.h, the shipped
// TimeoutToken<RelacyPlatform, Bits>::arm() and ::resolve(), unchanged. Nothing is
// transcribed; the mutants are the ones compiled into that header.
//
// Threads (4, static):
//   0 waiter      for k in 1..K: arming_ = k; t = arm(); hand t over; block on a
//                 mutex + condition variable until a winner resumes it (the unpark
//                 path of waiter.h).
//   1 expiry      for k in 1..K: wait until arming k is handed over; resolve(t_k).
//   2 canceller   the same, racing the expiry on every arming.
//   3 second      takes arming 1's token and retries resolve() with it (yielding
//                 in between) until it has made one attempt after arming K was
//                 handed out: with K = 1 one attempt, a second canceller racing
//                 the other two; with K > 1 a stale resolver still holding an old
//                 token across every re-arm.
// The token hand-over is deliberately NOT synchronising: a relaxed counter says
// "arming k is out" and the Token value travels in a plain array that Relacy does
// not instrument (simulated threads are fibers of one OS thread, so it is just a
// value carrier). A resolver thus learns the token the way a resolver on a relaxed
// channel would, and the ONLY happens-before edge from the waiter's pre-arm writes
// to the winner is arm()'s release store read by resolve()'s CAS. That isolates the
// token's own contract: in the shipped engine every hand-off (waiting list, timer
// queue) is also lock-protected, which would mask token_relaxed_resolve.
//
// Tests (name: bits, armings K; expected outcome):
//   racing_resolvers  32 bits, K = 1  pass: three resolvers, one winner
//   stale_rearm       32 bits, K = 2  pass: one re-arm under a stale resolver,
//                                     small enough for the context-bound search
//   stale_token       32 bits, K = 5  pass: the aba_3bit workload cannot wrap
//   aba_2bit           2 bits, K = 3  MUST FAIL: arming 3 reuses arming 1's token
//   aba_3bit           3 bits, K = 5  MUST FAIL: period 2^(3-1) = 4 arms
//   aba_4bit           4 bits, K = 9  MUST FAIL: period 8 arms
// The aba_* tests are the wraparound RFC 0014 predicts (kAbaPeriod =
// 2^(Bits-1) arms); they run as expected failures.
//
// Mutants (see core/include/tlab/platform/mutant.h), each must fail:
//   token_flag_only           stale_token, stale_rearm: every arming has the same
//                             token, so a lagging resolver wins a newer arming.
//                             Relacy marks that CAS [ABA] in the history, but it
//                             marks EVERY successful resolve [ABA] (the resolver
//                             never loaded the word it CASes), so the model's own
//                             check, not the mark, is the verdict.
//   token_load_store_resolve  racing_resolvers: two resolvers both "win" one
//                             arming: double resume, or the data race on arming_
//                             that the second winner's read causes.
//   token_relaxed_resolve     racing_resolvers: the relaxed CAS drops the
//                             happens-before edge, so the winner's read of arming_
//                             is a DATA RACE.
//
// Bounds: 4 threads (fibers), no other bound than the test's K.
//   random  10^5 iterations by default (--iterations); 10^6 for stale_token under
//           label slow.
//   bound   context bound 1 exhausts racing_resolvers (10,858 iterations) and
//           stale_rearm (607,588); bound 2 exhausts racing_resolvers (264,102),
//           bound 3 too (4.8 million, label slow). stale_token is NOT feasible:
//           its spin-waiting resolvers ran more than 2 CPU-minutes at bound 1.
//   full    infeasible for the clean runs (the resolvers' spin loops blow up the
//           tree); used only where it fails fast: mutants and aba_*.
// Measured rates and detection iterations: models/README.md.
#include <array>
#include <cstdint>

#include "model_runner.h"
#include "tlab/timeout_token.h"

namespace tlab::models {
namespace {

using P = RelacyPlatform;

// Who resolved an arming, as the winner reports it to the waiter.
enum Role : int { kNobody = 0, kExpiry = 1, kCanceller = 2, kSecond = 3 };

template <unsigned Bits, int K>
struct TokenModel : rl::test_suite<TokenModel<Bits, K>, 4> {
  static_assert(K >= 1);
  using Token = TimeoutToken<P, Bits>;
  using TokenValue = typename Token::Token;

  Token token_;
  // Hand-over (not synchronising, see the file comment): handed_ counts armings
  // handed out; tokens_[k] carries arming k's token value. Written by the waiter
  // only, before it bumps handed_.
  P::Atomic<int> handed_{0};
  std::array<TokenValue, K + 1> tokens_{};

  // Waiter-side plain data, written before each arm(); the winner reads it.
  rl::var<int> arming_{0};

  // The unpark path: the winner records itself and wakes the waiter.
  P::Mutex mu_;
  P::CondVar cv_;
  rl::var<int> resumed_{0};       // guarded by mu_: armings resumed so far
  rl::var<int> winner_{kNobody};  // guarded by mu_: Role of the last winner

  void thread(unsigned index) {
    switch (index) {
      case 0:
        waiter();
        break;
      case 1:
        resolver_each_arming(kExpiry);
        break;
      case 2:
        resolver_each_arming(kCanceller);
        break;
      default:
        second_resolver();
        break;
    }
  }

  void after() {
    TLAB_MODEL_CHECK(resumed_(RL_INFO) == K, "every arming resumes the waiter once");
    TLAB_MODEL_CHECK(!token_.armed(), "the word ends disarmed");
  }

  void waiter() {
    for (int k = 1; k <= K; ++k) {
      arming_(RL_INFO) = k;
      const TokenValue t = token_.arm();
      tokens_[k] = t;
      handed_.store(k, std::memory_order::relaxed);  // pairs with nothing: see above
      P::Lock lock(mu_);
      while (resumed_(RL_INFO) < k) P::wait(cv_, lock);
      TLAB_MODEL_CHECK(resumed_(RL_INFO) == k, "the waiter is resumed once per arming");
      const int who = winner_(RL_INFO);
      TLAB_MODEL_CHECK(who == kExpiry || who == kCanceller || who == kSecond,
                       "the waiter learns who won");
    }
  }

  // Blocks (spinning with yields) until arming k has been handed over.
  void await_handed(int k) {
    while (handed_.load(std::memory_order::relaxed) < k) P::yield();  // see above
  }

  void resolver_each_arming(Role role) {
    for (int k = 1; k <= K; ++k) {
      await_handed(k);
      const TokenValue t = tokens_[k];
      if (token_.resolve(t)) won(k, role);
    }
  }

  void second_resolver() {
    await_handed(1);
    const TokenValue t = tokens_[1];
    for (;;) {
      const int out = handed_.load(std::memory_order::relaxed);  // see above
      if (token_.resolve(t)) won(1, kSecond);
      if (out >= K) break;  // one attempt after the last arming was handed out
      P::yield();
    }
  }

  // The winner of arming `k` (by its token) resumes the waiter.
  void won(int k, Role role) {
    // Read BEFORE taking the lock: the waiter's mutex release would otherwise
    // order arming_ for us and mask a relaxed resolve.
    const int live = arming_(RL_INFO);
    TLAB_MODEL_CHECK(live == k, "a stale token resolved a newer arming");
    P::Lock lock(mu_);
    TLAB_MODEL_CHECK(resumed_(RL_INFO) == k - 1, "two winners for one arming (double resume)");
    resumed_(RL_INFO) = k;
    winner_(RL_INFO) = role;
    P::notify_one(cv_);
  }
};

template <unsigned Bits, int K>
bool simulate_token(rl::test_params& params) {
  return rl::simulate<TokenModel<Bits, K>>(params);
}

constexpr ModelTest kTests[] = {
    {"racing_resolvers",
     "32 bits, 1 arming: expiry and two cancellers race, one winner",
     &simulate_token<32, 1>,
     "token_load_store_resolve token_relaxed_resolve",
     CleanRun::kPasses,
     {.bound_quick = 2, .bound_slow = 3}},
    {"stale_rearm",
     "32 bits, 2 armings: one re-arm under a stale resolver (bound search)",
     &simulate_token<32, 2>,
     "token_flag_only",
     CleanRun::kPasses,
     {.bound_quick = 1}},
    {"stale_token",
     "32 bits, 5 armings: a stale token never resolves a newer arming",
     &simulate_token<32, 5>,
     "token_flag_only",
     CleanRun::kPasses,
     {}},
    {"aba_2bit",
     "2 bits, 3 armings: wraparound (expected to fail)",
     &simulate_token<2, 3>,
     "",
     CleanRun::kFails,
     {.bound_quick = 1, .full_quick = true}},
    {"aba_3bit",
     "3 bits, 5 armings: wraparound (expected to fail)",
     &simulate_token<3, 5>,
     "",
     CleanRun::kFails,
     {.bound_quick = 1, .full_quick = true}},
    {"aba_4bit",
     "4 bits, 9 armings: wraparound (expected to fail)",
     &simulate_token<4, 9>,
     "",
     CleanRun::kFails,
     {.bound_quick = 1, .full_quick = true}},
};

}  // namespace
}  // namespace tlab::models

int main(int argc, char** argv) {
  return tlab::models::model_main("token", tlab::models::kTests, argc, argv);
}
