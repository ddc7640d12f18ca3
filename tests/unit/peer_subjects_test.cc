// Contract tests of the four peers as subject-ABI descriptors
// (tool/subjects/builtin/peers.h): each descriptor is driven directly through
// tlab/subject.h, the way the generic driver does, and must keep the ABI's ground
// rules (fired once per firing, never after destroy, cancel results that name the
// right timer) and the promises it declares. Waits are bounded by generous
// deadlines and counts; nothing asserts a duration.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "compare/subject.h"
#include "subjects/builtin/peers.h"
#include "subjects/plugin.h"
#include "subjects/subjects.h"

namespace tlab::tool {
namespace {

using compare::mono_ns;

// What tlab passes as `host`: every fired() in order, and whether one came late.
struct Host {
  std::mutex mu;
  std::vector<std::uint64_t> fired;  // guarded by mu
  bool destroyed = false;            // guarded by mu
  int after_destroy = 0;             // guarded by mu

  static void on_fired(void* p, std::uint64_t cookie) {
    auto* h = static_cast<Host*>(p);
    std::lock_guard<std::mutex> lk(h->mu);
    h->fired.push_back(cookie);
    if (h->destroyed) ++h->after_destroy;
  }
  std::size_t count() {
    std::lock_guard<std::mutex> lk(mu);
    return fired.size();
  }
  std::size_t times(std::uint64_t cookie) {
    std::lock_guard<std::mutex> lk(mu);
    return static_cast<std::size_t>(std::count(fired.begin(), fired.end(), cookie));
  }
};

// A generous bound on how long any timer of these tests may take to fire: far
// beyond any delay used, so reaching it means "never fired", not "slow".
constexpr std::int64_t kGiveUpNs = 20'000'000'000;
// A timer that must not fire while a test runs (it is cancelled, destroyed or
// counted as pending first): an hour out, so a test stalled by load for seconds
// between scheduling it and looking cannot see it fire.
constexpr std::int64_t kNeverNs = 3'600'000'000'000;

class PeerSubjectTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    const SubjectInfo* row = find_subject(GetParam());
    ASSERT_NE(row, nullptr);
    ASSERT_NE(row->abi, nullptr) << GetParam();
    d_ = row->abi(row->name);
    ASSERT_NE(d_, nullptr);
    tlab_subject_config c{
        sizeof(tlab_subject_config), 0, mono_ns(), 1'000'000, &host_, &Host::on_fired};
    ASSERT_EQ(d_->create(&c, &self_), TLAB_OK);
  }
  void TearDown() override { destroy(); }

  void destroy() {
    if (self_ == nullptr) return;
    d_->destroy(self_);
    self_ = nullptr;
    std::lock_guard<std::mutex> lk(host_.mu);
    host_.destroyed = true;
  }
  bool loop() const { return d_->drive == TLAB_DRIVE_LOOP; }
  bool promises(std::uint64_t bit) const { return (d_->promises & bit) != 0; }

