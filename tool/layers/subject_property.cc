// tlab/tool/layers/subject_property.cc: the property layer on a loop-driven
// subject (subject_property.h has the commands, the model's table and the cost).
#include "layers/subject_property.h"

#include <fmt/format.h>
#include <rapidcheck.h>

#include <algorithm>
#include <limits>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "oracles/timer_ledger.h"
#include "subjects/plugin.h"
#include "types/promise.h"

namespace tlab::tool {
namespace {

constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();
// The largest tick: 1 h keeps every generated magnitude (at most 400^2 quarter
// ticks, far()) below 2^58 ns, so no sum of two of them overflows.
constexpr std::int64_t kMaxTickNs = 3'600'000'000'000;
__extension__ typedef __int128 i128;  // deadline + tick without overflow

// The promises this layer can judge; the others (thread_safe, mutual_exclusion,
// virtual_time ...) need threads, a timed wait or are capabilities.
constexpr PromiseSet kJudgeable = Promise::kDelivery | Promise::kExactlyOnce |
                                  Promise::kNeverEarly | Promise::kAccurateCancel |
                                  Promise::kFifoTies | Promise::kPendingCount;

// One generated command. Every field is a small integer drawn from [0, bound)
// that shrinks towards 0, and every value is meaningful in every state (run()
// resolves references modulo what exists), so rapidcheck may drop or shrink any
// command and the sequence stays valid. Shrinking `kind` turns a command into a
// Schedule; shrinking the rest gives delay 0, advance 0, the first timer.
struct Op {
  int kind = 0;     // [0,100): < 35 Schedule, < 65 Advance, < 85 Cancel, else Reschedule
  int variant = 0;  // [0,100): which delay, advance or handle (delay_of, target_of, pick)
  int n = 0;        // [0,401): magnitude in quarter ticks, reduced per variant
  int jitter = 0;   // [0,8): 6 adds 1 ns, 7 subtracts 1 ns (off-by-one comparisons)
  int ref = 0;      // [0,1000): which timer, modulo the candidates
};

// showValue: rapidcheck's view of a command (its own counterexample, unused:
// the transcript replaces it).
[[maybe_unused]] void showValue(const Op& op, std::ostream& os) {
  os << fmt::format("Op{{{}, {}, {}, {}, {}}}", op.kind, op.variant, op.n, op.jitter, op.ref);
}

// field: an integer in [0, bound) over the whole range at every size (rapidcheck's
// inRange uses only size/100 of its range; here the size bounds the sequence's
// length, not how far a command may reach), shrinking towards 0.
rc::Gen<int> field(int bound) { return rc::gen::resize(100, rc::gen::inRange(0, bound)); }

rc::Gen<Op> gen_op() {
  return rc::gen::build<Op>(rc::gen::set(&Op::kind, field(100)),
                            rc::gen::set(&Op::variant, field(100)),
                            rc::gen::set(&Op::n, field(401)), rc::gen::set(&Op::jitter, field(8)),
                            rc::gen::set(&Op::ref, field(1000)));
}

// ns: a time or duration as the transcript shows it: "0", "5ms", "1250us",
// "-250us", "INT64_MAX", "INT64_MAX-750us".
std::string ns(std::int64_t v) {
  if (v == kNever) return "INT64_MAX";
  if (v > kNever / 2) return "INT64_MAX-" + ns(kNever - v);
  if (v < 0) return "-" + ns(-v);  // generated values are far above INT64_MIN
  if (v == 0) return "0";
  if (v % 1'000'000'000 == 0) return fmt::format("{}s", v / 1'000'000'000);
  if (v % 1'000'000 == 0) return fmt::format("{}ms", v / 1'000'000);
  if (v % 1'000 == 0) return fmt::format("{}us", v / 1'000);
  return fmt::format("{}ns", v);
}

std::string status_name(tlab_status st) {
  switch (st) {
    case TLAB_OK:
      return "OK";
    case TLAB_EINVAL:
      return "EINVAL";
    case TLAB_ENOMEM:
      return "ENOMEM";
    case TLAB_ESTATE:
      return "ESTATE";
    case TLAB_EFAIL:
      return "EFAIL";
  }
  return fmt::format("status {}", static_cast<int>(st));
}

std::string cancel_result_name(std::int32_t r) {
  switch (r) {
    case TLAB_CANCEL_PREVENTED:
      return "PREVENTED";
    case TLAB_CANCEL_TOO_LATE:
      return "TOO_LATE";
    case TLAB_CANCEL_UNKNOWN:
      return "UNKNOWN";
    default:
      return fmt::format("result {}", r);
  }
}

std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  const i128 s = static_cast<i128>(a) + b;
  return s > kNever ? kNever : static_cast<std::int64_t>(s);
}

// TranscriptFormat: the ledger's sentences as the transcript reads: an instant is
// its line ("step 4"), times and durations as the calls show them ("5ms"), a
// handle by its cookie ("h3").
class TranscriptFormat : public LedgerFormat {
 public:
  std::string at(const LedgerInstant& i) const override { return fmt::format("step {}", i.step); }
  std::string time(std::int64_t t) const override { return ns(t); }
  std::string duration(std::int64_t d) const override { return ns(d); }
  std::string delay(std::int64_t d) const override { return ns(d); }
  std::string handle(std::uint64_t cookie, std::uint64_t) const override {
    return fmt::format("h{}", cookie);
  }
};

// What fired() records: the cookie and the call it came from inside (nullptr:
// between calls).
struct Host {
  const char* inside = nullptr;
  std::vector<std::pair<std::uint64_t, const char*>> fired;
};

extern "C" void record_fired(void* host, std::uint64_t cookie) {
  auto* h = static_cast<Host*>(host);
  h->fired.emplace_back(cookie, h->inside);
}

struct Violation {};  // thrown by Session::wrong once the transcript says why

// Session: one instance of the subject driven by one command sequence, its
// ledger (the reference model: every timer's state and the rules it is judged
// by), and the transcript. Ground rules: the property's thread only.
class Session {
 public:
  Session(const tlab_subject& s, const SubjectPropertyOptions& o, PromiseSet judged)
      : s_(s),
        judged_(judged),
        tick_(o.tick_ns),
        quarter_(std::max<std::int64_t>(1, o.tick_ns / 4)),
        max_delay_(s.max_delay_ns == 0 ? kNever : s.max_delay_ns) {}
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;
  // A sequence stopped by a violation still destroys its instance (unjudged).
  ~Session() {
    if (self_ == nullptr) return;
    host_.inside = "destroy()";
    try {
      s_.destroy(self_);
    } catch (...) {  // already judged: the sequence failed before
    }
  }

