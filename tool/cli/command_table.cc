// tlab/tool/cli/command_table.cc: the catalogue of tlab commands (command.h).
// One line per command; each make_*_command() is defined in tool/commands/<name>.cc.
#include <array>

#include "cli/command.h"

namespace tlab::tool {

std::unique_ptr<Command> make_run_command();
std::unique_ptr<Command> make_check_command();
std::unique_ptr<Command> make_model_command();
std::unique_ptr<Command> make_mutants_command();
std::unique_ptr<Command> make_list_command();
std::unique_ptr<Command> make_validate_command();
std::unique_ptr<Command> make_replay_command();
std::unique_ptr<Command> make_compare_command();
std::unique_ptr<Command> make_merge_command();

namespace {

constexpr std::array kTable{
    CommandEntry{"run", &make_run_command},
    CommandEntry{"check", &make_check_command},
    CommandEntry{"model", &make_model_command},
    CommandEntry{"mutants", &make_mutants_command},
    CommandEntry{"list", &make_list_command},
    CommandEntry{"validate", &make_validate_command},
    CommandEntry{"replay", &make_replay_command},
    CommandEntry{"compare", &make_compare_command},
    CommandEntry{"merge", &make_merge_command},
};

}  // namespace

const std::span<const CommandEntry> kCommands{kTable};

}  // namespace tlab::tool
