// tlab/tool/subjects/exec/exec_process.cc: see exec_process.h.
#include "subjects/exec/exec_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <wordexp.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "base/process_groups.h"
#include "base/stall_clock.h"
#include "runner/engine_subject_calls.h"

namespace tlab::tool::exec {

namespace {

// resolve: argv[0] as a path execv can run, or "" with `error`.
std::string resolve(const std::string& cmd, std::string& error) {
  auto runnable = [](const std::string& p) {
    struct stat st{};
    return ::stat(p.c_str(), &st) == 0 && S_ISREG(st.st_mode) && ::access(p.c_str(), X_OK) == 0;
  };
  if (cmd.find('/') != std::string::npos) {
    struct stat st{};
    if (::stat(cmd.c_str(), &st) != 0) {
      error = fmt::format("{}: {}", cmd, std::strerror(errno));
    } else if (!S_ISREG(st.st_mode)) {
      error = fmt::format("{}: not a regular file", cmd);
    } else if (::access(cmd.c_str(), X_OK) != 0) {
      error = fmt::format("{}: not executable (chmod +x, or name its interpreter first: "
                          "exec:python3 {})",
                          cmd, cmd);
    } else {
      return cmd;
    }
    return {};
  }
  const char* path = std::getenv("PATH");
  std::string_view rest = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  for (;;) {
    const std::size_t colon = rest.find(':');
    std::string dir(rest.substr(0, colon));
    if (dir.empty()) dir = ".";
    const std::string p = dir + "/" + cmd;
    if (runnable(p)) return p;
    if (colon == std::string_view::npos) break;
    rest.remove_prefix(colon + 1);
  }
  error = fmt::format("{}: not found in PATH", cmd);
  return {};
}

void close_fd(int& fd) {
  if (fd >= 0) ::close(fd);
  fd = -1;
}

}  // namespace

std::vector<std::string> split_command(const std::string& command, std::string& error) {
  wordexp_t w{};
  const int rc = ::wordexp(command.c_str(), &w, WRDE_NOCMD);
  if (rc != 0) {
    switch (rc) {
      case WRDE_BADCHAR:
        error = "an unquoted |, &, ;, <, >, (, ), { or } (quote it; no shell runs the command)";
        break;
      case WRDE_CMDSUB:
        error = "a command substitution ($(...) or `...`), which tlab does not run";
        break;
      case WRDE_SYNTAX:
        error = "a syntax error (an unbalanced quote?)";
        break;
      default:
        error = "cannot split it into words";
    }
    return {};
  }
  std::vector<std::string> argv(w.we_wordv, w.we_wordv + w.we_wordc);
  ::wordfree(&w);
  if (argv.empty()) error = "no command after exec:";
  return argv;
}

ExecProcess::~ExecProcess() {
  if (pid_ > 0) {
    // Always: a leader that exited (and was reaped) may have left its group behind.
    kill_group();
    groups_remove(pid_);
    std::string how;
    if (!reaped_) wait_exit(5000, how);
  }
  close_fd(in_);
  close_fd(out_);
  close_fd(err_);
}

bool ExecProcess::start(const std::vector<std::string>& argv, std::string& error) {
  if (argv.empty()) {
    error = "no command";
    return false;
  }
  const std::string exe = resolve(argv[0], error);
  if (exe.empty()) return false;
  int to_child[2], from_child[2], status_pipe[2];
  if (::pipe2(to_child, O_CLOEXEC) != 0) {
    error = fmt::format("pipe: {}", std::strerror(errno));
    return false;
  }
  if (::pipe2(from_child, O_CLOEXEC) != 0 || ::pipe2(status_pipe, O_CLOEXEC) != 0) {
    error = fmt::format("pipe: {}", std::strerror(errno));
    ::close(to_child[0]);
    ::close(to_child[1]);
    return false;
  }
  const char* tmpdir = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmpdir != nullptr && tmpdir[0] != '\0' ? tmpdir : "/tmp") +
                     "/tlab-subject-stderr-XXXXXX";
  err_ = ::mkostemp(tmpl.data(), O_CLOEXEC);
  if (err_ < 0) {
    error = fmt::format("mkstemp {}: {}", tmpl, std::strerror(errno));
    for (int fd : {to_child[0], to_child[1], from_child[0], from_child[1], status_pipe[0],
                   status_pipe[1]}) {
      ::close(fd);
    }
    return false;
  }
  ::unlink(tmpl.c_str());
  // Everything the child needs, built before fork: after it, only async-signal-safe calls.
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    error = fmt::format("fork: {}", std::strerror(errno));
    return false;
  }
  if (pid == 0) {
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::signal(SIGPIPE, SIG_DFL);
    ::dup2(to_child[0], 0);
    ::dup2(from_child[1], 1);
    ::dup2(err_, 2);
    // Nothing else of tlab's (a case's result pipe, say) leaks into the subject.
    const int keep = status_pipe[1];
    if (keep > 3) ::close_range(3, static_cast<unsigned>(keep) - 1, 0);
    ::close_range(static_cast<unsigned>(keep) + 1, ~0U, 0);
    ::execv(exe.c_str(), args.data());
    const int e = errno;
    (void)!::write(keep, &e, sizeof e);
    ::_exit(127);
  }
  // Both sides set the group (whoever runs first), so kill_group never misses it.
  ::setpgid(pid, pid);
  pid_ = pid;
  groups_add(pid);  // for a case child that _exits, or is killed, before the destructor
  // Its threads' CPU starvation stretches the case's graces as ours does.
  stall_clock().watch_process(pid);
  ::close(to_child[0]);
  ::close(from_child[1]);
  ::close(status_pipe[1]);
  in_ = to_child[1];
  out_ = from_child[0];
  int e = 0;
  ssize_t n;
  do {
    n = ::read(status_pipe[0], &e, sizeof e);
  } while (n < 0 && errno == EINTR);
  ::close(status_pipe[0]);
  if (n == sizeof e) {
    error = fmt::format("{}: cannot execute: {}", exe, std::strerror(e));
    std::string how;
    wait_exit(5000, how);
    return false;
  }
  return true;
}

