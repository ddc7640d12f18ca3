// tests/unit/timer_ledger_support.h: what the ledger's tests share
// (timer_ledger_test.cc, timer_ledger_late_test.cc): a ledger whose findings are
// kept in order, instants printed as "t=<ns>", and the calls a test makes as
// one-liners. Test code only; one ledger per test, on the test's thread unless a
// test says otherwise.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "oracles/timer_ledger.h"

namespace tlab::tool::ledger_test {

// Instants print as "t=<ns>", so a sentence shows which instant it names.
class PlainFormat : public LedgerFormat {
 public:
  std::string at(const LedgerInstant& i) const override { return fmt::format("t={}", i.t); }
};

// A ledger and the findings it reported, in order.
class Ledger {
 public:
  explicit Ledger(LedgerOrder order = LedgerOrder::kOverlapping,
                  LedgerRules rules = LedgerRules::all(), std::size_t ring = 64,
                  std::optional<std::int64_t> late_allowance = std::nullopt)
      : ledger_(options(order, rules, ring, late_allowance)) {}

  TimerLedger* operator->() { return &ledger_; }
  TimerLedger& operator*() { return ledger_; }

  // arm: schedule() of `cookie` at `at` with `delay`, returning handle cookie + 100.
  void arm(std::uint64_t cookie, std::int64_t at, std::int64_t delay, bool fifo = false,
           std::string_view owner = "scheduler#0") {
    ledger_.schedule(cookie, LedgerSchedule{owner, LedgerInstant{at, 0}, delay, fifo, 0});
    ledger_.armed(cookie, cookie + 100);
  }
  void fire(std::uint64_t cookie, std::int64_t now, std::uint64_t step = 0) {
    ledger_.fired(cookie, LedgerInstant{now, step});
  }
  // begin / end: one cancel() call by `who` on the overlapping order's steps.
  LedgerCancel begin(std::uint64_t cookie, std::int64_t t0, std::string_view who = "canceller#0") {
    LedgerCancel c;
    c.cookie = cookie;
    c.handle = cookie + 100;
    c.who = who;
    c.begin = LedgerInstant{t0, ledger_.step()};
    return c;
  }
  void end(LedgerCancel& c, std::int64_t t1, std::int32_t result) {
    c.end = LedgerInstant{t1, ledger_.step()};
    ledger_.cancelled(c, result);
  }
  // cancel: a whole call at once (sequential order: `step` is its line).
  void cancel(std::uint64_t cookie, std::int64_t t, std::uint64_t step, std::int32_t result) {
    LedgerCancel c;
    c.cookie = cookie;
    c.handle = cookie + 100;
    c.begin = c.end = LedgerInstant{t, step};
    ledger_.cancelled(c, result);
  }

  std::size_t count(Oracle o) const {
    std::size_t n = 0;
    for (const auto& f : found_) n += f.first == o ? 1 : 0;
    return n;
  }
  std::string first(Oracle o) const {
    for (const auto& f : found_) {
      if (f.first == o) return f.second;
    }
    return "";
  }
  bool quiet() const { return found_.empty(); }
  std::string all() const {
    std::string out;
    for (const auto& f : found_) out += fmt::format("{}: {}\n", name_of(f.first), f.second);
    return out;
  }
  std::vector<std::int64_t> lateness;

 private:
  TimerLedger::Options options(LedgerOrder order, LedgerRules rules, std::size_t ring,
                               std::optional<std::int64_t> late_allowance) {
    TimerLedger::Options o;
    o.late_allowance = late_allowance;
    o.rules = rules;
    o.order = order;
    o.ring = ring;
    o.format = &format_;
    o.sink = [this](Oracle oracle, const std::string& s) { found_.emplace_back(oracle, s); };
    o.lateness = [this](std::int64_t late) { lateness.push_back(late); };
    return o;
  }
  PlainFormat format_;
  std::vector<std::pair<Oracle, std::string>> found_;
  TimerLedger ledger_;
};

}  // namespace tlab::tool::ledger_test
