// tlab/tool/layers/model_runs.h: `tlab model`: finding the Relacy model binaries, reading
// their catalogue, planning runs and turning each run into a report case.
//
// The models (models/, one executable model_<name> per core concept) are separate
// programs because Relacy replaces the global operator new and owns the process
// for a run; tlab drives them through subprocess.h. Each binary publishes its
// catalogue with `--list`: per test, a description, whether the clean code must
// pass or must fail (RFC 0014's wraparound at 2-4 bits), and the mutants the
// test must kill. Nothing about the models is duplicated here: add a test or a
// kill to a model's table and `tlab model`, `tlab mutants` and `tlab check
// --models` pick it up.
//
// Where the binaries are found (first directory holding model_* executables):
//   | 1 | --models-dir DIR (an explicit flag that does not resolve is bad input) |
//   | 2 | $TLAB_MODELS_DIR                                                       |
//   | 3 | this build tree's models/ (build_info.h kModelsDir)                     |
//   | 4 | <directory of tlab>/../models (a build tree moved as a whole)          |
//   | 5 | <source>/build/default/models (a TSan or release tlab, which builds    |
//   |   | no models, uses the default preset's)                                  |
//
// A planned run is (model, test, mutant or clean, scheduler). Its case in the
// report (report.h) has scenario "model.<model>.<test>", strategy = the scheduler
// ("random", "bound:N", "full"), seed 0 (Relacy's random scheduler seeds
// iteration i with i: a run is deterministic), operations = iterations run, and a
// `model` object with Relacy's numbers, the history file and the command line
// that reproduces it. Verdicts:
//   | binary says            | clean run            | expect_fail run (mutant, or clean kFails) |
//   | Relacy failure         | fail (violation)     | fail = caught                             |
//   | search done, no failure| pass                 | pass = SURVIVED                           |
//   | timeout (--timeout)    | timeout              | timeout (not caught: a search that ran out |
//   |                        |                      | of time found nothing)                    |
//   | exit 2/3, no JSON, crash| error               | error                                     |
//
// Cost: one process per run, `jobs` at a time; a random-scheduler run of 10^5
// iterations takes 0.3-1.5 s on this project's models.
// Ground rules: CLI thread only.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/json_input.h"
#include "report/report.h"
#include "tlab/platform/mutant.h"

namespace tlab::tool {

struct ModelTestInfo {
  std::string model;  // "token"
  std::string test;   // "stale_token"
  std::string description;
  bool clean_fails = false;  // the clean code must fail (an expected finding)
  std::vector<Mutant> kills;
  std::string binary;  // absolute path of model_<model>
};

struct ModelCatalogue {
  std::string dir;
  std::vector<std::string> models;   // sorted
  std::vector<ModelTestInfo> tests;  // by model, then the binary's order
};

// find_models_dir: the directory per the table above. `explicit_dir` empty means
// "not given". Returns nullopt and appends to `errors` (file = the flag or the
// variable) when an explicitly named directory has no model binaries; returns
// nullopt with no error when nothing was named and no candidate has models, and
// fills `looked_in` with the candidates tried.
std::optional<std::string> find_models_dir(const std::string& explicit_dir, InputErrors& errors,
                                           std::vector<std::string>& looked_in);

// load_model_catalogue: runs `--list` on every model_* in `dir`. On failure returns
// nullopt and says why in `error` (a binary that does not list is an internal error).
std::optional<ModelCatalogue> load_model_catalogue(const std::string& dir, std::string& error);

enum class ModelScheduler : std::uint8_t { kRandom, kBound, kFull };

struct ModelRunOptions {
  ModelScheduler scheduler = ModelScheduler::kRandom;
  std::uint64_t iterations = 100000;  // random only
  unsigned context_bound = 1;         // bound only
  double timeout_s = 300;             // per run
  int jobs = 1;
  std::string history_dir;  // each run's history goes to <dir>/<case id, / -> .>.txt
  // A caught mutant's history is the expected outcome, not a finding: it is deleted
  // unless the user asked for histories on purpose (`tlab model --history-dir`).
  bool keep_expected_histories = true;
};

struct ModelRunSpec {
  const ModelTestInfo* test = nullptr;
  std::optional<Mutant> mutant;
  bool expect_fail = false;
};

struct ModelSelection {
  std::vector<std::string> models;  // empty: all
  std::vector<std::string> tests;   // empty: all
  std::optional<Mutant> mutant;     // only runs of tests that kill it
  bool clean = true;                // include clean runs
  bool mutants = true;              // include each test's kill runs
};

// plan_models: the runs, in catalogue order: per test its clean run, then one run
// per mutant it kills. Unknown names append errors naming `flag_*`.
std::vector<ModelRunSpec> plan_models(const ModelCatalogue& catalogue, const ModelSelection& sel,
                                      InputErrors& errors);

// run_models: runs the specs and returns their cases (report.h), in spec order.
// `on_case` (may be empty) sees each case as it finishes.
std::vector<CaseRecord> run_models(const std::vector<ModelRunSpec>& specs,
                                   const ModelRunOptions& options,
                                   const std::function<void(const CaseRecord&)>& on_case);

// model_case_id: the id of the run's case: "model.<model>.<test>/<scheduler
// label>[/<mutant>]".
std::string model_case_id(const ModelRunSpec& spec, const ModelRunOptions& options);

// scheduler_label: "random", "bound:2", "full".
std::string scheduler_label(const ModelRunOptions& options);

}  // namespace tlab::tool
