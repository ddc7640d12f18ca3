// tlab/tool/commands/list.cc: `tlab list`: the catalogues a user picks from:
// strategies, subjects (subjects/subjects.h), the built-in scenarios, mutants and
// fault points, as aligned text (one section each when WHAT is not given) or JSON
// (--json); and, asked by name only (it runs the model binaries' --list), the
// Relacy models' tests with the mutants each kills.
#include <algorithm>
#include <array>
#include <iostream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <CLI/CLI.hpp>

#include "base/strategies.h"
#include "cli/common.h"
#include "cli/subject_option.h"
#include "layers/model_runs.h"
#include "subjects/exec/adapters.h"
#include "subjects/subjects.h"
#include "tlab/platform/fault_point.h"
#include "tlab/platform/mutant.h"

namespace tlab::tool {

namespace {

using Rows = std::vector<std::array<std::string, 3>>;

class ListCommand final : public Command {
 public:
  void setup(CLI::App& sub) override {
    sub.description("list strategies, subjects, scenarios, mutants, fault points or models");
    sub.add_option("WHAT", what_,
                   "strategies|subjects|scenarios|mutants|faults|models (default: all but "
                   "models)")
        ->check(
            CLI::IsMember({"strategies", "subjects", "scenarios", "mutants", "faults", "models"}));
    sub.add_flag("--json", json_, "print JSON");
    add_subject_option(sub, subject_);
    add_example(sub, "tlab list subjects --subject ./libmy_timer.so");
  }

