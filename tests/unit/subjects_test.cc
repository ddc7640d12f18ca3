// Tests of the subject table (tool/subjects/subjects.h): it is the one catalogue
// of subjects, and scenarios/README.md and scenarios/schema.json say the same.
#include "subjects/subjects.h"

#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "base/embedded.h"
#include "oracles/oracles.h"
#include "scenario/scenario.h"
#include "tlab/queue/strategy.h"

namespace tlab::tool {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// "`a`, `b`" -> "a, b"
std::string unquote(std::string cell) {
  cell.erase(std::remove(cell.begin(), cell.end(), '`'), cell.end());
  while (!cell.empty() && cell.back() == ' ') cell.pop_back();
  while (!cell.empty() && cell.front() == ' ') cell.erase(cell.begin());
  return cell;
}

std::vector<std::vector<std::string>> table_rows(const std::string& text, const std::string& after,
                                                 const std::string& header) {
  std::vector<std::vector<std::string>> rows;
  std::size_t pos = text.find(after);
  if (pos == std::string::npos) return rows;
  pos = text.find(header, pos);
  if (pos == std::string::npos) return rows;
  std::istringstream in(text.substr(pos));
  std::string line;
  std::getline(in, line);  // header
  std::getline(in, line);  // |---|
  while (std::getline(in, line) && line.rfind("|", 0) == 0) {
    std::vector<std::string> cells;
    std::size_t start = 1;
    for (std::size_t bar; (bar = line.find('|', start)) != std::string::npos; start = bar + 1) {
      cells.push_back(unquote(line.substr(start, bar - start)));
    }
    rows.push_back(cells);
  }
  return rows;
}

// Strategies are derived from core's catalogue, in its order, and nothing else is
// a strategy.
TEST(SubjectsTest, StrategiesComeFromCore) {
  std::vector<std::string> from_core;
  for (const StrategyInfo& s : kStrategyInfo) from_core.emplace_back(s.name);
  EXPECT_EQ(strategy_names(), from_core);
  EXPECT_EQ(expand_strategies({"all"}), from_core);
  for (const std::string& s : from_core) EXPECT_TRUE(is_strategy(s)) << s;
  std::vector<std::string> rows;
  for (const SubjectInfo& s : subjects()) {
    if (s.origin == SubjectOrigin::kStrategy) rows.emplace_back(s.name);
  }
  EXPECT_EQ(rows, from_core);
  EXPECT_FALSE(is_strategy("all"));
  EXPECT_FALSE(is_strategy("timer_service"));
}

// Names are unique, and every row can be used: an engine runs cases (selected by
// its primary roles) or, with no driver of its own, through the subject ABI
// (`--subject`); a strategy or a peer is compared.
TEST(SubjectsTest, RowsAreUniqueAndUsable) {
  std::set<std::string_view> names;
  for (const SubjectInfo& s : subjects()) {
    EXPECT_TRUE(names.insert(s.name).second) << "duplicate subject " << s.name;
    EXPECT_FALSE(s.summary.empty()) << s.name;
    if (s.origin == SubjectOrigin::kEngine) {
      EXPECT_TRUE(s.run_case != nullptr || s.abi != nullptr) << s.name;
      EXPECT_EQ(s.primary.empty(), s.run_case == nullptr) << s.name;
    } else {
      EXPECT_NE(s.bench, nullptr) << s.name;
    }
  }
}

// The engine table in scenarios/README.md is this table: same rows in the same
// (selection) order, roles, strategy use and promises (the rows roles can select:
// those with a driver of their own).
TEST(SubjectsTest, ReadmeEngineTableMatches) {
  const std::string readme = read(TLAB_SOURCE_DIR "/scenarios/README.md");
  const auto rows =
      table_rows(readme, "## Which engine runs", "| subject | primary roles | also accepts |");
  std::vector<const SubjectInfo*> engines;
  for (const SubjectInfo& s : subjects()) {
    if (s.origin == SubjectOrigin::kEngine && s.run_case != nullptr) engines.push_back(&s);
  }
  ASSERT_EQ(rows.size(), engines.size()) << "README engine table rows";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const SubjectInfo& e = *engines[i];
    ASSERT_EQ(rows[i].size(), 5u) << e.name;
    EXPECT_EQ(rows[i][0], e.name);
    EXPECT_EQ(rows[i][1], e.primary.names()) << e.name;
    std::string also;
    for (const RoleInfo& r : kRoleInfo) {
      if (e.accepts.has(r.id) && !e.primary.has(r.id))
        also += (also.empty() ? "" : ", ") + std::string(r.name);
    }
    EXPECT_EQ(rows[i][2], also) << e.name;
    EXPECT_EQ(rows[i][3] == "Q", e.takes_strategy) << e.name;
    EXPECT_EQ(rows[i][4], e.promises.names()) << e.name;
  }
}

