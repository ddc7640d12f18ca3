// tlab/tool/report/findings.cc: see findings.h.
#include "report/findings.h"

#include <array>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "base/embedded.h"
#include "oracles/oracles.h"
#include "report/console.h"

namespace tlab::tool {

namespace {

namespace fs = std::filesystem;

// The rules that are not oracles (the table in findings.h).
// "sanitizer" is an oracle (oracles.h), so a sanitizer report without a violation key
// names that row.
constexpr std::array<FindingRule, 6> kExtraRules{{
    {"latency",
     "a latency histogram broke its bound (expect.fire_lateness_us, "
     "expect.cancel_to_resume_us)"},
    {"at_least", "fewer violations than the scenario's expect.at_least requires"},
    {"model_failure", "a Relacy model found a failing execution"},
    {"mutant_survived", "a seeded mutant that no case of its (scenario, mutant) pair caught"},
    {"error", "the case could not run to a verdict (the runner's message says why)"},
    {"timeout", "the case did not finish within its budget (the watchdog's actor states)"},
}};

std::string rule_of(const CaseRecord& c, Outcome o) {
  if (o == Outcome::kSurvived) return "mutant_survived";
  if (o == Outcome::kError) return std::string(name_of(c.result.verdict));
  if (c.model) return "model_failure";
  for (const bool want_judged : {true, false}) {
    for (const auto& [key, v] : c.result.violations) {
      if (v.count == 0 || judged(key, c.result.promises) != want_judged) continue;
      if (key.starts_with("latency.")) return "latency";
      if (key.starts_with("at_least.")) return "at_least";
      if (oracle_from_name(key)) return key;
    }
  }
  return c.result.sanitizer_reports.empty() ? "error" : "sanitizer";
}

// The text of the scenario `source` names: the embedded file, or the file on disk.
std::string scenario_text(const std::string& source) {
  if (source.starts_with("builtin:")) {
    const std::string_view name = std::string_view(source).substr(8);
    for (const EmbeddedFile& f : embedded_scenarios()) {
      if (f.name == name) return std::string(f.text);
    }
    return {};
  }
  std::ifstream in(source);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string replay_of(const CaseRecord& c, const std::string& report_path) {
  if (c.model) return c.model->command;
  if (c.property_command) return *c.property_command;
  return fmt::format("tlab replay {} --case {}", report_path.empty() ? "REPORT.json" : report_path,
                     c.id);
}

}  // namespace

std::vector<FindingRule> finding_rules() {
  std::vector<FindingRule> rules;
  for (const OracleInfo& o : kOracleInfo) rules.push_back({o.name, o.counts});
  rules.insert(rules.end(), kExtraRules.begin(), kExtraRules.end());
  return rules;
}

int line_of(std::string_view text, std::string_view needle) {
  const std::size_t at = text.find(needle);
  if (needle.empty() || at == std::string_view::npos) return 0;
  int line = 1;
  for (std::size_t i = 0; i < at; ++i) line += text[i] == '\n';
  return line;
}

std::string repo_relative(const std::string& path) {
  std::error_code ec;
  const fs::path abs = fs::weakly_canonical(fs::absolute(path, ec), ec);
  if (ec) return path;
  for (fs::path dir = abs.parent_path(); !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / ".git", ec)) return abs.lexically_relative(dir).generic_string();
    if (dir == dir.root_path()) break;
  }
  return path;
}

namespace {

// locate: f's scenario file and line (the rule in findings.h).
void locate(const Report& report, const CaseRecord& c, Finding& f) {
  auto it = report.scenarios.find(c.scenario);
  if (it == report.scenarios.end() || c.model) return;
  const std::string& source = it->second.source;
  f.file = source.starts_with("builtin:") ? "scenarios/" + source.substr(8) : repo_relative(source);
  const std::string text = scenario_text(source);
  if (c.mutant) f.line = line_of(text, fmt::format("\"{}\"", *c.mutant));
  if (f.line == 0) f.line = line_of(text, "\"expect\"");
  if (f.line == 0) f.line = line_of(text, "\"name\"");
}

}  // namespace

std::vector<Finding> findings(const Report& report, const std::string& report_path) {
  std::vector<Finding> out;
  for (const CaseRecord& c : report.cases) {
    const Outcome o = report.outcome(c);
    if (o != Outcome::kViolation && o != Outcome::kSurvived && o != Outcome::kError) continue;
    Finding f;
    f.record = &c;
    f.outcome = o;
    f.rule = rule_of(c, o);
    f.message = case_explanation(c);
    if (o == Outcome::kSurvived) {
      f.message = fmt::format("mutant {} survived: no case of scenario {} caught it ({})",
                              c.mutant.value_or("expected_failure"), c.scenario, f.message);
    }
    f.replay = replay_of(c, report_path);
    locate(report, c, f);
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Finding> unpromised_findings(const Report& report, const std::string& report_path) {
  std::vector<Finding> out;
  for (const CaseRecord& c : report.cases) {
    if (report.outcome(c) != Outcome::kPass) continue;
    for (const auto& [name, v] : c.result.violations) {
      if (v.count == 0 || judged(name, c.result.promises)) continue;
      Finding f;
      f.record = &c;
      f.outcome = Outcome::kPass;
      // Only an oracle's key (or at_least.<oracle>) can be unpromised: judged().
      f.rule = name.starts_with("at_least.") ? "at_least" : name;
      f.promised = false;
      f.count = v.count;
      std::string first = v.first_example.substr(0, v.first_example.find('\n'));
      if (first.size() > 160) first = first.substr(0, 157) + "...";
      f.message = fmt::format("{} {} (not promised by {}){}{}", name, v.count, c.strategy,
                              first.empty() ? "" : ": ", first);
      f.replay = replay_of(c, report_path);
      locate(report, c, f);
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace tlab::tool
