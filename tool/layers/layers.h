// tlab/tool/layers/layers.h: the out-of-process layers of the kill matrix
// (kill_matrix.h): the Relacy models, the rapidcheck property tests, and a TSan
// build of tlab. The in-process scenario layer is run by the CLI through the
// stress runner like `tlab check` (cli.cc), and shares nothing with these.
//
// Each function finds its binary (explicit path, else this build's, else the
// default preset's under the source tree), runs it through subprocess.h, records
// the layer's LayerStatus and adds one Detection per (check, mutant). A layer
// whose binary cannot be found is kUnavailable when it was not asked for by name
// and kError when it was (`--layers tsan` on a machine without a TSan build must
// not pass quietly).
//
// Cost: the binaries' run time: models about 0.1-2 s per mutant run at `jobs`
// in parallel; the property binary under a second; a TSan scenario run 10-30 s.
// Ground rules: CLI thread only.
#pragma once

#include <string>
#include <vector>

#include "layers/kill_matrix.h"
#include "layers/model_runs.h"
#include "scenario/scenario.h"

namespace tlab::tool {

struct LayerRequest {
  bool required = false;      // named in --layers: missing binary is an error
  std::string explicit_path;  // --models-dir / --property-bin / --tsan-tlab
};

// run_model_layer: every (test, mutant it kills) with `options`; the cases are
// appended to `cases` (they belong in the report). With `clean`, the tests' clean
// runs too (the `tlab check --models` gate).
void run_model_layer(KillMatrix& matrix, const LayerRequest& req, const ModelRunOptions& options,
                     bool clean, std::vector<CaseRecord>& cases);

// run_property_layer: the property binary's tests whose suite name contains
// "Mutant"; each names its mutant with RecordProperty("mutant", ...).
void run_property_layer(KillMatrix& matrix, const LayerRequest& req);

// run_tsan_layer: each scenario's tsan_catches through a TSan build of tlab
// (`run --mutant M --strategy S`, its report read back); caught when the case
// fails with a sanitizer report.
void run_tsan_layer(KillMatrix& matrix, const LayerRequest& req, const std::vector<Scenario>& suite,
                    double timeout_s);

}  // namespace tlab::tool
