// tlab/tool/cli/subject_option.h: `--subject NAME|PATH.so[:entry]`, shared by run,
// check, replay, compare and list: the flag, probing what it names (exit 2 naming
// the library and the symbol or field when it cannot be used), and which
// scenarios a subject can play.
//
// Which scenarios: with --subject, a scenario runs on the subject through the
// generic ABI driver (runner/engine_subject.h); subject_accepts decides from the
// scenario's roles and clock and the subject's kind, drive and clock. Named files
// it refuses are bad input (file + JSON pointer); built-in scenarios it refuses
// are listed on stderr as not applicable, one line each, and skipped.
//
// Cost: one probe (a fork) per command. Ground rules: CLI thread only.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/json_input.h"
#include "cli/command.h"
#include "plan/plan.h"
#include "scenario/scenario.h"
#include "subjects/plugin.h"

namespace CLI {
class App;
}

namespace tlab::tool {

// add_subject_option: adds --subject bound to `spec`.
void add_subject_option(CLI::App& sub, std::string& spec);

// resolve_subject: the facts of --subject `spec`, or nullopt after printing why
// it cannot be used (the caller exits kExitBadInput).
std::optional<SubjectFacts> resolve_subject(const std::string& spec, const CliEnv& env);

// subject_overrides: --subject `spec` (if not empty) probed and written into `ov`
// (Overrides::subject, from which plan_case resolves each case's target). Returns
// false after printing why it cannot be used (the caller exits kExitBadInput);
// `facts` gets the probe.
bool subject_overrides(const std::string& spec, const CliEnv& env, Overrides& ov,
                       std::optional<SubjectFacts>& facts);

// shape_of: a descriptor with the facts' name, summary, kind, drive, clock,
// promises and max_delay (no functions): what subject_accepts reads. Its strings
// point into `f`, which must outlive it.
tlab_subject shape_of(const SubjectFacts& f);

// Which refusals scenarios_for_subject reports, and how.
enum class Refusals {
  kErrors,  // the user named the files: each refusal is an error in `errors`
  kCount,   // the built-in suite: one line on env.err counting them
  kList,    // the built-in suite under -v: one line on env.err per refusal, with why
};

// scenarios_for_subject: the scenarios `subject` can play; the others are
// reported as `refusals` says.
std::vector<Scenario> scenarios_for_subject(std::vector<Scenario> scenarios,
                                            const SubjectFacts& subject, Refusals refusals,
                                            InputErrors& errors, const CliEnv& env);

// add_verbose_option: adds -v,--verbose bound to `verbose` (run and check with
// --subject: list each built-in scenario the subject cannot play, and why).
void add_verbose_option(CLI::App& sub, bool& verbose);

// describe_subject: one line: "libuv: timer facility, loop-driven, own monotonic
// clock; promises delivery, exactly_once, accurate_cancel, fifo_ties".
std::string describe_subject(const SubjectFacts& f);

}  // namespace tlab::tool
