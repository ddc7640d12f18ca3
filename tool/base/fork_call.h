// tlab/tool/base/fork_call.h: running a function of this program in a forked
// child with a time limit, and getting back what it wrote.
//
// For code tlab must not run in its own process: a user's plugin (probing its
// descriptor, subjects/plugin.h; measuring it, compare; its property run,
// layers/subject_property.h). The child dies with tlab (PR_SET_PDEATHSIG); what
// `body` writes to its fd comes back in ForkResult::out whatever happens to it
// afterwards (its stdout goes to tlab's stderr, so a chatty plugin cannot mix
// into a --json report), so a body can write progress markers before each risky step and the
// parent can tell where a crash or hang happened.
//
//   | the child ...              | ForkResult                              |
//   |----------------------------|-----------------------------------------|
//   | returns from body          | exited, exit_code 0                     |
//   | crashes                    | signal (SIGSEGV, SIGABRT, ...)          |
//   | runs past limit_ms         | timed_out (SIGKILLed)                   |
//   | is running at a Ctrl-C     | interrupted (SIGKILLed; interrupt.h)    |
//
// Cost: one fork and one pipe. Ground rules: the calling process must be
// single-threaded when it forks (the CLI is); call from the CLI thread.
#pragma once

#include <functional>
#include <string>

namespace tlab::tool {

struct ForkResult {
  std::string out;        // everything body wrote to its fd
  int exit_code = -1;     // -1 when killed
  int signal = 0;         // the terminating signal, 0 if it exited
  bool timed_out = false;
  bool interrupted = false;
  bool failed_to_start = false;  // pipe or fork failed (error in `out`)

  bool exited_cleanly() const { return exit_code == 0 && signal == 0 && !timed_out; }
  // ForkResult::describe: "killed by signal 11 (Segmentation fault)", "no answer
  // within 10 s", "exited with status 3", "interrupted".
  std::string describe(int limit_ms) const;
};

// fork_call: runs body(fd) in a child, which then _exits(0); waits for it at most
// limit_ms milliseconds.
ForkResult fork_call(const std::function<void(int fd)>& body, int limit_ms);

// write_fd: writes all of `text` to fd (retrying on EINTR); false on error.
bool write_fd(int fd, const std::string& text);

}  // namespace tlab::tool
