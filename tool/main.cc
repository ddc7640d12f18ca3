// tlab/tool/main.cc: the tlab binary. Everything but this file is in tlab_tool.
//
// The stress runner (runner/stress_runner.h) plugs in through the RunnerFactory.
#include <unistd.h>

#include <iostream>

#include "cli/cli.h"
#include "base/interrupt.h"
#include "runner/stress_runner.h"

int main(int argc, char** argv) {
  tlab::tool::install_interrupt_handler();
  tlab::tool::CliEnv env;
  env.out = &std::cout;
  env.err = &std::cerr;
  env.make_runner = &tlab::tool::make_stress_runner;
  env.stdout_is_tty = ::isatty(1) == 1;
  env.stderr_is_tty = ::isatty(2) == 1;
  return tlab::tool::run_cli(argc, argv, env);
}
