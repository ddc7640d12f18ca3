// tests/property/queue_property_test.cc: every timer-queue strategy against a model.
//
// A rapidcheck stateful test (rc::state::check) drives one queue with random
// Insert / Cancel / Reschedule / Advance commands and a reference model that
// applies timer_queue.h's firing contract with the strategy's tick, in exact
// 128-bit arithmetic that shares no code with the queues (not even TickGrid):
//   - an entry is due at tick ceil((deadline - start) / tick) and fires in the
//     first expire(now) with floor((now - start) / tick) >= that tick;
//   - cancel/reschedule return true iff the entry is pending; a rescheduled entry
//     counts as newly inserted.
// Postconditions after every command: the fired set of each expire equals the
// model's (so nothing early, late, twice or after cancel); the order is the
// model's exact (due, insertion) sequence on exact strategies and nondecreasing
// due ticks on wheels; size() agrees; next_deadline() is nullopt iff empty, never
// later than the earliest due instant, and equal to it where the strategy
// promises exactness; check_invariants() holds; and no cancelled, rescheduled-away
// or fired entry keeps its payload (see Counted below).
//
// Generated values reach the corners on purpose: past deadlines (before start
// too), equal deadlines (a quarter of inserts copy a pending entry's deadline),
// deadlines 2^38 ticks out (beyond the hierarchical wheel's top level), Duration::
// max() and Instant::max(), zero advances and jumps over many revolutions. The
// wheels run with a 1 us tick and 8 hashed slots, so rounds and cascades are hit
// by short sequences.
//
// Failures print the shrunk command sequence (every command has show()). The
// mutant tests run the same machine on a queue compiled with one mutant and
// expect rapidcheck to FIND a counterexample: the property is checked with
// rc::detail::checkTestable (what rc::check calls) so the test can assert on the
// result variant instead of only printing it. Set RC_PARAMS="seed=N" to replay.
#include <gtest/gtest.h>

#include <rapidcheck.h>
#include <rapidcheck/state.h>

#include <algorithm>
#include <cstdint>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "support/mutant_platform.h"
#include "tlab/queue/strategy.h"

