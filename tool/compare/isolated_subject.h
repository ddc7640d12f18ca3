// tlab/tool/compare/isolated_subject.h: `tlab compare --subject PATH.so`: a user's
// plugin measured without ever loading it into tlab's own process.
//
// Each measurement (one cost cell, one lateness or cancel_to_resume run) runs in a
// forked child (base/fork_call.h) that opens the plugin (subjects/plugin.h), wraps
// it in the generic ABI compare subject (make_abi_subject) and sends its result
// back as JSON. A plugin that crashes or hangs in a cell costs that cell: the
// cell throws CellFailed, which run_compare records in the subject's note
// ("churn at 1000 pending: killed by signal 11 (Segmentation fault)"), and the
// run goes on. Built-in subjects need none of this and are measured in-process.
//
// Cost: one fork per cell (~1 ms against a cell's 40 ms of CPU plus set-up); the
// child's CPU time is what the cell measures (CLOCK_THREAD_CPUTIME_ID in the child).
// Ground rules: compare thread only; the parent is single-threaded when it forks.
#pragma once

#include <memory>
#include <stdexcept>

#include "compare/subject.h"
#include "subjects/plugin.h"

namespace tlab::tool::compare {

// CellFailed: a measurement that did not produce a result (the message says why).
class CellFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// make_isolated_subject: a Subject measuring plugin `facts` one child per cell.
std::unique_ptr<Subject> make_isolated_subject(const SubjectFacts& facts);

}  // namespace tlab::tool::compare
