// tlab/tool/cli/cli.cc: see cli.h. The dispatcher: no command logic lives here.
#include "cli/cli.h"

#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "base/build_info.h"

namespace tlab::tool {

namespace {

std::string version_string() {
  return fmt::format("tlab {} (git {}, {} build)", kTlabVersion, kGitRevision, kBuildType);
}

std::string command_names() {
  std::string names;
  for (const CommandEntry& c : kCommands) names += (names.empty() ? "" : ", ") + std::string(c.name);
  return names;
}

int dispatch(int argc, const char* const* argv, const CliEnv& env) {
  CLI::App app{"tlab: stress and verification tool for cancelable timers", "tlab"};
  app.set_version_flag("--version", version_string());
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 ok, 1 violation, 2 bad input or usage, 3 internal error, watchdog or "
      "unwritable output, 130 interrupted.");
  std::vector<std::pair<CLI::App*, std::unique_ptr<Command>>> commands;
  for (const CommandEntry& entry : kCommands) {
    std::unique_ptr<Command> command = entry.make();
    CLI::App* sub = app.add_subcommand(std::string(entry.name));
    command->setup(*sub);
    sub->set_version_flag("--version", version_string());
    commands.emplace_back(sub, std::move(command));
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) {  // --help, --version
      app.exit(e, *env.out, *env.err);
      return kExitOk;
    }
    if (app.get_subcommands().empty() && argc > 1) {
      // CLI11 would only say "A subcommand is required"; name what was typed.
      *env.err << "tlab: error: '" << argv[1] << "' is not a tlab command or option (commands: "
               << command_names() << ")";
    } else {
      *env.err << "tlab: error: " << e.what();
    }
    *env.err << "\nRun 'tlab --help' or 'tlab <command> --help'.\n";
    return kExitBadInput;
  }

  for (const auto& [sub, command] : commands) {
    if (sub->parsed()) return command->run(env);
  }
  return kExitInternal;
}

}  // namespace

int run_cli(int argc, const char* const* argv, const CliEnv& env) {
  try {
    return dispatch(argc, argv, env);
  } catch (const std::exception& e) {
    *env.err << "tlab: internal error: " << e.what() << "\n";
    return kExitInternal;
  }
}

}  // namespace tlab::tool
