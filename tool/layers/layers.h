// tlab/tool/layers/layers.h: the out-of-process layers of the kill matrix
// (kill_matrix.h): the Relacy models, the rapidcheck property tests, and a TSan
// build of tlab, and the glue `tlab mutants` and `tlab check --models` share
// (run_other_layers, add_scenario_cases). The in-process scenario layer is run
// by those commands through the stress runner like `tlab check`; its cases enter
// the matrix through add_scenario_cases.
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

#include <iosfwd>
#include <string>
#include <vector>

#include "layers/kill_matrix.h"
#include "layers/layer_shard.h"
#include "layers/model_runs.h"
#include "scenario/scenario.h"

namespace tlab::tool {

struct LayerRequest {
  bool required = false;      // named in --layers: missing binary is an error
  std::string explicit_path;  // --models-dir / --property-bin / --tsan-tlab
};

// Each layer takes a LayerShard* (layer_shard.h): nullptr runs every unit; else
// only the units that shard takes, and a layer with none of its units in the shard
// (property, outside shard 0) stays not_requested, saying so in its reason.

// run_model_layer: every (test, mutant it kills) with `options`; the cases are
// appended to `cases` (they belong in the report). With `clean`, the tests' clean
// runs too (the `tlab check --models` gate).
void run_model_layer(KillMatrix& matrix, const LayerRequest& req, const ModelRunOptions& options,
                     bool clean, std::vector<CaseRecord>& cases, LayerShard* shard = nullptr);

// run_property_layer: the property binary's tests whose suite name contains
// "Mutant"; each names its mutant with RecordProperty("mutant", ...).
void run_property_layer(KillMatrix& matrix, const LayerRequest& req, LayerShard* shard = nullptr);

// run_tsan_layer: each scenario's tsan_catches through a TSan build of tlab
// (`run --mutant M --strategy S`, its report read back), `trials` times each with
// the scenario's seed (kill_matrix.h, Trials); caught when the case fails with a
// sanitizer report.
void run_tsan_layer(KillMatrix& matrix, const LayerRequest& req, const std::vector<Scenario>& suite,
                    double timeout_s, std::size_t trials, LayerShard* shard = nullptr);

// LayerSources: where the layers' binaries are ("": look for them) and how many
// model runs go at once; the commands' --models-dir, --jobs, --property-bin and
// --tsan-tlab (cli/common.h adds the flags).
struct LayerSources {
  std::string models_dir;
  int jobs = 0;  // 0: the CPUs available (model_jobs)
  std::string property_bin;
  std::string tsan_tlab;
};

// LayerPlan: the layers other than scenario, as `tlab mutants` and `tlab check
// --models` ask for them.
struct LayerPlan {
  std::vector<std::string> layers;  // --layers: empty means every layer, none required
  LayerSources sources;
  ModelRunOptions model;   // the model runs; timeout_s also bounds each TSan scenario run
  std::size_t trials = 1;  // --trials: runs of each tsan check (models and properties run once)
  std::ostream* progress = nullptr;  // "tlab: running ..." lines (a terminal), or none
  LayerShard* shard = nullptr;       // `tlab mutants --shard`: the units to run (layer_shard.h)
};

// layer_wanted: whether `plan` runs layer `l` (--layers names it, or names nothing).
bool layer_wanted(const LayerPlan& plan, Layer l);

// model_jobs: --jobs as given, or with 0 the CPUs this process may use.
int model_jobs(int jobs);

// add_scenario_cases: the scenario layer's cases into `matrix`. In a TSan build
// (base/sanitizer.h) a case of a scenario's tsan_catches counts as layer tsan.
void add_scenario_cases(KillMatrix& matrix, const std::vector<CaseRecord>& cases,
                        const std::vector<Scenario>& suite);

// run_other_layers: runs the wanted layers other than scenario into `matrix`
// (with `clean_models`, the models' clean runs too), appends the model cases to
// `report` and sets its kill_matrix. A TSan tlab is its own tsan layer: the
// scenario layer already ran the tsan_catches in-process.
void run_other_layers(KillMatrix& matrix, const std::vector<Scenario>& suite, const LayerPlan& plan,
                      bool clean_models, Report& report);

}  // namespace tlab::tool