  // Session::run: create, the commands, destroy. Throws Violation at the first
  // wrong call, with transcript() ending in that call.
  void run(const std::vector<Op>& ops) {
    const std::string shown = fmt::format("create(now=0, tick={})", ns(tick_));
    tlab_subject_config config{};
    config.struct_size = sizeof(config);
    config.now_ns = 0;
    config.tick_ns = tick_;
    config.host = &host_;
    config.fired = &record_fired;
    void* self = nullptr;
    // Cookies are 1 .. ops.size() at most: a ring that size keeps every timer.
    ledger_.emplace(ledger_options(ops.size() + 1));
    const tlab_status st = call("create()", shown, [&] { return s_.create(&config, &self); });
    line(st == TLAB_OK ? shown : shown + " -> " + status_name(st));
    if (st != TLAB_OK) wrong("create() must succeed", "abi");
    self_ = self;
    no_fires();
    for (const Op& op : ops) {
      apply(op);
      check_pending();
    }
    void* const doomed = std::exchange(self_, nullptr);
    call("destroy()", "destroy()", [&] { s_.destroy(doomed); });
    line("destroy()");
    no_fires();
  }

  // Session::transcript: the numbered lines so far, '\n'-terminated.
  std::string transcript() const {
    std::string out;
    for (const std::string& l : lines_) out += l + '\n';
    return out;
  }

