// tlab/tool/runner/engine_subject.h: the generic driver: one scenario case on any
// subject that speaks the subject ABI (tlab/subject.h), built in or a plugin.
//
// A scenario runs on a subject when `--subject` (or the scenario's engine.subject)
// names one: the case's target (case_target.h) then drives it here, with an opener
// the layer above supplies. The roles it may have, how each becomes ABI calls, and
// which oracle judges what are documented in scenarios/README.md ("On a subject")
// and next to the code:
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

#include <functional>
#include <string>

#include "runner/case_context.h"
#include "runner/subject_extras.h"
#include "tlab/subject.h"

namespace tlab::tool::runner {

// OpenedSubject: a subject opened in the case's child: its descriptor (static
// storage, already checked by check_descriptor) and what it offers beyond the ABI.
struct OpenedSubject {
  const tlab_subject* descriptor = nullptr;
  SubjectExtras extras;
};

// SubjectOpener: opens the case's subject in this child, or throws
// std::runtime_error saying why. The layer that resolved the case supplies it
// (subjects/case_targets.h, subject_opener): a built-in row's descriptor, a
// plugin's dlopen (subjects/plugin.h) or an exec subject's process, bound to
// `ctx` (subjects/exec/exec_subject.h). Called once, on the child's main thread.
using SubjectOpener = std::function<OpenedSubject(CaseContext& ctx)>;

// run_subject_engine: opens the case's subject with `open` (in this child) and
// runs the case on it; a subject that cannot be opened, or cannot play the
// scenario (subject_accepts), is a driver error.
void run_subject_engine(CaseContext& ctx, const SubjectOpener& open);

// run_abi_case: the case on descriptor `s` (already checked by check_descriptor).
void run_abi_case(CaseContext& ctx, const tlab_subject& s, const SubjectExtras& extras = {});

// subject_accepts: whether a scenario can run on a subject of `kind` / `drive` /
// `clock` (and `extras`: the thrower role needs schedule_failing); on false,
// `why` and `pointer` (the JSON pointer) say what cannot. A scheduler whose
// periodic mode the subject lacks does not run (plays_on), and the case says so;
// the scenario is refused, at that actor's mode, only when no scheduler is left.
bool subject_accepts(const Scenario& sc, const tlab_subject& s, std::string& why,
                     std::string& pointer, const SubjectExtras& extras = {});

// plays_on: whether actor `a` runs on a subject whose periodic kinds are
// `periodic` (TLAB_PERIODIC_* bits): every actor but a scheduler of a periodic
// mode the subject lacks.
bool plays_on(const Actor& a, std::uint32_t periodic);

}  // namespace tlab::tool::runner
