// tlab/tool/report/junit.h: the report as JUnit XML, so every CI system shows the cases.
//
// Layout: <testsuites> holds one <testsuite> per scenario, which holds one
// <testcase> per case (classname "tlab.<scenario>", name "<strategy>" or
// "<strategy>/<mutant>"). Verdicts map as:
//   | verdict                  | element                                         |
//   | pass                     | none; with findings its subject does not promise|
//   |                          | (findings.h), <system-out> listing each         |
//   | fail                     | <failure> with every violation and its example  |
//   | error, timeout           | <error> with the runner's message               |
//   | interrupted              | <skipped>                                       |
// A mutant case (expect_fail) inverts pass/fail: a caught mutant passes, a
// surviving one is a <failure> "mutant survived".
// All text is XML-escaped; characters XML 1.0 forbids (control characters other
// than tab, CR, LF) become U+FFFD.
//
// Cost: O(report size). Ground rules: pure function.
#pragma once

#include <string>
#include <string_view>

#include "report/report.h"

namespace tlab::tool {

// xml_escape: escapes & < > " ' and replaces characters XML 1.0 cannot carry.
std::string xml_escape(std::string_view text);

// junit_xml: the whole document, with an XML declaration.
std::string junit_xml(const Report& report);

}  // namespace tlab::tool
