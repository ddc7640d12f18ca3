// Tests for tool/scenario/scenario.h and tool/base/json_input.h: loading, the three passes and
// the `file: /json/pointer: message` shape of every complaint.
#include "scenario/scenario.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "base/embedded.h"
#include "base/json_input.h"
#include "subjects/subjects.h"

namespace tlab::tool {
namespace {

constexpr const char* kGood = R"({
  "name": "racing",
  "description": "waiters raced by cancellers",
  "engine": {"strategies": ["binary_heap", "hashed_wheel"], "tick_us": 50, "workers": 3,
             "token_bits": 4, "clock": "virtual", "pool_size": 8},
  "actors": [
    {"role": "waiter", "count": 2, "timeout_us": {"uniform": [50, 500]}},
    {"role": "canceller", "count": 5, "delay_us": {"exponential": 200}},
    {"role": "scheduler", "count": 1, "delay_us": {"fixed": -5}, "mode": "fixed_rate",
     "period_us": {"fixed": 500}, "cancel_probability": 0.25}
  ],
  "faults": [
    {"point": "token.before_resolve_cas", "delay_us": {"uniform": [1, 50]}, "probability": 0.1},
    {"point": "timer.before_notify", "action": "yield", "probability": 1}
  ],
  "run": {"operations": 1000, "budget_s": 2.5, "seed": 9, "max_pending": 77, "sim": "pct"},
  "expect": {"lost_wakeup": 3, "fire_lateness_us": {"p99_max": 5000, "max": 9000}},
  "catches": ["token_flag_only"]
})";

// A minimal valid document with `extra` spliced in as further top-level members.
std::string with(
    const std::string& extra,
    const std::string& actors = R"([{"role": "waiter", "count": 1, "timeout_us": {"fixed": 100}}])",
    const std::string& run = R"({"operations": 10, "budget_s": 1})") {
  std::string s = R"({"name": "t", "description": "d", "actors": )" + actors + R"(, "run": )" + run;
  if (!extra.empty()) s += ", " + extra;
  return s + "}";
}

struct Outcome {
  bool ok;
  InputErrors errors;
};

Outcome load(const std::string& text) {
  static const ScenarioLoader loader;
  InputErrors errors;
  const bool ok = loader.load_text(text, "f.json", errors).has_value();
  return {ok, errors};
}

// Expects the load to fail with an error at `pointer` whose message contains `needle`.
void expect_error(const std::string& text, const std::string& pointer, const std::string& needle) {
  const Outcome o = load(text);
  EXPECT_FALSE(o.ok) << text;
  bool found = false;
  std::string all;
  for (const InputError& e : o.errors) {
    all += e.str() + "\n";
    EXPECT_EQ(e.file, "f.json");
    EXPECT_EQ(e.str().rfind("f.json: /", 0), 0u) << e.str();
    found = found || (e.pointer == pointer && e.message.find(needle) != std::string::npos);
  }
  EXPECT_TRUE(found) << "wanted " << pointer << ": ..." << needle << "...\ngot:\n" << all;
}

