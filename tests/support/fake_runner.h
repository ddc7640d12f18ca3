// tests/support/fake_runner.h: a scripted tool::Runner for CLI and report tests.
//
// Returns, for each case id, the CaseResult a test scripted (default: pass with a
// small latency histogram), records the specs it was given, and can raise the
// interrupt flag after a chosen number of cases, as Ctrl-C would mid-run.
//
// Ground rules: single-threaded, like the real Runner contract (runner.h).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "base/interrupt.h"
#include "runner/runner.h"

namespace tlab::test {

class FakeRunner : public tool::Runner {
 public:
  // FakeRunner::script: the result for case `id` (exact id match).
  std::map<std::string, tool::CaseResult> script;
  // FakeRunner::fail_if: a predicate on the spec; matching cases fail with one
  // double_resume violation (used for "mutant M is caught").
  std::function<bool(const tool::CaseSpec&)> fail_if;
  // Raise interrupted() after this many cases (0: never).
  std::size_t interrupt_after = 0;
  std::vector<tool::CaseSpec> seen;

  tool::CaseResult run_case(const tool::CaseSpec& spec, const tool::RunContext& context) override {
    seen.push_back(spec);
    if (context.progress) context.progress("fake");
    tool::CaseResult r;
    if (auto it = script.find(spec.id); it != script.end()) {
      r = it->second;
    } else if (fail_if && fail_if(spec)) {
      r.verdict = tool::Verdict::kFail;
      r.violations["double_resume"] = {2, "waiter#0 resumed by canceller#1 and by expiry at t=5us"};
    } else {
      r.verdict = tool::Verdict::kPass;
    }
    r.counters["armed"] = 10;
    r.counters["fired"] = 6;
    r.counters["cancelled"] = 4;
    for (std::int64_t v = 1; v <= 100; ++v) r.latency["fire_lateness"].record(v * 1000);
    r.duration_s = 0.01;
    if (interrupt_after != 0 && seen.size() >= interrupt_after) tool::request_interrupt();
    return r;
  }
};

// forward_to: a RunnerFactory for CliEnv whose runners forward to `target` (the
// CLI owns the runner it makes; the test keeps the script and what was seen).
inline tool::RunnerFactory forward_to(FakeRunner& target) {
  struct Forward : tool::Runner {
    explicit Forward(FakeRunner* t) : target(t) {}
    tool::CaseResult run_case(const tool::CaseSpec& spec,
                              const tool::RunContext& context) override {
      return target->run_case(spec, context);
    }
    FakeRunner* target;
  };
  return
      [&target]() -> std::unique_ptr<tool::Runner> { return std::make_unique<Forward>(&target); };
}

}  // namespace tlab::test
