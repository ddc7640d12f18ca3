// tlab/tool/layers/sim_layer.cc: sim_layer.h.
#include "layers/sim_layer.h"

#include <algorithm>
#include <chrono>
#include <iterator>
#include <map>
#include <set>

#include <fmt/format.h>

#include "layers/layers.h"
#include "plan/plan.h"
#include "plan/shard_plan.h"
#include "plan/trials.h"
#include "subjects/subjects.h"

namespace tlab::tool {

void run_sim_layer(KillMatrix& matrix, const std::vector<Scenario>& suite, Runner& runner,
                   std::uint32_t trials, std::uint32_t schedules, bool show_progress,
                   Report& report, LayerShard* shard) {
  std::vector<Scenario> simulated;
  for (const Scenario& s : suite) {
    if (!sim_refusal(s)) simulated.push_back(s);
  }
  Overrides ov;
  ov.sim = SimSpec{};
  std::vector<CaseSpec> specs;
  for (CaseSpec& spec : plan_check(simulated, ov)) {
    if (!spec.expect_fail || !mutant_under_sim(*spec.mutant)) continue;
    if (shard && !shard->take(fmt::format("sim|{}|trials={}|schedules={}", scenario_case_key(spec),
                                          trials, schedules),
                              fmt::format("sim|{}:{}", spec.scenario->name,
                                          name_of(*spec.mutant)))) {
      continue;
    }
    specs.push_back(std::move(spec));
  }
  ExecuteOptions options;
  options.command = "mutants";
  options.show_progress = show_progress;
  const auto t0 = std::chrono::steady_clock::now();
  LayerStatus& st = matrix.layer(Layer::kSim);
  st.state = LayerStatus::State::kRan;
  st.source = fmt::format(
      "this tlab: the built-in suite's catches under --sim random, up to {} seeded schedules "
      "a trial",
      schedules);
  st.trials = trials;
  for (std::uint32_t t = 1; t <= trials && !report.interrupted; ++t) {
    // One trial: up to `schedules` seeds per case, stopping a (scenario, mutant)
    // pair at its first catching schedule; the record kept for the matrix is the
    // catching one (its time the sum over the schedules it took) or the last.
    std::map<std::string, CaseRecord> kept;  // by case id
    std::set<std::string> caught_pairs;      // "scenario:mutant"
    for (std::uint32_t k = 0; k < schedules && !report.interrupted; ++k) {
      std::vector<CaseSpec> round;
      for (const CaseSpec& spec : specs) {
        const std::string pair = spec.scenario->name + ":" + std::string(name_of(*spec.mutant));
        if (caught_pairs.contains(pair)) continue;
        round.push_back(spec);
        round.back().seed = seed_for_round(spec.seed, (t - 1) * schedules + k + 1);
      }
      if (round.empty()) break;
      Report r = execute_plan(round, simulated, runner, options);
      for (CaseRecord& c : r.cases) {
        if (c.caught()) caught_pairs.insert(c.scenario + ":" + c.mutant.value_or(""));
        auto [it, fresh] = kept.try_emplace(c.id, c);
        if (!fresh) {
          const double before = it->second.result.duration_s;
          it->second = c;
          it->second.result.duration_s += before;
        }
      }
      st.checks = std::max(st.checks, r.summary().mutant_pairs);
      report.cases.insert(report.cases.end(), std::make_move_iterator(r.cases.begin()),
                          std::make_move_iterator(r.cases.end()));
      report.planned += r.planned;
      report.interrupted = r.interrupted;
    }
    std::vector<CaseRecord> outcome;
    for (auto& [id, c] : kept) outcome.push_back(std::move(c));
    add_scenario_cases(matrix, outcome, simulated);
  }
  st.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace tlab::tool
