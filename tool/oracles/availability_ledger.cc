// tlab/tool/oracles/availability_ledger.cc: see availability_ledger.h.
#include "oracles/availability_ledger.h"

#include <algorithm>

#include <fmt/format.h>

#include "base/fmt_ns.h"

namespace tlab::tool {

std::int64_t undeserved_overlap(const TimedOutWait& w, const Availability& a) {
  const std::int64_t from = std::max(w.call, a.from);
  const std::int64_t to = std::min({w.deadline, w.returned, a.to});
  return to > from ? to - from : 0;
}

std::optional<std::string> undeserved(const TimedOutWait& w, const Availability& a,
                                      std::int64_t grace_ns, std::string_view resource,
                                      const AvailabilityFormat& at) {
  const std::int64_t overlap = undeserved_overlap(w, a);
  if (overlap < grace_ns || overlap == 0) return std::nullopt;
  return fmt::format(
      "{}: {} called at {} timed out at {} (deadline {}), yet {} was available from {} {}: "
      "{} of its wait, at least the grace of {} allowed for wake latency",
      w.who, w.what, at(w.call), at(w.returned), at(w.deadline), resource, at(a.from),
      a.to == Availability::kOpen ? std::string("on") : "to " + at(a.to), fmt_ns(overlap),
      fmt_ns(grace_ns));
}

std::optional<std::string> woken_late(const TimedOutWait& w, const Availability& a,
                                      std::int64_t grace_ns, std::string_view resource,
                                      const AvailabilityFormat& at) {
  const TimedOutWait window{w.call, w.returned, w.returned, w.who, w.what};
  const std::int64_t overlap = undeserved_overlap(window, a);
  if (overlap < grace_ns || overlap == 0) return std::nullopt;
  return fmt::format(
      "{}: {} called at {} succeeded only at {}, yet {} was available from {} {}: {} of its "
      "wait, at least the grace of {} allowed for wake latency; a release or completion "
      "did not wake it (a later wake-up or its own timer hid the lost one)",
      w.who, w.what, at(w.call), at(w.returned), resource, at(a.from),
      a.to == Availability::kOpen ? std::string("on") : "to " + at(a.to), fmt_ns(overlap),
      fmt_ns(grace_ns));
}

AvailabilityLedger::AvailabilityLedger(Options o, Clock now, AvailabilityFormat at, Sink sink)
    : o_(std::move(o)), now_(std::move(now)), at_(std::move(at)), sink_(std::move(sink)) {
  StdLock lk(mu_);
  open_from_ = now_();
}

AvailabilityLedger::Wait AvailabilityLedger::begin() {
  StdLock lk(mu_);
  const std::int64_t t = now_();
  in_flight_.insert(t);
  return Wait{t};
}

bool AvailabilityLedger::available() const { return held_ < std::int64_t{o_.capacity}; }

void AvailabilityLedger::change(std::int64_t delta) {
  const bool was = available();
  held_ += delta;
  const bool is = available();
  if (was == is) return;
  const std::int64_t t = now_();
  if (is) {
    open_from_ = t;
    return;
  }
  // An interval closes; keep it only if a wait in flight began before its end.
  if (!in_flight_.empty() && *in_flight_.begin() < t) closed_.push_back({open_from_, t});
}

void AvailabilityLedger::held(std::uint32_t n) {
  StdLock lk(mu_);
  change(n);
}

void AvailabilityLedger::released(std::uint32_t n) {
  StdLock lk(mu_);
  change(-static_cast<std::int64_t>(n));
}

void AvailabilityLedger::end(const Wait& w, bool ok, std::int64_t deadline, std::string_view who) {
  std::optional<std::string> sentence;
  {
    StdLock lk(mu_);
    const std::int64_t t = now_();
    if (auto it = in_flight_.find(w.call); it != in_flight_.end()) in_flight_.erase(it);
    // A success's window runs to its return, a timeout's to min(deadline, return).
    const TimedOutWait tw{w.call, ok ? t : deadline, t, who, o_.what};
    // The interval with the longest overlap: the closed ones, then the open one.
    Availability best{0, 0};
    std::int64_t best_overlap = 0;
    const auto consider = [&](const Availability& a) {
      const std::int64_t v = undeserved_overlap(tw, a);
      if (v > best_overlap) best_overlap = v, best = a;
    };
    for (const Availability& a : closed_) consider(a);
    if (available()) consider({open_from_, Availability::kOpen});
    if (ok) {
      if (best_overlap > 0) sentence = woken_late(tw, best, o_.grace_ns, o_.resource, at_);
      if (o_.wait_takes_unit) change(1);
    } else {
      ++judged_;
      if (best_overlap > 0) sentence = undeserved(tw, best, o_.grace_ns, o_.resource, at_);
    }
    // Drop the intervals that ended before every wait still in flight began.
    const std::int64_t oldest = in_flight_.empty() ? INT64_MAX : *in_flight_.begin();
    while (!closed_.empty() && closed_.front().to <= oldest) closed_.pop_front();
  }
  if (sentence) sink_(ok ? Oracle::kLostWakeup : Oracle::kUndeservedTimeout, *sentence);
}

std::uint64_t AvailabilityLedger::judged() const {
  StdLock lk(mu_);
  return judged_;
}

}  // namespace tlab::tool
