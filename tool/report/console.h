// tlab/tool/report/console.h: what a person sees: the results table and progress line.
//
// stdout carries the table (or JSON with --json) and nothing else, so it can be
// piped; stderr carries progress, and only when stderr is a terminal, so CI logs
// stay clean. Colour is used only when the stream is a terminal and NO_COLOR is
// unset or empty (https://no-color.org).
//
// Table columns: SCENARIO, STRATEGY, MUTANT, SEED, VERDICT, TIME, DETAIL; widths
// fit the widest cell. A mutant case shows "caught" or "SURVIVED" as its verdict.
//
// Cost: O(cases). Ground rules: CLI thread only.
#pragma once

#include <cstddef>
#include <cstdio>
#include <string>

#include "report/report.h"

namespace tlab::tool {

// use_color: whether to colour output written to `fd` (a TTY, NO_COLOR unset/empty).
bool use_color(int fd);

// case_explanation: the DETAIL cell of case `c`: its findings with the first judged
// one's sentence, or its message; the explanation the CI outputs (findings.h) carry.
std::string case_explanation(const CaseRecord& c);

// format_table: the aligned results table plus a one-line summary.
std::string format_table(const Report& report, bool color);

// Progress: a single self-overwriting status line on stderr; silent unless enabled.
class Progress {
 public:
  explicit Progress(bool enabled, std::FILE* out = stderr) : enabled_(enabled), out_(out) {}
  ~Progress() { clear(); }
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // Progress::update: "[done/total] what".
  void update(std::size_t done, std::size_t total, const std::string& what);
  // Progress::clear: erases the line (before the table is printed).
  void clear();

 private:
  bool enabled_;
  std::FILE* out_;
  bool dirty_ = false;
};

}  // namespace tlab::tool
