// tlab/tool/subjects/exec/exec_subject.h: `--subject exec:CMD [ARGS...]`: a timer
// in any language, as a process speaking docs/protocol.md, put under the generic
// driver (runner/engine_subject.h) as a subject ABI descriptor. A CMD that is one
// word naming a shipped adapter (`exec:python-asyncio`, adapters.h) runs that
// adapter as it was installed.
//
//   | call               | where                  | what                                   |
//   |--------------------|------------------------|----------------------------------------|
//   | is_exec_spec       | anywhere               | the spec starts with "exec:"           |
//   | probe_exec_subject | the CLI, before any    | starts the command, reads its hello,   |
//   |                    | case                   | sends shutdown, expects pending and an |
//   |                    |                        | exit: SubjectFacts, or exit 2 naming   |
//   |                    |                        | the flag and what went wrong           |
//   | open_exec_subject  | a case child           | the same hello (kept: the process      |
//   |                    |                        | becomes the first instance), and the   |
//   |                    |                        | descriptor: FACILITY, DRIVE_SELF,      |
//   |                    |                        | CLOCK_MONOTONIC, the hello's promises  |
//   | bind_exec_case     | a case child, before   | where sessions report (the actor       |
//   |                    | the driver's actors    | "pipe#0"), and the SubjectExtras       |
//
// Each create() of the descriptor is one process (exec_session.h); a case creates
// one. The descriptor and the program are process-global: a case child opens one
// subject (stress_runner.h: one case per child). contains_errors has no ABI bit:
// it travels in SubjectExtras (and SubjectFacts::promises for the judge).
//
// Cost: a probe starts the subject once (a JVM: about a second). Ground rules: the
// CLI thread, or the case child's main thread; open before bind, bind once.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "runner/case_context.h"
#include "runner/subject_extras.h"
#include "subjects/subject_facts.h"

namespace tlab::tool::exec {

inline constexpr std::string_view kExecPrefix = "exec:";

bool is_exec_spec(std::string_view spec);

// probe_exec_subject: the facts of `spec`, or nullopt with a one-paragraph
// message for exit 2 ("--subject exec:...: protocol_error: line 1 ...").
std::optional<SubjectFacts> probe_exec_subject(const std::string& spec, std::string& error);

// open_exec_subject: the descriptor (static storage) or nullptr with `error`.
const tlab_subject* open_exec_subject(const std::string& spec, std::string& error);

// extras_of: the SubjectExtras a subject with facts `f` offers (none unless it is
// an exec subject): what the CLI passes subject_accepts. Never called through.
runner::SubjectExtras extras_of(const SubjectFacts& f);

// bind_exec_case: sessions of this process report into `ctx` (adds the actor
// "pipe#0"); the extras the driver needs (schedule_failing, contains_errors).
runner::SubjectExtras bind_exec_case(runner::CaseContext& ctx);

}  // namespace tlab::tool::exec