  std::uint64_t schedule(std::int64_t delay_ns, std::uint64_t cookie, std::int64_t now = 0) {
    std::uint64_t h = 0;
    EXPECT_EQ(d_->schedule(self_, now != 0 ? now : mono_ns(), delay_ns, cookie, &h), TLAB_OK)
        << "delay " << delay_ns;
    return h;
  }
  std::int32_t cancel(std::uint64_t h) {
    std::int32_t r = 0;
    EXPECT_EQ(d_->cancel(self_, h, &r), TLAB_OK);
    return r;
  }
  // One step of driving: a poll for a loop subject, a short sleep for a self one.
  void step() {
    if (loop()) {
      ASSERT_EQ(d_->poll(self_, mono_ns()), TLAB_OK);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  // Drives until `n` fires were seen; false if kGiveUpNs passes first.
  bool drive_until(std::size_t n) {
    const std::int64_t give_up = mono_ns() + kGiveUpNs;
    while (host_.count() < n) {
      if (mono_ns() > give_up) return false;
      step();
    }
    return true;
  }

  const tlab_subject* d_ = nullptr;
  void* self_ = nullptr;
  Host host_;
};

// The descriptor passes the host's own descriptor checks, and its table row makes
// exactly the promises the descriptor declares.
TEST_P(PeerSubjectTest, DescriptorIsValidAndMatchesItsRow) {
  std::string field, why;
  EXPECT_TRUE(check_descriptor(*d_, field, why)) << field << " " << why;
  EXPECT_EQ(std::string(d_->name), GetParam());
  EXPECT_EQ(find_subject(GetParam())->promises, promises_of_abi(d_->promises)) << GetParam();
  EXPECT_EQ(d_->kind, TLAB_KIND_FACILITY);
}

// Zero, equal and distinct delays each fire exactly once; a cancelled timer never
// fires; cancel says TOO_LATE for a fired timer and PREVENTED for a pending one,
// and TOO_LATE when asked again (only the call that stopped it prevented it).
TEST_P(PeerSubjectTest, EachTimerFiresOnceAndCancelTellsTheTruth) {
  const std::uint64_t h0 = schedule(0, 1);
  schedule(1'000'000, 2);
  schedule(1'000'000, 3);
  schedule(2'500'000, 4);
  const std::uint64_t far = schedule(kNeverNs, 5);
  EXPECT_EQ(cancel(far), TLAB_CANCEL_PREVENTED);
  ASSERT_TRUE(drive_until(4)) << "fired " << host_.count() << " of 4";
  for (std::uint64_t c = 1; c <= 4; ++c) EXPECT_EQ(host_.times(c), 1u) << "cookie " << c;
  EXPECT_EQ(host_.times(5), 0u);
  EXPECT_EQ(cancel(h0), TLAB_CANCEL_TOO_LATE);
  EXPECT_EQ(cancel(far), TLAB_CANCEL_TOO_LATE);  // asked again: already stopped
  for (int i = 0; i < 20; ++i) step();
  EXPECT_EQ(host_.count(), 4u);
}

// A stale handle never touches another timer: while later timers are armed and
// fire, cancelling an old prevented timer's handle answers TOO_LATE (still known)
// or UNKNOWN (forgotten), and every later timer still fires exactly once.
TEST_P(PeerSubjectTest, StaleHandleNeverTouchesAnotherTimer) {
  const std::uint64_t a = schedule(kNeverNs, 1);
  EXPECT_EQ(cancel(a), TLAB_CANCEL_PREVENTED);
  bool forgotten = false;
  std::uint64_t later = 0;
  for (; later < 1000 && !forgotten; ++later) {
    schedule(0, 2 + later);
    const std::int32_t r = cancel(a);
    ASSERT_TRUE(r == TLAB_CANCEL_TOO_LATE || r == TLAB_CANCEL_UNKNOWN) << r;
    forgotten = r == TLAB_CANCEL_UNKNOWN;
    ASSERT_TRUE(drive_until(later + 1)) << "the stale cancel took timer " << later;
  }
  EXPECT_TRUE(forgotten) << "no slot was ever reused: the check above was vacuous";
  for (std::uint64_t k = 0; k < later; ++k) EXPECT_EQ(host_.times(2 + k), 1u) << k;
  EXPECT_EQ(host_.times(1), 0u);
}

// A negative delay is either refused with EINVAL (nothing armed) or fires once;
// libuv and libevent document no negative timeout and refuse it.
TEST_P(PeerSubjectTest, NegativeDelayIsRefusedOrFiresOnce) {
  std::uint64_t h = 0;
  const tlab_status st = d_->schedule(self_, mono_ns(), -5'000'000, 7, &h);
  const bool refuses = GetParam() == "libuv" || GetParam() == "libevent";
  EXPECT_EQ(st, refuses ? TLAB_EINVAL : TLAB_OK);
  if (st == TLAB_OK) {
    ASSERT_TRUE(drive_until(1));
    EXPECT_EQ(host_.times(7), 1u);
  } else {
    for (int i = 0; i < 20; ++i) step();
    EXPECT_EQ(host_.count(), 0u);
  }
}

// The largest delay is accepted, does not wrap into the past, and can be cancelled.
TEST_P(PeerSubjectTest, HugeDelayNeitherWrapsNorFires) {
  const std::uint64_t h = schedule(INT64_MAX, 9);
  schedule(0, 10);
  ASSERT_TRUE(drive_until(1));
  for (int i = 0; i < 20; ++i) step();
  EXPECT_EQ(host_.times(9), 0u);
  EXPECT_EQ(cancel(h), TLAB_CANCEL_PREVENTED);
}

// destroy() with pending timers fires none of them, then or later.
TEST_P(PeerSubjectTest, DestroyDropsPendingTimersAndNeverFiresAfter) {
  for (std::uint64_t c = 1; c <= 3; ++c) schedule(kNeverNs, c);
  schedule(0, 4);
  schedule(1'000'000, 5);
  destroy();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::lock_guard<std::mutex> lk(host_.mu);
  EXPECT_EQ(host_.after_destroy, 0);
  for (std::uint64_t c : host_.fired) EXPECT_GE(c, 4u) << "an hour's timer fired";
  if (loop()) {
    EXPECT_TRUE(host_.fired.empty()) << "a loop subject fired outside poll()";
  }
}

// The promise-specific checks run on exactly the peers that make the promise
// (peers_promising reads the descriptors), so none is skipped at run time.
class PendingPeerTest : public PeerSubjectTest {};
class FifoPeerTest : public PeerSubjectTest {};
class ThreadSafePeerTest : public PeerSubjectTest {};

// pending() (where promised) equals scheduled - fired - prevented.
TEST_P(PendingPeerTest, PendingCountFollowsScheduleFireAndCancel) {
  std::uint64_t n = 99;
  auto pending = [&] {
    EXPECT_EQ(d_->pending(self_, &n), TLAB_OK);
    return n;
  };
  EXPECT_EQ(pending(), 0u);
  const std::uint64_t a = schedule(kNeverNs, 1);
  schedule(kNeverNs, 2);
  schedule(0, 3);
  EXPECT_EQ(pending(), 3u);
  EXPECT_EQ(cancel(a), TLAB_CANCEL_PREVENTED);
  EXPECT_EQ(pending(), 2u);
  ASSERT_TRUE(drive_until(1));
  EXPECT_EQ(pending(), 1u);
}

// Where FIFO ties are promised, timers with one deadline fire in schedule order.
TEST_P(FifoPeerTest, EqualDeadlinesFireInScheduleOrderWherePromised) {
  const std::int64_t now = mono_ns();
  for (std::uint64_t c = 0; c < 16; ++c) schedule(2'000'000, c, now);
  ASSERT_TRUE(drive_until(16));
  std::lock_guard<std::mutex> lk(host_.mu);
  for (std::uint64_t c = 0; c < 16; ++c) EXPECT_EQ(host_.fired[c], c);
}

// Where thread safety is promised, two threads scheduling and cancelling at once
// see every timer either fire once or be prevented, never both, never neither.
// (UNKNOWN is allowed: a preempted worker's handle may have been recycled after
// its timer fired; it is then counted among the fires.)
TEST_P(ThreadSafePeerTest, ConcurrentScheduleAndCancelResolveEveryTimerOnce) {
  constexpr std::uint64_t kPerThread = 300;
  std::atomic<std::uint64_t> prevented{0};
  std::mutex pm;
  std::vector<std::uint64_t> prevented_cookies;  // guarded by pm
  auto worker = [&](std::uint64_t base) {
    for (std::uint64_t k = 0; k < kPerThread; ++k) {
      std::uint64_t h = 0;
      // Delays of 0 to 100 us: cancels race the expiry.
      // A failed assertion here would end only this worker; stop both instead.
      if (d_->schedule(self_, mono_ns(), static_cast<std::int64_t>(k % 5) * 25'000, base + k, &h) !=
          TLAB_OK) {
        ADD_FAILURE() << "schedule failed";
        return;
      }
      std::int32_t r = 0;
      if (d_->cancel(self_, h, &r) != TLAB_OK) {
        ADD_FAILURE() << "cancel failed";
        return;
      }
      if (r == TLAB_CANCEL_PREVENTED) {
        prevented.fetch_add(1);
        std::lock_guard<std::mutex> lk(pm);
        prevented_cookies.push_back(base + k);
      }
    }
  };
  std::thread t1(worker, 0);
  std::thread t2(worker, 1'000'000);
  t1.join();
  t2.join();
  if (HasFailure()) return;
  ASSERT_TRUE(drive_until(2 * kPerThread - prevented.load()));
  for (int i = 0; i < 20; ++i) step();
  std::lock_guard<std::mutex> lk(host_.mu);
  EXPECT_EQ(host_.fired.size() + prevented.load(), 2 * kPerThread);
  std::map<std::uint64_t, int> seen;
  for (std::uint64_t c : host_.fired) ++seen[c];
  for (std::uint64_t c : prevented_cookies) ++seen[c];
  for (const auto& [c, n] : seen) EXPECT_EQ(n, 1) << "cookie " << c;
}

const std::vector<std::string> kPeers{"libuv", "libevent", "asio", "java_timer_heap"};

// peers_promising: the peers whose descriptor makes promise `bit`.
std::vector<std::string> peers_promising(std::uint64_t bit) {
  std::vector<std::string> out;
  for (const std::string& p : kPeers) {
    const SubjectInfo* row = find_subject(p);
    if (row != nullptr && row->abi != nullptr && (row->abi(row->name)->promises & bit) != 0) {
      out.push_back(p);
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Peers, PeerSubjectTest, ::testing::ValuesIn(kPeers),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Peers, PendingPeerTest,
                         ::testing::ValuesIn(peers_promising(TLAB_PROMISE_PENDING_COUNT)),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Peers, FifoPeerTest,
                         ::testing::ValuesIn(peers_promising(TLAB_PROMISE_FIFO_TIES)),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Peers, ThreadSafePeerTest,
                         ::testing::ValuesIn(peers_promising(TLAB_PROMISE_THREAD_SAFE)),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace tlab::tool
