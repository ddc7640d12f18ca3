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
#include "subjects/case_targets.h"
#include "subjects/subjects.h"

namespace tlab::tool {

namespace {

std::vector<std::string> strategies_for(const Scenario& s, const Overrides& o) {
  // A subject case is named after the subject; the scenario's strategies are core's.
  if (o.subject) return {o.subject->name};
  if (!s.engine.subject.empty()) return {s.engine.subject};
  if (!o.strategy) return s.engine.strategies;
  return expand_strategies({*o.strategy});
}

std::string pair_key(const CaseSpec& spec) {
  return spec.scenario->name + ":" + std::string(name_of(*spec.mutant));
}

// run_case_once: one run of `spec`; a runner exception becomes verdict error.
CaseResult run_case_once(const CaseSpec& spec, Runner& runner,
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
    c.subject = o.subject->spec;
    c.target = subject_target(*o.subject);
  } else if (!s.engine.subject.empty()) {
    c.subject = s.engine.subject;  // a built-in row: its name is its spec
    c.target = subject_target(c.subject);
  } else {
    c.target = engine_target(s, strategy);
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
    const bool simulate = o.simulate_mutants && !base.sim && !sim_refusal(s);
    for (Mutant m : s.catches) {
      // Under --sim every case is simulated: a mutant simulation never runs into
      // could only "survive" (as tsan_catches without TSan), so it is not planned.
      if (base.sim && !mutant_under_sim(m)) continue;
      for (const std::string& strategy : strategies_for(s, base)) {
        CaseSpec& c = out.emplace_back(plan_case(s, strategy, m, base, /*expect_fail=*/true));
        if (simulate && !c.sim && mutant_under_sim(m)) c.sim = SimSpec{};
      }
    }
    // sim_catches: only where the case is simulated (--sim, or check's simulated
    // mutants); on real threads they could only "survive".
    if ((base.sim || simulate) && !sim_refusal(s)) {
      for (Mutant m : s.sim_catches) {
        for (const std::string& strategy : strategies_for(s, base)) {
          CaseSpec& c = out.emplace_back(plan_case(s, strategy, m, base, /*expect_fail=*/true));
          if (!c.sim) c.sim = SimSpec{};
        }
      }
    }
    if (!tsan) continue;
    for (Mutant m : s.tsan_catches) {
      for (const std::string& strategy : strategies_for(s, base)) {
        out.push_back(plan_case(s, strategy, m, base, /*expect_fail=*/true));
      }
    }
  }
  return out;
}

namespace {

// Execution: the report under construction and the progress of the whole plan.
class Execution {
 public:
  Execution(const std::vector<CaseSpec>& specs, const std::vector<Scenario>& scenarios,
            Runner& runner, const ExecuteOptions& options)
      : specs_(specs), runner_(runner), options_(options), progress_(options.show_progress) {
    report_.command = options.command;
    report_.environment = Environment::detect();
    report_.planned = specs.size();
    report_.until_fail = options.until_fail;
    for (const Scenario& s : scenarios) report_.scenarios[s.name] = {s.source, s.document};
  }

  Report run() {
    std::size_t i = 0;
    while (i < specs_.size() && !report_.interrupted) {
      if (interrupted()) {
        report_.interrupted = true;
        break;
      }
      const CaseSpec& spec = specs_[i];
      // Progress counts upward against a fixed total: a mutant case skipped
      // because its pair was already caught counts as done.
      if (spec.expect_fail && spec.mutant && caught_pairs_.count(pair_key(spec))) {
        --report_.planned;  // already caught (an earlier shard order, or a duplicate)
        ++done_;
        ++i;
        continue;
      }
      if (spec.expect_fail && spec.mutant && !options_.trials && options_.search_rounds > 1) {
        std::size_t j = i + 1;
        while (j < specs_.size() && specs_[j].expect_fail && specs_[j].mutant &&
               pair_key(specs_[j]) == pair_key(spec)) {
          ++j;
        }
        search(i, j);
        i = j;
        continue;
      }
      run_trials(spec);
      ++i;
    }
    progress_.clear();
    return std::move(report_);
  }