ExecProcess::Read ExecProcess::read_line(std::string& line, std::int64_t deadline_ns,
                                         std::size_t max_bytes) {
  std::size_t scanned = 0;
  for (;;) {
    const std::size_t nl = buf_.find('\n', scanned);
    if (nl != std::string::npos) {
      line.assign(buf_, 0, nl);
      buf_.erase(0, nl + 1);
      return Read::kLine;
    }
    scanned = buf_.size();
    if (buf_.size() > max_bytes) return Read::kTooLong;
    if (out_ < 0) {
      if (buf_.empty()) return Read::kEof;
      line = std::move(buf_);
      buf_.clear();
      return Read::kLine;
    }
    const std::int64_t left = deadline_ns - runner::monotonic_ns();
    if (left <= 0) return Read::kTimeout;
    pollfd p{out_, POLLIN, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(std::min<std::int64_t>(left / 1'000'000 + 1, 100)));
    if (rc < 0 && errno != EINTR) return Read::kEof;
    if (rc <= 0) continue;
    char chunk[65536];
    const ssize_t got = ::read(out_, chunk, sizeof chunk);
    if (got < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    if (got <= 0) {
      close_fd(out_);
      continue;
    }
    buf_.append(chunk, static_cast<std::size_t>(got));
  }
}

bool ExecProcess::write_line(const std::string& line) {
  std::size_t done = 0;
  while (done < line.size()) {
    if (in_ < 0) return false;
    const ssize_t n = ::write(in_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

void ExecProcess::close_stdin() { close_fd(in_); }

void ExecProcess::kill_group() {
  if (pid_ > 0 && !reaped_) ::kill(-pid_, SIGKILL);
  // The leader may have left the group's other members behind when it exited.
  if (pid_ > 0) ::kill(-pid_, SIGKILL);
}

bool ExecProcess::wait_exit(int limit_ms, std::string& how) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(limit_ms);
  while (!reaped_) {
    int st = 0;
    const pid_t r = ::waitpid(pid_, &st, WNOHANG);
    if (r == pid_) {
      reaped_ = true;
      status_ = st;
      break;
    }
    if (r < 0 && errno != EINTR) {
      how = fmt::format("waitpid: {}", std::strerror(errno));
      return false;
    }
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  if (WIFEXITED(status_)) {
    how = fmt::format("exit status {}", WEXITSTATUS(status_));
  } else if (WIFSIGNALED(status_)) {
    how = fmt::format("killed by signal {} ({})", WTERMSIG(status_), ::strsignal(WTERMSIG(status_)));
  } else {
    how = fmt::format("wait status 0x{:x}", status_);
  }
  return true;
}

std::uint64_t ExecProcess::stderr_bytes() const {
  struct stat st{};
  return err_ >= 0 && ::fstat(err_, &st) == 0 ? static_cast<std::uint64_t>(st.st_size) : 0;
}

std::string ExecProcess::stderr_tail(std::size_t lines) const {
  const std::uint64_t size = stderr_bytes();
  if (size == 0) return {};
  constexpr std::uint64_t kWindow = 4096;
  const std::uint64_t from = size > kWindow ? size - kWindow : 0;
  std::string text(size - from, '\0');
  const ssize_t n = ::pread(err_, text.data(), text.size(), static_cast<off_t>(from));
  if (n <= 0) return {};
  text.resize(static_cast<std::size_t>(n));
  while (!text.empty() && text.back() == '\n') text.pop_back();
  std::size_t start = text.size();  // the '\n' before the lines kept so far
  for (std::size_t k = 0; k < lines; ++k) {
    const std::size_t nl = start == 0 ? std::string::npos : text.rfind('\n', start - 1);
    if (nl == std::string::npos) return text;
    start = nl;
  }
  return text.substr(start + 1);
}

}  // namespace tlab::tool::exec