 private:
  // call: f(), the ABI call `shown`, with fired() attributed to `name` (a fire
  // outside poll() is an ABI error). An exception escaping it (a crash of the case
  // across a real C ABI) ends the sequence on a line of its own.
  template <class F>
  auto call(const char* name, const std::string& shown, F&& f) -> decltype(f()) {
    host_.inside = name;
    struct Reset {
      Host& h;
      ~Reset() { h.inside = nullptr; }
    } reset{host_};
    try {
      return f();
    } catch (const std::exception& e) {
      line(shown + " -> threw");
      wrong(fmt::format("an exception escaped the ABI: \"{}\"", e.what()), "abi");
    } catch (...) {
      line(shown + " -> threw");
      wrong("an exception escaped the ABI", "abi");
    }
  }

  int step() const { return static_cast<int>(lines_.size()); }
  void line(std::string text) { lines_.push_back(fmt::format("{} {}", lines_.size() + 1, text)); }
  void append(const std::string& text) { lines_.back() += text; }

  [[noreturn]] void wrong(const std::string& why, std::string_view tag) {
    append(fmt::format("   <- wrong: {} ({})", why, tag));
    throw Violation{};
  }
  // ledger_options: the sequential order's rules, minus what this layer lets a
  // subject answer as it likes (a repeated cancel of an unfired timer: its effect
  // on others is judged instead); the finding sink keeps the first judged one.
  TimerLedger::Options ledger_options(std::size_t ring) {
    TimerLedger::Options o;
    o.rules = LedgerRules::all()
                  .without(LedgerRule::kFifoLaterFirst)
                  .without(LedgerRule::kPreventedTwice)
                  .without(LedgerRule::kPendingList);
    o.order = LedgerOrder::kSequential;
    o.ring = ring;
    o.format = &format_;
    o.sink = [this](Oracle oracle, const std::string& why) {
      // A promise not judged is measured and ignored.
      const std::optional<Promise>& p = info_of(oracle).promise;
      if (!finding_ && p && judged_.has(*p)) finding_ = Finding{why, name_of(*p)};
    };
    return o;
  }
  // judged_wrong: the ledger's first judged finding, if its last event made one,
  // ends the sequence on the current line.
  void judged_wrong() {
    if (finding_) wrong(finding_->why, finding_->promise);
  }
  LedgerInstant instant() const { return LedgerInstant{now_, static_cast<std::uint64_t>(step())}; }

  // no_fires: fired() is only allowed from inside poll().
  void no_fires() {
    if (host_.fired.empty()) return;
    const auto [cookie, inside] = host_.fired.front();
    wrong(fmt::format("fired cookie {} {}", cookie,
                      inside != nullptr ? fmt::format("from inside {}", inside)
                                        : std::string("between calls")),
          "abi");
  }

  // pick: the timer `op` names: among the armed ones, in scheduling order (unless
  // `any`, or none is armed), else among every timer ever accepted; none if there
  // is none.
  std::optional<LedgerView> pick(const Op& op, bool any) {
    const std::vector<LedgerView> armed = ledger_->timers(LedgerWhich::kArmed);
    if (!any && !armed.empty()) return armed[static_cast<std::size_t>(op.ref) % armed.size()];
    const std::vector<LedgerView> all = ledger_->timers(LedgerWhich::kAccepted);
    if (all.empty()) return std::nullopt;
    return all[static_cast<std::size_t>(op.ref) % all.size()];
  }

  std::int64_t jitter(const Op& op) const { return op.jitter == 6 ? 1 : op.jitter == 7 ? -1 : 0; }
  // far: n^2 quarter ticks, 0 .. 40000 ticks, dense near 0 and reaching the upper
  // levels of a hierarchical wheel (tokio's third level starts at 4096 ticks).
  std::int64_t far(const Op& op) const {
    return static_cast<std::int64_t>(op.n) * op.n * quarter_ + jitter(op);
  }

  std::int64_t delay_of(const Op& op) {
    if (op.variant >= 55 && op.variant < 75) {  // a tie with a pending timer's deadline
      const std::vector<LedgerView> pending = ledger_->timers(LedgerWhich::kLive);
      if (!pending.empty()) {
        // A deadline far in the past (a negative one, polled at INT64_MAX) is
        // clamped to the most negative delay now + delay can still represent.
        const i128 d = static_cast<i128>(
                           pending[static_cast<std::size_t>(op.ref) % pending.size()].deadline) -
                       now_;
        return static_cast<std::int64_t>(std::max<i128>(d, -static_cast<i128>(kNever)));
      }
    }
    if (op.variant >= 45 && op.variant < 55) return far(op);
    if (op.variant >= 75 && op.variant < 88) return kNever - (op.n % 13) * quarter_;  // huge
    if (op.variant >= 88) return -((op.n % 12) + 1) * quarter_ + jitter(op);          // negative
    return (op.n % 81) * quarter_ + jitter(op);  // 0 .. 20 ticks
  }

