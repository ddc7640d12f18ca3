// tlab/tool/commands/compare.cc: `tlab compare`.
//
//   tlab compare [SCENARIO] [--workload W|all ...] [--strategies S,...|all] [--peers]
//                [--subject NAME|PATH.so[:entry] ...]
//                [--pending N,...] [--cell-ms MS] [--samples N] [--threads N,...]
//                [--rounds R]
//                [--slack-1ns] [--report F] [--html F] [--json]
//
// Without SCENARIO it measures the workloads of compare/subject.h (default: all)
// on the chosen strategies (default: all) and, with --peers, on libuv, libevent,
// asio and a java.util.Timer-style heap, and with --subject on any subject through
// the subject ABI (a plugin one child process per cell), against the OS-limit baselines of
// compare/baselines.h, all in this one process (compare/run.h). With SCENARIO it
// runs that scenario once per strategy through the stress runner (one case per
// strategy, latency percentiles side by side, as before), and the workloads too
// only if --workload is given. Outputs: the table on stdout (or the JSON report
// with --json), the JSON report (--report; "compare" section in
// tool/report/report_schema.json) and a self-contained HTML page with inline SVG charts
// (--html; compare/html.h).
//
// Defaults are chosen so that `tlab compare --peers --html out.html` measures
// every strategy and peer in one process in about 2 minutes on 2 cores:
// pending 1K, 100K, 1M; 40 ms of CPU per cell in each of 3 interleaved rounds (rows
// are medians, run.h); the mt workloads on 2 threads; 1000 latency samples.
// Sizes up to 10M are accepted (--pending 1000,10000000). A scaling table needs
// several thread counts: --threads 1,2 (summary.h).
//
// Exit codes (cli/command.h): 0 measured (the bars are reported, never enforced); 1 a
// scenario case failed, or a --subject crashed or hung in a cell; 2 a bad option (CLI11 names the flag) or bad SCENARIO or
// output path; 3 an internal error (for example a peer library failing to start).
//
// Ground rules: CLI thread only; the measurements own the process while they run.
#include <algorithm>
#include <array>
#include <iostream>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "base/strategies.h"
#include "cli/common.h"
#include "cli/subject_option.h"
#include "compare/html.h"
#include "compare/run.h"
#include "plan/plan.h"
#include "report/console.h"
#include "report/junit.h"
#include "scenario/scenario.h"
#include "subjects/subjects.h"

