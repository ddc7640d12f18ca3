// tlab/tool/base/subprocess.cc: see subprocess.h.
#include "base/subprocess.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "base/interrupt.h"

extern char** environ;

namespace tlab::tool {

namespace {

using Clock = std::chrono::steady_clock;

// A running child: its pid (also its process group) and its two capture files.
struct Running {
  std::size_t index = 0;
  pid_t pid = -1;
  std::FILE* out = nullptr;
  std::FILE* err = nullptr;
  Clock::time_point start;
};

std::string slurp(std::FILE* f) {
  std::string text;
  if (f == nullptr) return text;
  std::rewind(f);
  char buf[8192];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  return text;
}

// spawn: starts spec's child in its own process group; fills r on failure.
bool spawn(const ProcessSpec& spec, Running& run, ProcessResult& r) {
  if (spec.argv.empty()) {
    r.start_error = "empty command line";
    return false;
  }
  run.out = std::tmpfile();
  run.err = std::tmpfile();
  if (run.out == nullptr || run.err == nullptr) {
    r.start_error = fmt::format("cannot create a capture file: {}", std::strerror(errno));
    if (run.out) std::fclose(run.out);
    if (run.err) std::fclose(run.err);
    return false;
  }
  posix_spawn_file_actions_t actions;
  posix_spawnattr_t attr;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, ::fileno(run.out), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, ::fileno(run.err), STDERR_FILENO);
  posix_spawnattr_init(&attr);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF);
  posix_spawnattr_setpgroup(&attr, 0);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGINT);
  sigaddset(&defaults, SIGTERM);
  posix_spawnattr_setsigdefault(&attr, &defaults);
  std::vector<char*> argv;
  for (const std::string& a : spec.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  const int rc = ::posix_spawn(&run.pid, argv[0], &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (rc != 0) {
    r.start_error = fmt::format("cannot run {}: {}", spec.argv[0], std::strerror(rc));
    std::fclose(run.out);
    std::fclose(run.err);
    return false;
  }
  run.start = Clock::now();
  r.started = true;
  return true;
}

void kill_group(pid_t pid) {
  // The child leads its own group; kill the group so grandchildren die too.
  if (::kill(-pid, SIGKILL) != 0) ::kill(pid, SIGKILL);
}

}  // namespace

std::vector<ProcessResult> run_processes(
    const std::vector<ProcessSpec>& specs, int jobs,
    const std::function<void(std::size_t index, const ProcessResult&)>& on_done) {
  std::vector<ProcessResult> results(specs.size());
  std::vector<Running> running;
  std::size_t next = 0;
  const std::size_t max_running = static_cast<std::size_t>(jobs < 1 ? 1 : jobs);

  auto finish = [&](Running& run, int status) {
    ProcessResult& r = results[run.index];
    r.seconds = std::chrono::duration<double>(Clock::now() - run.start).count();
    if (WIFEXITED(status)) {
      r.exit_code = WEXITSTATUS(status);
    } else if (WIFSIGNALED(status)) {
      r.signal = WTERMSIG(status);
    }
    r.out = slurp(run.out);
    r.err = slurp(run.err);
    if (on_done) on_done(run.index, r);
  };

  while (next < specs.size() || !running.empty()) {
    const bool stop = interrupted();
    while (!stop && next < specs.size() && running.size() < max_running) {
      Running run;
      run.index = next;
      if (spawn(specs[next], run, results[next])) {
        running.push_back(run);
      } else if (on_done) {
        on_done(next, results[next]);
      }
      ++next;
    }
    if (stop) {
      for (; next < specs.size(); ++next) results[next].interrupted = true;
    }
    for (std::size_t i = 0; i < running.size();) {
      Running& run = running[i];
      ProcessResult& r = results[run.index];
      int status = 0;
      const pid_t got = ::waitpid(run.pid, &status, WNOHANG);
      if (got == run.pid) {
        finish(run, status);
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(i));
        continue;
      }
      const double age = std::chrono::duration<double>(Clock::now() - run.start).count();
      if (stop && !r.interrupted) {
        r.interrupted = true;
        kill_group(run.pid);
      } else if (age > specs[run.index].timeout_s && !r.timed_out) {
        r.timed_out = true;
        kill_group(run.pid);
      }
      ++i;
    }
    if (!running.empty()) std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return results;
}

std::string describe_exit(const ProcessResult& r, const ProcessSpec& spec) {
  if (!r.started) return r.start_error;
  if (r.timed_out) return fmt::format("timed out after {:g} s and was killed", spec.timeout_s);
  if (r.interrupted) return "interrupted";
  if (r.signal != 0)
    return fmt::format("killed by signal {} ({})", r.signal, ::strsignal(r.signal));
  return fmt::format("exit {}", r.exit_code);
}

std::string shell_quote(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& a : argv) {
    if (!line.empty()) line += ' ';
    const bool plain = !a.empty() && a.find_first_not_of(
                                         "abcdefghijklmnopqrstuvwxyz"
                                         "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                         "0123456789_-./=:,+@") == std::string::npos;
    if (plain) {
      line += a;
    } else {
      line += '\'';
      for (char c : a) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
      line += '\'';
    }
  }
  return line;
}

}  // namespace tlab::tool
