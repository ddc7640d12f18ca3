// tests/property/time_arithmetic_service_property_test.cc: TimerService's
// time-arithmetic sites on every queue strategy, over the whole int64 range, against
// the exact model (time_arithmetic_property_test.cc explains the approach and lists
// every site and its mutant): delay to deadline through schedule(), the fixed-delay
// and fixed-rate next deadline, and lateness. The *Mutant* suites show each site,
// made to wrap, is caught (and tick_conversion_wraps through the wheels).
#include "time_arithmetic_support.h"

namespace tlab::time_arith {
namespace {

// ---- Properties -----------------------------------------------------------------

// TimerService::schedule(task, d) on strategy Q: the task runs at exactly
// now + d (clamped), not a nanosecond earlier; a saturated one never before
// Instant::max().
template <class Q, class P>
void service_delay_to_deadline() {
  const Instant start = Instant::from_ns(gen_in(kMin, kMax - 1));
  const Duration d = Duration::nanoseconds(gen_in(0, kMax));
  const I64 due = clamp(i128{start.ns()} + d.ns());
  Driven<Q, P> s(start);
  int runs = 0;
  s.svc.schedule(TimerTask<P>::make([&] { ++runs; }), d);
  s.svc.run_due(start);
  RC_ASSERT(runs == (due == start.ns() ? 1 : 0));
  if (due == start.ns()) return;
  s.run_to(Instant::from_ns(due - 1));
  RC_ASSERT(runs == 0);
  if (due == kMax) return;  // Instant::max() is never reached (file comment)
  s.run_to(Instant::from_ns(due));
  RC_ASSERT(runs == (s.reachable(due) ? 1 : 0));
}

// Drives a fixed-delay or fixed-rate task with a period next to Duration::max()
// through a few time jumps and compares every run's deadline, and late_max, with
// the model: fixed-rate next = deadline + period, fixed-delay next = the pass's
// now + period, both clamped. Each pass runs exactly the runs whose deadline has
// come, in order, never earlier than the previous one.
template <class Q, class P>
void periodic(TaskKind kind) {
  constexpr std::size_t kRunCap = 64;
  const bool rate = kind == TaskKind::kFixedRate;
  const Instant start = Instant::from_ns(gen_in(kMin, kMax - 1));
  const Duration delay = Duration::nanoseconds(gen_in(0, kMax));
  const Duration period = Duration::nanoseconds(gen_period());
  Driven<Q, P> s(start);
  std::vector<Instant> runs;
  TimerTaskPtr<P> task;
  task = TimerTask<P>::make([&] {
    runs.push_back(task->scheduled_time());
    if (runs.size() >= kRunCap) s.svc.cancel(task);
  });
  if (rate) {
    s.svc.schedule_at_fixed_rate(task, delay, period);
  } else {
    s.svc.schedule_fixed_delay(task, delay, period);
  }
  std::vector<Instant> expected;
  I64 next = clamp(i128{start.ns()} + delay.ns());
  I64 late_max = 0;
  Instant now = start;
  const int passes = *rc::gen::inRange(1, 5);
  for (int i = 0; i < passes && expected.size() < kRunCap; ++i) {
    // Next stop: the model's next deadline, one before it, or anywhere ahead.
    i128 to;
    switch (*rc::gen::inRange(0, 3)) {
      case 0:
        to = next;
        break;
      case 1:
        to = i128{next} - 1;
        break;
      default:
        to = gen_in(now.ns(), kMax - 1);
        break;
    }
    to = std::clamp<i128>(to, now.ns(), kMax - 1);
    now = Instant::from_ns(static_cast<I64>(to));
    while (next <= to && s.reachable(next) && expected.size() < kRunCap) {
      expected.push_back(Instant::from_ns(next));
      late_max = std::max(late_max, clamp(to - next));
      next = clamp((rate ? i128{next} : to) + period.ns());
    }
    s.run_to(now);
    RC_ASSERT(runs == expected);
  }
  for (std::size_t i = 1; i < runs.size(); ++i) RC_ASSERT(runs[i - 1] <= runs[i]);
  RC_ASSERT(s.svc.stats().late_max.ns() == late_max);
  s.svc.cancel(task);
  task.reset();
}

// A one-shot task at any instant, run at a later now: it runs iff its deadline
// has come, and late_max is now - deadline clamped (never a wrapped negative).
template <class Q, class P>
void lateness() {
  const Instant start = Instant::from_ns(gen_in(kMin, kMax - 1));
  const Instant deadline = Instant::from_ns(gen_any());
  const Instant now = Instant::from_ns(gen_in(start.ns(), kMax - 1));
  Driven<Q, P> s(start);
  int runs = 0;
  s.svc.schedule_at(TimerTask<P>::make([&] { ++runs; }), deadline);
  s.run_to(now);
  const bool fires = deadline <= now && s.reachable(deadline.ns());
  RC_ASSERT(runs == (fires ? 1 : 0));
  const I64 late = fires ? clamp(i128{now.ns()} - deadline.ns()) : 0;
  RC_ASSERT(s.svc.stats().late_max.ns() == late);
}

// ---- Tests -----------------------------------------------------------------------

template <class Q>
class TimeArithmeticServiceTest : public ::testing::Test {};
using AllQueues = QueueTypes<int, ManualStdPlatform, ::testing::Types>;
TYPED_TEST_SUITE(TimeArithmeticServiceTest, AllQueues);

TYPED_TEST(TimeArithmeticServiceTest, ScheduleRunsAtTheClampedDeadline) {
  expect_holds(std::string(TypeParam::kName) + " schedule",
               [] { service_delay_to_deadline<TypeParam, ManualStdPlatform>(); });
}

TYPED_TEST(TimeArithmeticServiceTest, FixedDelayNextDeadlineSaturates) {
  expect_holds(std::string(TypeParam::kName) + " fixed delay",
               [] { periodic<TypeParam, ManualStdPlatform>(TaskKind::kFixedDelay); });
}

TYPED_TEST(TimeArithmeticServiceTest, FixedRateCatchUpSaturates) {
  expect_holds(std::string(TypeParam::kName) + " fixed rate",
               [] { periodic<TypeParam, ManualStdPlatform>(TaskKind::kFixedRate); });
}

TYPED_TEST(TimeArithmeticServiceTest, LatenessSaturates) {
  expect_holds(std::string(TypeParam::kName) + " lateness",
               [] { lateness<TypeParam, ManualStdPlatform>(); });
}


// ---- Mutants: each kind of site, made to wrap, is caught ---------------------------

template <class Q>
class TimeArithmeticServiceMutantTest : public ::testing::Test {};
TYPED_TEST_SUITE(TimeArithmeticServiceMutantTest, AllQueues);

// delay_overflow_wraps through TimerService::schedule: the task runs at once.
TYPED_TEST(TimeArithmeticServiceMutantTest, FindsDelayOverflowWraps) {
  using B = MP<Mutant::kDelayOverflowWraps>;
  expect_counterexample(Mutant::kDelayOverflowWraps, std::string(TypeParam::kName) + " schedule",
                        [] { service_delay_to_deadline<TypeParam, B>(); });
}

// timer_fixed_delay_wraps: run time + huge period lands in the past: extra runs.
TYPED_TEST(TimeArithmeticServiceMutantTest, FindsFixedDelayWraps) {
  using B = MP<Mutant::kTimerFixedDelayWraps>;
  expect_counterexample(Mutant::kTimerFixedDelayWraps,
                        std::string(TypeParam::kName) + " fixed delay",
                        [] { periodic<TypeParam, B>(TaskKind::kFixedDelay); });
}

// timer_fixed_rate_wraps: deadline + huge period lands in the past: the catch-up
// never ends (the run cap cuts it).
TYPED_TEST(TimeArithmeticServiceMutantTest, FindsFixedRateWraps) {
  using B = MP<Mutant::kTimerFixedRateWraps>;
  expect_counterexample(Mutant::kTimerFixedRateWraps, std::string(TypeParam::kName) + " fixed rate",
                        [] { periodic<TypeParam, B>(TaskKind::kFixedRate); });
}

// timer_lateness_wraps: an ancient deadline's lateness wraps negative.
TYPED_TEST(TimeArithmeticServiceMutantTest, FindsLatenessWraps) {
  using B = MP<Mutant::kTimerLatenessWraps>;
  expect_counterexample(Mutant::kTimerLatenessWraps, std::string(TypeParam::kName) + " lateness",
                        [] { lateness<TypeParam, B>(); });
}

// tick_conversion_wraps in the wheels (the exact strategies have no grid): a
// deadline Instant::max() from a start below zero fires at once.
template <class Q>
class TimeArithmeticWheelMutantTest : public ::testing::Test {};
using Wheels = ::testing::Types<HashedWheelQueue<int, ManualStdPlatform>,
                                HierarchicalWheelQueue<int, ManualStdPlatform>,
                                PerWorkerWheelQueue<int, ManualStdPlatform>>;
TYPED_TEST_SUITE(TimeArithmeticWheelMutantTest, Wheels);

TYPED_TEST(TimeArithmeticWheelMutantTest, FindsTickConversionWraps) {
  using B = MP<Mutant::kTickConversionWraps>;
  expect_counterexample(Mutant::kTickConversionWraps, std::string(TypeParam::kName) + " lateness",
                        [] { lateness<TypeParam, B>(); });
}

}  // namespace
}  // namespace tlab::time_arith