namespace tlab::tool {

namespace {

using Cells = std::array<std::string, 9>;

std::vector<Cells> compare_rows(const Report& report) {
  std::vector<Cells> rows;
  rows.push_back({"STRATEGY", "VERDICT", "HISTOGRAM", "COUNT", "P50_US", "P90_US", "P99_US",
                  "P999_US", "MAX_US"});
  auto us = [](std::int64_t ns) { return fmt::format("{:.1f}", static_cast<double>(ns) / 1000.0); };
  for (const CaseRecord& c : report.cases) {
    const std::string verdict(name_of(c.result.verdict));
    if (c.result.latency.empty()) {
      rows.push_back({c.strategy, verdict, "-", "0", "-", "-", "-", "-", "-"});
    }
    for (const auto& [name, h] : c.result.latency) {
      rows.push_back({c.strategy, verdict, name, std::to_string(h.count()), us(h.percentile(50)),
                      us(h.percentile(90)), us(h.percentile(99)), us(h.percentile(99.9)),
                      us(h.max())});
    }
  }
  return rows;
}

// compare_table: the scenario mode's aligned text table (one row per strategy x
// latency histogram).
std::string compare_table(const Report& report) {
  const auto rows = compare_rows(report);
  std::array<std::size_t, 9> width{};
  for (const Cells& r : rows) {
    for (std::size_t i = 0; i < width.size(); ++i) width[i] = std::max(width[i], r[i].size());
  }
  std::string out;
  for (const Cells& r : rows) {
    for (std::size_t i = 0; i < width.size(); ++i) {
      // Text left-aligned, numbers (from COUNT on) right-aligned.
      out += i < 3 ? fmt::format("{:<{}}", r[i], width[i]) : fmt::format("{:>{}}", r[i], width[i]);
      out += i + 1 == width.size() ? "\n" : "  ";
    }
  }
  return out;
}

// compare_html: the scenario mode's standalone HTML page.
std::string compare_html(const Report& report) {
  const auto rows = compare_rows(report);
  std::string table = "<table>\n";
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const char* cell = r == 0 ? "th" : "td";
    table += "<tr>";
    for (const std::string& c : rows[r])
      table += fmt::format("<{0}>{1}</{0}>", cell, xml_escape(c));
    table += "</tr>\n";
  }
  table += "</table>\n";
  const std::string scenario =
      report.cases.empty() ? std::string("(no cases)") : report.cases.front().scenario;
  const Environment& e = report.environment;
  return fmt::format(
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>tlab compare: {0}</title>\n"
      "<style>body{{font-family:sans-serif}}table{{border-collapse:collapse}}"
      "td,th{{border:1px solid #999;padding:2px 8px}}td{{text-align:right}}"
      "td:nth-child(-n+3){{text-align:left}}</style></head>\n"
      "<body><h1>tlab compare: {0}</h1>\n{1}"
      "<p>{2}; {3}; sanitizer {4}; {5} CPUs; {6}; timer slack {7} ns; tlab {8} ({9})</p>\n"
      "</body></html>\n",
      xml_escape(scenario), table, xml_escape(e.compiler), xml_escape(e.build_type),
      xml_escape(e.sanitizer), e.cpus_available, xml_escape(e.kernel), e.timer_slack_ns,
      xml_escape(e.tlab_version), xml_escape(e.git_revision));
}

constexpr std::size_t kMinPending = 1'000;
constexpr std::size_t kMaxPending = 10'000'000;

class CompareCommand final : public Command {
 public:
  void setup(CLI::App& sub) override {
    sub_ = &sub;
    sub_->description(
        "strategies side by side, against libuv/libevent/asio/java-timer peers and the OS limit");
    sub_->add_option("SCENARIO", scenario_path_,
                     "optional: also run this scenario file once per strategy")
        ->type_name("FILE");
    std::vector<std::string> workloads{"all"};
    for (const char* w : compare::kWorkloadNames) workloads.emplace_back(w);
    sub_->add_option("--workload", workloads_, "workloads to measure (default: all)")
        ->type_name("W,...")
        ->delimiter(',')
        ->check(CLI::IsMember(workloads));
    sub_->add_option("--strategies", strategies_, "strategies to compare (default: all)")
        ->type_name("S,...")
        ->delimiter(',')
        ->check(CLI::IsMember(strategy_names(/*with_all=*/true)));
    sub_->add_flag("--peers", peers_,
                   "also measure libuv, libevent, asio and a java.util.Timer heap");
    sub_->add_option("--subject", subject_specs_,
                     "also measure this subject through the subject ABI (repeatable): a row of "
                     "`tlab list subjects` or a plugin PATH.so[:entry], measured in a child "
                     "process per cell; with SCENARIO it also runs the scenario on it")
        ->type_name("S")
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    sub_->add_option("--pending", pending_,
                     fmt::format("pending timer counts, {}..{} (default: 1000,100000,1000000)",
                                 kMinPending, kMaxPending))
        ->type_name("N,...")
        ->delimiter(',')
        ->check(CLI::Range(kMinPending, kMaxPending));
    sub_->add_option("--cell-ms", cell_ms_, "CPU milliseconds measured per cost cell (default 40)")
        ->type_name("MS")
        ->check(CLI::Range(1, 10'000));
    sub_->add_option("--samples", samples_, "latency samples per subject (default 1000)")
        ->type_name("N")
        ->check(CLI::Range(1, 100'000));
    sub_->add_option("--threads", threads_,
                     "thread counts of the mt workloads (mt_schedule_cancel, mt_churn), one cell "
                     "each; two or more give the scaling table (default 2)")
        ->type_name("N,...")
        ->delimiter(',')
        ->check(CLI::Range(1, 64));
    sub_->add_option("--rounds", rounds_,
                     "interleaved rounds of every cost cell; rows report medians (default 3)")
        ->type_name("R")
        ->check(CLI::Range(1, 50));
    sub_->add_flag("--slack-1ns", slack_1ns_,
                   "also measure clock_nanosleep at 1 ns timer slack and run the workloads there");
    sub_->add_option("--report", report_path_, "write the JSON report to F (atomically)")
        ->type_name("F");
    sub_->add_option("--html", html_path_, "write the HTML page with SVG charts to F")
        ->type_name("F");
    sub_->add_flag("--json", json_, "print the JSON report on stdout instead of the table");
    add_example(*sub_, "tlab compare --peers --html compare.html");
  }

  int run(const CliEnv& env) override {
    std::ostream& out = *env.out;
    std::ostream& err = *env.err;
    InputErrors errors;
    std::vector<Scenario> scenarios;
    if (!scenario_path_.empty()) {
      scenarios = load_runnable(ScenarioLoader(), {scenario_path_}, errors);
    }
    std::vector<std::string> strategies = strategies_;
    if (strategies.empty()) {
      strategies = strategy_names();
    } else if (strategies.size() == 1 && strategies.front() == "all") {
      strategies = expand_strategies(strategies);
    } else if (std::find(strategies.begin(), strategies.end(), "all") != strategies.end()) {
      errors.push_back({"--strategies", "/", "\"all\" cannot be combined with other names"});
    }
    compare::CompareOptions o;
    for (const std::string& spec : subject_specs_) {
      std::optional<SubjectFacts> f = resolve_subject(spec, env);
      if (!f) return kExitBadInput;
      if (f->kind != TLAB_KIND_FACILITY) {
        errors.push_back({"--subject", "/",
                          fmt::format("{} is a timed wait; compare's workloads need a timer "
                                      "facility (schedule/cancel)",
                                      spec)});
        continue;
      }
      if (!f->command.empty()) {
        errors.push_back(
            {"--subject", "/",
             fmt::format("{} is an exec subject; compare measures CPU time per operation in "
                         "tlab's process, which a pipe to another process would swamp. `tlab "
                         "check --subject {}` reports its lateness and the pipe's round trip",
                         spec, spec)});
        continue;
      }
      o.subjects.push_back(std::move(*f));
    }
    if (!scenarios.empty() && !o.subjects.empty()) {
      for (const SubjectFacts& f : o.subjects) {
        scenarios_for_subject(scenarios, f, Refusals::kErrors, errors, env);
      }
    }
    o.strategies = strategies;
    o.peers = peers_;
    o.slack_1ns = slack_1ns_;
    o.cell.cell_ns = cell_ms_ * 1'000'000;
    o.cell.samples = samples_;
    o.threads = threads_.empty() ? std::vector<std::size_t>{2} : threads_;
    std::sort(o.threads.begin(), o.threads.end());
    if (std::adjacent_find(o.threads.begin(), o.threads.end()) != o.threads.end()) {
      errors.push_back({"--threads", "/", "a thread count is given twice"});
    }
    o.rounds = rounds_;
    o.pending = pending_.empty() ? std::vector<std::size_t>{1'000, 100'000, 1'000'000} : pending_;
    const bool all = workloads_.empty() ||
                     std::find(workloads_.begin(), workloads_.end(), "all") != workloads_.end();
    if (all && workloads_.size() > 1) {
      errors.push_back({"--workload", "/", "\"all\" cannot be combined with other names"});
    }
    for (std::size_t i = 0; i < static_cast<std::size_t>(compare::Workload::kCount); ++i) {
      const auto w = static_cast<compare::Workload>(i);
      if (all || std::find(workloads_.begin(), workloads_.end(), compare::name_of(w)) !=
                     workloads_.end()) {
        o.workloads.push_back(w);
      }
    }
    const bool measure = scenario_path_.empty() || !workloads_.empty();
    check_outputs({{"--report", report_path_}, {"--html", html_path_}}, errors);
    if (!errors.empty() || (!scenario_path_.empty() && scenarios.empty())) {
      return bad_input(errors, env);
    }

    Report report;
    report.command = "compare";
    report.environment = Environment::detect();
    if (!scenarios.empty()) {
      std::unique_ptr<Runner> runner = runner_or_null(env);
      if (!runner) return kExitInternal;
      std::vector<CaseSpec> specs;
      for (const std::string& s : strategies) {
        specs.push_back(plan_case(scenarios.front(), s, std::nullopt, Overrides{}, false));
      }
      for (const SubjectFacts& f : o.subjects) {
        Overrides ov;
        ov.subject = f;
        specs.push_back(plan_case(scenarios.front(), f.name, std::nullopt, ov, false));
      }
      ExecuteOptions options;
      options.command = "compare";
      options.show_progress = env.stderr_is_tty;
      report = execute_plan(specs, scenarios, *runner, options);
    }
    std::optional<compare::CompareResults> results;
    if (measure && !report.interrupted) {
      Progress progress(env.stderr_is_tty);
      results =
          compare::run_compare(o, [&](const std::string& what) { progress.update(0, 0, what); });
      progress.clear();
      report.interrupted = report.interrupted || results->interrupted;
    }
    nlohmann::ordered_json j = report.to_json();
    if (results) j["compare"] = compare::compare_results_json(o, *results);
    const std::string json = j.dump(2) + "\n";
    int code =
        scenarios.empty() ? (report.interrupted ? kExitInterrupted : kExitOk) : report.exit_code();
    // A subject that crashed or hung in a cell failed, like a failed case.
    if (results && !results->failures.empty() && code == kExitOk) code = kExitViolation;
    try {
      if (!report_path_.empty()) write_file_atomic(report_path_, json);
      if (!html_path_.empty()) {
        write_file_atomic(html_path_,
                          results ? compare::compare_results_html(o, *results, report.environment)
                                  : compare_html(report));
      }
    } catch (const std::exception& e) {
      err << "tlab: internal error: " << e.what() << "\n";
      code = kExitInternal;
    }
    if (json_) {
      out << json;
    } else {
      if (!scenarios.empty()) out << compare_table(report);
      if (results) out << compare::compare_results_table(o, *results);
    }
    return code;
  }

 private:
  CLI::App* sub_ = nullptr;
  std::string scenario_path_;
  std::vector<std::string> workloads_;
  std::vector<std::string> strategies_;
  bool peers_ = false;
  std::vector<std::string> subject_specs_;
  std::vector<std::size_t> pending_;
  std::int64_t cell_ms_ = 40;
  std::size_t samples_ = 1000;
  std::vector<std::size_t> threads_;
  std::size_t rounds_ = 3;
  bool slack_1ns_ = false;
  std::string report_path_;
  std::string html_path_;
  bool json_ = false;
};

}  // namespace

std::unique_ptr<Command> make_compare_command() { return std::make_unique<CompareCommand>(); }

}  // namespace tlab::tool
