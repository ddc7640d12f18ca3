// tlab/tool/layers/kill_matrix.h: which verification layer catches which mutant, and how
// fast: the answer to "can this check fail?", for every check we ship.
//
// One row per mutant core/ defines (platform/mutant.h), whether or not any layer
// targets it: a mutant no layer catches is exactly what the matrix exists to show.
// Layers and what a detection means in each:
// clang-format off
//   | layer    | source                                    | caught when                     | time to detection             |
//   |----------|-------------------------------------------|---------------------------------|-------------------------------|
//   | scenario | the built-in suite's `catches`, in this   | the case fails (or the watchdog | detect_us: run start to the   |
//   |          | process through the stress runner         | sees the hang)                  | first violation over bound    |
//   | model    | model_* binaries (model_runs.h), each     | Relacy reports a failure        | CPU seconds of the search up  |
//   |          | test's `kills`                            |                                 | to the failing iteration      |
//   | property | the rapidcheck binary's mutant tests; a   | the test passes (it asserts a   | the test's time, shrinking    |
//   |          | test names its mutant with                | counterexample was found)       | included                      |
//   |          | RecordProperty("mutant", name)            |                                 |                               |
//   | tsan     | scenarios' `tsan_catches`, run by a TSan  | a ThreadSanitizer report        | detect_us, as scenario        |
//   |          | build of tlab (this one if it is TSan)    |                                 |                               |
// clang-format on
// A layer whose binary is missing is "unavailable" with the reason; it is never
// silently skipped.
//
// Trials (`tlab mutants --trials N`). A stress run's detection is a probability over
// thread schedules, so the scenario and tsan layers run each (check, mutant) N times
// with the scenario's own seed: the workload `tlab check` runs in CI, so the rate
// measured is the chance that CI's run catches the mutant. The model layer runs once:
// Relacy's random scheduler seeds iteration i with i (model_runs.h), so a rerun is
// the same search; the property layer runs once: rapidcheck's seed is fixed by the
// binary. A check's record over its trials:
// clang-format off
//   | detections of T trials | state    | shown as                        | gate                         |
//   |------------------------|----------|---------------------------------|------------------------------|
//   | T                      | reliable | time (T = 1); "5/5 12.0ms"      | catches the mutant           |
//   | 1 .. T-1               | flaky    | "FLAKY 3/5 12.0ms", and listed  | reported; fails only when no |
//   |                        |          | under "flaky detection"         | check of the mutant is       |
//   |                        |          |                                 | reliable (below)             |
//   | 0                      | survivor | SURVIVED                        | fails                        |
// clang-format on
// Time shown: the median over the caught trials (the max is in the JSON and the
// flaky list). The gate (exit_code): 3 when a layer errs; else 1 when a mutant is
// caught by no check, when a check lets a mutant it targets survive every trial, or
// when a mutant's best check, over every layer, is flaky ("only flaky detection");
// else 0. A mutant caught in every trial by some check but by no single check in
// every trial fails: each (scenario, mutant) pair is its own gate in `tlab check`,
// so what CI can rely on is one check that never misses. A flaky check of a mutant
// that another check catches reliably does not fail the gate (it makes `tlab check`
// red at random, never green when wrong) but is listed. With T = 1 every caught
// check is reliable and the gate is the one-run gate.
//
// Sharding (`tlab mutants --shard i/n`, layers.h LayerShard): each (layer, check,
// mutant) record is built in one shard only, so the unsharded matrix is the union
// of the shards' records. to_json writes every record under "checks" (in canonical
// order: by mutant, then layer, then key, whatever order the checks ran in), and
// `tlab merge` reads each shard's back (from_json) and joins them (absorb); the
// cells, counts and gate are then computed on the whole, never per shard. Layer
// statuses join as: error over ran over unavailable over not_requested; checks and
// seconds add up; trials is the largest (every shard runs the same --trials).
//
// Costs: O(mutants x checks x trials) bookkeeping; the layers' runs dominate.
// Ground rules: a plain value built and read on the CLI thread.
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/report.h"
#include "tlab/platform/mutant.h"

namespace tlab::tool {

// kSim: the scenario layer's catches under deterministic simulation (--sim random),
// one trial per seed (trial t runs each case at seed_for_round(seed, t)): a
// simulated case is a pure function of its seed, so repeating a seed proves nothing.
enum class Layer : std::uint8_t { kScenario, kSim, kModel, kProperty, kTsan, kCount };
inline constexpr std::size_t kLayerCount = static_cast<std::size_t>(Layer::kCount);
inline constexpr std::array<std::string_view, kLayerCount> kLayerNames{
    "scenario", "sim", "model", "property", "tsan"};
std::string_view name_of(Layer l);
std::optional<Layer> layer_from_name(std::string_view name);

// Detection: one trial of one check against one mutant.
struct Detection {
  Layer layer = Layer::kScenario;
  std::string check;  // "racing_cancellers/binary_heap", "model.token.stale_token/random", ...
  bool caught = false;
  double detect_s = 0;  // time to detection (table above); meaningful when caught
  std::string detail;   // the violation, or why it survived
};

// CheckRecord: one (check, mutant) over its trials (the table above).
struct CheckRecord {
  Layer layer = Layer::kScenario;
  std::string check;             // the fastest caught trial's name, else the first trial's
  std::size_t trials = 0;        // outcomes recorded
  std::vector<double> detect_s;  // the caught trials' times to detection
  std::string detail;            // the fastest caught trial's, else the last trial's

