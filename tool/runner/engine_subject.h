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

#include <cstdint>
#include <string>

#include "runner/case_context.h"
#include "tlab/subject.h"

namespace tlab::tool::runner {

// SubjectExtras: what a subject offers beyond the C ABI. Only exec subjects
// (subjects/exec/exec_subject.h) have any: a schedule whose callback fails in the
// runtime's own terms after it fired (the thrower role: a Python raise, a Java
// exception, a Go panic), and the contains_errors promise that judges what such a
// failure may do to the other timers.
struct SubjectExtras {
  // schedule_failing: schedule() whose callback fails; nullptr: the thrower role
  // is refused (a C callback cannot fail).
  tlab_status (*schedule_failing)(void* self, std::int64_t now_ns, std::int64_t delay_ns,
                                  std::uint64_t cookie, std::uint64_t* handle) = nullptr;
  // contains_errors: a failing callback harms no other timer. Without it, a timer
  // the subject never delivered, or refused, after a failing callback ran is
  // counted ("undelivered_after_failure", "refused_after_failure"), not judged, if
  // excused_after_failure says so.
  bool contains_errors = false;
  // excused_after_failure: whether `cookie`'s timer (still live, or just refused)
  // is excused: a failing callback has run and the timer had not been overdue by
  // more than `grace_ns` then, judged on the subject's own clock (tlab's deadlines
  // start when the request was written, the subject's when it armed the timer; a
  // slow reader would make tlab's order disagree with the subject's).
  bool (*excused_after_failure)(void* self, std::uint64_t cookie, std::int64_t grace_ns) = nullptr;
};

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
