// tlab/tool/report/sarif.cc: see sarif.h.
#include "report/sarif.h"

namespace tlab::tool {

nlohmann::ordered_json sarif_json(const Report& report, const std::vector<Finding>& found,
                                  const std::vector<Finding>& notes) {
  using J = nlohmann::ordered_json;
  const std::vector<FindingRule> rules = finding_rules();
  J rule_list = J::array();
  for (const FindingRule& r : rules) {
    rule_list.push_back({{"id", r.id},
                         {"shortDescription", {{"text", r.description}}},
                         {"defaultConfiguration", {{"level", "error"}}}});
  }
  J results = J::array();
  std::vector<const Finding*> all;
  for (const Finding& f : found) all.push_back(&f);
  for (const Finding& f : notes) all.push_back(&f);
  for (const Finding* each : all) {
    const Finding& f = *each;
    std::size_t index = 0;
    while (index < rules.size() && rules[index].id != f.rule) ++index;
    const CaseRecord& c = *f.record;
    J result = {{"ruleId", f.rule},
                {"ruleIndex", index},
                {"level", f.promised ? "error" : "note"},
                {"message", {{"text", f.message}}}};
    if (!f.file.empty()) {
      J physical = {{"artifactLocation", {{"uri", f.file}, {"uriBaseId", "SRCROOT"}}}};
      if (f.line > 0) physical["region"] = {{"startLine", f.line}};
      result["locations"] = J::array({{{"physicalLocation", physical}}});
    }
    // Code scanning matches a result across runs by its fingerprints: the case id
    // names the same (scenario, strategy, mutant) in every run.
    result["partialFingerprints"] = {{"tlabCase/v1", f.promised ? c.id : c.id + "#" + f.rule}};
    J props = {{"case", c.id}, {"scenario", c.scenario}, {"strategy", c.strategy}};
    if (c.mutant) props["mutant"] = *c.mutant;
    props["seed"] = c.seed;
    props["verdict"] = name_of(c.result.verdict);
    props["replay"] = f.replay;
    if (!f.promised) {
      props["promised"] = false;
      props["count"] = f.count;
    }
    result["properties"] = std::move(props);
    results.push_back(std::move(result));
  }
  J driver = {{"name", "tlab"},
              {"version", report.environment.tlab_version},
              {"rules", std::move(rule_list)}};
  J run = {{"tool", {{"driver", std::move(driver)}}},
           {"automationDetails", {{"id", "tlab/" + report.command + "/"}}},
           {"results", std::move(results)}};
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs", J::array({std::move(run)})}};
}

}  // namespace tlab::tool
