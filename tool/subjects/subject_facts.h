// tlab/tool/subjects/subject_facts.h: what the CLI knows of a subject without
// running it: the probe's answer (subjects/plugin.h for a plugin or a built-in
// row, subjects/exec/exec_subject.h for an exec subject), read by the commands
// and by the plan, which resolves each case's target from it (case_targets.h).
//
// Cost: none (a plain value). Ground rules: copied freely; no thread rules.
#pragma once

#include <cstdint>
#include <string>

#include "types/promise.h"

namespace tlab::tool {

// What the CLI knows of a subject without running it (copied out of the probe).
struct SubjectFacts {
  std::string spec;     // as given to --subject
  std::string name;     // the descriptor's name
  std::string summary;  // the descriptor's summary
  std::string library;  // the shared library's path; empty for a built-in row
  std::string entry;    // the entry symbol; empty for a built-in row
  std::uint32_t kind = 0, drive = 0, clock = 0;
  std::uint64_t promise_bits = 0;
  PromiseSet promises;  // promise_bits in the oracles' terms
  std::int64_t max_delay_ns = 0;
  bool has_pending = false;
  std::uint32_t periodic = 0;  // TLAB_PERIODIC_* kinds schedule_periodic arms
  // An exec subject (subjects/exec/exec_subject.h): the command after "exec:",
  // the runtime's version from its hello, and whether it can fail a callback
  // (the thrower role). `promises` may then hold contains_errors, which has no
  // ABI bit.
  std::string command;
  std::string version;
  bool can_fail = false;
  bool builtin() const { return library.empty() && command.empty(); }
};

}  // namespace tlab::tool
