// validate and run agree: every scenario the validator accepts runs (its verdict is
// never "not supported"), and every scenario it refuses is one the runner would
// refuse too. Generated over the roles the schema allows (each role alone and each
// pair), both clocks, every token width, and each latency bound, through the real
// loader, tlab validate's check_runnable (subjects/subjects.h), plan_case (which
// resolves the case's engine) and the real stress runner with a handful of
// operations. Bounded by operation counts, not time.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "plan/plan.h"
#include "runner/engines.h"
#include "runner/stress_runner.h"
#include "scenario/scenario.h"
#include "subjects/subjects.h"
#include "tlab/platform/mutant.h"

namespace tlab::tool {
namespace {

// The fields a role requires (kRoleInfo), with small values.
std::string actor_json(const RoleInfo& r) {
  std::string a = fmt::format(R"({{"role": "{}", "count": 1)", r.name);
  if (r.required & kFieldTimeout) a += R"(, "timeout_us": {"fixed": 200})";
  if (r.required & kFieldDelay) a += R"(, "delay_us": {"fixed": 100})";
  if (r.required & kFieldPeriod) a += R"(, "period_us": {"fixed": 2000})";
  return a + "}";
}

std::string scenario_json(const std::vector<const RoleInfo*>& roles, const std::string& clock,
                          int bits, const std::string& expect) {
  std::string actors;
  for (const RoleInfo* r : roles) actors += (actors.empty() ? "" : ", ") + actor_json(*r);
  return fmt::format(
      R"({{"name": "agree", "description": "generated", "engine": {{"strategies": ["binary_heap"],
      "clock": "{}", "token_bits": {}, "tick_us": 100}}, "actors": [{}],
      "run": {{"operations": 12, "budget_s": 5, "seed": 7}}, "expect": {{{}}}}})",
      clock, bits, actors, expect);
}

struct Outcome {
  bool valid = false;
  std::string why;
};

class ValidateRunAgreement : public ::testing::Test {
 protected:
  // Validates `text` as `tlab validate` does; if valid, runs it and requires a
  // verdict that is not a refusal.
  Outcome check(const std::string& text) {
    InputErrors errors;
    auto s = loader_.load_text(text, "generated.json", errors);
    if (!s) return {false, errors.empty() ? "" : errors.front().str()};
    if (!check_runnable(*s, "generated.json", errors)) return {false, errors.front().str()};
    // As `tlab run` plans it: plan_case resolves the engine (or its refusal).
    const CaseSpec spec = plan_case(*s, "binary_heap", std::nullopt, Overrides{}, false);
    const CaseResult r = runner_.run_case(spec, RunContext{});
    EXPECT_NE(r.message.rfind("scenario not supported", 0), 0u)
        << "validate accepted what run refuses: " << r.message << "\n"
        << text;
    EXPECT_NE(r.verdict, Verdict::kError) << r.message << "\n" << text;
    ++ran_;
    return {true, ""};
  }
  ScenarioLoader loader_;
  StressRunner runner_;
  int ran_ = 0;
};

// Each role alone and each pair of roles, on both clocks: validate's answer and
// the runner's agree.
TEST_F(ValidateRunAgreement, RoleMixesAndClocks) {
  int refused = 0;
  for (std::size_t i = 0; i < kRoleCount; ++i) {
    for (std::size_t j = i; j < kRoleCount; ++j) {
      std::vector<const RoleInfo*> roles{&kRoleInfo[i]};
      if (j != i) roles.push_back(&kRoleInfo[j]);
      for (const char* clock : {"steady", "virtual"}) {
        const Outcome o = check(scenario_json(roles, clock, 32, ""));
        if (!o.valid) {
          ++refused;
          EXPECT_NE(o.why.find("generated.json: /"), std::string::npos) << o.why;
        }
      }
    }
  }
  EXPECT_GT(ran_, 10) << "the generator must produce runnable mixes";
  RecordProperty("ran", ran_);
  RecordProperty("refused", refused);
  std::printf("role mixes: %d ran, %d refused by validate\n", ran_, refused);
  EXPECT_GT(refused, 10) << "and mixes the validator refuses";
}

// Every token width the schema allows runs; any other is refused by the schema.
TEST_F(ValidateRunAgreement, TokenWidths) {
  const RoleInfo& waiter = kRoleInfo[static_cast<std::size_t>(Role::kWaiter)];
  const RoleInfo& canceller = kRoleInfo[static_cast<std::size_t>(Role::kCanceller)];
  for (int bits = 1; bits <= 40; ++bits) {
    const Outcome o = check(scenario_json({&waiter, &canceller}, "steady", bits, ""));
    const bool instantiated =
        std::find(runner::kSupportedTokenBits.begin(), runner::kSupportedTokenBits.end(), bits) !=
        runner::kSupportedTokenBits.end();
    EXPECT_EQ(o.valid, instantiated) << bits << ": " << o.why;
  }
}

// A latency bound is accepted only where the engine records that histogram for
// the scenario's roles.
TEST_F(ValidateRunAgreement, LatencyBoundsOnlyWhereMeasured) {
  auto role = [](Role r) { return &kRoleInfo[static_cast<std::size_t>(r)]; };
  const std::string c2r = R"("cancel_to_resume_us": {"p99_max": 600000000})";
  EXPECT_TRUE(
      check(scenario_json({role(Role::kWaiter), role(Role::kCanceller)}, "steady", 32, c2r)).valid);
  const Outcome pool = check(scenario_json({role(Role::kPoolClient)}, "steady", 32, c2r));
  EXPECT_FALSE(pool.valid);
  EXPECT_NE(pool.why.find("/expect/cancel_to_resume_us"), std::string::npos) << pool.why;
  const Outcome no_canceller = check(scenario_json({role(Role::kWaiter)}, "steady", 32, c2r));
  EXPECT_FALSE(no_canceller.valid);
  EXPECT_NE(no_canceller.why.find("canceller"), std::string::npos) << no_canceller.why;
  EXPECT_TRUE(check(scenario_json({role(Role::kPoolClient)}, "steady", 32,
                                  R"("fire_lateness_us": {"max": 600000000})"))
                  .valid);
}

}  // namespace
}  // namespace tlab::tool
