// tlab/tool/subjects/plugin.h: finding, loading and checking a subject that speaks
// the subject ABI (tlab/subject.h): a built-in row of the subject table with an
// ABI (`--subject libuv`, `--subject binary_heap`) or a user's shared library
// (`--subject ./libmy_timer.so` or `--subject ./libmy_timer.so:my_entry`).
//
//   | call            | where it runs                 | what can go wrong, and what the user sees     |
//   |-----------------|-------------------------------|-----------------------------------------------|
//   | probe_subject   | the CLI, before any case: the | not found, dlopen error, missing entry symbol, |
//   |                 | library is opened in a forked | entry returns NULL, wrong abi_version, short   |
//   |                 | child with a time limit       | struct_size, NULL required function, invalid   |
//   |                 |                               | promise set, entry crashed or hung: exit 2     |
//   |                 |                               | naming the library and the symbol or field     |
//   | open_subject    | a case's child process (the   | the same checks; the library stays loaded      |
//   |                 | generic driver), after fork   | until the child exits                         |
//
// A plugin is never opened in tlab's own process: a constructor that crashes or
// hangs, or a descriptor that is garbage, costs a child, never tlab.
//
// Cost: one fork + dlopen per probe (a few ms). Ground rules: probe_subject is
// called from the CLI thread; open_subject from the case child's main thread.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "subjects/subject_facts.h"
#include "tlab/subject.h"
#include "types/promise.h"

namespace tlab::tool {

// promises_of_abi: TLAB_PROMISE_* bits as a PromiseSet (VIRTUAL is virtual_time).
PromiseSet promises_of_abi(std::uint64_t bits);

// check_descriptor: whether `d` is usable by this host; on false, `field` names
// the offending descriptor field ("abi_version", "schedule", "promises") and
// `why` says what is wrong with it.
bool check_descriptor(const tlab_subject& d, std::string& field, std::string& why);

// is_library_spec: whether --subject's value names a shared library (contains
// '/' or ends in ".so", before any ":entry").
bool is_library_spec(std::string_view spec);

// probe_subject: the facts of `spec`, or nullopt with a message for exit 2. An
// `exec:` spec is an exec subject (subjects/exec/exec_subject.h), probed once per
// process.
std::optional<SubjectFacts> probe_subject(const std::string& spec, std::string& error);

// open_subject: the descriptor of `spec` in this process, or nullptr with a
// message. For a case child only (plugins are never opened in tlab's process).
const tlab_subject* open_subject(const std::string& spec, std::string& error);

}  // namespace tlab::tool
