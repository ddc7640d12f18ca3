// tlab/tool/base/fork_call.cc: see fork_call.h.
#include "base/fork_call.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

#include <fmt/format.h>

#include "base/interrupt.h"

namespace tlab::tool {

bool write_fd(int fd, const std::string& text) {
  std::size_t off = 0;
  while (off < text.size()) {
    const ssize_t n = ::write(fd, text.data() + off, text.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

std::string ForkResult::describe(int limit_ms) const {
  if (failed_to_start) return out;
  if (interrupted) return "interrupted";
  if (timed_out) return fmt::format("no answer within {} s", limit_ms / 1000.0);
  if (signal != 0) return fmt::format("killed by signal {} ({})", signal, strsignal(signal));
  return fmt::format("exited with status {}", exit_code);
}

ForkResult fork_call(const std::function<void(int fd)>& body, int limit_ms) {
  ForkResult r;
  int fds[2];
  if (::pipe(fds) != 0) {
    r.failed_to_start = true;
    r.out = fmt::format("pipe: {}", std::strerror(errno));
    return r;
  }
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    r.failed_to_start = true;
    r.out = fmt::format("fork: {}", std::strerror(errno));
    return r;
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    ::close(fds[0]);
    // Whatever the body's foreign code prints must not mix into tlab's stdout
    // (a --json report): it goes to stderr.
    ::dup2(2, 1);
    body(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(
                            std::chrono::steady_clock::now() - start)
                            .count();
    if (waited >= limit_ms) {
      r.timed_out = true;
      break;
    }
    if (interrupted()) {
      r.interrupted = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    const int rc = ::poll(&p, 1, 50);
    if (rc <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    r.out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  if (r.timed_out || r.interrupted) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  } else if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
  }
  if (r.timed_out || r.interrupted) {
    r.signal = 0;
    r.exit_code = -1;
  }
  return r;
}

}  // namespace tlab::tool
