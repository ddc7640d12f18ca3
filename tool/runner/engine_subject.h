// tlab/tool/runner/engine_subject.h: the generic driver: one scenario case on any
// subject that speaks the subject ABI (tlab/subject.h), built in or a plugin.
//
// A scenario runs on a subject when `--subject` names one (CaseSpec::subject);
// the roles it may have, how each becomes ABI calls, and which oracle judges what
// are documented in scenarios/README.md ("On a subject") and next to the code:
//
//   | file                               | what                                         |
//   |------------------------------------|----------------------------------------------|
//   | engine_subject.cc                  | subject_accepts (roles per kind), dispatch   |
//   | engine_subject_calls.h             | the call mutex, host clock, status names     |
//   | engine_subject_facility.h, .cc     | a facility case: actors, calls, judging      |
//   | engine_subject_facility_end.cc     | its run (real or virtual), drain, end checks |
//   | engine_subject_wait.cc             | a timed-wait case                            |
//
// Ground rules: as every engine driver (engines.h): runs in the case's child, on
// its main thread; starts and joins its actor threads.
#pragma once

#include <string>

#include "runner/case_context.h"
#include "runner/subject_extras.h"
#include "tlab/subject.h"

namespace tlab::tool::runner {

// run_subject_engine: opens ctx.spec().subject (subjects/plugin.h, in this child;
// subjects/exec/exec_subject.h for `exec:`) and runs the case on it; a subject
// that cannot be opened is a driver error.
void run_subject_engine(CaseContext& ctx);

// run_abi_case: the case on descriptor `s` (already checked by check_descriptor).
void run_abi_case(CaseContext& ctx, const tlab_subject& s, const SubjectExtras& extras = {});

// subject_accepts: whether a scenario can run on a subject of `kind` / `drive` /
// `clock` (and `extras`: the thrower role needs schedule_failing); on false,
// `why` and `pointer` (the JSON pointer) say what cannot.
bool subject_accepts(const Scenario& sc, const tlab_subject& s, std::string& why,
                     std::string& pointer, const SubjectExtras& extras = {});

}  // namespace tlab::tool::runner
