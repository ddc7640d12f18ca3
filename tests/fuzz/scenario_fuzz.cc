// tlab/tests/fuzz/scenario_fuzz.cc: libFuzzer target for the scenario loader.
//
// Feeds each input to ScenarioLoader::load_text, the path every scenario file takes
// (parse, schema, semantics; scenario.h), and checks the loader's contract beyond
// "does not crash". ASan and UBSan (tests/fuzz/clang/CMakeLists.txt) turn memory
// errors, stack overflows and undefined behaviour into crashes; an exception that
// escapes the loader is one too (std::terminate), since tlab answers bad input with
// exit 2, never with an internal error.
//
// What is checked on every input (a broken check prints what broke and aborts):
//   | outcome          | must hold                                                      |
//   |------------------|----------------------------------------------------------------|
//   | refused          | at least one error; each names the source, a pointer starting  |
//   |                  | with "/", and a message                                        |
//   | loaded           | no error; every cap of scenario.h holds (threads, operations,  |
//   |                  | budget, max_pending, fault delays); every distribution is      |
//   |                  | well formed and sample() stays in it; the document dumped and  |
//   |                  | loaded again loads (a report embeds it, `tlab replay` reloads) |
//
// Bounds: libFuzzer's -max_len (default: the largest seed, at least 4096 bytes)
// keeps inputs far below kMaxFileBytes. Ground rules: the loader is built once and
// shared by every input, as tlab does; one thread.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>

#include "base/strategies.h"
#include "scenario/scenario.h"

namespace tlab::tool {
namespace {

// The source name every input is loaded under; each error must carry it.
const std::string kSource = "fuzz-input";

[[noreturn]] void broken(const char* what, const InputErrors& errors) {
  std::fprintf(stderr, "scenario_fuzz: contract broken: %s\n", what);
  for (const InputError& e : errors) std::fprintf(stderr, "  error: %s\n", e.str().c_str());
  std::abort();
}

void expect(bool ok, const char* what, const InputErrors& errors = {}) {
  if (!ok) broken(what, errors);
}

// check_distribution: the shape read_distribution promises, and draws inside it.
// `lo_min`/`hi_max` are the schema's range for the field (fault delays: [0, 1 s]).
void check_distribution(const Distribution& d, std::int64_t lo_min, std::int64_t hi_max,
                        std::mt19937_64& rng) {
  using Kind = Distribution::Kind;
  switch (d.kind) {
    case Kind::kFixed:
      expect(d.lo == d.hi, "fixed distribution with lo != hi");
      break;
    case Kind::kUniform:
      expect(d.lo <= d.hi, "uniform distribution with lo > hi");
      break;
    case Kind::kExponential:
      expect(std::isfinite(d.mean) && d.mean > 0, "exponential mean not finite and positive");
      break;
  }
  if (d.kind != Kind::kExponential) {
    expect(d.lo >= lo_min && d.hi <= hi_max, "distribution outside its field's range");
  }
  // Three draws: enough to reach both ends of a small uniform range now and then.
  for (int i = 0; i < 3; ++i) {
    const std::int64_t v = d.sample(rng);
    if (d.kind == Kind::kExponential) {
      expect(v >= 0 && v <= 600'000'000, "exponential draw outside [0, 600 s]");
    } else {
      expect(v >= d.lo && v <= d.hi, "draw outside [lo, hi]");
    }
  }
}

void check_loaded(const ScenarioLoader& loader, const Scenario& s) {
  expect(s.source == kSource, "scenario source is not the name it was loaded under");
  expect(!s.name.empty(), "empty scenario name");
  expect(s.total_threads() <= kMaxThreads, "more threads than kMaxThreads");
  expect(s.engine.workers >= 1, "engine.workers < 1");
  expect(!s.engine.strategies.empty(), "no strategies");
  for (const std::string& n : s.engine.strategies) expect(is_strategy(n), "unknown strategy");
  expect(!s.actors.empty(), "no actors");
  expect(s.run.operations >= 1 && s.run.operations <= 100'000'000, "run.operations out of range");
  expect(s.run.budget_s > 0 && s.run.budget_s <= 600, "run.budget_s out of range");
  expect(s.run.max_pending >= 1 && s.run.max_pending <= 1'000'000, "run.max_pending out of range");

  std::mt19937_64 rng(s.run.seed);
  // The schema's ranges for actor durations (signed_us, positive_us).
  constexpr std::int64_t kSignedUs = 9'000'000'000'000'000;
  for (const Actor& a : s.actors) {
    expect(a.count >= 1, "actor count < 1");
    expect(a.cancel_probability >= 0 && a.cancel_probability <= 1,
           "cancel_probability outside [0, 1]");
    expect(!a.stale_probability || (*a.stale_probability >= 0 && *a.stale_probability <= 1),
           "stale_probability outside [0, 1]");
    expect(a.rearm_probability >= 0 && a.rearm_probability <= 1,
           "rearm_probability outside [0, 1]");
    for (const auto* d : {&a.timeout_us, &a.delay_us}) {
      if (*d) check_distribution(**d, -kSignedUs, kSignedUs, rng);
    }
    for (const auto* d : {&a.period_us, &a.hold_us}) {
      if (*d) check_distribution(**d, 1, 600'000'000, rng);
    }
  }
  for (const FaultSpec& f : s.faults) {
    expect(f.probability >= 0 && f.probability <= 1, "fault probability outside [0, 1]");
    check_distribution(f.delay_us, 0, 1'000'000, rng);
  }
  (void)s.fault_plans();

  // A report embeds s.document and `tlab replay` loads it again: the dump must load.
  InputErrors again;
  const auto reloaded = loader.load_text(s.document.dump(), kSource, again);
  expect(reloaded.has_value() && again.empty(), "a loaded document, dumped, does not load", again);
}

}  // namespace
}  // namespace tlab::tool

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tlab::tool;
  static const ScenarioLoader loader;  // compiles the schema once, as tlab does
  InputErrors errors;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto scenario = loader.load_text(text, kSource, errors);
  if (scenario) {
    expect(errors.empty(), "a scenario and errors at once", errors);
    check_loaded(loader, *scenario);
  } else {
    expect(!errors.empty(), "refused without an error");
    for (const InputError& e : errors) {
      expect(
          e.file == kSource && !e.pointer.empty() && e.pointer.front() == '/' && !e.message.empty(),
          "an error without source, pointer or message", errors);
    }
  }
  return 0;
}
