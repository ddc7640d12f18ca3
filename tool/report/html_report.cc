// tlab/tool/report/html_report.cc: see html_report.h.
#include "report/html_report.h"

#include <array>
#include <map>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "oracles/oracles.h"
#include "report/console.h"
#include "report/junit.h"
#include "report/svg_chart.h"

namespace tlab::tool {

namespace {

// Per outcome: the class suffix and the word the verdict column shows.
constexpr std::array<std::pair<const char*, const char*>, 7> kOutcomeNames{{
    {"pass", "pass"},
    {"violation", "FAIL"},
    {"caught", "caught"},
    {"missed-here", "not here"},
    {"survived", "SURVIVED"},
    {"error", "error"},
    {"interrupted", "interrupted"},
}};

const std::pair<const char*, const char*>& names_of(Outcome o) {
  return kOutcomeNames[static_cast<std::size_t>(o)];
}

// Series per chart: past ten strategies the colours repeat and the legend overflows.
constexpr std::size_t kMaxSeries = 10;
// Four bins per decade: fine enough to show a bimodal lateness, coarse enough that a
// bin of a short run still holds several samples.
constexpr int kBinsPerDecade = 4;

std::string summary_section(const Report& report, const std::vector<Finding>& notes) {
  const Summary s = report.summary();
  const Environment& e = report.environment;
  std::string out = fmt::format(
      "<section id=\"summary\"><h2>Summary</h2>\n<p>tlab {}: {} cases of {} planned: {} passed, "
      "{} failed, {} errors, {} timeouts, {} interrupted{}.</p>\n",
      xml_escape(report.command), s.cases, s.planned, s.passed, s.failed, s.errors, s.timeouts,
      s.interrupted, report.interrupted ? " (the run was interrupted)" : "");
  if (!notes.empty()) {
    std::set<const CaseRecord*> cases;
    for (const Finding& f : notes) cases.insert(f.record);
    out += fmt::format(
        "<p id=\"unpromised-count\">{} passed cases have {} findings their subject does not "
        "promise: <a href=\"#unpromised\">below</a>.</p>\n",
        cases.size(), notes.size());
  }
  if (s.mutant_pairs > 0) {
    out += fmt::format("<p>Mutant pairs: {}; caught: {}; survived: {}.</p>\n", s.mutant_pairs,
                       s.mutants_caught.size(),
                       xml_escape(s.mutants_survived.empty()
                                      ? std::string("none")
                                      : fmt::format("{}", fmt::join(s.mutants_survived, ", "))));
  }
  out += fmt::format(
      "<p class=\"env\">{}; {}; sanitizer {}; {} CPUs; {}; tlab {} ({})</p></section>\n",
      xml_escape(e.compiler), xml_escape(e.build_type), xml_escape(e.sanitizer), e.cpus_available,
      xml_escape(e.kernel), xml_escape(e.tlab_version), xml_escape(e.git_revision));
  return out;
}

std::string cases_section(const Report& report,
                          const std::map<const CaseRecord*, std::size_t>& finding_of) {
  std::string out =
      "<section><h2>Cases</h2>\n<table id=\"cases\"><thead><tr><th>case</th><th>strategy</th>"
      "<th>mutant</th><th>seed</th><th>verdict</th><th>time</th><th>explanation</th>"
      "<th>replay</th></tr></thead><tbody>\n";
  for (std::size_t i = 0; i < report.cases.size(); ++i) {
    const CaseRecord& c = report.cases[i];
    const auto& [cls, word] = names_of(report.outcome(c));
    auto f = finding_of.find(&c);
    const std::string replay =
        f == finding_of.end()
            ? std::string()
            : fmt::format("<a class=\"replay-link\" href=\"#replay-{0}\">replay</a>", f->second);
    out += fmt::format(
        "<tr id=\"case-{}\" class=\"case outcome-{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td class=\"verdict\">{}</td><td>{:.2f}s</td><td class=\"explanation\">{}</td><td>{}</td>"
        "</tr>\n",
        i, cls, xml_escape(c.id), xml_escape(c.strategy), xml_escape(c.mutant.value_or("-")),
        c.model ? std::string("-") : std::to_string(c.seed), word, c.result.duration_s,
        xml_escape(case_explanation(c)), replay);
  }
  return out + "</tbody></table></section>\n";
}

std::string oracles_section(const Report& report) {
  struct Count {
    std::size_t cases = 0, failed = 0;
    std::uint64_t violations = 0;
  };
  std::map<std::string, Count> extra;  // latency.*, at_least.*: keys outside the catalogue
  std::array<Count, kOracleCount> by_oracle{};
  for (const CaseRecord& c : report.cases) {
    for (const auto& [key, v] : c.result.violations) {
      const auto o = oracle_from_name(key);
      Count& n = o ? by_oracle[static_cast<std::size_t>(*o)] : extra[key];
      n.cases += v.count > 0;
      n.violations += v.count;
      n.failed +=
          v.count > 0 && c.result.verdict == Verdict::kFail && judged(key, c.result.promises);
    }
  }
  std::string out =
      "<section><h2>Per oracle</h2>\n<table id=\"oracles\"><thead><tr><th>oracle</th><th>counts"
      "</th><th>cases that saw it</th><th>violations</th><th>failing cases</th></tr></thead>"
      "<tbody>\n";
  auto row = [&](std::string_view name, std::string_view what, const Count& n) {
    out += fmt::format(
        "<tr class=\"oracle{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        n.cases > 0 ? " seen" : "", xml_escape(name), xml_escape(what), n.cases, n.violations,
        n.failed);
  };
  for (const OracleInfo& o : kOracleInfo)
    row(o.name, o.counts, by_oracle[static_cast<std::size_t>(o.id)]);
  for (const auto& [key, n] : extra) row(key, "a bound or requirement of the scenario", n);
  return out + "</tbody></table></section>\n";
}

std::string latency_section(const Report& report) {
  // name -> strategy -> merged histogram
  std::map<std::string, std::map<std::string, Histogram>> merged;
  for (const CaseRecord& c : report.cases) {
    for (const auto& [name, h] : c.result.latency) merged[name][c.strategy].merge(h);
  }
  std::string out = "<section id=\"latency\"><h2>Latency</h2>\n";
  if (merged.empty()) out += "<p>No case recorded a latency histogram.</p>\n";
  for (const auto& [name, per_strategy] : merged) {
    std::vector<ChartSeries> series;
    Histogram all;
    for (const auto& [strategy, h] : per_strategy) {
      all.merge(h);
      if (series.size() < kMaxSeries && h.count() > 0)
        series.push_back({strategy, cdf_points(h), false});
    }
    out += fmt::format(
        "<h3>{0}</h3>\n<p>{1} samples; p50 {2:.1f} us, p99 {3:.1f} us, max {4:.1f} us.</p>\n",
        xml_escape(name), all.count(), static_cast<double>(all.percentile(50)) / 1000.0,
        static_cast<double>(all.percentile(99)) / 1000.0, static_cast<double>(all.max()) / 1000.0);
    out += svg_line_chart({fmt::format("{}: CDF per strategy", name), "microseconds (log)",
                           "fraction at or below", false, std::nullopt, "cdf"},
                          series);
    out += svg_histogram(fmt::format("{}: all cases", name), "microseconds (log)",
                         log_bins(all, kBinsPerDecade));
  }
  return out + "</section>\n";
}

std::string mutant_pairs_section(const Report& report) {
  struct Pair {
    std::size_t cases = 0, caught = 0, trials = 0, detections = 0;
  };
  std::map<std::string, Pair> pairs;
  for (const CaseRecord& c : report.cases) {
    if (!c.expect_fail || c.model) continue;
    Pair& p = pairs[pair_key(c)];
    ++p.cases;
    p.caught += c.caught();
    p.trials += c.trials ? c.trials->verdicts.size() : 1;
    p.detections += c.trials ? c.trials->failures : (c.caught() ? 1 : 0);
  }
  if (pairs.empty()) return {};
  std::string out =
      "<section id=\"mutant-pairs\"><h2>Mutant pairs</h2>\n<table><thead><tr><th>scenario:mutant"
      "</th><th>cases</th><th>cases that caught it</th><th>detections/trials</th><th>detection "
      "rate</th></tr></thead><tbody>\n";
  for (const auto& [key, p] : pairs) {
    out += fmt::format(
        "<tr "
        "class=\"pair{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}/{}</td><td>{:.0f}%</td></tr>\n",
        p.caught > 0 ? " caught" : " survived", xml_escape(key), p.cases, p.caught, p.detections,
        p.trials,
        p.trials ? 100.0 * static_cast<double>(p.detections) / static_cast<double>(p.trials) : 0.0);
  }
  return out + "</tbody></table></section>\n";
}

std::string kill_matrix_section(const Report& report) {
  if (!report.kill_matrix) return {};
  const nlohmann::ordered_json& m = *report.kill_matrix;
  std::vector<std::string> layers;
  std::string status = "<ul class=\"layers\">\n";
  for (const auto& l : m.value("layers", nlohmann::ordered_json::array())) {
    layers.push_back(l.value("layer", ""));
    const bool ran = l.value("state", "") == "ran";
    status += fmt::format(
        "<li>{}: {}{}{}</li>\n", xml_escape(l.value("layer", "")), xml_escape(l.value("state", "")),
        l.value("reason", "").empty() ? "" : " - " + xml_escape(l.value("reason", "")),
        ran ? fmt::format(" ({} checks, {} trials each, {:.1f}s)", l.value("checks", 0),
                          l.value("trials", 1), l.value("seconds", 0.0))
            : std::string());
  }
  status += "</ul>\n";
  std::string out = "<section id=\"kill-matrix\"><h2>Kill matrix</h2>\n" + status +
                    "<table><thead><tr><th>mutant</th><th>component</th>";
  for (const std::string& l : layers) out += "<th>" + xml_escape(l) + "</th>";
  out += "<th>survived in</th></tr></thead><tbody>\n";
  for (const auto& row : m.value("mutants", nlohmann::ordered_json::array())) {
    const bool caught = !row.value("caught_by", nlohmann::ordered_json::array()).empty();
    out += fmt::format("<tr class=\"mutant {}\"><td>{}</td><td>{}</td>",
                       caught ? "caught" : "uncaught", xml_escape(row.value("name", "")),
                       xml_escape(row.value("component", "")));
    for (const std::string& l : layers) {
      std::string cell = "-";
      for (const auto& d : row.value("caught_by", nlohmann::ordered_json::array())) {
        if (d.value("layer", "") != l) continue;
        const auto trials = d.value("trials", std::size_t{1});
        const auto detections = d.value("detections", std::size_t{1});
        cell = fmt::format(
            "<span class=\"rate{}\">{}/{} ({:.0f}%)</span> {:.3f}s<br><small>{}</small>",
            d.value("flaky", false) ? " flaky" : "", detections, trials,
            trials ? 100.0 * static_cast<double>(detections) / static_cast<double>(trials) : 0.0,
            d.value("time_to_detection_s", 0.0), xml_escape(d.value("check", "")));
      }
      out += "<td>" + cell + "</td>";
    }
    std::vector<std::string> survived;
    for (const auto& s : row.value("survived", nlohmann::ordered_json::array())) {
      survived.push_back(s.value("layer", "") + ": " + s.value("check", ""));
    }
    out +=
        fmt::format("<td>{}</td></tr>\n", xml_escape(fmt::format("{}", fmt::join(survived, "; "))));
  }
  return out + "</tbody></table></section>\n";
}

std::string replay_section(const std::vector<Finding>& found) {
  std::string out = "<section id=\"replay\"><h2>Failing cases and their replay commands</h2>\n";
  if (found.empty()) return out + "<p>No failing case.</p></section>\n";
  out += "<ol>\n";
  for (std::size_t i = 0; i < found.size(); ++i) {
    const Finding& f = found[i];
    out += fmt::format(
        "<li id=\"replay-{}\" class=\"replay\"><b>{}</b> [{}]{}: {}<br><code>{}</code></li>\n", i,
        xml_escape(f.record->id), xml_escape(f.rule),
        f.file.empty() ? std::string() : fmt::format(" in {}:{}", xml_escape(f.file), f.line),
        xml_escape(f.message), xml_escape(f.replay));
  }
  return out + "</ol></section>\n";
}

// The unpromised findings: they fail nothing, so they are listed apart from the
// failing cases, each with its count and replay command.
std::string unpromised_section(const std::vector<Finding>& notes) {
  std::string out =
      "<section id=\"unpromised\"><h2>Findings the subject does not promise</h2>\n"
      "<p>Passed cases saw these failure classes, which their subject does not promise to "
      "avoid: they fail nothing (<code>--fail-on</code> turns them into failures).</p>\n";
  if (notes.empty()) return out + "<p>None.</p></section>\n";
  out +=
      "<table><thead><tr><th>case</th><th>oracle</th><th>count</th><th>explanation</th>"
      "<th>replay</th></tr></thead><tbody>\n";
  for (const Finding& f : notes) {
    out += fmt::format(
        "<tr class=\"unpromised\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td><code>{}</code></td></tr>\n",
        xml_escape(f.record->id), xml_escape(f.rule), f.count, xml_escape(f.message),
        xml_escape(f.replay));
  }
  return out + "</tbody></table></section>\n";
}

constexpr const char* kStyle =
    "body{font-family:sans-serif;max-width:1500px;margin:1em auto;padding:0 1em}"
    "table{border-collapse:collapse;font-size:13px}th,td{border:1px solid #ccc;padding:2px 6px;"
    "text-align:left;vertical-align:top}th{background:#eee}"
    ".outcome-violation td.verdict,.outcome-survived td.verdict,.uncaught td:first-child"
    "{background:#f8d0d0}.outcome-error td.verdict{background:#fbe7b0}"
    ".outcome-pass td.verdict,.outcome-caught td.verdict{background:#d4f0d4}"
    ".rate.flaky{background:#fbe7b0}svg{margin:8px;border:1px solid #ccc}"
    "code{background:#f4f4f4;padding:1px 4px}.env{color:#555;font-size:12px}";

}  // namespace

std::string html_report(const Report& report, const std::vector<Finding>& found,
                        const std::vector<Finding>& notes) {
  std::map<const CaseRecord*, std::size_t> finding_of;
  for (std::size_t i = 0; i < found.size(); ++i) finding_of[found[i].record] = i;
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>tlab {0}</title>\n"
      "<style>{1}</style></head>\n<body><h1>tlab {0}</h1>\n{2}{3}{4}{5}{6}{7}{8}{9}"
      "<footer id=\"end\">end of report</footer></body></html>\n",
      xml_escape(report.command), kStyle, summary_section(report, notes),
      cases_section(report, finding_of), oracles_section(report), latency_section(report),
      mutant_pairs_section(report), kill_matrix_section(report), replay_section(found),
      unpromised_section(notes));
}

}  // namespace tlab::tool
