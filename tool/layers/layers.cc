// tlab/tool/layers/layers.cc: see layers.h.
#include "layers/layers.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/build_info.h"
#include "base/interrupt.h"
#include "base/sanitizer.h"
#include "base/subprocess.h"
#include "report/report.h"

namespace tlab::tool {

namespace {

namespace fs = std::filesystem;

bool executable(const std::string& path) {
  std::error_code ec;
  return !path.empty() && fs::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

// find_binary: the explicit path (which must exist), else the first candidate.
// Returns "" and fills status when none is usable.
std::string find_binary(const LayerRequest& req, const std::vector<std::string>& candidates,
                        const std::string& flag, const std::string& how_to_build,
                        LayerStatus& status) {
  if (!req.explicit_path.empty()) {
    if (executable(req.explicit_path)) return req.explicit_path;
    status.state = LayerStatus::State::kError;
    status.reason = fmt::format("{} {}: not an executable file", flag, req.explicit_path);
    return "";
  }
  std::string tried;
  for (const std::string& c : candidates) {
    if (c.empty()) continue;
    if (executable(c)) return c;
    tried += (tried.empty() ? "" : ", ") + c;
  }
  status.state = req.required ? LayerStatus::State::kError : LayerStatus::State::kUnavailable;
  status.reason =
      fmt::format("not found (looked for {}); {}, or pass {}", tried, how_to_build, flag);
  return "";
}

// A temporary file that is removed when the scope ends.
class TempFile {
 public:
  explicit TempFile(const std::string& suffix) {
    const fs::path dir = fs::temp_directory_path();
    std::string tmpl = (dir / ("tlab-XXXXXX" + suffix)).string();
    const int fd = ::mkstemps(tmpl.data(), static_cast<int>(suffix.size()));
    if (fd < 0) throw std::runtime_error("cannot create a temporary file in " + dir.string());
    ::close(fd);
    path_ = tmpl;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

void run_model_layer(KillMatrix& matrix, const LayerRequest& req, const ModelRunOptions& options,
                     bool clean, std::vector<CaseRecord>& cases, LayerShard* shard) {
  LayerStatus& status = matrix.layer(Layer::kModel);
  const auto t0 = std::chrono::steady_clock::now();
  InputErrors errors;
  std::vector<std::string> looked_in;
  const auto dir = find_models_dir(req.explicit_path, errors, looked_in);
  if (!dir) {
    status.state = req.required || !errors.empty() ? LayerStatus::State::kError
                                                   : LayerStatus::State::kUnavailable;
    status.reason = !errors.empty() ? errors.front().str()
                                    : fmt::format(
                                          "no model_* binaries (looked in {}); build them with "
                                          "`cmake --build build/default`, or pass --models-dir",
                                          fmt::join(looked_in, ", "));
    return;
  }
  std::string error;
  const auto catalogue = load_model_catalogue(*dir, error);
  if (!catalogue) {
    status.state = LayerStatus::State::kError;
    status.reason = error;
    return;
  }
  ModelSelection sel;
  sel.clean = clean;
  std::vector<ModelRunSpec> specs = plan_models(*catalogue, sel, errors);
  if (shard) {
    std::erase_if(specs, [&](const ModelRunSpec& spec) {
      const std::string id = model_case_id(spec, options);
      return !shard->take(fmt::format("{}|iterations={}", id, options.iterations), "model|" + id);
    });
  }
  std::vector<CaseRecord> ran = run_models(specs, options, {});
  matrix.add_cases(ran, [](const CaseRecord&) { return Layer::kModel; });
  status.state = LayerStatus::State::kRan;
  status.source = *dir;
  status.checks = ran.size();
  for (const CaseRecord& c : ran) {
    if (c.result.verdict == Verdict::kError) {
      status.state = LayerStatus::State::kError;
      status.reason = fmt::format("{}: {}", c.id, c.result.message);
    }
  }
  status.seconds = seconds_since(t0);
  cases.insert(cases.end(), std::make_move_iterator(ran.begin()),
               std::make_move_iterator(ran.end()));
}

void run_property_layer(KillMatrix& matrix, const LayerRequest& req, LayerShard* shard) {
  LayerStatus& status = matrix.layer(Layer::kProperty);
  if (shard && !shard->take_whole("property")) {
    status.reason = fmt::format("one binary run, in shard 0 of {}", shard->total());
    return;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const std::string bin = find_binary(
      req,
      {kPropertyTestBin,
       (fs::path(kSourceDir) / "build/default/tests/property/queue_property_test").string()},
      "--property-bin", "build it with `cmake --build build/default --target queue_property_test`",
      status);
  if (bin.empty()) return;
  const TempFile out(".json");
  const ProcessSpec spec{{bin, "--gtest_filter=*Mutant*", "--gtest_output=json:" + out.path()},
                         600};
  const ProcessResult r = run_processes({spec}, 1).front();
  status.source = bin;
  nlohmann::json doc;
  try {
    std::ifstream in(out.path());
    doc = nlohmann::json::parse(in);
  } catch (const std::exception& e) {
    status.state = LayerStatus::State::kError;
    status.reason = fmt::format("{}: {}; no readable --gtest_output ({})", bin,
                                describe_exit(r, spec), e.what());
    return;
  }
  std::size_t checks = 0;
  for (const auto& suite : doc.value("testsuites", nlohmann::json::array())) {
    for (const auto& t : suite.value("testsuite", nlohmann::json::array())) {
      if (!t.contains("mutant")) continue;  // not a mutant test: no claim to check
      const auto m = mutant_from_name(t.at("mutant").get<std::string>());
      if (!m) {
        status.state = LayerStatus::State::kError;
        status.reason = fmt::format("{}: test {} names unknown mutant '{}'", bin,
                                    t.value("name", "?"), t.at("mutant").get<std::string>());
        continue;
      }
      Detection d;
      d.layer = Layer::kProperty;
      d.check = suite.value("name", "?") + "." + t.value("name", "?");
      const bool failed = t.contains("failures") && !t.at("failures").empty();
      d.caught = !failed && t.value("result", "") == "COMPLETED";
      const std::string time = t.value("time", "0s");
      d.detect_s = std::strtod(time.c_str(), nullptr);
      d.detail = d.caught ? "counterexample found (test time, shrinking included)"
                          : "no counterexample: the property test failed";
      matrix.add(*m, d);
      ++checks;
    }
  }
  if (status.state != LayerStatus::State::kError) {
    status.state = checks > 0 ? LayerStatus::State::kRan : LayerStatus::State::kError;
    if (checks == 0) status.reason = bin + " ran no test that names a mutant";
  }
  status.checks = checks;
  status.seconds = seconds_since(t0);
}

void run_tsan_layer(KillMatrix& matrix, const LayerRequest& req, const std::vector<Scenario>& suite,
                    double timeout_s, std::size_t trials, LayerShard* shard) {
  LayerStatus& status = matrix.layer(Layer::kTsan);
  const auto t0 = std::chrono::steady_clock::now();
  const std::string bin = find_binary(
      req, {(fs::path(kSourceDir) / "build/tsan/tool/tlab").string()}, "--tsan-tlab",
      "build it with `cmake --preset tsan && cmake --build --preset tsan --target tlab`", status);
  if (bin.empty()) return;
  status.source = bin;
  status.trials = trials;
  std::size_t checks = 0;
  for (const Scenario& s : suite) {
    if (s.tsan_catches.empty() || s.engine.strategies.empty()) continue;
    const TempFile scenario(".json");
    {
      std::ofstream f(scenario.path());
      f << s.document.dump(2) << "\n";
    }
    for (Mutant m : s.tsan_catches) {
      const std::string unit = fmt::format("tsan|{}:{}", s.name, name_of(m));
      if (shard && !shard->take(fmt::format("{}|trials={}", unit, trials), unit)) continue;
      ++checks;
      for (std::size_t trial = 0; trial < trials && !interrupted(); ++trial) {
        const TempFile report(".json");
        const std::string strategy = s.engine.strategies.front();
        const ProcessSpec spec{{bin, "run", scenario.path(), "--mutant", std::string(name_of(m)),
                                "--strategy", strategy, "--report", report.path()},
                               timeout_s};
        const ProcessResult r = run_processes({spec}, 1).front();
        Detection d;
        d.layer = Layer::kTsan;
        d.check = s.name + "/" + strategy;
        nlohmann::json doc;
        try {
          std::ifstream in(report.path());
          doc = nlohmann::json::parse(in);
          const auto& c = doc.at("cases").at(0);
          const bool sanitizer = !c.at("sanitizer_reports").empty();
          d.caught = c.at("verdict") == "fail" && sanitizer;
          const auto& counters = c.at("counters");
          d.detect_s = counters.contains("detect_us") ? counters.at("detect_us").get<double>() / 1e6
                                                      : c.at("duration_s").get<double>();
          d.detail = sanitizer ? fmt::format("{} ThreadSanitizer report(s)",
                                             c.at("sanitizer_reports").size())
                               : "no ThreadSanitizer report";
        } catch (const std::exception& e) {
          status.state = LayerStatus::State::kError;
          status.reason =
              fmt::format("{} ({}): {}; no readable report ({})", shell_quote(spec.argv),
                          describe_exit(r, spec), r.err.substr(0, r.err.find('\n')), e.what());
          continue;
        }
        matrix.add(m, d);
      }
    }
  }
  if (status.state != LayerStatus::State::kError) status.state = LayerStatus::State::kRan;
  status.checks = checks;
  status.seconds = seconds_since(t0);
}

bool layer_wanted(const LayerPlan& plan, Layer l) {
  return plan.layers.empty() ||
         std::find(plan.layers.begin(), plan.layers.end(), name_of(l)) != plan.layers.end();
}

int model_jobs(int jobs) {
  if (jobs > 0) return jobs;
  const int n = Environment::detect().cpus_available;
  return n > 0 ? n : 1;
}

void add_scenario_cases(KillMatrix& matrix, const std::vector<CaseRecord>& cases,
                        const std::vector<Scenario>& suite) {
  std::set<std::string> tsan_pairs;
  for (const Scenario& s : suite) {
    for (Mutant m : s.tsan_catches) tsan_pairs.insert(s.name + ":" + std::string(name_of(m)));
  }
  matrix.add_cases(cases, [&](const CaseRecord& c) {
    if (c.model) return Layer::kModel;
    if (c.sim) return Layer::kSim;
    return tsan_pairs.count(c.scenario + ":" + c.mutant.value_or("")) ? Layer::kTsan
                                                                      : Layer::kScenario;
  });
}

void run_other_layers(KillMatrix& matrix, const std::vector<Scenario>& suite, const LayerPlan& plan,
                      bool clean_models, Report& report) {
  std::vector<CaseRecord> cases;
  auto request = [&](const std::string& path) {
    LayerRequest r;
    r.required = !plan.layers.empty();
    r.explicit_path = path;
    return r;
  };
  if (layer_wanted(plan, Layer::kModel)) {
    if (plan.progress) *plan.progress << "tlab: running the Relacy models...\n";
    run_model_layer(matrix, request(plan.sources.models_dir), plan.model, clean_models, cases,
                    plan.shard);
  }
  if (layer_wanted(plan, Layer::kProperty)) {
    run_property_layer(matrix, request(plan.sources.property_bin), plan.shard);
  }
  if (layer_wanted(plan, Layer::kTsan)) {
    if (under_tsan()) {
      // This tlab is the TSan build: the scenario layer ran tsan_catches in-process.
      LayerStatus& st = matrix.layer(Layer::kTsan);
      st = matrix.layer(Layer::kScenario);
      st.source = "this tlab (a TSan build): the scenarios' tsan_catches";
    } else {
      if (plan.progress) *plan.progress << "tlab: running the TSan build of tlab...\n";
      run_tsan_layer(matrix, request(plan.sources.tsan_tlab), suite, plan.model.timeout_s,
                     plan.trials, plan.shard);
    }
  }
  report.planned += cases.size();
  report.cases.insert(report.cases.end(), std::make_move_iterator(cases.begin()),
                      std::make_move_iterator(cases.end()));
  report.interrupted = report.interrupted || interrupted();
  report.kill_matrix = matrix.to_json();
}

}  // namespace tlab::tool
