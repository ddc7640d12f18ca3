// tests/support/ci_report.h: a hand-made report for the CI-output tests (SARIF,
// GitHub, HTML): one case per kind of finding, with text that needs escaping.
#pragma once

#include <string>

#include "report/report.h"

namespace tlab::tool::testing {

// Text that every output must escape: markup, the workflow-command separators,
// a percent sign and a line break.
inline constexpr const char* kHostileText = "<script>alert('x')</script> 50% a:b,c\nsecond line";

inline CaseRecord ci_case(const std::string& strategy, Verdict v, bool expect_fail = false) {
  CaseRecord c;
  c.scenario = "racing_cancellers";
  c.strategy = strategy;
  c.expect_fail = expect_fail;
  if (expect_fail) c.mutant = "token_flag_only";
  c.id = "racing_cancellers/" + strategy + (expect_fail ? "/token_flag_only" : "");
  c.seed = 1;
  c.result.verdict = v;
  c.result.promises = PromiseSet(Promise::kExactlyOnce) | Promise::kDelivery;
  return c;
}

// ci_report: four cases of the built-in racing_cancellers: a violation of
// double_resume (binary_heap), a pass (hashed_wheel), a timeout (tick_grid) and a
// mutant that survived (token_flag_only on binary_heap).
inline Report ci_report() {
  Report r;
  r.command = "check";
  r.environment.tlab_version = "0.1.0";
  r.scenarios["racing_cancellers"] = {"builtin:racing_cancellers.json", Json::object()};
  CaseRecord bad = ci_case("binary_heap", Verdict::kFail);
  bad.result.violations["double_resume"] = {2, kHostileText};
  for (std::int64_t ns = 1000; ns < 5'000'000; ns += 7919)
    bad.result.latency["fire_lateness"].record(ns);
  r.cases.push_back(bad);
  CaseRecord good = ci_case("hashed_wheel", Verdict::kPass);
  good.result.latency["fire_lateness"].record(2000, 50);
  r.cases.push_back(good);
  CaseRecord hung = ci_case("tick_grid", Verdict::kTimeout);
  hung.result.message = "waiter#3: parked on token 0x2a since 4.1 s";
  r.cases.push_back(hung);
  r.cases.push_back(ci_case("binary_heap", Verdict::kPass, /*expect_fail=*/true));
  r.planned = r.cases.size();
  return r;
}

// with_unpromised: `r` plus a passed case (libuv) whose early fires its subject does
// not promise to avoid: an unpromised finding, with text that needs escaping.
inline Report with_unpromised(Report r) {
  CaseRecord peer = ci_case("libuv", Verdict::kPass);
  peer.result.violations["early_fire"] = {70, kHostileText};
  peer.result.violations["double_resume"] = {0, ""};
  r.cases.push_back(peer);
  r.planned = r.cases.size();
  return r;
}

}  // namespace tlab::tool::testing
