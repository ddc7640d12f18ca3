// tlab/tool/base/embedded.h: files compiled into the tlab binary.
//
// tool/CMakeLists.txt runs tool/cmake/embed_files.cmake at build time to turn
// scenarios/*.json (the built-in suite), scenarios/schema.json,
// tool/report/report_schema.json and docs/protocol.schema.json into raw string
// literals in embedded_files.cc. The step re-runs whenever one of those files
// changes, and CMake re-globs scenarios/ on every build, so `tlab run` with no
// paths and `tlab validate` work from any directory with exactly the files the
// binary was built from.
//
// Ground rules: constant data with static storage; safe from any thread. Cost: O(1).
#pragma once

#include <span>
#include <string_view>

namespace tlab::tool {

struct EmbeddedFile {
  std::string_view name;  // file name, e.g. "racing_cancellers.json"
  std::string_view text;
};

// The shipped scenario suite, sorted by file name (schema.json excluded).
std::span<const EmbeddedFile> embedded_scenarios();
// scenarios/schema.json.
std::string_view embedded_scenario_schema();
// tool/report/report_schema.json.
std::string_view embedded_report_schema();
// docs/protocol.schema.json (the exec protocol's messages, subjects/exec/).
std::string_view embedded_protocol_schema();

}  // namespace tlab::tool
