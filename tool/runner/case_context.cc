// tlab/tool/runner/case_context.cc: see case_context.h.
#include "runner/case_context.h"

#include <sys/resource.h>

#include <algorithm>
#include <thread>

#include <fmt/format.h>

#include "oracles/oracles.h"

namespace tlab::tool::runner {

namespace {

// SplitMix64 (Steele, Lea, Flood 2014): decorrelates seed + index so neighbouring
// actors do not draw correlated streams.
std::uint64_t splitmix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

std::string_view name_of(Phase p) {
  switch (p) {
    case Phase::kStarting:
      return "starting";
    case Phase::kWorking:
      return "working";
    case Phase::kParked:
      return "parked";
    case Phase::kSleeping:
      return "sleeping";
    case Phase::kLocking:
      return "locking";
    case Phase::kWaiting:
      return "waiting";
    case Phase::kHolding:
      return "holding";
    case Phase::kDone:
      return "done";
  }
  return "?";
}

std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void sleep_us(CaseContext& ctx, std::int64_t us) {
  if (us <= 0) {
    std::this_thread::yield();
    return;
  }
  // Slices of 5 ms keep a stopping case prompt without busy waiting.
  const std::int64_t end = steady_ns() + us * 1000;
  for (;;) {
    const std::int64_t left = end - steady_ns();
    if (left <= 0 || ctx.stopping()) return;
    std::this_thread::sleep_for(std::chrono::nanoseconds(std::min<std::int64_t>(left, 5'000'000)));
  }
}

void ActorState::set(Phase p, std::uint64_t obj) {
  // relaxed: a diagnostic snapshot for the watchdog; no decision depends on order.
  object.store(obj, std::memory_order::relaxed);
  since_ns.store(steady_ns(), std::memory_order::relaxed);
  phase.store(p, std::memory_order::relaxed);
}

CaseContext::CaseContext(const CaseSpec& spec, std::int64_t start_steady_ns)
    : spec_(spec),
      start_ns_(start_steady_ns),
      ops_left_(static_cast<std::int64_t>(spec.operations)) {}

ActorState& CaseContext::add_actor(const std::string& name) {
  ActorState& a = actors_.emplace_back();
  a.name = name;
  // Its first phase began now: an actor that never changes phase (a simulated
  // case's timer thread) is reported "starting for" its time in the case, not for
  // the host's uptime. relaxed: the actor is not running yet.
  a.since_ns.store(steady_ns(), std::memory_order::relaxed);
  logs_.emplace_back();
  return actors_.back();
}

ActorLog& CaseContext::log_of(const ActorState& a) {
  for (std::size_t i = 0; i < actors_.size(); ++i) {
    if (&actors_[i] == &a) return logs_[i];
  }
  throw std::logic_error("CaseContext::log_of: unknown actor " + a.name);
}

std::mt19937_64 CaseContext::rng_for(std::uint64_t index) const {
  return std::mt19937_64(splitmix(spec_.seed * 0x100000001b3ULL + index));
}

std::uint64_t CaseContext::thread_seed(std::uint64_t index) const {
  return splitmix(splitmix(spec_.seed) ^ (index + 0x51ed27ULL));
}

bool CaseContext::take_op() {
  if (stopping()) return false;
  // relaxed: a counter; the budget is a bound, not an ordering point.
  if (ops_left_.fetch_sub(1, std::memory_order::relaxed) <= 0) return false;
  ops_done_.fetch_add(1, std::memory_order::relaxed);
  return true;
}

std::uint64_t CaseContext::share(std::size_t i, std::size_t n) const {
  if (n == 0) return 0;
  return spec_.operations / n + (i < spec_.operations % n ? 1 : 0);
}

bool CaseContext::take_op(std::uint64_t& left) {
  if (left == 0 || stopping()) return false;
  --left;
  ops_done_.fetch_add(1, std::memory_order::relaxed);  // relaxed: a counter
  return true;
}

std::uint64_t CaseContext::ops_done() const { return ops_done_.load(std::memory_order::relaxed); }

std::int64_t CaseContext::elapsed_ns() const { return steady_ns() - start_ns_; }

std::string CaseContext::at(std::int64_t t) const { return "t=" + fmt_ns(t - start_ns_); }

void CaseContext::violation(Oracle o, const std::string& example) {
  violation_named(std::string(name_of(o)), example);
}

void CaseContext::violation_named(const std::string& key, const std::string& example) {
  std::lock_guard lk(mu_);
  ViolationRecord& r = violations_[key];
  if (r.count++ == 0) r.first_example = example;
  if (!detected_ && over_bound(scenario().expect, key, r.count)) {
    detected_ = true;
    counters_["detect_us"] =
        static_cast<std::uint64_t>(std::max<std::int64_t>(0, elapsed_ns() / 1000));
    // A mutant case exists to show detection: stop at the first violation.
    if (spec_.expect_fail) stop();
  }
}

void CaseContext::add(const std::string& counter, std::uint64_t n) {
  std::lock_guard lk(mu_);
  counters_[counter] += n;
}

void CaseContext::set_counter(const std::string& counter, std::uint64_t n) {
  std::lock_guard lk(mu_);
  counters_[counter] = n;
}

void CaseContext::note(const std::string& line) {
  std::lock_guard lk(mu_);
  if (!notes_.empty()) notes_ += "; ";
  notes_ += line;
}

std::string CaseContext::actor_report() const {
  std::string out;
  const std::int64_t now = steady_ns();
  for (const ActorState& a : actors_) {
    const Phase p = a.phase.load(std::memory_order::relaxed);
    const std::uint64_t obj = a.object.load(std::memory_order::relaxed);
    const std::int64_t since = a.since_ns.load(std::memory_order::relaxed);
    out += fmt::format("{}: {}", a.name, name_of(p));
    if (obj != 0) out += fmt::format(" on 0x{:x}", obj);
    out += fmt::format(" for {} ({} ops)", fmt_ns(now - since),
                       a.ops.load(std::memory_order::relaxed));
    const std::int64_t dl = a.deadline_ns.load(std::memory_order::relaxed);
    if (p == Phase::kParked && dl != 0)
      out += fmt::format(", deadline passed {} ago", fmt_ns(now - dl));
    out += "\n";
  }
  return out;
}

CaseResult CaseContext::snapshot(Verdict v, const std::string& message, bool with_samples) {
  CaseResult r;
  r.verdict = v;
  std::lock_guard lk(mu_);
  r.violations = violations_;
  r.counters = counters_;
  r.counters["operations_done"] = ops_done();
  r.message = message;
  r.peak_rss_bytes = peak_rss_bytes();
  if (!notes_.empty()) r.message += (r.message.empty() ? "" : "; ") + notes_;
  for (std::size_t i = 0; with_samples && i < kLatencyCount; ++i) {
    Histogram all;
    for (const ActorLog& log : logs_) all.merge(log.latency[i]);
    if (all.count() > 0) r.latency[std::string(kLatencyNames[i])] = std::move(all);
  }
  return r;
}

std::uint64_t peak_rss_bytes() {
  rusage ru{};
  if (::getrusage(RUSAGE_SELF, &ru) != 0) return 0;
  return static_cast<std::uint64_t>(ru.ru_maxrss) * 1024;  // Linux: ru_maxrss is in KiB
}

}  // namespace tlab::tool::runner
