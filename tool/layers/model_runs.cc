// tlab/tool/layers/model_runs.cc: see model_runs.h.
#include "layers/model_runs.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "base/build_info.h"
#include "base/subprocess.h"

namespace tlab::tool {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view kPrefix = "model_";

std::vector<std::string> model_binaries(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (dir.empty() || !fs::is_directory(dir, ec)) return out;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with(kPrefix) || !entry.is_regular_file(ec)) continue;
    if (::access(entry.path().c_str(), X_OK) != 0) continue;
    out.push_back(fs::absolute(entry.path()).lexically_normal().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string self_dir() {
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : exe.parent_path().string();
}

std::string case_scenario(const ModelTestInfo& t) { return "model." + t.model + "." + t.test; }

CaseRecord record_of(const ModelRunSpec& spec, const ModelRunOptions& options,
                     const ProcessSpec& process, const ProcessResult& r) {
  CaseRecord c;
  c.scenario = case_scenario(*spec.test);
  c.strategy = scheduler_label(options);
  if (spec.mutant) c.mutant = std::string(name_of(*spec.mutant));
  c.id = model_case_id(spec, options);
  c.seed = 0;
  c.budget_s = options.timeout_s;
  c.expect_fail = spec.expect_fail;
  ModelRunRecord m;
  m.model = spec.test->model;
  m.test = spec.test->test;
  m.scheduler = c.strategy.substr(0, c.strategy.find(':'));
  if (options.scheduler == ModelScheduler::kBound) m.context_bound = options.context_bound;
  m.command = shell_quote(process.argv);
  CaseResult& res = c.result;
  res.duration_s = r.seconds;

  if (r.interrupted) {
    res.verdict = Verdict::kInterrupted;
    res.message = "interrupted";
  } else if (r.timed_out) {
    res.verdict = Verdict::kTimeout;
    res.message = fmt::format(
        "the search did not finish within --timeout {:g} s (a timed-out search found "
        "nothing; try --scheduler random, a smaller --context-bound or a longer --timeout)",
        options.timeout_s);
  } else {
    // The binary prints exactly one JSON line on stdout when it ran (exit 0 or 1).
    nlohmann::json j;
    bool parsed = false;
    if (r.started && (r.exit_code == 0 || r.exit_code == 1)) {
      try {
        j = nlohmann::json::parse(r.out);
        parsed = j.is_object() && j.contains("failed") && j.contains("iterations");
      } catch (const nlohmann::json::exception&) {
        parsed = false;
      }
    }
    if (!parsed) {
      res.verdict = Verdict::kError;
      std::string err = r.err.substr(0, 2000);
      while (!err.empty() && err.back() == '\n') err.pop_back();
      res.message = fmt::format("model binary {}{}{}", describe_exit(r, process),
                                err.empty() ? "" : ": ", err);
    } else {
      const bool failed = j.at("failed").get<bool>();
      m.iterations = j.at("iterations").get<std::uint64_t>();
      m.result = j.value("result", "");
      m.cpu_seconds = j.value("cpu_seconds", 0.0);
      m.iterations_per_second = j.value("iterations_per_second", 0.0);
      if (failed && j.contains("failing_iteration") && j["failing_iteration"].is_number()) {
        m.failing_iteration = j["failing_iteration"].get<std::uint64_t>();
      }
      if (j.contains("history") && j["history"].is_string()) {
        m.history = j["history"].get<std::string>();
        if (failed && spec.expect_fail && !options.keep_expected_histories) {
          std::error_code ec;
          fs::remove(*m.history, ec);
          m.history.reset();
        }
      }
      c.operations = m.iterations;
      res.counters["iterations"] = m.iterations;
      if (m.failing_iteration) res.counters["failing_iteration"] = *m.failing_iteration;
      res.verdict = failed ? Verdict::kFail : Verdict::kPass;
      if (failed) {
        const std::string message = j.value("message", m.result);
        res.violations["relacy"] = {
            1, fmt::format("{} at iteration {}{}", message.empty() ? m.result : message,
                           m.failing_iteration.value_or(m.iterations),
                           m.history ? "; history in " + *m.history : std::string())};
      }
      res.message = failed ? res.violations["relacy"].first_example : std::string();
    }
  }
  c.model = std::move(m);
  return c;
}

}  // namespace

std::string model_case_id(const ModelRunSpec& spec, const ModelRunOptions& options) {
  return case_scenario(*spec.test) + "/" + scheduler_label(options) +
         (spec.mutant ? "/" + std::string(name_of(*spec.mutant)) : "");
}

std::string scheduler_label(const ModelRunOptions& options) {
  switch (options.scheduler) {
    case ModelScheduler::kBound:
      return fmt::format("bound:{}", options.context_bound);
    case ModelScheduler::kFull:
      return "full";
    case ModelScheduler::kRandom:
      break;
  }
  return "random";
}

std::optional<std::string> find_models_dir(const std::string& explicit_dir, InputErrors& errors,
                                           std::vector<std::string>& looked_in) {
  if (!explicit_dir.empty()) {
    looked_in.push_back(explicit_dir);
    if (!model_binaries(explicit_dir).empty()) return explicit_dir;
    errors.push_back(
        {"--models-dir", "/", fmt::format("{} holds no model_* executables", explicit_dir)});
    return std::nullopt;
  }
  if (const char* env = std::getenv("TLAB_MODELS_DIR"); env != nullptr && env[0] != '\0') {
    looked_in.push_back(env);
    if (!model_binaries(env).empty()) return std::string(env);
    errors.push_back({"TLAB_MODELS_DIR", "/", fmt::format("{} holds no model_* executables", env)});
    return std::nullopt;
  }
  std::vector<std::string> candidates;
  if (kModelsDir[0] != '\0') candidates.emplace_back(kModelsDir);
  if (const std::string here = self_dir(); !here.empty()) {
    candidates.push_back((fs::path(here) / ".." / "models").lexically_normal().string());
  }
  candidates.push_back((fs::path(kSourceDir) / "build" / "default" / "models").string());
  for (const std::string& dir : candidates) {
    if (std::find(looked_in.begin(), looked_in.end(), dir) != looked_in.end()) continue;
    looked_in.push_back(dir);
    if (!model_binaries(dir).empty()) return dir;
  }
  return std::nullopt;
}

std::optional<ModelCatalogue> load_model_catalogue(const std::string& dir, std::string& error) {
  ModelCatalogue cat;
  cat.dir = dir;
  const std::vector<std::string> binaries = model_binaries(dir);
  std::vector<ProcessSpec> specs;
  for (const std::string& bin : binaries) specs.push_back({{bin, "--list"}, 30});
  const std::vector<ProcessResult> results = run_processes(specs, 2);
  for (std::size_t i = 0; i < binaries.size(); ++i) {
    const ProcessResult& r = results[i];
    const std::string model = fs::path(binaries[i]).filename().string().substr(kPrefix.size());
    if (r.exit_code != 0) {
      error = fmt::format("{} --list: {}{}", binaries[i], describe_exit(r, specs[i]),
                          r.err.empty() ? "" : ": " + r.err.substr(0, r.err.find('\n')));
      return std::nullopt;
    }
    try {
      const nlohmann::json list = nlohmann::json::parse(r.out);
      for (const auto& t : list) {
        ModelTestInfo info;
        info.model = model;
        info.test = t.at("test").get<std::string>();
        info.description = t.at("description").get<std::string>();
        info.clean_fails = t.at("clean").get<std::string>() == "fail";
        for (const auto& k : t.at("kills")) {
          const auto m = mutant_from_name(k.get<std::string>());
          if (!m) {
            error = fmt::format("{} --list: test {} kills unknown mutant '{}'", binaries[i],
                                info.test, k.get<std::string>());
            return std::nullopt;
          }
          info.kills.push_back(*m);
        }
        info.binary = binaries[i];
        cat.tests.push_back(std::move(info));
      }
    } catch (const nlohmann::json::exception& e) {
      error = fmt::format("{} --list printed no catalogue: {}", binaries[i], e.what());
      return std::nullopt;
    }
    cat.models.push_back(model);
  }
  return cat;
}

std::vector<ModelRunSpec> plan_models(const ModelCatalogue& catalogue, const ModelSelection& sel,
                                      InputErrors& errors) {
  for (const std::string& name : sel.models) {
    if (std::find(catalogue.models.begin(), catalogue.models.end(), name) ==
        catalogue.models.end()) {
      errors.push_back({"NAME", "/",
                        fmt::format("no model named '{}' in {} (models: {})", name, catalogue.dir,
                                    fmt::join(catalogue.models, ", "))});
    }
  }
  std::set<std::string> known_tests;
  for (const ModelTestInfo& t : catalogue.tests) {
    if (sel.models.empty() ||
        std::find(sel.models.begin(), sel.models.end(), t.model) != sel.models.end()) {
      known_tests.insert(t.test);
    }
  }
  for (const std::string& name : sel.tests) {
    if (!known_tests.count(name)) {
      errors.push_back({"--test", "/",
                        fmt::format("no test named '{}' in the selected models (tests: {})", name,
                                    fmt::join(known_tests, ", "))});
    }
  }
  std::vector<ModelRunSpec> out;
  for (const ModelTestInfo& t : catalogue.tests) {
    auto selected = [](const std::vector<std::string>& names, const std::string& n) {
      return names.empty() || std::find(names.begin(), names.end(), n) != names.end();
    };
    if (!selected(sel.models, t.model) || !selected(sel.tests, t.test)) continue;
    if (sel.mutant) {
      if (std::find(t.kills.begin(), t.kills.end(), *sel.mutant) != t.kills.end()) {
        out.push_back({&t, sel.mutant, true});
      }
      continue;
    }
    if (sel.clean) out.push_back({&t, std::nullopt, t.clean_fails});
    if (sel.mutants) {
      for (Mutant m : t.kills) out.push_back({&t, m, true});
    }
  }
  if (errors.empty() && out.empty()) {
    errors.push_back(
        {"--mutant", "/",
         sel.mutant ? fmt::format("no selected model test kills mutant '{}' (see `tlab mutants`)",
                                  name_of(*sel.mutant))
                    : std::string("the selection names no model runs")});
  }
  return out;
}

std::vector<CaseRecord> run_models(const std::vector<ModelRunSpec>& specs,
                                   const ModelRunOptions& options,
                                   const std::function<void(const CaseRecord&)>& on_case) {
  std::vector<ProcessSpec> processes;
  for (const ModelRunSpec& s : specs) {
    ProcessSpec p;
    p.argv = {s.test->binary, "--test", s.test->test};
    if (s.mutant) {
      p.argv.push_back("--mutant");
      p.argv.emplace_back(name_of(*s.mutant));
    }
    switch (options.scheduler) {
      case ModelScheduler::kRandom:
        p.argv.insert(p.argv.end(), {"--scheduler", "random", "--iterations",
                                     std::to_string(options.iterations)});
        break;
      case ModelScheduler::kBound:
        p.argv.insert(p.argv.end(), {"--scheduler", "bound", "--context-bound",
                                     std::to_string(options.context_bound)});
        break;
      case ModelScheduler::kFull:
        p.argv.insert(p.argv.end(), {"--scheduler", "full"});
        break;
    }
    if (s.expect_fail) p.argv.push_back("--expect-fail");
    if (!options.history_dir.empty()) {
      std::string name = case_scenario(*s.test) + "." + scheduler_label(options) +
                         (s.mutant ? "." + std::string(name_of(*s.mutant)) : "") + ".txt";
      std::replace(name.begin(), name.end(), ':', '-');
      p.argv.insert(p.argv.end(), {"--history", (fs::path(options.history_dir) / name).string()});
    }
    p.timeout_s = options.timeout_s;
    processes.push_back(std::move(p));
  }
  std::vector<CaseRecord> out(specs.size());
  std::vector<bool> reported(specs.size(), false);
  const std::vector<ProcessResult> results =
      run_processes(processes, options.jobs, [&](std::size_t i, const ProcessResult& r) {
        out[i] = record_of(specs[i], options, processes[i], r);
        reported[i] = true;
        if (on_case) on_case(out[i]);
      });
  // Runs never started because of Ctrl-C have no callback: record them too.
  for (std::size_t i = 0; i < specs.size(); ++i) {
    if (!reported[i]) out[i] = record_of(specs[i], options, processes[i], results[i]);
  }
  return out;
}

}  // namespace tlab::tool
