// tests/unit/subject_adapter_test.cc: tlab/subject_adapter.h (QueueSubject<Q>) and
// the example subjects, through the subject ABI exactly as tlab opens them
// (subjects/plugin.h open_subject): every strategy's built-in descriptor
// (`--subject binary_heap`), the examples' plugins (dlopen'd .so files built by
// tlab_add_subject: the C heap, its seeded ABA variant, and the C++ wheel whose
// entry point tlab_add_subject generated from QUEUE_HEADER).
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "subjects/builtin/strategies.h"
#include "subjects/plugin.h"
#include "subjects/subjects.h"
#include "tlab/queue/binary_heap.h"
#include "tlab/queue/strategy.h"
#include "tlab/subject_adapter.h"

namespace tlab {
namespace {

using tool::open_subject;

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kStart = 1'000;  // the host clock at create()
constexpr std::int64_t kTick = 1'000;   // tick_ns: the lateness the host allows

const tlab_subject& open_or_fail(const std::string& spec) {
  std::string error;
  const tlab_subject* d = open_subject(spec, error);
  if (d == nullptr) throw std::runtime_error(error);
  return *d;
}

// One instance of a facility subject, driven the way the generic driver drives
// it: every call must return TLAB_OK unless the test says otherwise.
class Instance {
 public:
  explicit Instance(const tlab_subject& d, std::int64_t tick_ns = kTick) : d_(d) {
    tlab_subject_config config{sizeof(tlab_subject_config), 0, kStart, tick_ns, this, &on_fired};
    EXPECT_EQ(d_.create(&config, &self_), TLAB_OK);
  }
  ~Instance() { d_.destroy(self_); }
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  std::uint64_t schedule(std::int64_t now, std::int64_t delay, std::uint64_t cookie) {
    std::uint64_t h = 0;
    EXPECT_EQ(d_.schedule(self_, now, delay, cookie, &h), TLAB_OK) << "cookie " << cookie;
    return h;
  }
  tlab_status try_schedule(std::int64_t now, std::int64_t delay, std::uint64_t cookie) {
    std::uint64_t h = 0;
    return d_.schedule(self_, now, delay, cookie, &h);
  }
  std::int32_t cancel(std::uint64_t handle) {
    std::int32_t result = 0;
    EXPECT_EQ(d_.cancel(self_, handle, &result), TLAB_OK);
    return result;
  }
  tlab_status poll(std::int64_t now) { return d_.poll(self_, now); }
  std::uint64_t pending() {
    std::uint64_t n = 0;
    EXPECT_EQ(d_.pending(self_, &n), TLAB_OK);
    return n;
  }
  // The cookies fired so far, in firing order; clears the record.
  std::vector<std::uint64_t> take_fired() { return std::exchange(fired_, {}); }