  std::int64_t target_of(const Op& op) const {
    std::int64_t dt = 0;
    if (op.variant < 45) {
      dt = (op.n % 13) * quarter_ + jitter(op);  // 0 .. 3 ticks
    } else if (op.variant < 75) {
      dt = op.n * quarter_ + jitter(op);  // 0 .. 100 ticks
    } else if (op.variant < 90) {
      dt = far(op);
    } else if (op.variant < 96) {
      return std::max(now_, kNever - (op.n % 13) * quarter_);  // near the end of time
    } else {
      return kNever;
    }
    return saturating_add(now_, std::max<std::int64_t>(0, dt));
  }

  void apply(const Op& op) {
    if (op.kind < 35) {
      schedule(delay_of(op));
    } else if (op.kind < 65) {
      advance(target_of(op));
    } else if (op.kind < 85) {
      if (const auto t = pick(op, op.variant >= 70)) cancel(*t);
    } else {  // reschedule: the same logical timer, cancelled and armed again
      if (const auto t = pick(op, false)) cancel(*t);
      schedule(delay_of(op));
    }
  }

  void schedule(std::int64_t delay) {
    const std::uint64_t cookie = next_cookie_++;
    std::uint64_t handle = 0;
    std::string text =
        fmt::format("schedule(now={}, delay={}, cookie={})", ns(now_), ns(delay), cookie);
    const tlab_status st =
        call("schedule()", text, [&] { return s_.schedule(self_, now_, delay, cookie, &handle); });
    text += " -> " + (st == TLAB_OK ? fmt::format("h{}", cookie) : status_name(st));
    line(std::move(text));
    no_fires();
    if (st == TLAB_OK) {
      ledger_->schedule(cookie, LedgerSchedule{{}, instant(), delay, true, 0});
      ledger_->armed(cookie, handle);
      return;
    }
    if (st == TLAB_ENOMEM) return;
    if (st != TLAB_EINVAL) wrong("schedule() may return OK, EINVAL or ENOMEM", "abi");
    if (delay >= 0 && delay <= max_delay_) {
      wrong(fmt::format("EINVAL for a delay in [0, max_delay_ns={}]", ns(max_delay_)), "abi");
    }
  }

  void cancel(const LedgerView& t) {
    std::int32_t result = 0;
    const std::string shown = fmt::format("cancel(h{})", t.cookie);
    const tlab_status st =
        call("cancel()", shown, [&] { return s_.cancel(self_, t.handle, &result); });
    line(shown + " -> " + (st == TLAB_OK ? cancel_result_name(result) : status_name(st)));
    no_fires();
    if (st == TLAB_EINVAL) return;  // refused: nothing cancelled, no claim
    if (st != TLAB_OK) wrong("cancel() may return OK or EINVAL", "abi");
    if (result != TLAB_CANCEL_PREVENTED && result != TLAB_CANCEL_TOO_LATE &&
        result != TLAB_CANCEL_UNKNOWN) {
      wrong(fmt::format("{} is not a tlab_cancel_result", result), "abi");
    }
    LedgerCancel c;
    c.cookie = t.cookie;
    c.handle = t.handle;
    c.begin = c.end = instant();
    ledger_->cancelled(c, result);
    judged_wrong();
  }

