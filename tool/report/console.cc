// tlab/tool/report/console.cc: see console.h.
#include "report/console.h"

#include "base/fmt_ns.h"
#include "oracles/oracles.h"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <fmt/color.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

namespace tlab::tool {

bool use_color(int fd) {
  const char* no_color = std::getenv("NO_COLOR");
  if (no_color != nullptr && no_color[0] != '\0') return false;
  return ::isatty(fd) == 1;
}

namespace {

enum class Tone { kPlain, kGood, kBad, kWarn };

struct Row {
  std::array<std::string, 7> cells;
  Tone tone = Tone::kPlain;  // colour of the VERDICT cell
};

// exec_timing_of: for an exec subject's case (it has pipe_round_trip), the fire
// lateness tlab saw beside the subject's own and the pipe's round trip, at the
// median, with the share of early fires (a histogram keeps negative values as a
// count at 0): "late p50 1.2ms, own clock 0.9ms (3% early), pipe rtt p50 80us".
// "" otherwise.
std::string exec_timing_of(const CaseResult& r) {
  auto p50 = [&](const char* name) -> std::string {
    auto it = r.latency.find(name);
    if (it == r.latency.end() || it->second.count() == 0) return "-";
    const Histogram& h = it->second;
    std::string out = fmt_ns(h.percentile(50));
    if (h.negative_count() > 0) {
      out += fmt::format(" ({:.0f}% early)", 100.0 * static_cast<double>(h.negative_count()) /
                                                 static_cast<double>(h.count()));
    }
    return out;
  };
  if (r.latency.count("pipe_round_trip") == 0) return {};
  return fmt::format("late p50 {}, own clock {}, pipe rtt p50 {}", p50("fire_lateness"),
                     p50("subject_lateness"), p50("pipe_round_trip"));
}

// trials_of: a repeated case's tally (plan/trials.h): "detected 3/5, median detect
// 1.2ms" for a mutant case, "failed 1/5" for a plain one; "" when not repeated.
std::string trials_of(const CaseRecord& c) {
  if (!c.trials) return {};
  const TrialTally& t = *c.trials;
  std::string out =
      fmt::format("{} {}/{}", c.expect_fail ? "detected" : "failed", t.failures, t.verdicts.size());
  if (t.median_detect_us) {
    out += fmt::format(", median detect {}",
                       fmt_ns(static_cast<std::int64_t>(*t.median_detect_us) * 1000));
  }
  return out;
}

// findings_of_passed: " (2 with findings: early_fire 1044, task_exceptions 612)":
// the findings of passed cases, each a promise their subject does not make (so
// they fail nothing), totalled by oracle; "" when there are none. A green run says
// what it saw.
std::string findings_of_passed(const Report& report) {
  std::map<std::string, std::uint64_t> total;
  std::size_t cases = 0;
  for (const CaseRecord& c : report.cases) {
    if (report.outcome(c) != Outcome::kPass) continue;
    bool any = false;
    for (const auto& [name, v] : c.result.violations) {
      if (v.count == 0 || judged(name, c.result.promises)) continue;
      total[name] += v.count;
      any = true;
    }
    if (any) ++cases;
  }
  if (cases == 0) return "";
  std::vector<std::string> parts;
  for (const auto& [name, n] : total) parts.push_back(fmt::format("{} {}", name, n));
  return fmt::format(" ({} with findings: {})", cases, fmt::join(parts, ", "));
}

}  // namespace

std::string case_explanation(const CaseRecord& c) {
  if (c.model && c.result.verdict == Verdict::kPass) {
    return fmt::format("{} iterations, {:.0f}/s, no failure", c.model->iterations,
                       c.model->iterations_per_second);
  }
  if (c.model && c.result.verdict == Verdict::kFail) {
    std::string m = c.result.message.substr(0, c.result.message.find("; history"));
    return m.size() > 100 ? m.substr(0, 97) + "..." : m;
  }
  // A finding whose promise the subject does not make is shown, marked, and
  // never chosen as the example while a judged one exists (a peer's documented
  // behaviour is not its failure).
  std::vector<std::string> parts;
  for (const auto& [name, v] : c.result.violations) {
    const bool counts = judged(name, c.result.promises);
    parts.push_back(fmt::format("{}={}{}", name, v.count, counts ? "" : " (not promised)"));
  }
  if (!c.result.sanitizer_reports.empty()) {
    parts.push_back(fmt::format("sanitizer_reports={}", c.result.sanitizer_reports.size()));
  }
  std::string detail = fmt::format("{}", fmt::join(parts, " "));
  // A timeout or an error is explained by the runner's message (what the case was
  // waiting for, which call failed), not by a finding it happened to see first.
  const bool cut_short =
      c.result.verdict == Verdict::kTimeout || c.result.verdict == Verdict::kError;
  if (cut_short && !c.result.message.empty()) {
    std::string why = c.result.message.substr(0, c.result.message.find('\n'));
    if (why.size() > 200) why = why.substr(0, 197) + "...";
    detail = detail.empty() ? why : why + "; " + detail;
  }
  // The first violation's own sentence, so a reader sees what happened, not just
  // how often: the first key in report order whose count is not zero.
  for (const bool want_judged : {true, false}) {
    if (cut_short && !c.result.message.empty()) break;
    bool found = false;
    for (const auto& [name, v] : c.result.violations) {
      if (v.count == 0 || v.first_example.empty()) continue;
      if (judged(name, c.result.promises) != want_judged) continue;
      std::string first = v.first_example.substr(0, v.first_example.find('\n'));
      if (first.size() > 160) first = first.substr(0, 157) + "...";
      detail += ": " + first;
      found = true;
      break;
    }
    if (found) break;
  }
  if (detail.empty() && !c.result.message.empty()) {
    detail = c.result.message.substr(0, c.result.message.find('\n'));
  }
  const std::string timing = exec_timing_of(c.result);
  if (!timing.empty()) detail = detail.empty() ? timing : timing + "; " + detail;
  std::string tally = trials_of(c);
  if (tally.empty() && c.search_rounds && *c.search_rounds > 1) {
    tally =
        fmt::format("{} in search round {}", c.caught() ? "caught" : "missed", *c.search_rounds);
  }
  if (!tally.empty()) detail = detail.empty() ? tally : tally + "; " + detail;
  return detail.empty() ? "-" : detail;
}

namespace {

Row row_of(const Report& report, const CaseRecord& c) {
  Row r;
  std::string verdict(name_of(c.result.verdict));
  std::string detail = case_explanation(c);
  switch (report.outcome(c)) {
    case Outcome::kPass:
      r.tone = Tone::kGood;
      break;
    case Outcome::kViolation:
    case Outcome::kSurvived:
      r.tone = Tone::kBad;
      if (c.expect_fail) verdict = "SURVIVED";
      break;
    case Outcome::kCaught:
      verdict = "caught";
      r.tone = Tone::kGood;
      break;
    case Outcome::kMissedHere:
      // Not a failure: the pair is caught by another case (another strategy).
      verdict = "not here";
      r.tone = Tone::kPlain;
      detail = "the mutant does not show on this strategy; another case caught it";
      break;
    case Outcome::kError:
    case Outcome::kInterrupted:
      r.tone = Tone::kWarn;
      break;
  }
  r.cells = {c.scenario, c.strategy, c.mutant.value_or("-"),
             // A simulated case's seed names a schedule, not a real-thread run.
             c.model ? std::string("-") : fmt::format("{}{}", c.seed, c.sim ? " sim" : ""), verdict,
             fmt::format("{:.2f}s", c.result.duration_s), detail};
  return r;
}

std::string paint(const std::string& text, Tone tone, bool color) {
  if (!color || tone == Tone::kPlain) return text;
  const auto c = tone == Tone::kGood  ? fmt::terminal_color::green
                 : tone == Tone::kBad ? fmt::terminal_color::red
                                      : fmt::terminal_color::yellow;
  return fmt::format(fmt::fg(c) | fmt::emphasis::bold, "{}", text);
}

}  // namespace

std::string format_table(const Report& report, bool color) {
  std::vector<Row> rows;
  Row header;
  header.cells = {"SCENARIO", "STRATEGY", "MUTANT", "SEED", "VERDICT", "TIME", "DETAIL"};
  rows.push_back(header);
  for (const CaseRecord& c : report.cases) rows.push_back(row_of(report, c));
  std::array<std::size_t, 7> width{};
  for (const Row& r : rows) {
    for (std::size_t i = 0; i < width.size(); ++i) width[i] = std::max(width[i], r.cells[i].size());
  }
  std::string out;
  for (const Row& r : rows) {
    std::string line;
    for (std::size_t i = 0; i < width.size(); ++i) {
      // Pad before painting: escape codes must not count towards the width.
      std::string cell =
          i + 1 == width.size() ? r.cells[i] : fmt::format("{:<{}}", r.cells[i], width[i]);
      if (i == 4 && &r != &rows.front()) cell = paint(cell, r.tone, color);
      line += cell;
      if (i + 1 != width.size()) line += "  ";
    }
    out += line + "\n";
  }
  const Summary s = report.summary();
  // Counted by outcome (report.h), so a caught mutant is not a "failed" case.
  std::array<std::size_t, 7> n{};
  for (const CaseRecord& c : report.cases) ++n[static_cast<std::size_t>(report.outcome(c))];
  auto count = [&](Outcome o) { return n[static_cast<std::size_t>(o)]; };
  std::string summary = fmt::format("{} cases: {} passed{}, {} failed", s.cases,
                                    count(Outcome::kPass), findings_of_passed(report),
                                    count(Outcome::kViolation) + count(Outcome::kSurvived));
  if (count(Outcome::kCaught) + count(Outcome::kMissedHere) > 0) {
    summary += fmt::format(", {} caught, {} not here", count(Outcome::kCaught),
                           count(Outcome::kMissedHere));
  }
  summary += fmt::format(", {} errors, {} timeouts", s.errors, s.timeouts);
  // A subject refuses a delay past its max_delay_ns (or a negative one): those
  // timers were never armed, which a reader of "passed" should know.
  std::uint64_t refused = 0;
  std::size_t refusing = 0;
  for (const CaseRecord& c : report.cases) {
    const auto it = c.result.counters.find("refused");
    if (it == c.result.counters.end() || it->second == 0) continue;
    refused += it->second;
    ++refusing;
  }
  if (refused > 0) {
    summary += fmt::format("; {} schedules refused by the subject in {} cases", refused, refusing);
  }
  if (s.mutant_pairs > 0) {
    summary += fmt::format("; mutants: {}/{} caught", s.mutants_caught.size(), s.mutant_pairs);
    if (!s.mutants_survived.empty()) {
      summary += fmt::format(", SURVIVED: {}", fmt::join(s.mutants_survived, ", "));
    }
  }
  if (report.until_fail) {
    summary += fmt::format("; round {}/{}{}", report.until_fail->round, report.until_fail->rounds,
                           report.until_fail->vary_seed ? " (seed + round - 1)" : "");
  }
  if (report.interrupted) summary += fmt::format("; INTERRUPTED ({} not run)", s.not_run);
  const int code = report.exit_code();
  out += "\n" +
         paint(summary,
               code == 0   ? Tone::kGood
               : code == 1 ? Tone::kBad
                           : Tone::kWarn,
               color) +
         "\n";
  return out;
}

void Progress::update(std::size_t done, std::size_t total, const std::string& what) {
  if (!enabled_) return;
  // \r and "erase to end of line" rewrite the same line.
  std::fputs(fmt::format("\r\x1b[K[{}/{}] {}", done, total, what).c_str(), out_);
  std::fflush(out_);
  dirty_ = true;
}

void Progress::clear() {
  if (!enabled_ || !dirty_) return;
  std::fputs("\r\x1b[K", out_);
  std::fflush(out_);
  dirty_ = false;
}

}  // namespace tlab::tool
