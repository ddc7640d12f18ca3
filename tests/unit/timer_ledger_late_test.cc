// The ledger's rules about polls (tool/oracles/timer_ledger.h): lateness (a loop
// subject's fire is late when a poll that began after the timer was armed, at or
// past its due time plus the allowance, passed it over; the traps, a poll racing
// the schedule call, a negative delay, a subject's own clock, stay quiet), and a
// pass's chains (same_pass, starvation: one chain's length, not a poll's total).
#include <gtest/gtest.h>

#include <cstdint>

#include "timer_ledger_support.h"

namespace tlab::tool {
namespace {

using namespace ledger_test;

// ---- lateness (loop subjects: polls) ----

// A ledger that judges lateness with an allowance of 100 ns.
Ledger late_ledger() { return Ledger(LedgerOrder::kOverlapping, LedgerRules::all(), 64, 100); }
void poll(Ledger& l, std::int64_t now) { l->poll_began(LedgerInstant{now, 0}); }

// A poll at or past due + allowance that passed the timer over makes its fire in
// a later poll late_fire, naming both instants.
TEST(TimerLedgerTest, APollThatPassedATimerOverMakesItsFireLate) {
  Ledger l = late_ledger();
  l.arm(1, 1000, 500);
  poll(l, 1550);
  poll(l, 1600);  // due 1500 + 100: it must fire here
  poll(l, 1700);
  l.fire(1, 1700);
  ASSERT_EQ(l.count(Oracle::kLateFire), 1u) << l.all();
  EXPECT_EQ(l.first(Oracle::kLateFire),
            "cookie 1 of scheduler#0: schedule(now, delay=500 ns) called at t=1000 (due at "
            "t=1500) fired at t=1700, 200ns after its due time, but the poll at t=1600 had "
            "already passed it over (a loop subject fires a timer no later than the first poll "
            "at or after its due time + 100ns)");
}

// The first poll at or past due + allowance may fire it: quiet, as is any fire
// when lateness is not judged (no allowance: a self-driven subject).
TEST(TimerLedgerTest, AFireInTheFirstPollPastTheAllowanceIsNotLate) {
  Ledger l = late_ledger();
  l.arm(1, 1000, 500);
  poll(l, 1550);
  poll(l, 1650);
  l.fire(1, 1650);
  EXPECT_TRUE(l.quiet()) << l.all();
  Ledger unjudged;
  unjudged.arm(1, 1000, 500);
  poll(unjudged, 1600);
  poll(unjudged, 9000);
  unjudged.fire(1, 9000);
  EXPECT_TRUE(unjudged.quiet()) << unjudged.all();
}

// A poll that began before armed() was told may not have seen the timer.
TEST(TimerLedgerTest, APollRacingTheScheduleCallDoesNotCount) {
  Ledger l = late_ledger();
  l->schedule(1, LedgerSchedule{"scheduler#0", LedgerInstant{1000, 0}, 500, false, 0});
  poll(l, 2000);  // began while schedule() ran
  l->armed(1, 101);
  poll(l, 2100);
  l.fire(1, 2100);
  EXPECT_TRUE(l.quiet()) << l.all();
}

// A negative delay is due at the call, not in the past: late only once a poll at
// or past the call + allowance passed it over.
TEST(TimerLedgerTest, ANegativeDelayCountsItsLatenessFromTheCall) {
  Ledger l = late_ledger();
  l.arm(1, 1000, -5000);
  poll(l, 1050);
  poll(l, 1099);
  l.fire(1, 1099);
  EXPECT_TRUE(l.quiet()) << l.all();
  l.arm(2, 2000, -5000);
  poll(l, 2100);
  poll(l, 2150);
  l.fire(2, 2150);
  EXPECT_EQ(l.count(Oracle::kLateFire), 1u) << l.all();
}

// late_from: a subject that reads its own clock is judged from the call's return.
TEST(TimerLedgerTest, LatenessCountsFromTheInstantArmedWasGiven) {
  Ledger l = late_ledger();
  l->schedule(1, LedgerSchedule{"scheduler#0", LedgerInstant{1000, 0}, 500, false, 0});
  l->armed(1, 101, 1300);  // returned at 1300: due by 1800, bound 1900
  poll(l, 1850);
  poll(l, 1900);
  l.fire(1, 1900);
  EXPECT_TRUE(l.quiet()) << l.all();
}

// ---- passes: same_pass and starvation ----

// chain_link: `cookie` scheduled inside poll `pass` by the callback of the fire
// that returned `parent`.
void chain_link(Ledger& l, std::uint64_t cookie, std::uint64_t pass, const LedgerFired& parent) {
  l->schedule(cookie, LedgerSchedule{.owner = "callback#0",
                                     .at = LedgerInstant{1000, 0},
                                     .delay = 0,
                                     .pass = pass,
                                     .chain = parent.chain,
                                     .chain_origin = parent.chain_origin});
  l->armed(cookie, cookie + 100);
}

// One chain re-armed within its poll: each link is same_pass_fire, and its
// starvation_after-th link is starvation, once, naming where it began.
TEST(TimerLedgerTest, OneChainWithinAPollIsStarvationAtItsLimit) {
  Ledger l;
  l.arm(1, 0, 1000);
  const std::uint64_t pass = l->poll_began(LedgerInstant{1000, 0});
  LedgerFired f = l->fired(1, LedgerInstant{1000, 0});
  EXPECT_EQ(f.chain, 0u);
  EXPECT_EQ(f.chain_origin, 1u);
  const std::uint64_t limit = TimerLedger::kDefaultStarvationAfter;
  for (std::uint64_t c = 2; c <= limit + 2; ++c) {
    chain_link(l, c, pass, f);
    f = l->fired(c, LedgerInstant{1000, 0});
    EXPECT_EQ(f.chain, c - 1);
    EXPECT_EQ(f.starving, c - 1 >= limit);
  }
  EXPECT_EQ(l.count(Oracle::kSamePassFire), limit + 1);
  ASSERT_EQ(l.count(Oracle::kStarvation), 1u) << l.first(Oracle::kStarvation);
  EXPECT_NE(l.first(Oracle::kStarvation)
                .find("fired 1000 timers in one chain, each scheduled by the callback of the one "
                      "before within that poll, from cookie 1's callback to cookie 1001"),
            std::string::npos)
      << l.first(Oracle::kStarvation);
}

// Many short chains in one poll (a late poll finds many timers due, each re-arms
// a few times) add up past the limit, and are not starvation.
TEST(TimerLedgerTest, ManyShortChainsInOnePollAreNotStarvation) {
  Ledger l;
  const std::uint64_t heads = 600;
  for (std::uint64_t c = 1; c <= heads; ++c) l.arm(c, 0, 1000);
  const std::uint64_t pass = l->poll_began(LedgerInstant{1000, 0});
  std::uint64_t next = heads + 1;
  for (std::uint64_t c = 1; c <= heads; ++c) {
    LedgerFired f = l->fired(c, LedgerInstant{1000, 0});
    for (int link = 0; link < 3; ++link, ++next) {
      chain_link(l, next, pass, f);
      f = l->fired(next, LedgerInstant{1000, 0});
    }
  }
  EXPECT_EQ(l.count(Oracle::kSamePassFire), heads * 3);
  EXPECT_EQ(l.count(Oracle::kStarvation), 0u) << l.first(Oracle::kStarvation);
}

}  // namespace
}  // namespace tlab::tool