// A full document loads into the typed struct, field by field.
TEST(ScenarioTest, FullDocumentLoadsEveryField) {
  ScenarioLoader loader;
  InputErrors errors;
  auto s = loader.load_text(kGood, "good.json", errors);
  ASSERT_TRUE(s) << (errors.empty() ? "" : errors.front().str());
  EXPECT_EQ(s->name, "racing");
  EXPECT_EQ(s->source, "good.json");
  EXPECT_EQ(s->engine.strategies, (std::vector<std::string>{"binary_heap", "hashed_wheel"}));
  EXPECT_EQ(s->engine.tick_us, 50);
  EXPECT_EQ(s->engine.workers, 3);
  EXPECT_EQ(s->engine.token_bits, 4);
  EXPECT_EQ(s->engine.clock, ClockKind::kVirtual);
  EXPECT_EQ(s->engine.pool_size, 8);
  ASSERT_EQ(s->actors.size(), 3u);
  EXPECT_EQ(s->actors[0].role, Role::kWaiter);
  EXPECT_EQ(s->actors[0].timeout_us->kind, Distribution::Kind::kUniform);
  EXPECT_EQ(s->actors[0].timeout_us->lo, 50);
  EXPECT_EQ(s->actors[0].timeout_us->hi, 500);
  EXPECT_EQ(s->actors[1].delay_us->kind, Distribution::Kind::kExponential);
  EXPECT_DOUBLE_EQ(s->actors[1].delay_us->mean, 200);
  EXPECT_EQ(s->actors[2].mode, ScheduleMode::kFixedRate);
  EXPECT_EQ(s->actors[2].delay_us->lo, -5);
  EXPECT_DOUBLE_EQ(s->actors[2].cancel_probability, 0.25);
  EXPECT_FALSE(s->actors[1].stale_probability.has_value());  // absent: the driver's default
  EXPECT_DOUBLE_EQ(s->actors[2].rearm_probability, 0.0);      // absent: no re-arms
  EXPECT_EQ(s->total_threads(), 3 + 2 + 5 + 1);
  ASSERT_EQ(s->faults.size(), 2u);
  EXPECT_EQ(s->faults[1].action, stress::FaultAction::kYield);
  EXPECT_EQ(s->run.operations, 1000u);
  EXPECT_DOUBLE_EQ(s->run.budget_s, 2.5);
  EXPECT_EQ(s->run.seed, 9u);
  EXPECT_EQ(s->run.max_pending, 77u);
  ASSERT_TRUE(s->run.sim.has_value());
  EXPECT_EQ(s->run.sim->strategy, SimStrategy::kPct);
  EXPECT_EQ(s->expect.max_violations[static_cast<std::size_t>(Oracle::kLostWakeup)], 3u);
  EXPECT_EQ(s->expect.max_violations[static_cast<std::size_t>(Oracle::kDoubleResume)], 0u);
  EXPECT_EQ(s->expect.fire_lateness_us.p99_max, 5000);
  EXPECT_FALSE(s->expect.fire_lateness_us.p50_max);
  EXPECT_EQ(s->catches, std::vector<Mutant>{Mutant::kTokenFlagOnly});
  EXPECT_EQ(s->document.at("name"), "racing");
}

// rearm_delay_us is read as any distribution; absent, the re-arm uses delay_us.
TEST(ScenarioTest, RearmDelayIsReadWithItsProbability) {
  ScenarioLoader loader;
  InputErrors errors;
  auto s = loader.load_text(
      with("", R"([{"role": "scheduler", "count": 1, "delay_us": {"fixed": 1},
                    "rearm_probability": 0.5, "rearm_delay_us": {"uniform": [30000, 60000]}},
                   {"role": "scheduler", "count": 1, "delay_us": {"fixed": 1},
                    "rearm_probability": 0.5}])"),
      "f.json", errors);
  ASSERT_TRUE(s) << (errors.empty() ? "" : errors.front().str());
  ASSERT_TRUE(s->actors[0].rearm_delay_us.has_value());
  EXPECT_EQ(s->actors[0].rearm_delay_us->lo, 30000);
  EXPECT_EQ(s->actors[0].rearm_delay_us->hi, 60000);
  EXPECT_FALSE(s->actors[1].rearm_delay_us.has_value());
}

// Omitted optional sections take documented defaults; "all" expands to the catalogue.
TEST(ScenarioTest, DefaultsApplyWhenSectionsAreOmitted) {
  ScenarioLoader loader;
  InputErrors errors;
  auto s = loader.load_text(with(""), "f.json", errors);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->engine.strategies, strategy_names());
  EXPECT_EQ(s->engine.token_bits, 32);
  EXPECT_EQ(s->engine.clock, ClockKind::kSteady);
  EXPECT_EQ(s->run.seed, 1u);
  EXPECT_FALSE(s->run.sim.has_value());  // real threads
  EXPECT_TRUE(s->faults.empty());
  EXPECT_TRUE(s->catches.empty());
}

