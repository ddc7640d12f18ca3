// tlab/tool/layers/subject_property_run.h: the property layer (subject_property.h)
// as one case of `tlab check --subject`: run in a forked child, so a subject that
// crashes or hangs inside a call is that case's verdict, never tlab's crash.
//
//   | the child ...                 | the case                                      |
//   |-------------------------------|-----------------------------------------------|
//   | passes                        | pass; message: the promises judged            |
//   | finds a counterexample        | fail; violation "property": the shrunk ABI    |
//   |                               | call sequence; message: describe()            |
//   | does not apply (no VIRTUAL)   | not planned (property_applies is false)       |
//   | crashes                       | fail; violation "crash" with the signal       |
//   | runs past its limit           | timeout                                       |
//
// The case's id is "properties/<subject>", its seed the property seed, its
// operations the number of sequences; `property.command` in the report is the
// command line that replays it (`tlab replay` refuses the case and prints it).
//
// Cost: the layer's own (well under a second on a small subject) plus one fork.
// Ground rules: CLI thread only.
#pragma once

#include "layers/subject_property.h"
#include "report/report.h"
#include "subjects/plugin.h"

namespace tlab::tool {

// property_applies: whether the layer can run on `f` (a loop-driven facility on
// tlab's clock: TLAB_PROMISE_VIRTUAL).
bool property_applies(const SubjectFacts& f);

// run_property_case: the layer on `f` in a child with a time limit of limit_s.
CaseRecord run_property_case(const SubjectFacts& f, const SubjectPropertyOptions& options,
                             double limit_s);

}  // namespace tlab::tool