  void advance(std::int64_t to) {
    now_ = to;
    std::string text = fmt::format("poll(now={})", ns(now_));
    const tlab_status st = call("poll()", text, [&] { return s_.poll(self_, now_); });
    std::vector<std::pair<std::uint64_t, const char*>> fired;
    fired.swap(host_.fired);
    for (std::size_t i = 0; i < fired.size(); ++i) {
      text += fmt::format(
          "{}{}", i == 0 ? (fired.size() == 1 ? ": fired cookie " : ": fired cookies ") : ", ",
          fired[i].first);
    }
    if (st != TLAB_OK) text += " -> " + status_name(st);
    line(std::move(text));
    if (st != TLAB_OK) wrong("poll() may only return OK", "abi");
    for (const auto& f : fired) on_fired(f.first);
    // now_ >= 0 and tick_ <= kMaxTickNs: the horizon does not overflow.
    ledger_->overdue(instant(), now_ - tick_, " (deadline + tick <= now)");
    judged_wrong();
  }

  void on_fired(std::uint64_t cookie) {
    if (!ledger_->accepted(cookie)) wrong(fmt::format("cookie {} was never armed", cookie), "abi");
    ledger_->fired(cookie, instant());
    judged_wrong();
  }

  void check_pending() {
    if (!judged_.has(Promise::kPendingCount)) return;
    const LedgerWindow before = ledger_->pending_window();
    std::uint64_t count = 0;
    const tlab_status st =
        call("pending()", "pending()", [&] { return s_.pending(self_, &count); });
    const std::string shown =
        fmt::format("pending() -> {}", st == TLAB_OK ? std::to_string(count) : status_name(st));
    if (st != TLAB_OK || !host_.fired.empty()) {
      line(shown);
      no_fires();
      wrong("pending() may only return OK", "abi");
    }
    // The line is written only when it is wrong: it would be the next one.
    ledger_->pending_count(count, before, "", LedgerInstant{now_, static_cast<std::uint64_t>(step() + 1)});
    if (!finding_) return;
    line(shown);
    judged_wrong();
  }

  struct Finding {
    std::string why;
    std::string_view promise;
  };

  const tlab_subject& s_;
  const PromiseSet judged_;
  const std::int64_t tick_;
  const std::int64_t quarter_;  // the generator's unit: a quarter tick
  const std::int64_t max_delay_;
  Host host_;
  void* self_ = nullptr;  // the instance, until destroy()
  std::int64_t now_ = 0;
  std::uint64_t next_cookie_ = 1;
  const TranscriptFormat format_;
  std::optional<TimerLedger> ledger_;  // made by run(), sized to its sequence
  std::optional<Finding> finding_;     // the ledger's first judged finding
  std::vector<std::string> lines_;
};

// not_applicable_reason: why `s` (a checked descriptor, on which VIRTUAL implies
// a loop-driven facility on the host clock) cannot run here, or "" when it can.
std::string not_applicable_reason(const tlab_subject& s) {
  if (s.kind != TLAB_KIND_FACILITY) return "it is a timed wait, not a timer facility";
  if ((s.promises & TLAB_PROMISE_VIRTUAL) != 0) return "";
  std::string why = "it does not promise TLAB_PROMISE_VIRTUAL (tlab owns its time)";
  if (s.drive != TLAB_DRIVE_LOOP) why += "; it fires from its own threads (TLAB_DRIVE_SELF)";
  if (s.clock != TLAB_CLOCK_HOST) why += "; it reads CLOCK_MONOTONIC itself";
  return why;
}

class QuietListener : public rc::detail::TestListener {
 public:
  void onTestCaseFinished(const rc::detail::CaseDescription&) override {}
  void onShrinkTried(const rc::detail::CaseDescription&, bool) override {}
  void onTestFinished(const rc::detail::TestMetadata&, const rc::detail::TestResult&) override {}
};

}  // namespace

namespace {

// broken_of: the tag the counterexample's wrong line ends with (Session::wrong
// appends "   <- wrong: <why> (<tag>)" as the transcript's last text).
std::string broken_of(const std::string& transcript) {
  const std::size_t mark = transcript.rfind("   <- wrong: ");
  const std::size_t end = transcript.find_last_not_of(" \n");
  if (mark == std::string::npos || end == std::string::npos || transcript[end] != ')') return "";
  const std::size_t open = transcript.rfind('(', end);
  if (open == std::string::npos || open < mark) return "";
  return transcript.substr(open + 1, end - open - 1);
}

}  // namespace

