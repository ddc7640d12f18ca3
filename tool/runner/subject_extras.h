// tlab/tool/runner/subject_extras.h: what a subject offers the generic driver
// beyond the C ABI (runner/engine_subject.h). Only exec subjects
// (subjects/exec/exec_subject.h) fill it; every other subject passes it empty.
//
// Cost: none (plain data: function pointers called only by the driver). Ground
// rules: the functions are the subject's and follow its thread rules (an exec
// session's are safe from any thread).
#pragma once

#include <cstdint>
#include <vector>

#include "tlab/subject.h"

namespace tlab::tool::runner {

// ScriptAction: one action of a declared callback script (an exec subject whose
// hello lists the feature "scripts": the protocol's `then`, docs/protocol.md):
// schedule timer `id` at `delay_ns` (with its own script `then`), or cancel `id`.
struct ScriptAction {
  bool cancel = false;
  std::uint64_t id = 0;
  std::int64_t delay_ns = 0;
  std::vector<ScriptAction> then;
};

// ScriptHost: the driver, told what a subject's callback did with its declared
// script, in the order the subject reported it, from the thread that reports the
// subject's fires (after the fired() of `by`, before any fired() of a timer the
// script armed).
class ScriptHost {
 public:
  virtual ~ScriptHost() = default;
  // script_scheduled: the callback of `by` scheduled `id`: armed (`ok`), or refused.
  virtual void script_scheduled(std::uint64_t by, std::uint64_t id, bool ok) = 0;
  // script_cancelled: the callback of `by` cancelled `id`: `result` (a
  // tlab_cancel_result) when `ok`; an error (no claim) otherwise.
  virtual void script_cancelled(std::uint64_t by, std::uint64_t id, bool ok,
                                std::int32_t result) = 0;
};

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
  // schedule_scripted: schedule() of a timer whose callback performs `then`, which
  // travels with the schedule (a subject whose callbacks cannot call tlab back);
  // nullptr: scripts only as calls from inside fired() (TLAB_PROMISE_REENTRANT).
  // The subject reports each action to the ScriptHost bound with bind_script_host
  // (before the first schedule).
  tlab_status (*schedule_scripted)(void* self, std::int64_t delay_ns, std::uint64_t cookie,
                                   const std::vector<ScriptAction>& then,
                                   std::uint64_t* handle) = nullptr;
  void (*bind_script_host)(void* self, ScriptHost* host) = nullptr;
};

}  // namespace tlab::tool::runner