// Fault specs become stress_control plans at the right index, in nanoseconds.
TEST(ScenarioTest, FaultPlansConvertToNanoseconds) {
  ScenarioLoader loader;
  InputErrors errors;
  auto s = loader.load_text(kGood, "good.json", errors);
  ASSERT_TRUE(s);
  const auto plans = s->fault_plans();
  const auto& p = plans[static_cast<std::size_t>(FaultPoint::kTokenBeforeResolveCas)];
  EXPECT_EQ(p.action, stress::FaultAction::kDelay);
  EXPECT_DOUBLE_EQ(p.probability, 0.1);
  EXPECT_EQ(p.min_ns, 1000u);
  EXPECT_EQ(p.max_ns, 50000u);
  EXPECT_EQ(plans[static_cast<std::size_t>(FaultPoint::kTimerBeforeNotify)].action,
            stress::FaultAction::kYield);
  EXPECT_EQ(plans[static_cast<std::size_t>(FaultPoint::kCoroBeforeResume)].action,
            stress::FaultAction::kNone);
}

// Distributions sample inside their bounds, deterministically per seed.
TEST(ScenarioTest, DistributionsSampleWithinBounds) {
  std::mt19937_64 rng(1), again(1);
  Distribution fixed{Distribution::Kind::kFixed, 7, 7, 0};
  Distribution uniform{Distribution::Kind::kUniform, -3, 3, 0};
  Distribution expo{Distribution::Kind::kExponential, 0, 0, 100};
  double sum = 0;
  for (int i = 0; i < 10000; ++i) {
    EXPECT_EQ(fixed.sample(rng), 7);
    const auto u = uniform.sample(rng);
    EXPECT_GE(u, -3);
    EXPECT_LE(u, 3);
    const auto e = expo.sample(rng);
    EXPECT_GE(e, 0);
    sum += static_cast<double>(e);
  }
  EXPECT_NEAR(sum / 10000, 100, 10);
  std::mt19937_64 r1(5), r2(5);
  EXPECT_EQ(uniform.sample(r1), uniform.sample(r2));
}

// Syntax problems: empty file, not JSON (with line and column), duplicate keys,
// numbers beyond int64 and floats that overflow, too deep nesting.
TEST(ScenarioTest, ParseErrorsCarryPointers) {
  expect_error("", "/", "empty file");
  expect_error("  \n ", "/", "empty file");
  expect_error("{\"name\": \"t\",\n \"actors\": [1, }", "/actors/1", "line 2");
  expect_error(with(R"("name": "again")"), "/name", "duplicate key");
  expect_error(with("", R"([{"role": "waiter", "count": 18446744073709551615}])"),
               "/actors/0/count", "out of range");
  expect_error(with("", R"([{"role": "waiter", "count": 1e400}])"), "/actors/0/count",
               "out of range");
  expect_error(with("", R"([{"role": "waiter", "count": -99999999999999999999}])"),
               "/actors/0/count", "out of range");
  expect_error(std::string(40, '[') + std::string(40, ']'),
               "/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0/0", "nested deeper");
}

