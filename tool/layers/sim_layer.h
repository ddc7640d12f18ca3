// tlab/tool/layers/sim_layer.h: the kill matrix's sim layer (kill_matrix.h,
// Layer::kSim): the built-in suite's catches under deterministic simulation.
//
// Every expect_fail case of `tlab check` whose engine runs under simulation
// (subjects.h, SubjectInfo::sim_refusal) runs with --sim random. A trial is a
// small search, as a simulation tester runs one: up to `schedules` seeded
// schedules, stopping a (scenario, mutant) pair at the first that catches it;
// trial t, schedule k runs at seed_for_round(seed, (t - 1) * schedules + k + 1)
// (plan/trials.h), so every trial explores fresh seeds and trial 1's first
// schedule is the scenario's own seed. A simulated case is a pure function of its
// seed, so the result is the same on every machine and every run: the detection
// rate is that of the trials' searches, and its time to detection the sum over
// the schedules the search took. The gate wants every trial to find the mutant.
//
// Cost: trials x the catches cases x the schedules each search takes (most
// pairs: one), each a case child of tens of milliseconds.
// Ground rules: CLI thread only; appends every trial's cases to `report`.
#pragma once

#include <cstdint>
#include <vector>

#include "layers/kill_matrix.h"
#include "layers/layer_shard.h"
#include "report/report.h"
#include "runner/runner.h"
#include "scenario/scenario.h"

namespace tlab::tool {

// run_sim_layer: records the sim layer's status and detections in `matrix`.
void run_sim_layer(KillMatrix& matrix, const std::vector<Scenario>& suite, Runner& runner,
                   std::uint32_t trials, std::uint32_t schedules, bool show_progress,
                   Report& report, LayerShard* shard = nullptr);

}  // namespace tlab::tool