 private:
  static void on_fired(void* host, std::uint64_t cookie) {
    static_cast<Instance*>(host)->fired_.push_back(cookie);
  }
  const tlab_subject& d_;
  void* self_ = nullptr;
  std::vector<std::uint64_t> fired_;
};

using Fired = std::vector<std::uint64_t>;

// Every descriptor that claims the full facility contract: the built-in strategy
// rows (through the subject table, as `--subject NAME` resolves them) and the
// correct example plugins.
std::vector<std::string> correct_subjects() {
  std::vector<std::string> specs;
  for (const StrategyInfo& s : kStrategyInfo) specs.emplace_back(s.name);
  specs.emplace_back(TLAB_EXAMPLE_C_HEAP);
  specs.emplace_back(TLAB_EXAMPLE_CPP_WHEEL);
  return specs;
}

class AbiFacility : public ::testing::TestWithParam<std::string> {
 protected:
  const tlab_subject& d_ = open_or_fail(GetParam());
  bool promises(std::uint64_t bit) const { return (d_.promises & bit) != 0; }
};

// The descriptor passes the host's checks and is a loop-driven, host-clock,
// virtual facility that promises delivery, exact cancel and pending counts.
TEST_P(AbiFacility, DescriptorIsAVirtualLoopFacility) {
  std::string field, why;
  EXPECT_TRUE(tool::check_descriptor(d_, field, why)) << field << " " << why;
  EXPECT_EQ(d_.kind, TLAB_KIND_FACILITY);
  EXPECT_EQ(d_.drive, TLAB_DRIVE_LOOP);
  EXPECT_EQ(d_.clock, TLAB_CLOCK_HOST);
  for (std::uint64_t bit :
       {TLAB_PROMISE_DELIVERY, TLAB_PROMISE_EXACTLY_ONCE, TLAB_PROMISE_NEVER_EARLY,
        TLAB_PROMISE_ACCURATE_CANCEL, TLAB_PROMISE_PENDING_COUNT, TLAB_PROMISE_VIRTUAL}) {
    EXPECT_TRUE(promises(bit)) << "bit 0x" << std::hex << bit;
  }
  EXPECT_FALSE(promises(TLAB_PROMISE_THREAD_SAFE));
}

// A timer does not fire before its deadline, and fires once by deadline + tick.
TEST_P(AbiFacility, FiresNotBeforeTheDeadlineAndByDeadlinePlusTick) {
  Instance s(d_);
  s.schedule(kStart, 5'500, 7);  // due at 6'500
  ASSERT_EQ(s.poll(6'499), TLAB_OK);
  EXPECT_EQ(s.take_fired(), Fired{});
  ASSERT_EQ(s.poll(6'500 + kTick), TLAB_OK);
  EXPECT_EQ(s.take_fired(), Fired{7});
  ASSERT_EQ(s.poll(kMax), TLAB_OK);
  EXPECT_EQ(s.take_fired(), Fired{});
}

// Cancelling a pending timer says PREVENTED, and it never fires; cancelling it
// again says TOO_LATE.
TEST_P(AbiFacility, CancelOfAPendingTimerIsPreventedOnce) {
  Instance s(d_);
  const std::uint64_t h = s.schedule(kStart, 10'000, 1);
  EXPECT_EQ(s.cancel(h), TLAB_CANCEL_PREVENTED);
  EXPECT_EQ(s.cancel(h), TLAB_CANCEL_TOO_LATE);
  ASSERT_EQ(s.poll(kMax), TLAB_OK);
  EXPECT_EQ(s.take_fired(), Fired{});
  EXPECT_EQ(s.pending(), 0u);
}

// A late cancel, after its timer fired and a new timer took its storage, says
// TOO_LATE and leaves the new timer alone (the ABA case of handle reuse).
TEST_P(AbiFacility, StaleHandleCancelIsTooLateAndTouchesNoOtherTimer) {
  Instance s(d_);
  const std::uint64_t old = s.schedule(kStart, 100, 1);
  ASSERT_EQ(s.poll(kStart + 100 + kTick), TLAB_OK);
  ASSERT_EQ(s.take_fired(), Fired{1});
  const std::uint64_t fresh = s.schedule(kStart + 100 + kTick, 5'000, 2);
  EXPECT_EQ(s.cancel(old), TLAB_CANCEL_TOO_LATE);
  EXPECT_EQ(s.pending(), 1u);
  ASSERT_EQ(s.poll(kMax), TLAB_OK);
  EXPECT_EQ(s.take_fired(), Fired{2});
  EXPECT_EQ(s.cancel(fresh), TLAB_CANCEL_TOO_LATE);
}

// A huge delay saturates at "never" instead of wrapping into the past.
TEST_P(AbiFacility, HugeDelaySaturatesInsteadOfWrapping) {
  Instance s(d_);
  s.schedule(kStart + 10, kMax, 1);
  s.schedule(kStart + 10, kMax - 5, 2);
  ASSERT_EQ(s.poll(kStart + 1'000'000'000), TLAB_OK);
  ASSERT_EQ(s.poll(kMax - kTick - 1), TLAB_OK);
  EXPECT_EQ(s.take_fired(), Fired{});
  EXPECT_EQ(s.pending(), 2u);
}

// pending() is scheduled - fired - prevented after every step.
TEST_P(AbiFacility, PendingIsScheduledMinusFiredMinusPrevented) {
  Instance s(d_);
  std::vector<std::uint64_t> handles;
  for (std::uint64_t i = 0; i < 10; ++i) {
    handles.push_back(s.schedule(kStart, 10'000 * static_cast<std::int64_t>(i + 1), i));
  }
  EXPECT_EQ(s.pending(), 10u);
  EXPECT_EQ(s.cancel(handles[1]), TLAB_CANCEL_PREVENTED);
  EXPECT_EQ(s.cancel(handles[8]), TLAB_CANCEL_PREVENTED);
  EXPECT_EQ(s.pending(), 8u);
  ASSERT_EQ(s.poll(kStart + 50'000 + kTick), TLAB_OK);  // fires 0, 2, 3, 4
  EXPECT_EQ(s.take_fired().size(), 4u);
  EXPECT_EQ(s.pending(), 4u);
  EXPECT_EQ(s.cancel(handles[0]), TLAB_CANCEL_TOO_LATE);
  EXPECT_EQ(s.pending(), 4u);
  ASSERT_EQ(s.poll(kMax), TLAB_OK);  // fires 5, 6, 7, 9
  EXPECT_EQ(s.take_fired(), (Fired{5, 6, 7, 9}));
  EXPECT_EQ(s.pending(), 0u);
}

// Timers with equal deadlines fire in schedule order when FIFO_TIES is promised;
// a ticked subject does not promise it.
TEST_P(AbiFacility, EqualDeadlinesFireInScheduleOrderIffPromised) {
  Instance s(d_);
  for (std::uint64_t i = 0; i < 8; ++i) s.schedule(kStart, 2'000, i);
  ASSERT_EQ(s.poll(kMax), TLAB_OK);
  const Fired fired = s.take_fired();
  ASSERT_EQ(fired.size(), 8u);
  if (promises(TLAB_PROMISE_FIFO_TIES)) {
    EXPECT_EQ(fired, (Fired{0, 1, 2, 3, 4, 5, 6, 7}));
  }
}

INSTANTIATE_TEST_SUITE_P(Subjects, AbiFacility, ::testing::ValuesIn(correct_subjects()),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           const tlab_subject& d = open_or_fail(p.param);
                           return std::string(d.name);
                         });

// The strategy rows' abi field serves QueueSubject<Q> of the same strategy: its
// name and summary are the catalogue's, FIFO_TIES exactly when kExact.
TEST(StrategySubjects, EveryStrategyRowServesItsAdapterDescriptor) {
  for (const StrategyInfo& s : kStrategyInfo) {
    const tool::SubjectInfo* row = tool::find_subject(s.name);
    ASSERT_NE(row, nullptr) << s.name;
    ASSERT_NE(row->abi, nullptr) << s.name;
    const tlab_subject* d = row->abi(s.name);
    ASSERT_EQ(d, tool::builtin::strategy_abi(s.name));
    EXPECT_EQ(std::string(d->name), s.name);
    EXPECT_EQ(std::string(d->summary), s.summary);
    EXPECT_EQ((d->promises & TLAB_PROMISE_FIFO_TIES) != 0, s.exact) << s.name;
  }
  EXPECT_EQ(tool::builtin::strategy_abi("no_such_strategy"), nullptr);
}

using Heap = BinaryHeapQueue<std::uint64_t>;
const tlab_subject kHeap = QueueSubject<Heap>::descriptor("heap", "a test heap");

// The adapter refuses a negative delay (core's contract) and arms nothing.
TEST(QueueSubject, NegativeDelayIsRefusedAndArmsNothing) {
  Instance s(kHeap);
  EXPECT_EQ(s.try_schedule(kStart, -1, 1), TLAB_EINVAL);
  EXPECT_EQ(s.pending(), 0u);
  ASSERT_EQ(s.poll(kMax), TLAB_OK);
  EXPECT_EQ(s.take_fired(), Fired{});
}

// poll() with time going backwards is refused (the queue would abort) and fires
// nothing; time moving on afterwards works.
TEST(QueueSubject, PollWithTimeGoingBackwardsIsRefused) {
  Instance s(kHeap);
  s.schedule(kStart, 10, 1);
  EXPECT_EQ(s.poll(kStart - 1), TLAB_EINVAL);
  ASSERT_EQ(s.poll(kStart + 5), TLAB_OK);
  EXPECT_EQ(s.poll(kStart + 4), TLAB_EINVAL);
  EXPECT_EQ(s.take_fired(), Fired{});
  ASSERT_EQ(s.poll(kStart + 10), TLAB_OK);
  EXPECT_EQ(s.take_fired(), Fired{1});
}

// create() refuses a config it cannot use: none, no fired callback, or one
// shorter than the struct it was built against.
TEST(QueueSubject, CreateRefusesAnUnusableConfig) {
  void* self = nullptr;
  EXPECT_EQ(kHeap.create(nullptr, &self), TLAB_EINVAL);
  tlab_subject_config config{sizeof(tlab_subject_config), 0, 0, 0, nullptr, nullptr};
  EXPECT_EQ(kHeap.create(&config, &self), TLAB_EINVAL);
  config.fired = [](void*, std::uint64_t) {};
  config.struct_size = sizeof(tlab_subject_config) - 1;
  EXPECT_EQ(kHeap.create(&config, &self), TLAB_EINVAL);
  EXPECT_EQ(self, nullptr);
}

// A ticked queue takes its tick from tick_ns when positive, and keeps its
// default (1 ms) otherwise.
TEST(QueueSubject, TickedQueueTakesItsTickFromTheConfig) {
  const tlab_subject& wheel = *tool::builtin::strategy_abi("hashed_wheel");
  Instance fine(wheel, kTick);
  fine.schedule(kStart, 1, 1);
  ASSERT_EQ(fine.poll(kStart + kTick), TLAB_OK);
  EXPECT_EQ(fine.take_fired(), Fired{1});
  Instance coarse(wheel, 0);
  coarse.schedule(kStart, 1, 1);
  ASSERT_EQ(coarse.poll(kStart + kTick), TLAB_OK);
  EXPECT_EQ(coarse.take_fired(), Fired{});
  ASSERT_EQ(coarse.poll(kStart + 1'000'000), TLAB_OK);
  EXPECT_EQ(coarse.take_fired(), Fired{1});
}

// A queue whose insert throws: the cookie picks the exception.
constexpr std::uint64_t kThrowBadAlloc = 1, kThrowOther = 2;
struct ThrowingQueue : Heap {
  using Heap::Heap;
  TimerHandle insert(Instant deadline, std::uint64_t&& cookie) {
    if (cookie == kThrowBadAlloc) throw std::bad_alloc();
    if (cookie == kThrowOther) throw std::logic_error("refused");
    return Heap::insert(deadline, std::move(cookie));
  }
};

// Exceptions stop at the ABI: std::bad_alloc is TLAB_ENOMEM, anything else
// TLAB_EFAIL, and nothing is armed by a failed schedule.
TEST(QueueSubject, ExceptionsBecomeStatusCodes) {
  static const tlab_subject kThrowing =
      QueueSubject<ThrowingQueue>::descriptor("throwing", "insert throws");
  Instance s(kThrowing);
  EXPECT_EQ(s.try_schedule(kStart, 10, kThrowBadAlloc), TLAB_ENOMEM);
  EXPECT_EQ(s.try_schedule(kStart, 10, kThrowOther), TLAB_EFAIL);
  EXPECT_EQ(s.try_schedule(kStart, 10, 3), TLAB_OK);
  EXPECT_EQ(s.pending(), 1u);
}

// A handle is (generation << 32) | index, and decodes back to the same TimerHandle.
TEST(QueueSubject, HandlesRoundTripThroughTheAbi) {
  for (const TimerHandle h : {TimerHandle{0, 0}, TimerHandle{7, 3}, TimerHandle{0xfffffffe, 1},
                              TimerHandle{5, 0xffffffff}}) {
    EXPECT_EQ(decode_subject_handle(encode_subject_handle(h)), h);
  }
  EXPECT_EQ(encode_subject_handle(TimerHandle{7, 3}), (std::uint64_t{3} << 32) | 7);
}

// The generated entry point serves only the host's ABI version, under the
// SUBJECT_NAME given to tlab_add_subject.
TEST(ExamplePlugins, EntryPointAnswersOnlyItsAbiVersion) {
  std::string error;
  const auto facts = tool::probe_subject(TLAB_EXAMPLE_CPP_WHEEL, error);
  ASSERT_TRUE(facts) << error;
  EXPECT_EQ(facts->name, "cpp_wheel");
  EXPECT_EQ(facts->entry, TLAB_SUBJECT_ENTRY_NAME);
  const std::string wrong = std::string(TLAB_EXAMPLE_CPP_WHEEL) + ":tlab_no_such_entry";
  EXPECT_FALSE(tool::probe_subject(wrong, error));
  EXPECT_NE(error.find("tlab_no_such_entry"), std::string::npos) << error;
}

// The seeded bug: the ABA heap's late cancel cancels the timer that reused the
// slot and says PREVENTED; that timer is then lost (never fires, never cancelled
// by its owner). The same sequence on the correct heap is
// StaleHandleCancelIsTooLateAndTouchesNoOtherTimer above.
TEST(ExamplePlugins, AbaHeapCancelsTheWrongTimerOnAStaleHandle) {
  const tlab_subject& aba = open_or_fail(TLAB_EXAMPLE_C_HEAP_ABA);
  EXPECT_EQ(std::string(aba.name), "c_timer_heap_aba");
  Instance s(aba);
  const std::uint64_t old = s.schedule(kStart, 100, 1);
  ASSERT_EQ(s.poll(kStart + 100), TLAB_OK);
  ASSERT_EQ(s.take_fired(), Fired{1});
  s.schedule(kStart + 100, 5'000, 2);
  EXPECT_EQ(s.cancel(old), TLAB_CANCEL_PREVENTED);  // wrong: timer 1 had fired
  EXPECT_EQ(s.pending(), 0u);                       // timer 2 is gone
  ASSERT_EQ(s.poll(kMax), TLAB_OK);
  EXPECT_EQ(s.take_fired(), Fired{});  // lost: nobody cancelled timer 2
}

}  // namespace
}  // namespace tlab
