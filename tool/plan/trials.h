// tlab/tool/plan/trials.h: one case run N times (`check --repeat N`, `replay
// --repeat N`), folded into the one CaseRecord the report keeps, and the seeds of
// `run --until-fail N --vary-seed`.
//
// The stress layer runs real threads, so one verdict is a sample: a mutant caught
// once may be missed the next run. Trials turn that sample into a count. The gate
// stays strict: the folded verdict is the worst trial's, so
//   | case              | folded verdict pass/caught only when | shown trial              |
//   |-------------------|--------------------------------------|--------------------------|
//   | plain             | every trial passed                   | the first that did not   |
//   | mutant            | every trial caught the mutant        | the first that missed it |
//   | any, error        | never: an error trial makes it error | the first error          |
//   | any, interrupted  | never: Ctrl-C ends the trials        | the interrupted one      |
// and otherwise the first trial is shown. duration_s is the sum over the trials.
// The tally (report.h, TrialTally) keeps every trial's verdict, the failures and,
// for mutant cases, the lower median of detect_us.
//
// Cost: O(trials log trials). Ground rules: plain functions over values.
#pragma once

#include <cstdint>
#include <vector>

#include "report/report.h"
#include "runner/runner.h"

namespace tlab::tool {

// --repeat and --until-fail accept 1..kMaxTrials: 10^4 trials bound a rate to
// within 1% at 95% confidence, more than a gate needs; beyond that a typo (an
// extra zero) would hold CI for hours.
inline constexpr std::uint32_t kMaxTrials = 10000;

// fold_trials: the record of `spec` run as `trials` (in order, at least one).
// Requires: !trials.empty(). Ensures: record.trials->verdicts.size() == trials.size().
CaseRecord fold_trials(const CaseSpec& spec, std::vector<CaseResult> trials);

// seed_for_round: the seed of `spec` in round `round` (1-based) of `run
// --until-fail --vary-seed`: the case's own seed in round 1, then seed + round - 1,
// wrapping within the report's exact seed range [0, 2^53).
std::uint64_t seed_for_round(std::uint64_t seed, std::uint32_t round);

}  // namespace tlab::tool
