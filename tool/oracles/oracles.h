// tlab/tool/oracles/oracles.h: the one place a case's verdict is decided.
//
// The case's child process measures (an engine driver calls
// CaseContext::violation(Oracle, sentence) as it observes each instance, and
// records latency histograms); the parent judges, once, in judge() below: each
// count against the scenario's bound, each latency bound against its histogram,
// each `expect.at_least` requirement, and any sanitizer report. Only oracles whose
// promise the case's subject makes are judged (types/promise.h); the report lists
// the promises judged. The oracles, what each counts and the promise it judges,
// are the table of types/oracle.h; the bounds a scenario sets, types/expectations.h.
//
// Besides the oracles, judge() adds two kinds of finding, both always fatal:
//   latency.<histogram>   a latency bound (expect.fire_lateness_us, expect.cancel_to_resume_us)
//                         broken by that histogram's percentile; not judged for a
//                         case whose virtual-clock scenario ran on the real clock
//                         (counter kOffClockCounter, types/case_result.h)
//   at_least.<oracle>     fewer violations than expect.at_least requires
//
// Cost: judge() is O(violations + oracles + percentile walks). Ground rules:
// judge() is a pure function of its arguments.
#pragma once

#include <cstdint>
#include <string_view>

#include "types/expectations.h"
#include "types/oracle.h"
#include "types/promise.h"

namespace tlab::tool {

struct CaseResult;

// over_bound: whether `count` violations under report key `key` exceed what
// `expect` allows (expect.<oracle> for a boundable oracle; 0 for everything else).
// The child's early stop of a mutant case and judge() both decide with this.
bool over_bound(const Expectations& expect, std::string_view key, std::uint64_t count);

// judged: whether a finding under report key `key` (an oracle's name, possibly
// after "at_least."; latency.* and any other key are always judged) counts for a
// subject promising `promised`.
bool judged(std::string_view key, PromiseSet promised);

// judge: the parent's one decision over a case's measurements. Adds the
// latency.* and at_least.* findings and the sanitizer record to `r`, then sets
// r.verdict (kFail if any judged finding is over its bound, else kPass), unless
// `forced` (the child or the parent already decided timeout/error/interrupted,
// or the child crashed), in which case the verdict is left as it is. Findings
// whose oracle's promise is not in `promised` are kept in the report but do not
// fail the case.
void judge(const Expectations& expect, PromiseSet promised, CaseResult& r, bool forced);

}  // namespace tlab::tool
