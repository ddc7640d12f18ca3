// tlab/tool/report/github.cc: see github.h.
#include "report/github.h"

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/junit.h"

namespace tlab::tool {

namespace {

// A Markdown table cell: one line, pipes escaped, markup as entities (xml_escape).
std::string cell(std::string_view s) {
  std::string out;
  for (char ch : xml_escape(s)) {
    if (ch == '|') {
      out += "\\|";
    } else {
      out += ch == '\n' || ch == '\r' ? ' ' : ch;
    }
  }
  return out;
}

}  // namespace

std::string github_escape_data(std::string_view s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '%':
        out += "%25";
        break;
      case '\r':
        out += "%0D";
        break;
      case '\n':
        out += "%0A";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string github_escape_property(std::string_view s) {
  std::string out;
  for (char ch : github_escape_data(s)) {
    switch (ch) {
      case ':':
        out += "%3A";
        break;
      case ',':
        out += "%2C";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string github_annotations(const std::vector<Finding>& found, std::size_t cap) {
  std::string out;
  for (std::size_t i = 0; i < found.size() && i < cap; ++i) {
    const Finding& f = found[i];
    std::string props;
    if (!f.file.empty()) props += "file=" + github_escape_property(f.file) + ",";
    if (f.line > 0) props += fmt::format("line={},", f.line);
    props += "title=" + github_escape_property(fmt::format("tlab {}: {}", f.rule, f.record->id));
    out += fmt::format("::error {}::{}\n", props,
                       github_escape_data(f.message + "\nreplay: " + f.replay));
  }
  if (found.size() > cap) {
    const std::string title = fmt::format("tlab: {} more failing cases", found.size() - cap);
    out += fmt::format(
        "::warning title={}::{} of {} failing cases are annotated (GitHub shows at most 10 "
        "error annotations per step); the rest are in the report and the step summary\n",
        github_escape_property(title), cap, found.size());
  }
  return out;
}

std::string step_summary(const Report& report, const std::vector<Finding>& found, std::size_t cap) {
  const Summary s = report.summary();
  std::string head =
      fmt::format("## tlab {}: {} cases, {} passed, {} failed, {} errors, {} timeouts\n\n",
                  report.command, s.cases, s.passed, s.failed, s.errors, s.timeouts);
  if (!s.mutants_survived.empty()) {
    head += fmt::format("Mutants survived: {}\n\n",
                        cell(fmt::format("{}", fmt::join(s.mutants_survived, ", "))));
  }
  if (found.empty()) {
    head += "No failing case.\n";
    return head.size() <= cap ? head : std::string();
  }
  head += "| case | rule | explanation | replay |\n|---|---|---|---|\n";
  std::string out = head;
  // The truncation line is at most this long; rows stop where it would not fit.
  constexpr std::size_t kMarkerRoom = 160;
  for (std::size_t i = 0; i < found.size(); ++i) {
    const Finding& f = found[i];
    const std::string row = fmt::format("| {} | {} | {} | `{}` |\n", cell(f.record->id),
                                        cell(f.rule), cell(f.message), cell(f.replay));
    if (out.size() + row.size() + kMarkerRoom > cap) {
      out += fmt::format(
          "\n**Truncated**: {} more failing cases are in the JSON report (GitHub caps a step "
          "summary at 1 MiB).\n",
          found.size() - i);
      return out.size() <= cap ? out : std::string();
    }
    out += row;
  }
  return out;
}

void emit_github(const Report& report, const std::vector<Finding>& found, std::ostream& err) {
  const char* actions = std::getenv("GITHUB_ACTIONS");
  if (actions == nullptr || std::string_view(actions) != "true") return;
  err << github_annotations(found);
  const char* path = std::getenv("GITHUB_STEP_SUMMARY");
  if (path == nullptr || *path == '\0') return;
  std::error_code ec;
  const std::uintmax_t existing = std::filesystem::file_size(path, ec);
  const std::size_t used = ec ? 0 : static_cast<std::size_t>(existing);
  const std::string md =
      step_summary(report, found, used < kStepSummaryCap ? kStepSummaryCap - used : 0);
  std::ofstream out(path, std::ios::app | std::ios::binary);
  out << md;
  out.flush();
  if (!out) {
    throw std::system_error(errno, std::generic_category(),
                            fmt::format("cannot append to GITHUB_STEP_SUMMARY {}", path));
  }
}

}  // namespace tlab::tool
