// tlab/tool/runner/case_target.h: what a case runs on, resolved before the runner
// sees it: the driver its child calls, the names the report and the message give
// it, and the promises judged; or why it cannot run.
//
// The runner knows engines and subjects only as drivers. Which engine a scenario's
// roles select (subjects/subjects.h engine_for) and how a subject is opened (a
// plugin's dlopen, an exec subject's process, a built-in row's descriptor) belong
// to the layer above it (tool/LAYERS), which resolves each case's target once,
// where the case is planned (plan/plan.h plan_case, through
// subjects/case_targets.h), into CaseSpec::target:
//
// clang-format off
//   | the case runs on            | subject           | engine             | drive                                   | promises                     |
//   |-----------------------------|-------------------|--------------------|-----------------------------------------|------------------------------|
//   | the engine its roles select | "timer_service"   | "timer_service"    | the row's driver (runner/engines.h)     | the row's, less fifo_ties    |
//   |                             |                   |                    |                                         | unless the strategy keeps it |
//   | a subject (--subject, or    | "libuv" (its      | "subject libuv"    | the generic ABI driver with the         | the probed subject's         |
//   | the scenario's engine.      | descriptor's name)|                    | subject's opener (engine_subject.h      |                              |
//   | subject)                    |                   |                    | run_subject_engine)                     |                              |
//   | nothing (refused)           |                   |                    | empty: `refusal` says why               |                              |
// clang-format on
//
// A refused target, or a CaseSpec planned without one, is the case's verdict
// error, with `refusal` as its message; no child is forked.
//
// Cost: a copy is two short strings and a std::function. Ground rules: built on the
// CLI thread when the case is planned and not changed after; `drive` is called in
// the case's child, on its main thread (stress_runner.h).
#pragma once

#include <functional>
#include <string>

#include "types/promise.h"

namespace tlab::tool {

namespace runner {
class CaseContext;
}

struct CaseTarget {
  // The report's name for what the case ran on (CaseResult::subject): an engine row
  // or a subject's descriptor name.
  std::string subject;
  // The child's message names it "engine <engine>": the row, or "subject <name>".
  std::string engine;
  // The promises judged (oracles/oracles.h judge()).
  PromiseSet promises;
  // The driver, called in the case's child with its context; empty when refused.
  std::function<void(runner::CaseContext&)> drive;
  // Non-empty: why the case cannot run (the verdict error's message).
  std::string refusal;

  // CaseTarget::runnable: a driver and no refusal.
  bool runnable() const { return drive != nullptr && refusal.empty(); }
};

}  // namespace tlab::tool