namespace tlab {
namespace {

using Id = std::uint64_t;
__extension__ typedef __int128 i128;  // exact model arithmetic, no saturation

constexpr Instant kStart = Instant::from_ns(1'000'000'000);
constexpr std::int64_t kUnitNs = 1000;  // generator unit = the wheels' tick (1 us)

QueueConfig property_config() {
  QueueConfig cfg;
  cfg.start = kStart;
  cfg.tick = Duration::nanoseconds(kUnitNs);
  cfg.wheel_slots = 8;  // 8 us per revolution: rounds and jumps in short sequences
  return cfg;
}

// The payload every property queue carries: an entry's id plus a share of the
// Sut's `held` count, as a callback carries what it captured. Moving hands the
// share over (a moved-from Counted holds nothing, like a moved-from shared_ptr or
// std::function), copying takes a new one, destroying gives it back. So `held` is
// the number of payload objects that keep something alive, wherever they sit.
struct Counted {
  Id id = 0;
  std::int64_t* held = nullptr;  // nullptr: moved from, holds nothing

  Counted() = default;
  Counted(Id i, std::int64_t* h) : id(i), held(h) { ++*held; }
  Counted(Counted&& o) noexcept : id(o.id), held(std::exchange(o.held, nullptr)) {}
  Counted(const Counted& o) : id(o.id), held(o.held) {
    if (held != nullptr) ++*held;
  }
  Counted& operator=(Counted o) noexcept {  // by value: copy and move assignment
    std::swap(id, o.id);
    std::swap(held, o.held);
    return *this;  // o gives back what this held
  }
  ~Counted() {
    if (held != nullptr) --*held;
  }
};

// Payloads a queue may hold beyond its pending entries when a call has returned.
// 0 for every strategy: each destroys the payload when its entry stops being
// pending -- cancel() destroys it (the lists, heap and wheels through Slab::free,
// the per-worker wheel by emptying its tombstone), reschedule() moves it to the
// new entry, expire() moves it into the sink's argument, destroyed when the sink
// returns. A strategy that parked dead payloads somewhere (a free list, a batch
// buffer) would have to raise this and say why; a lazy queue that keeps them until
// the dead entry's deadline has no bound at all, which is the bug this catches.
constexpr std::int64_t kRetainedPayloadBound = 0;

struct ModelEntry {
  Instant deadline;
  std::uint64_t seq;  // insertion order (a reschedule counts as an insertion)
};

struct Model {
  std::int64_t tick_ns = 1;
  Instant now = kStart;
  std::map<Id, ModelEntry> pending;
  Id next_id = 0;
  std::uint64_t next_seq = 0;

  static i128 floor_div(i128 a, i128 b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
  i128 due_tick(Instant d) const {
    return -floor_div(-(static_cast<i128>(d.ns()) - kStart.ns()), tick_ns);
  }
  i128 elapsed_tick(Instant t) const {
    return floor_div(static_cast<i128>(t.ns()) - kStart.ns(), tick_ns);
  }
  Instant due_instant(Instant d) const {
    const i128 v = due_tick(d) * tick_ns + kStart.ns();
    if (v >= static_cast<i128>(Instant::max().ns())) return Instant::max();
    return Instant::from_ns(static_cast<std::int64_t>(v));
  }
  // The ids that expire(t) must fire, in (due tick, insertion) order.
  std::vector<Id> due_by(Instant t) const {
    std::vector<Id> out;
    for (const auto& [id, e] : pending) {
      if (due_tick(e.deadline) <= elapsed_tick(t)) out.push_back(id);
    }
    std::sort(out.begin(), out.end(), [&](Id a, Id b) {
      const i128 da = due_tick(pending.at(a).deadline);
      const i128 db = due_tick(pending.at(b).deadline);
      if (da != db) return da < db;
      return pending.at(a).seq < pending.at(b).seq;
    });
    return out;
  }
};

template <class Q>
struct Sut {
  static_assert(std::is_same_v<typename Q::Payload, Counted>,
                "property queues carry Counted payloads: check_after() counts them");
  std::int64_t held = 0;  // Counted payloads alive; declared first: it outlives q
  Q q{property_config()};
  std::vector<TimerHandle> handles;  // index = Id; the latest handle of each entry
  TimerHandle handle(Id id) const { return id < handles.size() ? handles[id] : TimerHandle{}; }
};

// A deadline relative to the model's now: past, near, far, beyond-top-level, max.
Instant gen_deadline(const Model& m) {
  const int kind = *rc::gen::inRange(0, 100);
  if (kind < 25 && !m.pending.empty()) {  // a tie with a pending entry
    const auto k = *rc::gen::inRange<std::size_t>(0, m.pending.size());
    return std::next(m.pending.begin(), static_cast<std::ptrdiff_t>(k))->second.deadline;
  }
  if (kind < 28) return Instant::max();
  if (kind < 31) return m.now + Duration::max();
  std::int64_t units;
  if (kind < 45) {
    units = *rc::gen::inRange<std::int64_t>(-70, 1);  // past (and before start early on)
  } else if (kind < 80) {
    units = *rc::gen::inRange<std::int64_t>(0, 140);
  } else if (kind < 95) {
    units = *rc::gen::inRange<std::int64_t>(0, std::int64_t{1} << 20);
  } else {
    units = *rc::gen::inRange<std::int64_t>(0, std::int64_t{1} << 38);
  }
  const std::int64_t sub = *rc::gen::element<std::int64_t>(0, 1, kUnitNs / 2, kUnitNs - 1);
  return m.now + Duration::nanoseconds(units * kUnitNs + sub);
}

template <class Q>
using Cmd = rc::state::Command<Model, Sut<Q>>;

// Checks the state-independent postconditions against the model after a command.
template <class Q>
void check_after(const Model& after, const Sut<Q>& s) {
  s.q.check_invariants();
  RC_ASSERT(s.q.size() == after.pending.size());
  // Retention: at most kRetainedPayloadBound payloads alive beyond the pending ones.
  RC_ASSERT(s.held <= static_cast<std::int64_t>(s.q.size()) + kRetainedPayloadBound);
  RC_ASSERT(s.q.empty() == after.pending.empty());
  const std::optional<Instant> next = s.q.next_deadline();
  RC_ASSERT(next.has_value() == !after.pending.empty());
  if (!next) return;
  Instant earliest = Instant::max();
  for (const auto& [id, e] : after.pending)
    earliest = std::min(earliest, after.due_instant(e.deadline));
  RC_ASSERT(*next <= earliest);
  if (Q::kExactNextDeadline) RC_ASSERT(*next == earliest);
}

template <class Q>
struct Insert : Cmd<Q> {
  Instant deadline;
  Id id = 0;
  explicit Insert(const Model& m) : deadline(gen_deadline(m)), id(m.next_id) {}
  void apply(Model& m) const override {
    m.pending[m.next_id] = ModelEntry{deadline, m.next_seq++};
    ++m.next_id;
  }
  void run(const Model& m, Sut<Q>& s) const override {
    RC_ASSERT(s.handles.size() == m.next_id);
    s.handles.push_back(s.q.insert(deadline, Counted{m.next_id, &s.held}));
    Model after = m;
    apply(after);
    check_after(after, s);
  }
  void show(std::ostream& os) const override {
    os << "Insert(id=" << id << ", at=" << deadline << ")";
  }
};

template <class Q>
struct Cancel : Cmd<Q> {
  Id id;  // == model's next_id: a null handle
  explicit Cancel(const Model& m) : id(*rc::gen::inRange<Id>(0, m.next_id + 1)) {}
  void apply(Model& m) const override { m.pending.erase(id); }
  void run(const Model& m, Sut<Q>& s) const override {
    const bool was_pending = m.pending.count(id) != 0;
    RC_ASSERT(s.q.cancel(s.handle(id)) == was_pending);
    Model after = m;
    apply(after);
    check_after(after, s);
  }
  void show(std::ostream& os) const override { os << "Cancel(id=" << id << ")"; }
};

template <class Q>
struct Reschedule : Cmd<Q> {
  Id id;
  Instant deadline;
  explicit Reschedule(const Model& m)
      : id(*rc::gen::inRange<Id>(0, m.next_id + 1)), deadline(gen_deadline(m)) {}
  void apply(Model& m) const override {
    auto it = m.pending.find(id);
    if (it != m.pending.end()) it->second = ModelEntry{deadline, m.next_seq++};
  }
  void run(const Model& m, Sut<Q>& s) const override {
    const bool was_pending = m.pending.count(id) != 0;
    TimerHandle h = s.handle(id);
    RC_ASSERT(s.q.reschedule(h, deadline) == was_pending);
    if (was_pending) s.handles[id] = h;
    Model after = m;
    apply(after);
    check_after(after, s);
  }
  void show(std::ostream& os) const override {
    os << "Reschedule(id=" << id << ", to=" << deadline << ")";
  }
};

template <class Q>
struct Advance : Cmd<Q> {
  Duration delta;
  explicit Advance(const Model&) {
    const int kind = *rc::gen::inRange(0, 100);
    std::int64_t ns = 0;
    if (kind < 10) {
      ns = 0;
    } else if (kind < 50) {
      ns = *rc::gen::inRange<std::int64_t>(0, 3 * kUnitNs);
    } else if (kind < 80) {
      ns = *rc::gen::inRange<std::int64_t>(0, 200 * kUnitNs);
    } else if (kind < 95) {
      ns = *rc::gen::inRange<std::int64_t>(0, (std::int64_t{1} << 20) * kUnitNs);
    } else {
      ns = *rc::gen::inRange<std::int64_t>(0, (std::int64_t{1} << 38) * kUnitNs);
    }
    delta = Duration::nanoseconds(ns);
  }
  void apply(Model& m) const override {
    m.now = m.now + delta;
    for (Id id : m.due_by(m.now)) m.pending.erase(id);
  }
  void run(const Model& m, Sut<Q>& s) const override {
    const Instant now = m.now + delta;
    const std::vector<Id> expected = m.due_by(now);
    std::vector<Id> got;
    bool deadlines_match = true;
    const std::size_t n = s.q.expire(now, [&](Counted&& p, Instant d) {
      got.push_back(p.id);
      const auto it = m.pending.find(p.id);
      deadlines_match = deadlines_match && it != m.pending.end() && it->second.deadline == d;
    });
    RC_ASSERT(n == got.size());
    RC_ASSERT(deadlines_match);  // every fired entry was pending, with its own deadline
    if (s.q.tick() == Duration::nanoseconds(1)) {
      RC_ASSERT(got == expected);  // exact: (deadline, insertion) order
    } else {
      for (std::size_t i = 1; i < got.size(); ++i) {
        RC_ASSERT(m.due_tick(m.pending.at(got[i - 1]).deadline) <=
                  m.due_tick(m.pending.at(got[i]).deadline));
      }
      RC_ASSERT(std::multiset<Id>(got.begin(), got.end()) ==
                std::multiset<Id>(expected.begin(), expected.end()));
    }
    Model after = m;
    apply(after);
    check_after(after, s);
  }
  void show(std::ostream& os) const override { os << "Advance(by=" << delta << ")"; }
};

// Runs one random command sequence on a fresh Q against a fresh model.
template <class Q>
void state_machine() {
  Model model;
  model.tick_ns = Q(property_config()).tick().ns();
  Sut<Q> sut;
  rc::state::check(model, sut,
                   rc::state::gen::execOneOfWithArgs<Insert<Q>, Insert<Q>, Cancel<Q>, Reschedule<Q>,
                                                     Advance<Q>, Advance<Q>>());
}

// Checks the state machine on Q with bounded effort and prints rapidcheck's report
// (on failure: the seed and the shrunk command sequence).
template <class Q>
rc::detail::TestResult check_queue(const std::string& what) {
  rc::detail::TestParams params = rc::detail::configuration().testParams;  // RC_PARAMS seed
  params.maxSuccess = 400;
  params.maxSize = 100;  // command sequences of up to ~100 steps
  const rc::detail::TestResult result = rc::detail::checkTestable(
      [] { state_machine<Q>(); }, rc::detail::TestMetadata{what, what}, params);
  std::cerr << "- " << what << ": ";
  rc::detail::printResultMessage(result, std::cerr);
  std::cerr << std::endl;
  return result;
}

template <Mutant M>
using MP = testing::MutantPlatform<StdPlatform, M>;

template <class Q>
class QueuePropertyTest : public ::testing::Test {};
using AllQueues = QueueTypes<Counted, StdPlatform, ::testing::Types>;
TYPED_TEST_SUITE(QueuePropertyTest, AllQueues);

// Random insert/cancel/reschedule/advance sequences agree with the reference model.
TYPED_TEST(QueuePropertyTest, MatchesReferenceModel) {
  const auto result = check_queue<TypeParam>(std::string(TypeParam::kName) + " vs model");
  EXPECT_TRUE(result.template is<rc::detail::SuccessResult>());
}

// Runs the machine on Q (compiled with mutant M) and expects a counterexample.
// The recorded property names the mutant in --gtest_output, which is how
// `tlab mutants` (tool/layers/kill_matrix.h, layer property) maps this test to it; the
// test suites' names contain "Mutant", its --gtest_filter.
template <class Q>
void expect_counterexample(Mutant m) {
  ::testing::Test::RecordProperty("mutant", std::string(name_of(m)));
  const auto result =
      check_queue<Q>(std::string(Q::kName) + " with mutant " + std::string(name_of(m)));
  EXPECT_TRUE(result.template is<rc::detail::FailureResult>())
      << "rapidcheck found no counterexample for mutant " << name_of(m);
}

// heap_unstable_ties: the model's FIFO order on equal deadlines is violated.
TEST(QueuePropertyMutantTest, FindsHeapUnstableTies) {
  expect_counterexample<BinaryHeapQueue<Counted, MP<Mutant::kHeapUnstableTies>>>(
      Mutant::kHeapUnstableTies);
}

// hashed_wheel_ignore_rounds: an entry a revolution or more away fires early.
TEST(QueuePropertyMutantTest, FindsHashedWheelIgnoreRounds) {
  expect_counterexample<HashedWheelQueue<Counted, MP<Mutant::kHashedWheelIgnoreRounds>>>(
      Mutant::kHashedWheelIgnoreRounds);
}

// hier_wheel_no_cascade: a coarse slot fires at its start, before its entries' ticks.
TEST(QueuePropertyMutantTest, FindsHierWheelNoCascade) {
  expect_counterexample<HierarchicalWheelQueue<Counted, MP<Mutant::kHierWheelNoCascade>>>(
      Mutant::kHierWheelNoCascade);
}

// wheel_no_generation_check: the per-worker wheel fires a lazily cancelled entry.
TEST(QueuePropertyMutantTest, FindsWheelNoGenerationCheck) {
  expect_counterexample<PerWorkerWheelQueue<Counted, MP<Mutant::kWheelNoGenerationCheck>>>(
      Mutant::kWheelNoGenerationCheck);
}

template <class Q>
class QueuePropertyMutantCancelLeakTest : public ::testing::Test {};
using LeakyQueues = QueueTypes<Counted, MP<Mutant::kQueueCancelLeaksEntry>, ::testing::Types>;
TYPED_TEST_SUITE(QueuePropertyMutantCancelLeakTest, LeakyQueues);

// queue_cancel_leaks_entry: a cancelled entry still fires (or still counts in size()).
TYPED_TEST(QueuePropertyMutantCancelLeakTest, FindsCancelLeaksEntry) {
  expect_counterexample<TypeParam>(Mutant::kQueueCancelLeaksEntry);
}

// wheel_bitmap_clear_on_cancel: a cancel empties a bucket's live bit while a live entry
// remains. check_after()'s check_invariants() aborts on the first such command (the
// bit is checked before next_deadline() is compared with the model), so the machine
// runs in a death-test child and the abort's message is the counterexample.
TEST(QueuePropertyMutantTest, FindsWheelBitmapClearOnCancel) {
  constexpr Mutant m = Mutant::kWheelBitmapClearOnCancel;
  ::testing::Test::RecordProperty("mutant", std::string(name_of(m)));
  using Q = PerWorkerWheelQueue<Counted, MP<m>>;
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(check_queue<Q>("per_worker_wheel with mutant " + std::string(name_of(m))),
               "live bit=0");
}

// wheel_retain_cancelled_payload: a cancelled entry keeps its payload in its bucket
// until the wheel drains it, so more payloads are alive than entries are pending
// (check_after()'s retention bound) right after the Cancel.
TEST(QueuePropertyMutantTest, FindsWheelRetainCancelledPayload) {
  expect_counterexample<PerWorkerWheelQueue<Counted, MP<Mutant::kWheelRetainCancelledPayload>>>(
      Mutant::kWheelRetainCancelledPayload);
}

}  // namespace
}  // namespace tlab
