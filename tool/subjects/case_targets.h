// tlab/tool/subjects/case_targets.h: a case's target (runner/case_target.h),
// resolved from the subject table or a probed subject, once, where the case is
// planned (plan/plan.h plan_case). The runner, a layer below (tool/LAYERS), then
// runs what it is handed and never opens a subject itself.
//
// clang-format off
//   | the case runs on                  | call                  | the target                                           |
//   |-----------------------------------|-----------------------|------------------------------------------------------|
//   | the engine its roles select       | engine_target         | the row engine_for picks (subjects.h): its driver,   |
//   |                                   |                       | promises_of_case; refused ("scenario not supported   |
//   |                                   |                       | by the stress runner: ...") when engine_for refuses  |
//   | a probed subject (--subject: the  | subject_target(facts) | the generic ABI driver with subject_opener(spec);    |
//   | command probed it, plugin.h)      |                       | the probe's name and promises; nothing runs here     |
//   | a subject named by its spec (the  | subject_target(spec)  | the same after probe_subject (a built-in row: read   |
//   | scenario's engine.subject; tests) |                       | in this process; a plugin: a forked probe); refused  |
//   |                                   |                       | with the probe's error                               |
// clang-format on
//
// subject_opener is what the case's child calls to open the subject:
//   | spec                | opens                                                              |
//   |---------------------|--------------------------------------------------------------------|
//   | exec:CMD [ARGS...]  | the exec subject's process, bound to the case (exec/exec_subject.h) |
//   | a built-in row, or  | its descriptor; a library is dlopened in the child (plugin.h       |
//   | PATH.so[:entry]     | open_subject), never in tlab's own process                         |
//
// Cost: engine_target scans the ~15 rows; subject_target(facts) copies strings.
// Ground rules: the targets are built on the CLI thread; an opener runs in a case
// child, on its main thread.
#pragma once

#include <string>
#include <string_view>

#include "runner/case_target.h"
#include "runner/engine_subject.h"
#include "scenario/scenario.h"
#include "subjects/subject_facts.h"

namespace tlab::tool {

// engine_target: the case of `s` over `strategy` on the engine its roles select.
CaseTarget engine_target(const Scenario& s, std::string_view strategy);

// subject_target: the case on the subject the command probed (`facts`), through
// the generic ABI driver.
CaseTarget subject_target(const SubjectFacts& facts);

// subject_target: the same for a subject named by `spec`, probed here; refused
// with the probe's error when it cannot be used.
CaseTarget subject_target(const std::string& spec);

// subject_opener: how a case's child opens the subject `spec` (the table above);
// the opener throws std::runtime_error with the loader's message on failure.
runner::SubjectOpener subject_opener(const std::string& spec);

}  // namespace tlab::tool
