// tlab/tool/report/sarif.h: the report's findings as SARIF 2.1.0, for code scanning.
//
// One run (tool.driver "tlab", its version and the finding rules: oracles.h's
// catalogue plus findings.h's extra rules, each with its description); one result
// per failing case (findings.h), level "error", then one per unpromised finding of a
// passed case (findings.h unpromised_findings), level "note" (it fails nothing):
//   | SARIF                                 | from                                      |
//   |---------------------------------------|-------------------------------------------|
//   | ruleId, ruleIndex                     | Finding::rule                             |
//   | message.text                          | Finding::message (the case's explanation) |
//   | locations[0] artifactLocation.uri     | Finding::file, uriBaseId "SRCROOT"        |
//   | locations[0] region.startLine         | Finding::line, when known                 |
//   | partialFingerprints "tlabCase/v1"     | the case id (stable across runs); a note: |
//   |                                       | "<case id>#<oracle>"                      |
//   | properties                            | case id, scenario, strategy, mutant, seed,|
//   |                                       | verdict, replay; a note also promised     |
//   |                                       | false and the oracle's count              |
// The document validates against tool/report/sarif-schema-2.1.0.json (OASIS, shipped
// verbatim; tests/unit/sarif_test.cc checks it with valijson).
//
// Cost: O(findings + rules). Ground rules: pure function.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/findings.h"

namespace tlab::tool {

// sarif_json: the SARIF log of `report`, whose findings are `found` and whose
// unpromised findings are `notes`.
nlohmann::ordered_json sarif_json(const Report& report, const std::vector<Finding>& found,
                                  const std::vector<Finding>& notes = {});

}  // namespace tlab::tool