// Every role of the schema is accepted by some engine, and every strategy is
// named in the README's engine.strategies row.
TEST(SubjectsTest, SchemaRolesAndReadmeStrategiesAreCovered) {
  const Json schema = Json::parse(embedded_scenario_schema());
  const auto roles = schema.at("definitions").at("actor").at("properties").at("role").at("enum");
  for (const auto& r : roles) {
    const auto role = role_from_name(r.get<std::string>());
    ASSERT_TRUE(role) << r;
    bool accepted = false;
    for (const SubjectInfo& s : subjects()) accepted = accepted || s.accepts.has(*role);
    EXPECT_TRUE(accepted) << "no engine accepts role " << r;
  }
  const std::string readme = read(TLAB_SOURCE_DIR "/scenarios/README.md");
  for (const std::string& s : strategy_names()) {
    EXPECT_NE(readme.find("`" + s + "`"), std::string::npos) << s;
  }
}

// Every oracle's promise is made by at least one built-in subject (one of tlab's
// engines, or a peer: next_pass is libuv's, not yet any engine's): no oracle is
// dead.
TEST(SubjectsTest, EveryOraclePromiseIsMadeBySomeBuiltInSubject) {
  for (const OracleInfo& o : kOracleInfo) {
    if (!o.promise) continue;
    bool made = false;
    for (const SubjectInfo& s : subjects())
      made = made || (s.origin != SubjectOrigin::kStrategy && s.promises.has(*o.promise));
    EXPECT_TRUE(made) << o.name;
  }
}

// Without fifo_ties on the strategy, a case over it does not judge FIFO order.
// engine.subject names a built-in subject with a descriptor (sharded_service) or
// is refused at /engine/subject; such a scenario never runs under --sim.
TEST(SubjectsTest, EngineSubjectMustBeABuiltInDescriptor) {
  Scenario s;
  s.engine.subject = "sharded_service";
  InputErrors errors;
  EXPECT_TRUE(check_runnable(s, "f.json", errors));
  EXPECT_TRUE(sim_refusal(s).has_value());
  s.engine.subject = "timer_service";  // an engine row, but no descriptor
  EXPECT_FALSE(check_runnable(s, "f.json", errors));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].pointer, "/engine/subject");
}

// run.sim is accepted where the engine runs under simulation (every engine driver,
// the wait group's included) and refused at /run/sim, naming the reason, where it
// does not (a scenario on a built-in subject).
TEST(SubjectsTest, RunSimNeedsAnEngineThatSimulates) {
  static const ScenarioLoader loader;
  auto load = [](const std::string& actors, const std::string& engine) {
    InputErrors errors;
    auto s = loader.load_text(R"({"name": "t", "description": "t", "engine": )" + engine +
                                  R"(, "actors": [)" + actors +
                                  R"(], "run": {"operations": 10, "budget_s": 1, "sim": "random"}})",
                              "f.json", errors);
    EXPECT_TRUE(s) << (errors.empty() ? "" : errors.front().str());
    return *s;
  };
  InputErrors errors;
  const Scenario service =
      load(R"({"role": "waiter", "count": 1, "timeout_us": {"fixed": 100}})", "{}");
  EXPECT_TRUE(check_runnable(service, "f.json", errors));
  EXPECT_TRUE(errors.empty());
  const Scenario group = load(R"({"role": "wait_group_member", "count": 2, "delay_us": {"fixed": 1}},
                                 {"role": "wait_group_waiter", "count": 1, "timeout_us": {"fixed": 100}})",
                              "{}");
  EXPECT_TRUE(check_runnable(group, "f.json", errors));
  EXPECT_TRUE(errors.empty());
  const Scenario sharded =
      load(R"({"role": "scheduler", "count": 1, "delay_us": {"fixed": 100}})",
           R"({"subject": "sharded_service"})");
  EXPECT_FALSE(check_runnable(sharded, "f.json", errors));
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].pointer, "/run/sim");
}

TEST(SubjectsTest, FifoTiesFollowTheStrategy) {
  const SubjectInfo* svc = find_subject("timer_service");
  ASSERT_NE(svc, nullptr);
  EXPECT_TRUE(promises_of_case(*svc, "binary_heap").has(Promise::kFifoTies));
  EXPECT_FALSE(promises_of_case(*svc, "hashed_wheel").has(Promise::kFifoTies));
  EXPECT_TRUE(promises_of_case(*svc, "hashed_wheel").has(Promise::kNeverEarly));
}

}  // namespace
}  // namespace tlab::tool
