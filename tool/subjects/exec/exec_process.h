// tlab/tool/subjects/exec/exec_process.h: one subject process of `--subject
// exec:CMD [ARGS...]` (docs/protocol.md): started in its own process group with
// its stdin and stdout as pipes to tlab and its stderr in an anonymous file, read
// line by line with a deadline, and killed as a group.
//
//   | call             | what                                                      |
//   |------------------|-----------------------------------------------------------|
//   | split_command    | "java Foo.java" -> argv, as a POSIX shell splits words    |
//   |                  | (wordexp(3) with command substitution refused)           |
//   | ExecProcess::start| fork + exec; the child is a group leader, dies with its  |
//   |                  | parent (PR_SET_PDEATHSIG), and gets SIGPIPE back          |
//   | read_line        | the next stdout line; kLine, kEof, kTimeout or kTooLong   |
//   | write_line       | all of a line to stdin; false once the pipe is broken     |
//   | kill_group       | SIGKILL to the whole group (everything the subject began) |
//   | wait_exit        | reaps the leader within a limit; "exit status 1", ...     |
//   | stderr_tail      | the last lines the process wrote to stderr                |
//
// The caller ignores SIGPIPE while it writes (exec_subject.cc: the case child for
// good, the CLI's probe while it lasts), so that a subject that died makes
// write_line return false, not kill tlab; the subject gets the default back.
//
// The group is recorded in base/process_groups.h while the process lives, so a
// case child that _exits at its budget (or is killed) still has it killed.
//
// Cost: one fork per process; read_line is one poll(2) + read(2) per 64 KiB.
// Ground rules: read_line from one thread at a time (the session's reader);
// write_line from any thread, serialised by the caller; start and wait_exit from
// the owning thread. The destructor kills the group and reaps the leader.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tlab::tool::exec {

// split_command: argv of `command`, or an empty vector with `error` set (an
// unbalanced quote, a command substitution, nothing at all).
std::vector<std::string> split_command(const std::string& command, std::string& error);

class ExecProcess {
 public:
  ExecProcess() = default;
  ~ExecProcess();
  ExecProcess(const ExecProcess&) = delete;
  ExecProcess& operator=(const ExecProcess&) = delete;

  // ExecProcess::start: runs argv (argv[0] looked up in PATH when it has no '/').
  // False with `error` when it cannot: not found, not executable, fork failed.
  bool start(const std::vector<std::string>& argv, std::string& error);

  enum class Read : std::uint8_t { kLine, kEof, kTimeout, kTooLong };
  // ExecProcess::read_line: the next line (without "\n") into `line`, waiting
  // until `deadline_ns` on CLOCK_MONOTONIC at most. kEof: stdout closed (an
  // unterminated last line is returned first as a line).
  Read read_line(std::string& line, std::int64_t deadline_ns, std::size_t max_bytes);
  // ExecProcess::write_line: writes all of `line`; false when stdin is closed.
  bool write_line(const std::string& line);
  void close_stdin();

  void kill_group();
  // ExecProcess::wait_exit: reaps the leader, waiting up to `limit_ms`; true
  // with `how` ("exit status 0", "killed by signal 9 (Killed)") once it has.
  bool wait_exit(int limit_ms, std::string& how);
  bool exited() const { return reaped_; }
  int exit_status() const { return status_; }  // the raw wait status once exited()

  // ExecProcess::stderr_tail: up to `lines` last lines of its stderr so far.
  std::string stderr_tail(std::size_t lines) const;
  std::uint64_t stderr_bytes() const;
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int in_ = -1;   // the subject's stdin (we write)
  int out_ = -1;  // the subject's stdout (we read)
  int err_ = -1;  // an unlinked file: the subject's stderr
  bool reaped_ = false;
  int status_ = 0;
  std::string buf_;  // read but not yet returned
};

}  // namespace tlab::tool::exec
