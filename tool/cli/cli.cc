// tlab/tool/cli/cli.cc: see cli.h. The dispatcher: no command logic lives here.
#include "cli/cli.h"

#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include "base/build_info.h"
#include "base/suggest.h"

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

// option_names: every long and short flag `sub` accepts, spelled as typed ("--report", "-j").
std::vector<std::string> option_names(const CLI::App& sub) {
  std::vector<std::string> names{"--help"};
  for (const CLI::Option* opt : sub.get_options()) {
    for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

// unexpected_arguments: CLI11 would only say "The following arguments were not
// expected"; name each one, with the nearest flag of that command when it is a typo.
// Extras are collected (allow_extras) rather than thrown so that the command is known.
std::string unexpected_arguments(const CLI::App& sub) {
  const std::vector<std::string> extras = sub.remaining();
  const std::vector<std::string> names = option_names(sub);
  std::string out;
  for (const std::string& arg : extras) {
    const std::string flag = arg.substr(0, arg.find('='));
    out += fmt::format("tlab {}: error: unexpected argument '{}'{}\n", sub.get_name(), arg,
                       flag.starts_with("-") ? did_you_mean(flag, names) : std::string());
  }
  return out;
}

int dispatch(int argc, const char* const* argv, const CliEnv& env) {
  CLI::App app{"tlab: stress and verification tool for cancelable timers", "tlab"};
  app.set_version_flag("--version", version_string());
  app.require_subcommand(1);
  app.footer(
      "Exit codes: 0 ok, 1 violation, 2 bad input or usage, 3 internal error, watchdog or "
      "unwritable output, 4 replay not reproduced, 130 interrupted.");
  std::vector<std::pair<CLI::App*, std::unique_ptr<Command>>> commands;
  for (const CommandEntry& entry : kCommands) {
    std::unique_ptr<Command> command = entry.make();
    CLI::App* sub = app.add_subcommand(std::string(entry.name));
    command->setup(*sub);
    sub->allow_extras();  // reported below, with a did-you-mean, never ignored
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
      std::vector<std::string> names;
      for (const CommandEntry& c : kCommands) names.emplace_back(c.name);
      *env.err << "tlab: error: '" << argv[1] << "' is not a tlab command or option"
               << did_you_mean(argv[1], names) << " (commands: " << command_names() << ")";
    } else {
      *env.err << "tlab: error: " << e.what();
    }
    *env.err << "\nRun 'tlab --help' or 'tlab <command> --help'.\n";
    return kExitBadInput;
  }

  for (const auto& [sub, command] : commands) {
    if (!sub->parsed()) continue;
    if (!sub->remaining().empty()) {
      *env.err << unexpected_arguments(*sub) << "Run 'tlab " << sub->get_name() << " --help'.\n";
      return kExitBadInput;
    }
    return command->run(env);
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