// Schema problems: wrong type, unknown key, negative count, out of range,
// missing required field, enum miss, caps on operations, budget and thread count.
TEST(ScenarioTest, SchemaErrorsCarryPointers) {
  expect_error("[]", "/", "wrong type");
  expect_error(with("", R"([{"role": "waiter", "count": "2", "timeout_us": {"fixed": 1}}])"),
               "/actors/0/count", "wrong type");
  expect_error(with(R"("engine": {"tikc_us": 5})"), "/engine/tikc_us", "unknown key");
  expect_error(with(R"("colour": 5)"), "/colour", "unknown key");
  expect_error(with("", R"([{"role": "waiter", "count": -1, "timeout_us": {"fixed": 1}}])"),
               "/actors/0/count", ">= 1");
  expect_error(with(R"("engine": {"token_bits": 33})"), "/engine/token_bits", "<= 32");
  expect_error(R"({"name": "t", "description": "d", "actors": []})", "/run", "required");
  expect_error(with("", R"([{"role": "waiter"}])"), "/actors/0/count", "required");
  expect_error(with("", R"([{"role": "juggler", "count": 1}])"), "/actors/0/role", "juggler");
  expect_error(
      with("",
           R"([{"role": "waiter", "count": 1, "timeout_us": {"fixed": 1, "uniform": [1, 2]}}])"),
      "/actors/0/timeout_us", "no more than 1");
  expect_error(with("", R"([{"role": "waiter", "count": 1, "timeout_us": {"normal": 1}}])"),
               "/actors/0/timeout_us/normal", "unknown key");
  expect_error(with("", R"([{"role": "waiter", "count": 1, "timeout_us": {"fixed": 1}}])",
                    R"({"operations": 100000001, "budget_s": 1})"),
               "/run/operations", "<= 100000000");
  expect_error(with("", R"([{"role": "waiter", "count": 1, "timeout_us": {"fixed": 1}}])",
                    R"({"operations": 1, "budget_s": 0})"),
               "/run/budget_s", "> 0");
  expect_error(with("", R"([{"role": "waiter", "count": 257, "timeout_us": {"fixed": 1}}])"),
               "/actors/0/count", "<= 256");
  expect_error(with("", R"([{"role": "waiter", "count": 1, "timeout_us": {"fixed": 1}}])",
                    R"({"operations": 1, "budget_s": 1, "sim": "walk"})"),
               "/run/sim", "walk");
}

// Huge strings in every patterned field (and anywhere else) are refused by length
// before any pattern runs: a 28,000-character name once overflowed the stack in
// std::regex. Each gets exit-2 style errors with its pointer, and nothing crashes.
TEST(ScenarioTest, HugeStringsAreRefusedBeforePatterns) {
  const std::string huge(28000, 'a');
  expect_error(R"({"name": ")" + huge + R"(", "description": "d", "actors": [], "run": {}})",
               "/name", "string of 28000 bytes");
  expect_error(with(R"("engine": {"strategies": [")" + huge + R"("]})"), "/engine/strategies/0",
               "string of 28000 bytes");
  expect_error(with(R"("catches": [")" + huge + R"("])"), "/catches/0", "string of 28000 bytes");
  expect_error(
      with(R"("faults": [{"point": ")" + huge + R"(", "action": "yield", "probability": 1}])"),
      "/faults/0/point", "string of 28000 bytes");
  expect_error(with(R"("description2": ")" + huge + R"(")"), "/description2",
               "string of 28000 bytes");
  expect_error(with("", R"([{"role": ")" + huge + R"(", "count": 1}])"), "/actors/0/role",
               "string of 28000 bytes");
}

// A near miss of a catalogued name is answered with the name it was probably
// meant to be: strategies, mutants, fault points, and schema enums such as roles.
TEST(ScenarioTest, MistypedNamesSuggestTheNearest) {
  expect_error(with(R"("engine": {"strategies": ["hashed_wheeel"]})"), "/engine/strategies/0",
               "did you mean 'hashed_wheel'?");
  expect_error(with(R"("catches": ["token_flag_olny"])"), "/catches/0",
               "did you mean 'token_flag_only'?");
  expect_error(with(R"("engine": {"clock": "virtal"})"), "/engine/clock",
               "did you mean 'virtual'?");
}