  int run(const CliEnv& env) override {
    // --subject: that one subject's descriptor, probed (a plugin in a child).
    std::optional<SubjectFacts> probed;
    if (!subject_.empty()) {
      if (!what_.empty() && what_ != "subjects") {
        *env.err << "tlab: --subject describes a subject; it goes with `tlab list subjects`\n";
        return kExitBadInput;
      }
      probed = resolve_subject(subject_, env);
      if (!probed) return kExitBadInput;
    }
    const bool all = what_.empty() && !probed;
    nlohmann::ordered_json j = nlohmann::ordered_json::object();
    std::string text;
    auto section = [&](const std::string& title, const Rows& rows) {
      std::size_t w0 = 0, w1 = 0;
      for (const auto& r : rows) {
        w0 = std::max(w0, r[0].size());
        w1 = std::max(w1, r[1].size());
      }
      if (all) text += title + ":\n";
      for (const auto& r : rows) {
        std::string line =
            fmt::format("{}{:<{}}  {:<{}}  {}", all ? "  " : "", r[0], w0, r[1], w1, r[2]);
        while (!line.empty() && line.back() == ' ') line.pop_back();
        text += line + "\n";
      }
    };
    if (all || what_ == "strategies") {
      Rows rows;
      auto& arr = j["strategies"] = nlohmann::ordered_json::array();
      for (const auto& s : kStrategyInfo) {
        rows.push_back({std::string(s.name), "", std::string(s.summary)});
        arr.push_back({{"name", s.name}, {"exact", s.exact}, {"description", s.summary}});
      }
      section("strategies", rows);
    }
    if (probed) {
      const SubjectFacts& f = *probed;
      text += describe_subject(f) + "\n" + f.summary + "\n";
      nlohmann::ordered_json promises = nlohmann::ordered_json::array();
      for (std::size_t i = 0; i < kPromiseCount; ++i) {
        if (f.promises.has(static_cast<Promise>(i))) promises.push_back(kPromiseNames[i]);
      }
      j["subjects"] = nlohmann::ordered_json::array(
          {{{"name", f.name},
            {"origin", f.builtin() ? "built-in" : "plugin"},
            {"library", f.library},
            {"entry", f.entry},
            {"kind", f.kind == TLAB_KIND_FACILITY ? "timer_facility" : "timed_wait"},
            {"drive", f.kind != TLAB_KIND_FACILITY ? "none"
                      : f.drive == TLAB_DRIVE_LOOP ? "loop"
                                                   : "self"},
            {"clock", f.clock == TLAB_CLOCK_HOST ? "host" : "monotonic"},
            {"promises", promises},
            {"description", f.summary}}});
    } else if (all || what_ == "subjects") {
      Rows rows;
      auto& arr = j["subjects"] = nlohmann::ordered_json::array();
      for (const SubjectInfo& s : subjects()) {
        rows.push_back({std::string(s.name),
                        fmt::format("{} {}{}", name_of(s.origin), name_of(s.kind),
                                    s.abi != nullptr ? " (--subject)" : ""),
                        std::string(s.summary)});
        nlohmann::ordered_json promises = nlohmann::ordered_json::array();
        for (std::size_t i = 0; i < kPromiseCount; ++i) {
          if (s.promises.has(static_cast<Promise>(i))) promises.push_back(kPromiseNames[i]);
        }
        arr.push_back({{"name", s.name},
                       {"origin", name_of(s.origin)},
                       {"kind", name_of(s.kind)},
                       {"promises", promises},
                       {"roles", s.accepts.names()},
                       {"runs_scenarios", s.run_case != nullptr || s.abi != nullptr},
                       {"abi", s.abi != nullptr},
                       {"compared", s.bench != nullptr},
                       {"description", s.summary}});
      }
      // The shipped exec adapters, by the name --subject exec: takes.
      auto& adapters = j["adapters"] = nlohmann::ordered_json::array();
      for (const exec::ExecAdapter& a : exec::kExecAdapters) {
        std::string why;
        const bool ready = exec::adapter_available(a, why);
        rows.push_back({std::string(a.name), fmt::format("adapter (--subject exec:{})", a.name),
                        ready ? std::string(a.summary)
                              : fmt::format("{} [not available: {}]", a.summary, why)});
        adapters.push_back({{"name", a.name},
                            {"subject", fmt::format("exec:{}", a.name)},
                            {"available", ready},
                            {"why_not", why},
                            {"description", a.summary}});
      }
      section("subjects", rows);
    }
    if (what_ == "models") {
      InputErrors errors;
      std::vector<std::string> looked_in;
      const auto dir = find_models_dir("", errors, looked_in);
      std::string error;
      const auto catalogue = dir ? load_model_catalogue(*dir, error) : std::nullopt;
      if (!catalogue) {
        *env.err << fmt::format(
            "tlab: internal error: {}\n",
            dir ? error
                : fmt::format("no model binaries found (looked in {}); build them with `cmake "
                              "--build build/default` or set TLAB_MODELS_DIR",
                              fmt::join(looked_in, ", ")));
        return kExitInternal;
      }
      Rows rows;
      auto& arr = j["models"] = nlohmann::ordered_json::array();
      for (const ModelTestInfo& t : catalogue->tests) {
        std::vector<std::string> kills;
        for (Mutant m : t.kills) kills.emplace_back(name_of(m));
        rows.push_back({t.model + "." + t.test,
                        kills.empty() ? std::string("-") : fmt::format("{}", fmt::join(kills, ",")),
                        t.description});
        arr.push_back({{"model", t.model},
                       {"test", t.test},
                       {"description", t.description},
                       {"clean_fails", t.clean_fails},
                       {"kills", kills}});
      }
      section("models", rows);
    }
    if (all || what_ == "scenarios") {
      const auto suite = load_builtin_suite(ScenarioLoader(), env);
      if (!suite) return kExitInternal;
      Rows rows;
      auto& arr = j["scenarios"] = nlohmann::ordered_json::array();
      for (const Scenario& s : *suite) {
        std::vector<std::string> catches;
        for (Mutant m : s.catches) catches.emplace_back(name_of(m));
        rows.push_back({s.name, s.source, s.description});
        arr.push_back({{"name", s.name},
                       {"source", s.source},
                       {"description", s.description},
                       {"strategies", s.engine.strategies},
                       {"catches", catches}});
      }
      section("scenarios", rows);
    }
    if (all || what_ == "mutants") {
      Rows rows;
      auto& arr = j["mutants"] = nlohmann::ordered_json::array();
      for (const auto& m : kMutantInfo) {
        rows.push_back(
            {std::string(m.name), std::string(m.component), std::string(m.failure_class)});
        arr.push_back({{"name", m.name},
                       {"component", m.component},
                       {"failure_class", m.failure_class},
                       {"under_sim", m.under_sim}});
      }
      section("mutants", rows);
    }
    if (all || what_ == "faults") {
      Rows rows;
      auto& arr = j["faults"] = nlohmann::ordered_json::array();
      for (const auto& f : kFaultPointInfo) {
        rows.push_back({std::string(f.name), "", std::string(f.description)});
        arr.push_back({{"name", f.name}, {"description", f.description}});
      }
      section("faults", rows);
    }
    if (json_) {
      *env.out << j.dump(2) << "\n";
    } else {
      *env.out << text;
    }
    return kExitOk;
  }

 private:
  std::string what_;
  bool json_ = false;
  std::string subject_;
};

}  // namespace

std::unique_ptr<Command> make_list_command() { return std::make_unique<ListCommand>(); }

}  // namespace tlab::tool
