// tlab/tool/plan/plan.cc: see plan.h.
#include "plan/plan.h"

#include <chrono>
#include <cmath>
#include <exception>
#include <set>

#include <fmt/format.h>

#include "base/interrupt.h"
#include "base/sanitizer.h"
#include "base/strategies.h"
#include "plan/trials.h"
#include "report/console.h"

namespace tlab::tool {

namespace {

std::vector<std::string> strategies_for(const Scenario& s, const Overrides& o) {
  // A subject case is named after the subject; the scenario's strategies are core's.
  if (o.subject) return {o.subject_name};
  if (!s.engine.subject.empty()) return {s.engine.subject};
  if (!o.strategy) return s.engine.strategies;
  return expand_strategies({*o.strategy});
}

std::string pair_key(const CaseSpec& spec) {
  return spec.scenario->name + ":" + std::string(name_of(*spec.mutant));
}

// run_one: one trial of `spec`; a runner exception becomes verdict error.
CaseResult run_one(const CaseSpec& spec, Runner& runner,
                   const std::function<void(const std::string&)>& progress) {
  RunContext context;
  context.progress = progress;
  const auto start = std::chrono::steady_clock::now();
  CaseResult result;
  try {
    result = runner.run_case(spec, context);
  } catch (const std::exception& e) {
    result = CaseResult{};
    result.verdict = Verdict::kError;
    result.message = fmt::format("runner threw: {}", e.what());
  }
  if (result.duration_s <= 0) {
    result.duration_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  }
  return result;
}

}  // namespace

CaseSpec plan_case(const Scenario& s, const std::string& strategy, std::optional<Mutant> mutant,
                   const Overrides& o, bool expect_fail) {
  CaseSpec c;
  c.scenario = &s;
  c.strategy = strategy;
  c.mutant = mutant;
  c.id = mutant ? fmt::format("{}/{}/{}", s.name, strategy, name_of(*mutant))
                : fmt::format("{}/{}", s.name, strategy);
  c.seed = o.seed.value_or(s.run.seed);
  c.operations = o.operations.value_or(s.run.operations);
  c.budget_s = o.budget_s.value_or(s.run.budget_s);
  c.expect_fail = expect_fail;
  if (o.subject) {
    c.subject = *o.subject;
  } else if (!s.engine.subject.empty()) {
    c.subject = s.engine.subject;  // a built-in row: its name is its spec
  }
  // --sim wins; a scenario's run.sim applies to tlab's own engines only (a
  // subject's threads are not tasks of the simulation).
  c.sim = o.sim ? o.sim : c.subject.empty() ? s.run.sim : std::nullopt;
  return c;
}

std::vector<CaseSpec> plan_run(const std::vector<Scenario>& scenarios, const Overrides& o) {
  std::vector<CaseSpec> out;
  for (const Scenario& s : scenarios) {
    for (const std::string& strategy : strategies_for(s, o)) {
      out.push_back(plan_case(s, strategy, o.mutant, o, /*expect_fail=*/false));
    }
  }
  return out;
}

std::vector<CaseSpec> plan_check(const std::vector<Scenario>& scenarios, const Overrides& o) {
  Overrides base = o;
  base.mutant.reset();
  base.strategy.reset();
  std::vector<CaseSpec> out = plan_run(scenarios, base);
  if (o.subject) return out;
  // tsan_catches: data-race mutants with no symptom but a TSan report; planned only
  // when this tlab is a TSan build (otherwise they could only "survive").
  const bool tsan = under_tsan();
  for (const Scenario& s : scenarios) {
    std::vector<Mutant> wanted = s.catches;
    if (tsan) wanted.insert(wanted.end(), s.tsan_catches.begin(), s.tsan_catches.end());
    for (Mutant m : wanted) {
      for (const std::string& strategy : strategies_for(s, base)) {
        out.push_back(plan_case(s, strategy, m, base, /*expect_fail=*/true));
      }
    }
  }
  return out;
}

Report execute_plan(const std::vector<CaseSpec>& specs, const std::vector<Scenario>& scenarios,
                    Runner& runner, const ExecuteOptions& options) {
  Report report;
  report.command = options.command;
  report.environment = Environment::detect();
  report.planned = specs.size();
  report.until_fail = options.until_fail;
  for (const Scenario& s : scenarios) report.scenarios[s.name] = {s.source, s.document};

  // Progress counts upward against a fixed total: a mutant case skipped because its
  // pair was already caught counts as done.
  Progress progress(options.show_progress);
  const std::size_t total = specs.size();
  std::set<std::string> caught_pairs;
  std::size_t done = 0;
  for (const CaseSpec& spec : specs) {
    if (interrupted()) {
      report.interrupted = true;
      break;
    }
    if (spec.expect_fail && spec.mutant && caught_pairs.count(pair_key(spec))) {
      --report.planned;  // already caught on an earlier strategy: not run, not owed
      ++done;
      continue;
    }
    // One trial, or N (--repeat) folded into one record; Ctrl-C ends the trials.
    const std::uint32_t n = options.trials.value_or(1);
    std::vector<CaseResult> results;
    for (std::uint32_t t = 1; t <= n; ++t) {
      const std::string what = n > 1 ? fmt::format("{} trial {}/{}", spec.id, t, n) : spec.id;
      progress.update(done, total, what);
      results.push_back(run_one(spec, runner, [&](const std::string& line) {
        progress.update(done, total, what + "  " + line);
      }));
      if (results.back().verdict == Verdict::kInterrupted || interrupted()) break;
    }
    ++done;
    CaseRecord record = options.trials ? fold_trials(spec, std::move(results))
                                       : CaseRecord::from(spec, std::move(results.front()));
    if (record.expect_fail && record.caught()) caught_pairs.insert(pair_key(spec));
    if (options.log != nullptr && !options.show_progress) {
      // Not a terminal (a CI log): one line per finished case shows life.
      std::string tally;
      if (record.trials) {
        tally = fmt::format(" ({} {}/{})", record.expect_fail ? "detected" : "failed",
                            record.trials->failures, record.trials->verdicts.size());
      }
      *options.log << fmt::format("[{}/{}] {} {} {:.2f}s{}\n", done, total, record.id,
                                  name_of(record.result.verdict), record.result.duration_s, tally)
                   << std::flush;
    }
    const bool stop = record.result.verdict == Verdict::kInterrupted || interrupted();
    report.cases.push_back(std::move(record));
    if (stop) report.interrupted = true;
    if (options.on_case_done) options.on_case_done(report);
    if (stop) break;
  }
  progress.clear();
  return report;
}

std::optional<double> parse_duration_s(const std::string& text) {
  if (text.empty()) return std::nullopt;
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  if (!std::isfinite(value) || text.find_first_of("xXpP") != std::string::npos) return std::nullopt;
  const std::string unit = text.substr(used);
  double scale = 0;
  if (unit.empty() || unit == "s") {
    scale = 1;
  } else if (unit == "ms") {
    scale = 1e-3;
  } else if (unit == "us") {
    scale = 1e-6;
  } else if (unit == "ns") {
    scale = 1e-9;
  } else if (unit == "m") {
    scale = 60;
  } else {
    return std::nullopt;
  }
  return value * scale;
}

}  // namespace tlab::tool
