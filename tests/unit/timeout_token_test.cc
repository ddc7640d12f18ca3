// Unit tests for tlab/timeout_token.h: the RFC 0014 word, its state table, stale
// tokens, the ABA period at small widths, and the single-threaded mutant kills.
// The racing-resolver tests live in timeout_token_race_test.cc (label tsan).
//
// kTokenRelaxedResolve is deliberately not tested here: on x86 every CAS is a full
// barrier, so a relaxed resolve behaves exactly like an acq_rel one and no test on
// this machine can tell them apart. Catching it is the Relacy model's job
// (models/token_model.cc), which explores the weak-memory executions.
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

#include "support/mutant_platform.h"
#include "tlab/platform/std_platform.h"
#include "tlab/timeout_token.h"

namespace tlab {
namespace {

using testing::MutantPlatform;

// Arms once, keeps that token, then re-arms `rearms` more times (resolving each
// arming with its own token) and reports whether the stale first token resolves
// the latest arming. The RFC says it must not, until the ABA period comes round.
template <class P, unsigned Bits>
bool stale_token_resolves_after(std::uint64_t rearms) {
  TimeoutToken<P, Bits> word;
  const auto stale = word.arm();
  EXPECT_TRUE(word.resolve(stale));
  typename TimeoutToken<P, Bits>::Token current = stale;
  for (std::uint64_t i = 0; i < rearms; ++i) {
    if (i > 0) {
      EXPECT_TRUE(word.resolve(current));
    }
    current = word.arm();
  }
  return word.resolve(stale);
}

// The state table: disarmed -> armed -> resolved (disarmed, same generation).
TEST(TimeoutToken, StateTableFollowsTheRfc) {
  TimeoutToken<StdPlatform> word;
  EXPECT_FALSE(word.armed());
  EXPECT_EQ(word.raw(), 0u);
  const auto t1 = word.arm();
  EXPECT_TRUE(word.armed());
  EXPECT_EQ(t1.raw(), 3u) << "(0 | 1) + 2";
  EXPECT_EQ(word.raw(), 3u);
  EXPECT_TRUE(word.resolve(t1));
  EXPECT_FALSE(word.armed());
  EXPECT_EQ(word.raw(), 2u) << "t & ~1";
  const auto t2 = word.arm();
  EXPECT_EQ(t2.raw(), 5u) << "(2 | 1) + 2";
  EXPECT_NE(t1, t2);
}

// Only the first resolve of an arming wins; the second changes nothing.
TEST(TimeoutToken, ResolveTwiceOnlyFirstWins) {
  TimeoutToken<StdPlatform> word;
  const auto t = word.arm();
  EXPECT_TRUE(word.resolve(t));
  const auto after_first = word.raw();
  EXPECT_FALSE(word.resolve(t));
  EXPECT_EQ(word.raw(), after_first);
}

// A token of an earlier arming never resolves a newer one, whether or not that
// earlier arming was resolved.
TEST(TimeoutToken, StaleTokenNeverResolvesNewerArming) {
  TimeoutToken<StdPlatform> word;
  const auto old_token = word.arm();
  EXPECT_TRUE(word.resolve(old_token));
  const auto fresh = word.arm();
  EXPECT_FALSE(word.resolve(old_token));
  EXPECT_TRUE(word.armed());
  EXPECT_TRUE(word.resolve(fresh));
}

// Default-constructed tokens (never armed) never resolve anything.
TEST(TimeoutToken, DefaultTokenResolvesNothing) {
  TimeoutToken<StdPlatform> word;
  EXPECT_FALSE(word.resolve({}));
  (void)word.arm();
  EXPECT_FALSE(word.resolve({}));
  EXPECT_TRUE(word.armed());
}

// Arming an armed word is a caller bug and aborts with the word printed.
TEST(TimeoutTokenDeathTest, ArmWhileArmedAborts) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  TimeoutToken<StdPlatform> word;
  (void)word.arm();
  EXPECT_DEATH((void)word.arm(), "arm while armed word=3");
}

// At 32 bits a stale token stays dead across a million re-arms (the period is 2^31).
TEST(TimeoutToken, NoWraparoundAt32BitsWithinAMillionArms) {
  static_assert(TimeoutToken<StdPlatform, 32>::kAbaPeriod == (std::uint64_t{1} << 31));
  TimeoutToken<StdPlatform, 32> word;
  const auto stale = word.arm();
  ASSERT_TRUE(word.resolve(stale));
  std::uint64_t stale_wins = 0;
  for (int i = 0; i < 1'000'000; ++i) {
    const auto t = word.arm();
    if (word.resolve(stale)) ++stale_wins;
    ASSERT_TRUE(word.resolve(t));
  }
  EXPECT_EQ(stale_wins, 0u);
}

// At 3 bits the stale token resolves again after exactly kAbaPeriod = 4 arms, and
// not one arm earlier: the RFC's ABA bound, made small enough to see.
TEST(TimeoutToken, ThreeBitWordWrapsAfterExactlyAbaPeriodArms) {
  using W = TimeoutToken<StdPlatform, 3>;
  static_assert(W::kAbaPeriod == 4);
  for (std::uint64_t k = 1; k < W::kAbaPeriod; ++k) {
    EXPECT_FALSE((stale_token_resolves_after<StdPlatform, 3>(k))) << "after " << k << " re-arms";
  }
  EXPECT_TRUE((stale_token_resolves_after<StdPlatform, 3>(W::kAbaPeriod)));
}

// The same period law holds at every small width: exactly 2^(Bits-1) re-arms.
TEST(TimeoutToken, SmallWidthsWrapExactlyAtTheirPeriod) {
  const auto check = []<unsigned Bits>() {
    constexpr std::uint64_t period = TimeoutToken<StdPlatform, Bits>::kAbaPeriod;
    EXPECT_FALSE((stale_token_resolves_after<StdPlatform, Bits>(period - 1))) << Bits;
    EXPECT_TRUE((stale_token_resolves_after<StdPlatform, Bits>(period))) << Bits;
  };
  check.template operator()<2>();
  check.template operator()<3>();
  check.template operator()<4>();
  check.template operator()<8>();
  check.template operator()<12>();
}

// Every width from 2 to 32 compiles, is one 32-bit word, and round-trips arm/resolve.
TEST(TimeoutToken, EveryWidthFrom2To32Works) {
  const auto all = []<unsigned... I>(std::integer_sequence<unsigned, I...>) {
    const auto one = []<unsigned Bits>() {
      using W = TimeoutToken<StdPlatform, Bits>;
      static_assert(sizeof(W) == 4);
      static_assert(W::kAbaPeriod == (std::uint64_t{1} << (Bits - 1)));
      W word;
      const auto t = word.arm();
      EXPECT_EQ(t.raw() & ~W::kMask, 0u) << Bits;
      EXPECT_TRUE(word.resolve(t)) << Bits;
      EXPECT_FALSE(word.resolve(t)) << Bits;
    };
    (one.template operator()<I + 2>(), ...);
  };
  all(std::make_integer_sequence<unsigned, 31>{});
}

// Mutant kTokenFlagOnly (no generation): the stale token wins right after a single
// re-arm, which the real word never allows. This is the check the tests above make,
// shown failing.
TEST(TimeoutTokenMutant, FlagOnlyLetsStaleTokenWinAfterOneRearm) {
  using Flag = MutantPlatform<StdPlatform, Mutant::kTokenFlagOnly>;
  EXPECT_FALSE((stale_token_resolves_after<StdPlatform, 32>(1)));
  EXPECT_TRUE((stale_token_resolves_after<Flag, 32>(1)));
}

}  // namespace
}  // namespace tlab
