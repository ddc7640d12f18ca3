// tlab/tool/compare/builtin_subject.h: how `tlab compare` reaches a built-in
// subject: through the row of the subject table (subjects/subjects.h) that `tlab
// check --subject NAME` runs, never through a definition of its own. compare/
// defines no subject; it measures.
//
//   | piece       | where it comes from                                               |
//   |-------------|-------------------------------------------------------------------|
//   | descriptor  | open_subject(NAME) (subjects/plugin.h): the very pointer check's  |
//   |             | generic driver runs                                               |
//   | hook        | the row's BenchFactory (subjects/bench_hook.h): its shape, and    |
//   |             | how to drive it where the generic path would measure the wrong    |
//   |             | thing; defined in the subject's own file under subjects/builtin/  |
//   | measurement | make_abi_subject (abi_subject.cc), the same generic path a        |
//   |             | user's plugin gets                                                |
//
// tests/unit/builtin_subject_test.cc holds every built-in row to this: the
// descriptor compare measures is check's, and the instances compare creates report
// the same shape (queue, shards, placement) as the one check creates.
//
// Cost: a table lookup and a descriptor check per call. Ground rules: compare
// thread; the returned pointers have static storage duration.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "compare/subject.h"
#include "subjects/bench_hook.h"
#include "subjects/subjects.h"
#include "tlab/subject.h"

namespace tlab::tool::compare {

// BuiltinTarget: what compare measures for a built-in row.
struct BuiltinTarget {
  const SubjectInfo* row = nullptr;
  const tlab_subject* descriptor = nullptr;  // open_subject(row->name): check's
  const BenchHook* hook = nullptr;           // row->bench(row->name)
};

// builtin_target: the target of the row named `name`; nullopt with `error` set when
// there is no such row, or it has no descriptor or no hook (compare does not
// measure it), or its descriptor is not a facility.
std::optional<BuiltinTarget> builtin_target(std::string_view name, std::string& error);

// make_builtin_subject: the compare subject measuring `t`, named after its row (a
// peer row counts as a peer in the report, any other as ours).
std::unique_ptr<Subject> make_builtin_subject(const BuiltinTarget& t);

}  // namespace tlab::tool::compare
