// tlab/tool/report/report_read.cc: see report_read.h.
#include "report/report_read.h"

#include <fmt/format.h>

namespace tlab::tool {

namespace {

template <typename T>
std::optional<T> opt(const Json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<T>();
}

Environment environment_from(const Json& j) {
  Environment e;
  e.compiler = j.at("compiler").get<std::string>();
  e.build_type = j.at("build_type").get<std::string>();
  e.flags = j.at("flags").get<std::string>();
  e.sanitizer = j.at("sanitizer").get<std::string>();
  e.cpus_online = j.at("cpus").at("online").get<int>();
  e.cpus_available = j.at("cpus").at("available").get<int>();
  e.kernel = j.at("kernel").get<std::string>();
  e.timer_slack_ns = j.at("timer_slack_ns").get<std::int64_t>();
  e.git_revision = j.at("git_revision").get<std::string>();
  e.tlab_version = j.at("tlab_version").get<std::string>();
  return e;
}

ModelRunRecord model_from(const Json& j) {
  ModelRunRecord m;
  m.model = j.at("model").get<std::string>();
  m.test = j.at("test").get<std::string>();
  m.scheduler = j.at("scheduler").get<std::string>();
  m.context_bound = opt<unsigned>(j, "context_bound");
  m.iterations = j.at("iterations").get<std::uint64_t>();
  m.failing_iteration = opt<std::uint64_t>(j, "failing_iteration");
  m.iterations_per_second = j.at("iterations_per_second").get<double>();
  m.cpu_seconds = j.at("cpu_seconds").get<double>();
  m.result = j.at("result").get<std::string>();
  m.history = opt<std::string>(j, "history");
  m.command = j.at("command").get<std::string>();
  return m;
}

CaseRecord case_from(const Json& j) {
  CaseRecord c;
  c.id = j.at("id").get<std::string>();
  c.scenario = j.at("scenario").get<std::string>();
  c.strategy = j.at("strategy").get<std::string>();
  c.mutant = opt<std::string>(j, "mutant");
  c.seed = j.at("seed").get<std::uint64_t>();
  c.operations = j.at("operations").get<std::uint64_t>();
  c.budget_s = j.at("budget_s").get<double>();
  c.expect_fail = j.at("expect_fail").get<bool>();
  c.subject_spec = opt<std::string>(j, "subject_spec");
  if (j.contains("sim")) {
    // The schema admits only the catalogued names (validated before this runs).
    const auto strategy = sim_strategy_from_name(j.at("sim").at("strategy").get<std::string>());
    if (!strategy) throw std::invalid_argument("unknown sim strategy");
    c.sim = SimSpec{*strategy, j.at("sim").at("pct_depth").get<int>()};
  }
  c.result = CaseResult::from_json(j);
  if (!verdict_from_name(j.at("verdict").get<std::string>())) {
    throw std::invalid_argument("unknown verdict");
  }
  if (j.contains("model")) c.model = model_from(j.at("model"));
  if (j.contains("property")) {
    c.property_command = j.at("property").at("command").get<std::string>();
    if (j.at("property").contains("broken"))
      c.property_broken = j.at("property").at("broken").get<std::string>();
  }
  c.plan_index = opt<std::size_t>(j, "plan_index");
  c.search_rounds = opt<std::uint32_t>(j, "search_rounds");
  if (j.contains("trials")) {
    TrialTally t;
    for (const Json& v : j.at("trial_verdicts")) {
      t.verdicts.push_back(verdict_from_name(v.get<std::string>()).value_or(Verdict::kError));
    }
    t.failures = j.at("failures").get<std::uint32_t>();
    t.median_detect_us = opt<std::uint64_t>(j, "median_detect_us");
    c.trials = std::move(t);
  }
  return c;
}

}  // namespace

std::optional<ReportFile> read_report(const std::string& path, InputErrors& errors) {
  auto doc = read_report_document(path, errors);
  if (!doc) return std::nullopt;
  Report r;
  bool complete = true;
  // The schema has checked presence and types; what is left to throw is a value
  // the schema allows but the types do not (a histogram summary without buckets).
  std::string where = "/";
  try {
    r.command = doc->at("command").get<std::string>();
    where = "/environment";
    r.environment = environment_from(doc->at("environment"));
    r.interrupted = doc->at("interrupted").get<bool>();
    complete = doc->value("complete", true);
    for (const auto& [name, s] : doc->at("scenarios").items()) {
      r.scenarios[name] = {s.at("source").get<std::string>(), s.at("document")};
    }
    const Json& cases = doc->at("cases");
    for (std::size_t i = 0; i < cases.size(); ++i) {
      where = fmt::format("/cases/{}", i);
      r.cases.push_back(case_from(cases[i]));
    }
    where = "/summary/planned";
    r.planned = doc->at("summary").at("planned").get<std::size_t>();
    if (doc->contains("kill_matrix")) {
      r.kill_matrix = nlohmann::ordered_json::parse(doc->at("kill_matrix").dump());
    }
    if (doc->contains("until_fail")) {
      const Json& u = doc->at("until_fail");
      r.until_fail = UntilFail{u.at("round").get<std::uint32_t>(),
                               u.at("rounds").get<std::uint32_t>(), u.at("vary_seed").get<bool>()};
    }
    if (doc->contains("shard")) {
      where = "/shard";
      const Json& s = doc->at("shard");
      r.shard = ShardRecord{
          s.at("index").get<std::uint32_t>(),         s.at("total").get<std::uint32_t>(),
          s.at("plan_cases").get<std::size_t>(),      s.at("plan_digest").get<std::string>(),
          s.at("scenario_digest").get<std::string>(), s.at("source").get<std::string>()};
    }
    if (doc->contains("merged")) {
      where = "/merged";
      const Json& m = doc->at("merged");
      r.merged = MergedRecord{
          m.at("shards").get<std::uint32_t>(), m.at("plan_cases").get<std::size_t>(),
          m.at("plan_digest").get<std::string>(), m.at("scenario_digest").get<std::string>()};
    }
  } catch (const std::exception& e) {
    errors.push_back({path, where, fmt::format("cannot be read back as a report: {}", e.what())});
    return std::nullopt;
  }
  return ReportFile{path, std::move(r), complete};
}

}  // namespace tlab::tool