  std::size_t detections() const { return detect_s.size(); }
  bool caught() const { return !detect_s.empty(); }
  bool reliable() const { return trials > 0 && detections() == trials; }
  bool flaky() const { return caught() && !reliable(); }
  double median_s() const;  // over the caught trials; 0 when none
  double max_s() const;     // over the caught trials; 0 when none
};

struct LayerStatus {
  enum class State : std::uint8_t { kNotRequested, kRan, kUnavailable, kError };
  State state = State::kNotRequested;
  std::string source;  // the binary or directory that ran it
  std::string reason;  // unavailable/error: why
  std::size_t checks = 0;
  std::size_t trials = 1;  // runs of each (check, mutant): --trials, or 1 (see above)
  double seconds = 0;
};

class KillMatrix {
 public:
  KillMatrix();

  LayerStatus& layer(Layer l) { return layers_[static_cast<std::size_t>(l)]; }
  const LayerStatus& layer(Layer l) const { return layers_[static_cast<std::size_t>(l)]; }

  // KillMatrix::add: records one trial of a check against mutant `m`; trials of
  // the same (layer, check) add up to one CheckRecord.
  void add(Mutant m, const Detection& d) { add_trial(m, d, d.check); }
  // KillMatrix::add_cases: one trial of every expect_fail case with a mutant, in the
  // layer `layer_of` names (model cases: model; scenario cases: scenario, or tsan
  // for a TSan build's tsan_catches). A (layer, scenario, mutant) is one check, caught
  // when any of its strategies catches it; calling this once per trial adds up the
  // trials. Cases that did not finish (interrupted, error) are not outcomes and are
  // skipped.
  void add_cases(const std::vector<CaseRecord>& cases,
                 const std::function<Layer(const CaseRecord&)>& layer_of);

  // The check of layer `l` that catches `m` best: the highest detection rate, then
  // the lowest median; nullopt when no check of `l` caught it.
  std::optional<CheckRecord> best(Mutant m, Layer l) const;
  std::vector<Mutant> uncaught() const;           // caught by no check
  std::vector<Mutant> only_flaky() const;         // caught, but by no reliable check
  std::vector<std::string> survivors() const;     // "mutant@layer:check"
  std::vector<std::string> flaky_checks() const;  // "mutant@layer:check 3/5"
  // disagreements: mutants the model layer (Relacy) catches that the sim layer
  // targets but catches in no check at every seed ("mutant: sim best 17/20"). Both
  // explore schedules of the same templates; a gap is a hole in one of them.
  std::vector<std::string> disagreements() const;
  // sim_unreliable: sim checks caught at some seeds only ("mutant@sim:check 17/20").
  std::vector<std::string> sim_unreliable() const;
  std::size_t caught_by_at_least(std::size_t layers) const;
  // exit code: the gate above: 3 a layer error; 1 an uncaught or only flakily caught
  // mutant, a survivor, a sim check below 100% or a Relacy/sim disagreement; else 0.
  int exit_code() const;
  // errored: whether a layer is in state error (exit_code's 3).
  bool errored() const;

  nlohmann::ordered_json to_json() const;
  // KillMatrix::from_json: the matrix to_json wrote, from its "layers" and "checks"
  // (the rest is derived); nullopt with `pointer` (relative to the matrix) and
  // `error` set when they are not a matrix's.
  static std::optional<KillMatrix> from_json(const nlohmann::ordered_json& j, std::string& pointer,
                                             std::string& error);
  // KillMatrix::absorb: adds another shard's records and joins the layer statuses
  // (see Sharding above). Returns the records in both ("mutant@layer:key"), which
  // keep this matrix's: two shards never build the same record.
  std::vector<std::string> absorb(const KillMatrix& other);
  std::string table() const;

 private:
  void add_trial(Mutant m, const Detection& d, const std::string& key);
  // insert_record: a whole record at its sorted place; false when (layer, key) is
  // already in m's row.
  bool insert_record(Mutant m, CheckRecord rec, const std::string& key);

  std::array<LayerStatus, kLayerCount> layers_;
  struct Row {
    CheckRecord record;
    std::string key;  // what identifies the check across trials
  };
  std::vector<std::vector<Row>> rows_;  // by mutant index
};

}  // namespace tlab::tool