// Semantic problems: names not in the catalogues, reversed bounds, role fields,
// fault actions, duplicate fault points, "all" mixed with names, the thread cap.
TEST(ScenarioTest, SemanticErrorsCarryPointers) {
  expect_error(with(R"("engine": {"strategies": ["binary_heap", "fib_heap"]})"),
               "/engine/strategies/1", "unknown strategy 'fib_heap'");
  expect_error(with(R"("engine": {"strategies": ["all", "binary_heap"]})"), "/engine/strategies/0",
               "only entry");
  expect_error(with(R"("catches": ["token_flag_only", "nope"])"), "/catches/1",
               "unknown mutant 'nope'");
  expect_error(
      with(R"("faults": [{"point": "token.nowhere", "delay_us": {"fixed": 1}, "probability": 1}])"),
      "/faults/0/point", "unknown fault point 'token.nowhere'");
  expect_error(
      with(R"("faults": [{"point": "token.after_arm", "delay_us": {"fixed": 1}, "probability": 1},
                                  {"point": "token.after_arm", "action": "yield", "probability": 1}])"),
      "/faults/1/point", "already planned at /faults/0");
  expect_error(with(R"("faults": [{"point": "token.after_arm", "probability": 1}])"),
               "/faults/0/delay_us", "required for action 'delay'");
  expect_error(
      with(
          R"("faults": [{"point": "token.after_arm", "action": "yield", "delay_us": {"fixed": 1}, "probability": 1}])"),
      "/faults/0/delay_us", "not used by action 'yield'");
  expect_error(with("", R"([{"role": "waiter", "count": 1, "timeout_us": {"uniform": [9, 3]}}])"),
               "/actors/0/timeout_us/uniform", "lower bound 9 is greater than upper bound 3");
  expect_error(with("", R"([{"role": "waiter", "count": 1}])"), "/actors/0/timeout_us",
               "required for role 'waiter'");
  expect_error(with("", R"([{"role": "timer_thread", "count": 1, "delay_us": {"fixed": 1}}])"),
               "/actors/0/delay_us", "not used by role 'timer_thread'");
  expect_error(
      with(
          "",
          R"([{"role": "scheduler", "count": 1, "delay_us": {"fixed": 1}, "mode": "fixed_rate"}])"),
      "/actors/0/period_us", "required when mode is 'fixed_rate'");
  expect_error(with("", R"([{"role": "waiter", "count": 1, "timeout_us": {"fixed": 1},
                           "stale_probability": 0.5}])"),
               "/actors/0/stale_probability", "not used by role 'waiter'");
  expect_error(with("", R"([{"role": "waiter", "count": 1, "timeout_us": {"fixed": 1},
                           "rearm_probability": 0.5}])"),
               "/actors/0/rearm_probability", "not used by role 'waiter'");
  expect_error(with("", R"([{"role": "scheduler", "count": 1, "delay_us": {"fixed": 1},
                           "rearm_probability": 1.5}])"),
               "/actors/0/rearm_probability", "must be <= 1");
  expect_error(with("", R"([{"role": "scheduler", "count": 1, "delay_us": {"fixed": 1},
                           "rearm_delay_us": {"fixed": 50}}])"),
               "/actors/0/rearm_delay_us", "only used with rearm_probability above 0");
  expect_error(with("", R"([{"role": "scheduler", "count": 1, "delay_us": {"fixed": 1},
                           "rearm_probability": 0.5, "rearm_delay_us": {"fixed": 0}}])"),
               "/actors/0/rearm_delay_us/fixed", ">= 1");
  expect_error(with("", R"([{"role": "thrower", "count": 1, "delay_us": {"fixed": 1},
                           "rearm_delay_us": {"fixed": 5}}])"),
               "/actors/0/rearm_delay_us", "not used by role 'thrower'");
  expect_error(with("", R"([{"role": "waiter", "count": 200, "timeout_us": {"fixed": 1}},
                           {"role": "canceller", "count": 100, "delay_us": {"fixed": 1}}])"),
               "/actors", "exceed the cap of 256");
}

