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
// silently skipped. A check that targets a mutant and does not catch it is a
// survivor: the gate fails on survivors and on mutants caught by no layer.
//
// Costs: O(mutants x checks) bookkeeping; the layers' runs dominate.
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

enum class Layer : std::uint8_t { kScenario, kModel, kProperty, kTsan, kCount };
inline constexpr std::size_t kLayerCount = static_cast<std::size_t>(Layer::kCount);
inline constexpr std::array<std::string_view, kLayerCount> kLayerNames{"scenario", "model",
                                                                       "property", "tsan"};
std::string_view name_of(Layer l);
std::optional<Layer> layer_from_name(std::string_view name);

struct Detection {
  Layer layer = Layer::kScenario;
  std::string check;  // "racing_cancellers/binary_heap", "model.token.stale_token/random", ...
  bool caught = false;
  double detect_s = 0;  // time to detection (table above); meaningful when caught
  std::string detail;   // the violation, or why it survived
};

struct LayerStatus {
  enum class State : std::uint8_t { kNotRequested, kRan, kUnavailable, kError };
  State state = State::kNotRequested;
  std::string source;  // the binary or directory that ran it
  std::string reason;  // unavailable/error: why
  std::size_t checks = 0;
  double seconds = 0;
};

class KillMatrix {
 public:
  KillMatrix();

  LayerStatus& layer(Layer l) { return layers_[static_cast<std::size_t>(l)]; }
  const LayerStatus& layer(Layer l) const { return layers_[static_cast<std::size_t>(l)]; }

  // KillMatrix::add: records one check's outcome against mutant `m`.
  void add(Mutant m, Detection d);
  // KillMatrix::add_cases: every expect_fail case with a mutant, in the layer
  // `layer_of` names (model cases: model; scenario cases: scenario, or tsan for a
  // TSan build's tsan_catches). Cases that did not finish (interrupted, error)
  // are not outcomes and are skipped.
  void add_cases(const std::vector<CaseRecord>& cases,
                 const std::function<Layer(const CaseRecord&)>& layer_of);

  // Fastest detection of `m` in layer `l`, if caught there.
  std::optional<Detection> best(Mutant m, Layer l) const;
  std::vector<Mutant> uncaught() const;        // caught by no layer
  std::vector<std::string> survivors() const;  // "mutant@layer:check"
  std::size_t caught_by_at_least(std::size_t layers) const;
  // exit code: 1 a survivor or an uncaught mutant, 3 a layer error, else 0.
  int exit_code() const;

  nlohmann::ordered_json to_json() const;
  std::string table() const;

 private:
  std::array<LayerStatus, kLayerCount> layers_;
  std::vector<std::vector<Detection>> rows_;  // by mutant index
};

}  // namespace tlab::tool
