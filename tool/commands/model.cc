// tlab/tool/commands/model.cc: `tlab model`: the Relacy models over the shipped
// core code, their clean runs and their mutant runs (layers/model_runs.h), as
// report cases. Exit 1 when a clean run fails or a mutant run does not catch.
// Failing runs leave their execution histories in --history-dir (default: a new
// temporary directory, named on stderr, that keeps only unexpected failures and is
// removed again when there are none; an explicit --history-dir keeps every history,
// caught mutants' included).
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "cli/common.h"
#include "cli/shard_option.h"
#include "layers/layers.h"
#include "layers/model_runs.h"
#include "plan/shard_plan.h"
#include "report/console.h"

namespace tlab::tool {

namespace {

struct ModelOptions {
  std::vector<std::string> names;
  std::vector<std::string> tests;
  std::string scheduler = "random";
  std::uint64_t iterations = 100000;
  unsigned context_bound = 1;
  std::string mutant;
  bool clean_only = false;
  std::string timeout = "300s";
  std::string history_dir;
  LayerSources sources;
  std::string shard;
  OutputOptions outputs;
};

class ModelCommand final : public Command {
 public:
  void setup(CLI::App& sub) override {
    sub_ = &sub;
    sub.description(
        "run the Relacy models over the shipped core code (clean runs and mutant runs)");
    sub.add_option("NAME", o_.names, "models to run (default: all; see --list)")->type_name("NAME");
    sub.add_option("--test", o_.tests, "only these tests of the models")->type_name("T");
    sub.add_option("--scheduler", o_.scheduler,
                   "random (default), bound (context-bound search) or full (exhaustive)")
        ->type_name("S")
        ->check(CLI::IsMember({"random", "bound", "full"}));
    sub.add_option("--iterations", o_.iterations,
                   "iterations of the random scheduler (default 100000)")
        ->type_name("N")
        ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1000000000}));
    sub.add_option("--context-bound", o_.context_bound, "bound of --scheduler bound (default 1)")
        ->type_name("N")
        ->check(CLI::Range(0u, 64u));
    auto* mutant =
        sub.add_option("--mutant", o_.mutant, "only the runs that must catch this mutant")
            ->type_name("M")
            ->check(mutant_check());
    sub.add_flag("--clean", o_.clean_only, "only the clean runs (no mutants)")->excludes(mutant);
    sub.add_option("--timeout", o_.timeout, "per run; a search still going is killed (300s)")
        ->type_name("D")
        ->check(duration_check());
    sub.add_option("--history-dir", o_.history_dir,
                   "keep every failing run's execution history here, caught mutants' "
                   "included (default: a new temporary directory, named on stderr, that "
                   "keeps only unexpected failures and is removed when there are none)")
        ->type_name("DIR");
    add_layer_sources(sub, o_.sources);
    add_shard_option(sub, o_.shard);
    add_outputs(sub, o_.outputs, /*junit=*/true);
    sub.footer(
        "Model binaries are looked for in: --models-dir, $TLAB_MODELS_DIR, this build's "
        "models/, <tlab's directory>/../models, <source>/build/default/models.");
    add_example(sub, "tlab model token --iterations 10000");
  }

  int run(const CliEnv& env) override {
    InputErrors errors;
    if (o_.scheduler != "random" && sub_->count("--iterations") > 0) {
      errors.push_back({"--iterations", "/",
                        fmt::format("applies to --scheduler random only (bound and full search "
                                    "until their space is exhausted); got --scheduler {}",
                                    o_.scheduler)});
    }
    if (o_.scheduler != "bound" && sub_->count("--context-bound") > 0) {
      errors.push_back(
          {"--context-bound", "/",
           fmt::format("applies to --scheduler bound only; got --scheduler {}", o_.scheduler)});
    }
    std::optional<Shard> shard;
    if (auto stop = resolve_shard_option(*sub_, o_.shard, env, shard)) return *stop;
    std::vector<std::string> looked_in;
    const auto dir = find_models_dir(o_.sources.models_dir, errors, looked_in);
    check_outputs(o_.outputs, errors);
    if (!errors.empty()) return bad_input(errors, env);
    if (!dir) {
      *env.err << fmt::format(
          "tlab: internal error: no model binaries found (looked in {}); build them with "
          "`cmake --build build/default` (TLAB_BUILD_MODELS=ON), set TLAB_MODELS_DIR or pass "
          "--models-dir\n",
          fmt::join(looked_in, ", "));
      return kExitInternal;
    }
    std::string error;
    const auto catalogue = load_model_catalogue(*dir, error);
    if (!catalogue) {
      *env.err << "tlab: internal error: " << error << "\n";
      return kExitInternal;
    }
    ModelSelection sel;
    sel.models = o_.names;
    sel.tests = o_.tests;
    if (!o_.mutant.empty()) sel.mutant = mutant_from_name(o_.mutant);
    sel.mutants = !o_.clean_only;
    std::vector<ModelRunSpec> specs = plan_models(*catalogue, sel, errors);
    if (!errors.empty()) return bad_input(errors, env);

    ModelRunOptions mo = run_options();
    // --shard splits the runs: each (model, test, mutant or clean) run is one case,
    // so the shards' union is exactly the unsharded run (Relacy runs are
    // deterministic: iteration i is seeded with i).
    std::optional<ShardedPlan> sharded;
    if (shard) {
      std::vector<std::string> keys, ids;
      for (const ModelRunSpec& spec : specs) {
        ids.push_back(model_case_id(spec, mo));
        keys.push_back(fmt::format("{}|iterations={}", ids.back(), mo.iterations));
      }
      sharded = shard_plan(specs, keys, ids, *shard);
    }
    bool made_history_dir = false;
    namespace fs = std::filesystem;
    if (mo.history_dir.empty()) {
      std::string tmpl = (fs::temp_directory_path() / "tlab-model-XXXXXX").string();
      if (::mkdtemp(tmpl.data()) == nullptr) {
        *env.err << "tlab: internal error: cannot create a history directory under "
                 << fs::temp_directory_path().string() << "\n";
        return kExitInternal;
      }
      mo.history_dir = tmpl;
      mo.keep_expected_histories = false;
      made_history_dir = true;
    } else {
      std::error_code ec;
      fs::create_directories(mo.history_dir, ec);
      if (ec || !fs::is_directory(mo.history_dir)) {
        return bad_input({{"--history-dir", "/",
                           fmt::format("{}: cannot create the directory ({})", mo.history_dir,
                                       ec ? ec.message() : "not a directory")}},
                         env);
      }
    }

    Report report;
    report.command = "model";
    report.environment = Environment::detect();
    report.planned = specs.size();
    Progress progress(env.stderr_is_tty);
    std::size_t done = 0;
    report.cases = run_models(
        specs, mo, [&](const CaseRecord& c) { progress.update(++done, specs.size(), c.id); });
    progress.clear();
    report.interrupted = std::any_of(report.cases.begin(), report.cases.end(), [](const auto& c) {
      return c.result.verdict == Verdict::kInterrupted;
    });
    if (report.interrupted) {
      std::erase_if(report.cases,
                    [](const CaseRecord& c) { return c.result.verdict == Verdict::kInterrupted; });
    }
    if (sharded) record_shard(report, *sharded);
    std::error_code ec;
    const bool histories = fs::exists(mo.history_dir, ec) && !fs::is_empty(mo.history_dir, ec);
    if (made_history_dir && !histories) fs::remove(mo.history_dir, ec);
    const int code = finish(report, o_.outputs, env);
    if (histories) {
      *env.err << "tlab: Relacy execution histories of the failing runs are in " << mo.history_dir
               << "\n";
    }
    return code;
  }

 private:
  ModelRunOptions run_options() const {
    ModelRunOptions mo;
    mo.scheduler = o_.scheduler == "bound"  ? ModelScheduler::kBound
                   : o_.scheduler == "full" ? ModelScheduler::kFull
                                            : ModelScheduler::kRandom;
    mo.iterations = o_.iterations;
    mo.context_bound = o_.context_bound;
    mo.timeout_s = parse_duration_s(o_.timeout).value_or(300);
    mo.jobs = model_jobs(o_.sources.jobs);
    mo.history_dir = o_.history_dir;
    return mo;
  }

  CLI::App* sub_ = nullptr;
  ModelOptions o_;
};

}  // namespace

std::unique_ptr<Command> make_model_command() { return std::make_unique<ModelCommand>(); }

}  // namespace tlab::tool
