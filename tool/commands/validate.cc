// tlab/tool/commands/validate.cc: `tlab validate`: checks scenario files (or the
// *.json files of directories) against the schema, the semantic rules and what the
// engines can run (load_runnable: role mixes, token widths, clocks, latency bounds
// on histograms the engine records), or with --subject S what that subject can
// play (scenarios_for_subject, as `run FILE --subject S` decides); runs nothing. Prints "FILE: ok
// (NAME)" per scenario; exit 2 on any error (at most kMaxErrorsPerFile printed a file); Ctrl-C
// stops before the next file, exit 130.
#include <iostream>

#include <CLI/CLI.hpp>

#include "base/interrupt.h"
#include "cli/common.h"
#include "cli/subject_option.h"

namespace tlab::tool {

namespace {

class ValidateCommand final : public Command {
 public:
  void setup(CLI::App& sub) override {
    sub.description(
        "check scenario files against the schema and what the engines (or a --subject) can "
        "run; runs nothing");
    sub.add_option("FILES", files_, "scenario files or directories")->type_name("FILE")->required();
    add_subject_option(sub, subject_);
    add_example(sub, "tlab validate scenarios/ --subject libuv");
  }

  int run(const CliEnv& env) override {
    const ScenarioLoader loader;
    std::optional<SubjectFacts> subject;
    if (!subject_.empty()) {
      subject = resolve_subject(subject_, env);
      if (!subject) return kExitBadInput;
    }
    InputErrors errors;
    std::size_t ok = 0;
    std::size_t done = 0;
    for (const std::string& path : files_) {
      if (interrupted()) break;
      ++done;
      InputErrors mine;
      const std::vector<Scenario> loaded =
          subject ? scenarios_for_subject(loader.load_paths({path}, mine), *subject,
                                          Refusals::kErrors, mine, env)
                  : load_runnable(loader, {path}, mine);
      for (const Scenario& s : loaded) *env.out << s.source << ": ok (" << s.name << ")\n";
      ok += loaded.size();
      errors.insert(errors.end(), mine.begin(), mine.end());
    }
    if (interrupted()) {
      *env.err << "tlab: interrupted; stopped after " << done << " of " << files_.size()
               << " arguments\n";
      return kExitInterrupted;
    }
    if (!errors.empty()) return bad_input(errors, env);
    return ok > 0 ? kExitOk : kExitBadInput;
  }

 private:
  std::vector<std::string> files_;
  std::string subject_;
};

}  // namespace

std::unique_ptr<Command> make_validate_command() { return std::make_unique<ValidateCommand>(); }

}  // namespace tlab::tool