SubjectPropertyResult check_subject_properties(const tlab_subject& s,
                                               const SubjectPropertyOptions& options) {
  if (options.tick_ns <= 0 || options.tick_ns > kMaxTickNs || options.tests <= 0 ||
      options.max_size < 0) {
    throw std::invalid_argument(
        fmt::format("check_subject_properties: tick_ns={} tests={} max_size={}", options.tick_ns,
                    options.tests, options.max_size));
  }
  std::string field, why;
  if (!check_descriptor(s, field, why)) {
    throw std::invalid_argument(
        fmt::format("check_subject_properties: descriptor field {} {}", field, why));
  }
  SubjectPropertyResult result;
  result.subject = s.name;
  result.seed = options.seed;
  result.not_applicable = not_applicable_reason(s);
  if (!result.not_applicable.empty()) return result;

  PromiseSet judged;
  const PromiseSet promised = promises_of_abi(s.promises);
  for (std::size_t i = 0; i < kPromiseCount; ++i) {
    const auto p = static_cast<Promise>(i);
    if (!promised.has(p) || !kJudgeable.has(p)) continue;
    judged = judged | p;
    result.judged_promises.emplace_back(name_of(p));
  }

  const auto property = [&] {
    const auto ops = *rc::gen::container<std::vector<Op>>(gen_op());
    Session session(s, options, judged);
    try {
      session.run(ops);
    } catch (const Violation&) {
      throw rc::detail::CaseResult(rc::detail::CaseResult::Type::Failure, session.transcript());
    }
  };
  rc::detail::TestParams params;
  params.seed = options.seed;
  params.maxSuccess = options.tests;
  params.maxSize = options.max_size;
  const rc::detail::TestMetadata metadata{"subject_property." + result.subject,
                                          "property layer on " + result.subject};
  QuietListener quiet;  // progress and shrinking stay silent; the result carries everything
  // An explicit, empty reproduce map: the overloads without one read rapidcheck's
  // global configuration (RC_PARAMS), which prints "Using configuration" and could
  // replace this run by a reproduction of another property.
  const std::unordered_map<std::string, rc::detail::Reproduce> no_reproduce;
  const rc::detail::TestResult r = rc::detail::checkProperty(rc::detail::toProperty(property),
                                                             metadata, params, quiet, no_reproduce);

  rc::detail::SuccessResult success;
  rc::detail::FailureResult failure;
  rc::detail::GaveUpResult gave_up;
  rc::detail::Error error;
  if (r.match(success)) {
    result.tests_run = success.numSuccess;
  } else if (r.match(failure)) {
    result.passed = false;
    result.tests_run = failure.numSuccess + 1;
    result.failure = failure.description;
    result.broken = broken_of(result.failure);
  } else if (r.match(gave_up)) {
    result.passed = false;
    result.tests_run = gave_up.numSuccess;
    result.failure = "rapidcheck gave up: " + gave_up.description;
  } else if (r.match(error)) {
    result.passed = false;
    result.failure = "rapidcheck error: " + error.description;
  }
  return result;
}

std::string describe(const SubjectPropertyResult& result) {
  if (!result.not_applicable.empty()) {
    return fmt::format("property layer: not applicable to {}: {}\n", result.subject,
                       result.not_applicable);
  }
  std::string judged;
  for (const std::string& p : result.judged_promises) judged += (judged.empty() ? "" : ", ") + p;
  if (judged.empty()) judged = "none promised (only the ABI rules)";
  if (result.passed) {
    return fmt::format("property layer: pass on {}: {} random sequences, seed {}\n  judged: {}\n",
                       result.subject, result.tests_run, result.seed, judged);
  }
  std::string out = fmt::format(
      "property layer: FAIL on {}: sequence {} failed ({}), seed {}; shrunk counterexample:\n",
      result.subject, result.tests_run, result.broken.empty() ? "rapidcheck" : result.broken,
      result.seed);
  std::size_t begin = 0;
  while (begin < result.failure.size()) {
    std::size_t end = result.failure.find('\n', begin);
    if (end == std::string::npos) end = result.failure.size();
    out += "  " + result.failure.substr(begin, end - begin) + '\n';
    begin = end + 1;
  }
  out += fmt::format("  judged: {}\n  replay: the same seed ({}) and options give this sequence\n",
                     judged, result.seed);
  return out;
}

}  // namespace tlab::tool