// JSON pointer tokens escape "~" and "/" per RFC 6901, also in unknown-key errors.
TEST(ScenarioTest, PointerTokensAreEscaped) {
  EXPECT_EQ(escape_pointer_token("a/b~c"), "a~1b~0c");
  EXPECT_EQ(append_pointer("/", "x"), "/x");
  EXPECT_EQ(append_pointer("/a", "b/c"), "/a/b~1c");
  expect_error(with(R"("a/b": 1)"), "/a~1b", "unknown key");
}

// The role table and the schema's role enum name the same roles in the same order.
TEST(ScenarioTest, RoleTableMatchesSchemaEnum) {
  const Json schema = Json::parse(embedded_scenario_schema());
  const auto roles = schema.at("definitions").at("actor").at("properties").at("role").at("enum");
  ASSERT_EQ(roles.size(), kRoleCount);
  for (std::size_t i = 0; i < kRoleCount; ++i) {
    EXPECT_EQ(roles[i].get<std::string>(), kRoleInfo[i].name);
    EXPECT_EQ(static_cast<std::size_t>(kRoleInfo[i].id), i);
    EXPECT_EQ(kRoleInfo[i].required & ~kRoleInfo[i].allowed, 0) << kRoleInfo[i].name;
  }
  // Boundable oracles, and only they, are keys of expect and of expect.at_least.
  const auto expect = schema.at("properties").at("expect").at("properties");
  const auto at_least = expect.at("at_least").at("properties");
  for (const OracleInfo& o : kOracleInfo) {
    EXPECT_EQ(expect.contains(o.name), o.boundable) << o.name;
    EXPECT_EQ(at_least.contains(o.name), o.boundable) << o.name;
  }
  for (const LatencyBoundInfo& b : kLatencyBoundInfo) EXPECT_TRUE(expect.contains(b.key)) << b.key;
}

// Every scenario embedded in the binary loads, and its name matches its file name.
TEST(ScenarioTest, EmbeddedSuiteValidates) {
  ScenarioLoader loader;
  InputErrors errors;
  const auto suite = loader.load_builtin(errors);
  for (const InputError& e : errors) ADD_FAILURE() << e.str();
  EXPECT_EQ(suite.size(), embedded_scenarios().size());
  for (const Scenario& s : suite) EXPECT_EQ(s.source, "builtin:" + s.name + ".json");
  EXPECT_FALSE(embedded_scenario_schema().empty());
  EXPECT_FALSE(embedded_report_schema().empty());
}

// Directories expand to their sorted *.json files without schema.json; duplicate
// names, missing files, directories and oversized files are errors with the path.
TEST(ScenarioTest, LoadPathsExpandsDirectoriesAndRejectsDuplicates) {
  namespace fs = std::filesystem;
  const fs::path dir =
      fs::temp_directory_path() / ("tlab_scenario_test_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
  };
  write("b.json", with(""));
  write("a.json", with("").replace(with("").find("\"t\""), 3, "\"u\""));
  write("schema.json", "not a scenario");
  write("notes.txt", "ignored");
  ScenarioLoader loader;
  InputErrors errors;
  auto loaded = loader.load_paths({dir.string()}, errors);
  EXPECT_TRUE(errors.empty());
  ASSERT_EQ(loaded.size(), 2u);
  EXPECT_EQ(loaded[0].name, "u");  // a.json sorts first
  EXPECT_EQ(loaded[1].name, "t");

  loaded = loader.load_paths({(dir / "b.json").string(), (dir / "b.json").string()}, errors);
  EXPECT_EQ(loaded.size(), 1u);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].pointer, "/name");

  errors.clear();
  loader.load_paths({(dir / "missing.json").string()}, errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("no such file"), std::string::npos);

  errors.clear();
  write("big.json", std::string(kMaxFileBytes + 1, ' '));
  loader.load_file((dir / "big.json").string(), errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("limit"), std::string::npos);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tlab::tool
