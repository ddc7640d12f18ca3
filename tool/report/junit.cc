// tlab/tool/report/junit.cc: see junit.h.
#include "report/junit.h"

#include <map>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "oracles/oracles.h"

namespace tlab::tool {

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
          out += "\xEF\xBF\xBD";  // U+FFFD: XML 1.0 has no way to carry these
        } else {
          out += ch;
        }
    }
  }
  return out;
}

namespace {

std::string violations_text(const CaseRecord& c) {
  std::string text;
  for (const auto& [name, v] : c.result.violations) {
    text += fmt::format("{}: {} (first: {})\n", name, v.count, v.first_example);
  }
  for (const std::string& r : c.result.sanitizer_reports) text += r + "\n";
  if (!c.result.message.empty()) text += c.result.message + "\n";
  return text;
}

std::string testcase_xml(const CaseRecord& c, Outcome o) {
  const std::string name = c.mutant ? c.strategy + "/" + *c.mutant : c.strategy;
  std::string body;
  switch (o) {
    case Outcome::kInterrupted:
      body = "      <skipped message=\"interrupted\"/>\n";
      break;
    case Outcome::kError:
      body = fmt::format("      <error message=\"{}\">{}</error>\n", name_of(c.result.verdict),
                         xml_escape(violations_text(c)));
      break;
    case Outcome::kSurvived:
      body = fmt::format(
          "      <failure message=\"mutant survived\">mutant {} was not detected by scenario "
          "{} on {}, nor by any other case of this pair</failure>\n",
          xml_escape(c.mutant.value_or("expected_failure")), xml_escape(c.scenario),
          xml_escape(c.strategy));
      break;
    case Outcome::kViolation: {
      std::vector<std::string> names;
      for (const auto& [n, _] : c.result.violations) names.push_back(n);
      body = fmt::format("      <failure message=\"{}\">{}</failure>\n",
                         xml_escape(fmt::format("violations: {}", fmt::join(names, ", "))),
                         xml_escape(violations_text(c)));
      break;
    }
    case Outcome::kCaught:
      body = fmt::format("      <system-out>caught, as required: {}</system-out>\n",
                         xml_escape(violations_text(c)));
      break;
    case Outcome::kMissedHere:
      body =
          "      <system-out>the mutant does not show on this strategy; another case of the "
          "same scenario caught it</system-out>\n";
      break;
    case Outcome::kPass: {
      // Findings the subject does not promise fail nothing, but a reader of the
      // JUnit file sees them (findings.h, unpromised findings).
      std::string seen;
      for (const auto& [n, v] : c.result.violations) {
        if (v.count == 0 || judged(n, c.result.promises)) continue;
        seen += fmt::format("{}: {} (first: {})\n", n, v.count, v.first_example);
      }
      if (!seen.empty()) {
        body = fmt::format(
            "      <system-out>findings not promised by {} (they fail nothing; --fail-on "
            "turns them into failures):\n{}</system-out>\n",
            xml_escape(c.strategy), xml_escape(seen));
      }
      break;
    }
  }
  const std::string open =
      fmt::format("    <testcase classname=\"tlab.{}\" name=\"{}\" time=\"{:.3f}\"",
                  xml_escape(c.scenario), xml_escape(name), c.result.duration_s);
  if (body.empty()) return open + "/>\n";
  return open + ">\n" + body + "    </testcase>\n";
}

}  // namespace

std::string junit_xml(const Report& report) {
  std::map<std::string, std::vector<const CaseRecord*>> by_scenario;
  for (const CaseRecord& c : report.cases) by_scenario[c.scenario].push_back(&c);
  std::size_t failures = 0, errors = 0, skipped = 0;
  double time = 0;
  std::string suites;
  for (const auto& [scenario, cases] : by_scenario) {
    std::size_t f = 0, e = 0, s = 0;
    double t = 0;
    std::string body;
    for (const CaseRecord* c : cases) {
      const Outcome o = report.outcome(*c);
      f += o == Outcome::kViolation || o == Outcome::kSurvived;
      e += o == Outcome::kError;
      s += o == Outcome::kInterrupted;
      t += c->result.duration_s;
      body += testcase_xml(*c, o);
    }
    suites += fmt::format(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" "
        "time=\"{:.3f}\">\n{}  </testsuite>\n",
        xml_escape(scenario), cases.size(), f, e, s, t, body);
    failures += f;
    errors += e;
    skipped += s;
    time += t;
  }
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"tlab {}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" "
      "time=\"{:.3f}\">\n{}</testsuites>\n",
      xml_escape(report.command), report.cases.size(), failures, errors, skipped, time, suites);
}

}  // namespace tlab::tool
