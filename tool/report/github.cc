// tlab/tool/report/github.cc: see github.h.
#include "report/github.h"

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <system_error>
#include <utility>
#include <vector>

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

namespace {

// workflow_command: one "::<command> file=F,line=L,title=T::message" line for f.
std::string workflow_command(std::string_view command, const Finding& f) {
  std::string props;
  if (!f.file.empty()) props += "file=" + github_escape_property(f.file) + ",";
  if (f.line > 0) props += fmt::format("line={},", f.line);
  props +=
      "title=" + github_escape_property(fmt::format(
                     "tlab {}{}: {}", f.rule, f.promised ? "" : " (not promised)", f.record->id));
  return fmt::format("::{} {}::{}\n", command, props,
                     github_escape_data(f.message + "\nreplay: " + f.replay));
}

// capped: a `command` line for each of the first `cap` of `list`; past the cap one
// `overflow` line titled "tlab: N more <what>" says how many were left out.
std::string capped(std::string_view command, const std::vector<Finding>& list, std::size_t cap,
                   std::string_view overflow, std::string_view what, std::string_view why) {
  std::string out;
  for (std::size_t i = 0; i < list.size() && i < cap; ++i)
    out += workflow_command(command, list[i]);
  if (list.size() > cap) {
    const std::string title = fmt::format("tlab: {} more {}", list.size() - cap, what);
    out += fmt::format(
        "::{} title={}::{} of {} {} are annotated{}; the rest are in the report and the step "
        "summary\n",
        overflow, github_escape_property(title), cap, list.size(), what, why);
  }
  return out;
}

}  // namespace

std::string github_annotations(const std::vector<Finding>& found, std::size_t cap) {
  return capped("error", found, cap, "warning", "failing cases",
                " (GitHub shows at most 10 error annotations per step)");
}

std::string github_notices(const std::vector<Finding>& notes, std::size_t cap) {
  return capped("notice", notes, cap, "notice", "unpromised findings", "");
}

std::string step_summary(const Report& report, const std::vector<Finding>& found, std::size_t cap,
                         const std::vector<Finding>& notes) {
  const Summary s = report.summary();
  std::string head =
      fmt::format("## tlab {}: {} cases, {} passed, {} failed, {} errors, {} timeouts\n\n",
                  report.command, s.cases, s.passed, s.failed, s.errors, s.timeouts);
  if (!s.mutants_survived.empty()) {
    head += fmt::format("Mutants survived: {}\n\n",
                        cell(fmt::format("{}", fmt::join(s.mutants_survived, ", "))));
  }
  // Both tables' lines. Rows stop where the next would not fit, and one line says
  // how many rows of each table were left out.
  enum class Kind { kHeading, kFailing, kNote };
  std::vector<std::pair<Kind, std::string>> lines;
  if (found.empty()) {
    lines.emplace_back(Kind::kHeading, "No failing case.\n");
  } else {
    lines.emplace_back(Kind::kHeading,
                       "| case | rule | explanation | replay |\n|---|---|---|---|\n");
    for (const Finding& f : found) {
      lines.emplace_back(Kind::kFailing,
                         fmt::format("| {} | {} | {} | `{}` |\n", cell(f.record->id), cell(f.rule),
                                     cell(f.message), cell(f.replay)));
    }
  }
  if (!notes.empty()) {
    lines.emplace_back(
        Kind::kHeading,
        fmt::format("\n{} findings in passed cases that their subject does not promise (they "
                    "fail nothing; `--fail-on` turns them into failures):\n\n"
                    "| case | oracle | count | explanation | replay |\n|---|---|---|---|---|\n",
                    notes.size()));
    for (const Finding& f : notes) {
      lines.emplace_back(Kind::kNote,
                         fmt::format("| {} | {} | {} | {} | `{}` |\n", cell(f.record->id),
                                     cell(f.rule), f.count, cell(f.message), cell(f.replay)));
    }
  }
  std::string out = head;
  // The truncation line is at most this long; rows stop where it would not fit.
  constexpr std::size_t kMarkerRoom = 200;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (out.size() + lines[i].second.size() + kMarkerRoom > cap) {
      std::size_t failing = 0, unpromised = 0;
      for (std::size_t j = i; j < lines.size(); ++j) {
        failing += lines[j].first == Kind::kFailing;
        unpromised += lines[j].first == Kind::kNote;
      }
      out += fmt::format(
          "\n**Truncated**: {} more failing cases and {} more unpromised findings are in the "
          "JSON report (GitHub caps a step summary at 1 MiB).\n",
          failing, unpromised);
      return out.size() <= cap ? out : std::string();
    }
    out += lines[i].second;
  }
  return out.size() <= cap ? out : std::string();
}

void emit_github(const Report& report, const std::vector<Finding>& found,
                 const std::vector<Finding>& notes, std::ostream& err) {
  const char* actions = std::getenv("GITHUB_ACTIONS");
  if (actions == nullptr || std::string_view(actions) != "true") return;
  err << github_annotations(found) << github_notices(notes);
  const char* path = std::getenv("GITHUB_STEP_SUMMARY");
  if (path == nullptr || *path == '\0') return;
  std::error_code ec;
  const std::uintmax_t existing = std::filesystem::file_size(path, ec);
  const std::size_t used = ec ? 0 : static_cast<std::size_t>(existing);
  const std::string md =
      step_summary(report, found, used < kStepSummaryCap ? kStepSummaryCap - used : 0, notes);
  std::ofstream out(path, std::ios::app | std::ios::binary);
  out << md;
  out.flush();
  if (!out) {
    throw std::system_error(errno, std::generic_category(),
                            fmt::format("cannot append to GITHUB_STEP_SUMMARY {}", path));
  }
}

}  // namespace tlab::tool