 private:
  // run_trials: one spec, once or --repeat N times folded into one record.
  void run_trials(const CaseSpec& spec) {
    // Ctrl-C ends the trials.
    const std::uint32_t n = options_.trials.value_or(1);
    std::vector<CaseResult> results;
    for (std::uint32_t t = 1; t <= n; ++t) {
      const std::string what = n > 1 ? fmt::format("{} trial {}/{}", spec.id, t, n) : spec.id;
      results.push_back(run_one(spec, what));
      if (results.back().verdict == Verdict::kInterrupted || interrupted()) break;
    }
    ++done_;
    CaseRecord record = options_.trials ? fold_trials(spec, std::move(results))
                                        : CaseRecord::from(spec, std::move(results.front()));
    finish(std::move(record));
  }

  // search: the detection search of one mutant pair over specs_[first, last) (one
  // spec per strategy): round r runs each strategy at seed_for_round(seed, r),
  // until one catches (plan.h).
  void search(std::size_t first, std::size_t last) {
    const std::size_t n = last - first;
    std::vector<std::optional<CaseRecord>> kept(n);
    std::vector<double> spent(n, 0);
    bool caught = false, stop = false;
    for (std::uint32_t round = 1; round <= options_.search_rounds && !caught && !stop; ++round) {
      for (std::size_t k = 0; k < n && !caught && !stop; ++k) {
        CaseSpec spec = specs_[first + k];
        spec.seed = seed_for_round(spec.seed, round);
        const std::string what =
            round == 1 ? spec.id
                       : fmt::format("{} round {}/{}", spec.id, round, options_.search_rounds);
        CaseResult result = run_one(spec, what);
        spent[k] += result.duration_s;
        stop = result.verdict == Verdict::kInterrupted || interrupted();
        kept[k] = CaseRecord::from(spec, std::move(result));
        kept[k]->search_rounds = round;
        caught = kept[k]->caught();
      }
    }
    for (std::size_t k = 0; k < n; ++k) {
      ++done_;
      if (!kept[k]) {
        --report_.planned;  // its pair was caught before its turn: not run, not owed
        continue;
      }
      kept[k]->result.duration_s = spent[k];
      finish(std::move(*kept[k]));
    }
  }

  CaseResult run_one(const CaseSpec& spec, const std::string& what) {
    progress_.update(done_, specs_.size(), what);
    return run_case_once(spec, runner_, [&](const std::string& line) {
      progress_.update(done_, specs_.size(), what + "  " + line);
    });
  }

  // finish: a finished record into the report (and its line in a CI log).
  void finish(CaseRecord record) {
    if (record.expect_fail && record.caught() && record.mutant) {
      caught_pairs_.insert(record.scenario + ":" + *record.mutant);
    }
    if (options_.log != nullptr && !options_.show_progress) {
      // Not a terminal (a CI log): one line per finished case shows life.
      std::string tally;
      if (record.trials) {
        tally = fmt::format(" ({} {}/{})", record.expect_fail ? "detected" : "failed",
                            record.trials->failures, record.trials->verdicts.size());
      } else if (record.search_rounds && *record.search_rounds > 1) {
        tally = fmt::format(" (search round {})", *record.search_rounds);
      }
      *options_.log << fmt::format("[{}/{}] {} {} {:.2f}s{}\n", done_, specs_.size(), record.id,
                                   name_of(record.result.verdict), record.result.duration_s, tally)
                    << std::flush;
    }
    const bool stop = record.result.verdict == Verdict::kInterrupted || interrupted();
    report_.cases.push_back(std::move(record));
    if (stop) report_.interrupted = true;
    if (options_.on_case_done) options_.on_case_done(report_);
  }

  const std::vector<CaseSpec>& specs_;
  Runner& runner_;
  const ExecuteOptions& options_;
  Progress progress_;
  Report report_;
  std::set<std::string> caught_pairs_;  // "scenario:mutant"
  std::size_t done_ = 0;
};

}  // namespace

Report execute_plan(const std::vector<CaseSpec>& specs, const std::vector<Scenario>& scenarios,
                    Runner& runner, const ExecuteOptions& options) {
  return Execution(specs, scenarios, runner, options).run();
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
