// tlab/tool/base/subprocess.h: running helper executables (model binaries, the
// property-test binary, a TSan build of tlab) with a deadline, several at once.
//
// `tlab model` and `tlab mutants` drive other programs rather than linking them:
// a Relacy model replaces the global operator new and is one process per run by
// design (models/model_runner.h), a GoogleTest binary owns its own main(), and a
// TSan build cannot share a process with a plain one. Each child gets its
// stdout and stderr captured in anonymous temporary files (no pipes, so a chatty
// child can never block on a full pipe while we wait for another), stdin from
// /dev/null, and runs in its own process group, so a deadline or Ctrl-C kills
// the child and everything it started.
//
//   | event                  | what run_processes does                         |
//   | child exits            | result.exit_code, its output, wall seconds      |
//   | child killed by signal | result.signal (and exit_code -1)                |
//   | deadline passes        | SIGKILL to the group; timed_out = true          |
//   | interrupted() (Ctrl-C) | SIGKILL to every running group; the rest are    |
//   |                        | not started (interrupted = true on all of them) |
//   | exec fails             | started = false, start_error names the reason   |
//
// Cost: one posix_spawn per spec; the wait loop polls every 2 ms (the children run
// for milliseconds to minutes, so polling costs nothing measurable and keeps the
// code free of SIGCHLD handlers).
//
// Ground rules: call from the CLI thread only (it reaps any child of this process
// that it spawned, by pid; it never calls wait(-1)). Results come back in spec
// order; `on_done` is called on the same thread, in completion order.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

namespace tlab::tool {

struct ProcessSpec {
  std::vector<std::string> argv;  // argv[0] is the executable's path
  double timeout_s = 300;         // wall-clock deadline of this child
};

struct ProcessResult {
  bool started = false;
  std::string start_error;  // why it did not start (missing file, exec error)
  int exit_code = -1;       // -1 when killed by a signal or not started
  int signal = 0;           // the terminating signal, 0 if it exited
  bool timed_out = false;
  bool interrupted = false;
  double seconds = 0;  // wall time from spawn to reap
  std::string out;     // everything the child wrote to stdout
  std::string err;     // everything the child wrote to stderr
};

// run_processes: runs every spec, at most `jobs` at a time (jobs >= 1).
// Ensures: every child started has been reaped when it returns.
std::vector<ProcessResult> run_processes(
    const std::vector<ProcessSpec>& specs, int jobs,
    const std::function<void(std::size_t index, const ProcessResult&)>& on_done = {});

// describe_exit: "exit 1", "killed by SIGSEGV", "timed out after 300 s", ...
std::string describe_exit(const ProcessResult& r, const ProcessSpec& spec);

// shell_quote: argv as one line a user can paste into a shell.
std::string shell_quote(const std::vector<std::string>& argv);

}  // namespace tlab::tool
