// tlab/tool/main.cc: the tlab binary. Everything but this file is in tlab_tool.
//
// The stress runner (runner/stress_runner.h) plugs in through the RunnerFactory.
#include <unistd.h>

#include <csignal>
#include <iostream>

#include "base/interrupt.h"
#include "cli/cli.h"
#include "runner/stress_runner.h"

int main(int argc, char** argv) {
  tlab::tool::install_interrupt_handler();
  // Past RLIMIT_FSIZE the kernel sends SIGXFSZ, whose default action kills tlab
  // without a word. Ignored, write() fails with EFBIG instead, and the report
  // writer says which file it could not write (exit 3, temporary removed).
  std::signal(SIGXFSZ, SIG_IGN);
  tlab::tool::CliEnv env;
  env.out = &std::cout;
  env.err = &std::cerr;
  env.make_runner = &tlab::tool::make_stress_runner;
  env.stdout_is_tty = ::isatty(1) == 1;
  env.stderr_is_tty = ::isatty(2) == 1;
  return tlab::tool::run_cli(argc, argv, env);
}
