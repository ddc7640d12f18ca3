// tlab/tool/runner/stress_runner.cc: see stress_runner.h.
#include "runner/stress_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "base/interrupt.h"
#include "base/process_groups.h"
#include "base/stall_clock.h"
#include "oracles/oracles.h"
#include "runner/case_context.h"
#include "runner/engines.h"
#include "tlab/platform/stress_control.h"

namespace tlab::tool {

std::vector<std::string> extract_tsan_reports(const std::string& text) {
  std::vector<std::string> out;
  static constexpr std::string_view kStart = "WARNING: ThreadSanitizer:";
  static constexpr std::string_view kFence = "==================";
  std::size_t pos = 0;
  while ((pos = text.find(kStart, pos)) != std::string::npos) {
    std::size_t end = text.find(kFence, pos);
    if (end == std::string::npos) end = text.size();
    std::string block = text.substr(pos, end - pos);
    while (!block.empty() && (block.back() == '\n' || block.back() == ' ')) block.pop_back();
    out.push_back(std::move(block));
    pos = end;
  }
  return out;
}

namespace runner {

namespace {

int g_result_fd = -1;  // the child's end of the result pipe
std::atomic<bool> g_emitted{false};
std::mutex g_rescue_mu;
std::function<void(std::size_t)> g_rescue;  // guarded by g_rescue_mu

void write_all(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    const ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    off += static_cast<std::size_t>(n);
  }
}

}  // namespace

int count_of(const Scenario& s, Role r) {
  int n = 0;
  for (const Actor& a : s.actors) {
    if (a.role == r) n += a.count;
  }
  return n;
}

const Actor* first_actor(const Scenario& s, Role r) {
  for (const Actor& a : s.actors) {
    if (a.role == r) return &a;
  }
  return nullptr;
}

QueueConfig queue_config_of(const Scenario& s) {
  QueueConfig q;
  q.tick = Duration::microseconds(s.engine.tick_us);
  return q;
}

namespace {

// worst_fault_delay_ns: the longest delay the scenario's fault plan can inject.
std::int64_t worst_fault_delay_ns(const Scenario& s) {
  std::int64_t worst = 0;
  for (const FaultSpec& f : s.faults) worst = std::max(worst, f.delay_us.hi * 1000);
  return worst;
}

}  // namespace

std::int64_t lost_wakeup_grace_ns(const Scenario& s) {
  return 500'000'000 + worst_fault_delay_ns(s) + 20 * s.engine.tick_us * 1000;
}

std::int64_t undeserved_timeout_grace_ns(const CaseContext& ctx) {
  if (!ctx.spec().sim) return lost_wakeup_grace_ns(ctx.scenario());
  return kUndeservedTimeoutGraceSimNs + worst_fault_delay_ns(ctx.scenario());
}

void set_rescue_hook(std::function<void(std::size_t)> hook) {
  std::lock_guard lk(g_rescue_mu);
  g_rescue = std::move(hook);
}

[[noreturn]] void emit_and_exit(CaseContext& ctx, std::optional<Verdict> forced,
                                const std::string& message) {
  if (g_emitted.exchange(true)) {
    // Someone else is emitting; they will _exit for the whole process.
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  // Samples only when nobody can still be writing them (a normal end).
  const bool normal = !forced.has_value();
  nlohmann::ordered_json j =
      ctx.snapshot(forced.value_or(Verdict::kPass), message, normal).to_json();
  j["forced"] = forced.has_value();
  write_all(g_result_fd, j.dump());
  ::close(g_result_fd);
  std::fflush(stderr);
  groups_kill_owned(::getpid());  // an exec subject's group, if the case did not end it
  ::_exit(0);
}

namespace {

void monitor_loop(CaseContext& ctx, std::atomic<bool>& done) {
  const std::int64_t budget_ns = static_cast<std::int64_t>(ctx.spec().budget_s * 1e9);
  const std::int64_t grace = lost_wakeup_grace_ns(ctx.scenario());
  std::vector<std::int64_t> rescued_since(ctx.actors().size(), -1);
  while (!done.load(std::memory_order::acquire)) {  // pairs with the driver's release
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const std::int64_t now = steady_ns();
    // The budget is a watchdog, never a pass limit: it is counted on the stall
    // clock, so a case starved of CPU on a loaded machine is not cut short, while a
    // case whose threads all sleep (a hang) still ends on time.
    if (stall_clock().effective_ns(ctx.start_ns(), now) > budget_ns) {
      emit_and_exit(ctx, Verdict::kTimeout,
                    fmt::format("budget of {}s expired ({} of wall time) after {} operations; "
                                "actor states:\n{}",
                                ctx.spec().budget_s, fmt_ns(now - ctx.start_ns()), ctx.ops_done(),
                                ctx.actor_report()));
    }
    for (std::size_t i = 0; i < ctx.actors().size() && i < rescued_since.size(); ++i) {
      ActorState& a = ctx.actors()[i];
      if (a.phase.load(std::memory_order::relaxed) != Phase::kParked) continue;
      const std::int64_t dl = a.deadline_ns.load(std::memory_order::relaxed);
      const std::int64_t since = a.since_ns.load(std::memory_order::relaxed);
      // The grace is counted on the stall clock: time the case's threads were
      // runnable but had no CPU is not time anyone failed to wake it.
      if (dl == 0 || stall_clock().overdue_ns(dl, now) < grace || rescued_since[i] == since) {
        continue;
      }
      rescued_since[i] = since;
      ctx.violation(
          Oracle::kLostWakeup,
          fmt::format("{}: parked on 0x{:x} since {}; its deadline passed at {} and nobody "
                      "woke it within {} of time the case's threads could run ({} of wall time; "
                      "the watchdog unparked it)",
                      a.name, a.object.load(std::memory_order::relaxed), ctx.at(since), ctx.at(dl),
                      fmt_ns(grace), fmt_ns(now - dl)));
      std::function<void(std::size_t)> hook;
      {
        std::lock_guard lk(g_rescue_mu);
        hook = g_rescue;
      }
      if (hook) hook(i);
    }
  }
}

[[noreturn]] void child_main(const CaseSpec& spec, int result_fd, int stderr_fd) {
  g_result_fd = result_fd;
  ::dup2(stderr_fd, 2);
  // A subject's own prints (a plugin's printf) land beside TSan's, never in
  // tlab's stdout (a --json report).
  ::dup2(stderr_fd, 1);
  ::close(stderr_fd);
  const std::int64_t start = steady_ns();
  CaseContext ctx(spec, start);
  // The budget and every real-time grace of the case are counted on it
  // (stall_clock.h); a simulated case hands off between real threads too, so its
  // budget needs it as well.
  stall_clock().start();
  stress::configure(spec.mutant, spec.scenario->fault_plans());
  std::atomic<bool> done{false};
  std::thread monitor;
  std::string message;
  std::optional<Verdict> forced;
  try {
    // The monitor starts once the driver has registered its actors (it reads the
    // actor list without a lock): drivers call ctx.actors_ready().
    ctx.on_actors_ready = [&] { monitor = std::thread([&] { monitor_loop(ctx, done); }); };
    spec.target.drive(ctx);
    message = fmt::format("engine {}", spec.target.engine);
  } catch (const std::exception& e) {
    forced = Verdict::kError;
    message = fmt::format("driver threw: {}", e.what());
  }
  done.store(true, std::memory_order::release);  // pairs with monitor_loop's acquire
  if (monitor.joinable()) monitor.join();
  stress::reset();
  if (forced) emit_and_exit(ctx, forced, message);
  emit_and_exit(ctx, std::nullopt, message);
}

// read_all: everything written to `fd` (shared offset with the child's dup, so
// rewind first).
std::string read_all(int fd) {
  std::string out;
  if (::lseek(fd, 0, SEEK_SET) < 0) return out;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  return out;
}

std::string tail_lines(const std::string& text, std::size_t max_chars) {
  if (text.size() <= max_chars) return text;
  return "..." + text.substr(text.size() - max_chars);
}

}  // namespace

}  // namespace runner

CaseResult StressRunner::run_case(const CaseSpec& spec, const RunContext& context) {
  using namespace runner;
  CaseResult result;
  const Scenario& s = *spec.scenario;
  // The driver, the names and the promises judged were resolved when the case was
  // planned (case_target.h); a refused target never forks.
  const CaseTarget& target = spec.target;
  if (!target.runnable()) {
    result.verdict = Verdict::kError;
    result.message = !target.refusal.empty()
                         ? target.refusal
                         : "the case has no target: it was not planned by plan_case (plan/plan.h)";
    return result;
  }
  int pipefd[2];
  if (::pipe(pipefd) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  // The child's stderr goes to a temporary file in $TMPDIR, unlinked at once: it
  // lives only as long as the descriptor, so nothing leaks if tlab is killed.
  const char* tmpdir = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmpdir != nullptr && tmpdir[0] != '\0' ? tmpdir : "/tmp") +
                     "/tlab-case-stderr-XXXXXX";
  const int errfd = ::mkstemp(tmpl.data());
  if (errfd < 0) {
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    throw std::runtime_error("mkstemp " + tmpl + ": " + std::strerror(errno));
  }
  ::unlink(tmpl.c_str());
  std::fflush(stdout);
  std::fflush(stderr);
  const auto start = std::chrono::steady_clock::now();
  const pid_t parent = ::getpid();
  groups_init();  // before the fork: the child records its subjects' groups there
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    ::close(errfd);
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    // The case dies with tlab: a killed parent must not leave it running to its
    // budget. The getppid() check closes the race with a parent that died first.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(1);
    ::close(pipefd[0]);
    child_main(spec, pipefd[1], errfd);
  }
  ::close(pipefd[1]);

  std::string payload;
  bool killed_budget = false, killed_interrupt = false;
  // The child's own watchdog fires at the budget; 5 s more covers a child too stuck
  // to report (or a slow TSan start-up) before it is killed. Both are counted on a
  // stall clock that watches the child's threads (stall_clock.h): the child's
  // watchdog extends its budget by the CPU starvation it saw, and so must this.
  const double hard_limit_s = spec.budget_s + 5.0;
  const auto stall = std::make_unique<StallClock>();  // 1 MiB of history: not on the stack
  stall->watch_process(pid);
  stall->start();
  const std::int64_t start_ns = steady_ns();
  char buf[65536];
  for (;;) {
    pollfd p{pipefd[0], POLLIN, 0};
    const int rc = ::poll(&p, 1, 50);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (rc > 0) {
      const ssize_t n = ::read(pipefd[0], buf, sizeof buf);
      if (n > 0) {
        payload.append(buf, static_cast<std::size_t>(n));
        continue;
      }
      if (n == 0) break;
      if (errno != EINTR) break;
    }
    if (interrupted()) {
      killed_interrupt = true;
      ::kill(pid, SIGKILL);
      break;
    }
    if (static_cast<double>(stall->effective_ns(start_ns, steady_ns())) > hard_limit_s * 1e9) {
      killed_budget = true;
      ::kill(pid, SIGKILL);
      break;
    }
    if (context.progress) context.progress(fmt::format("{:.1f}s", elapsed));
  }
  ::close(pipefd[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // A child killed here (or one that died) ran no cleanup: end the process groups
  // it started (exec subjects and whatever they forked).
  groups_kill_owned(pid);
  result.duration_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string captured = read_all(errfd);
  ::close(errfd);

  result.sanitizer_reports = extract_tsan_reports(captured);
  if (killed_interrupt) {
    result.verdict = Verdict::kInterrupted;
    result.message = "interrupted (Ctrl-C): the case's process was stopped";
    return result;
  }
  if (killed_budget) {
    result.verdict = Verdict::kTimeout;
    result.message =
        fmt::format("the case did not report {:.1f}s after its budget and was killed; stderr: {}",
                    hard_limit_s - spec.budget_s, tail_lines(captured, 2000));
    return result;
  }
  std::optional<CaseResult> reported;
  bool forced = false;
  if (!payload.empty()) {
    const nlohmann::json j = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
    if (!j.is_discarded()) {
      try {
        reported = CaseResult::from_json(j);
        forced = j.at("forced").get<bool>();
      } catch (const std::exception&) {
        reported.reset();
      }
    }
  }
  const std::vector<std::string> sanitizer = std::move(result.sanitizer_reports);
  const double duration = result.duration_s;
  if (reported) {
    result = std::move(*reported);
    result.sanitizer_reports = sanitizer;
    result.duration_s = duration;
  } else {
    // The child died before reporting: a core invariant (TLAB_CHECK abort) or a crash.
    std::string how =
        WIFSIGNALED(status)
            ? fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)))
            : fmt::format("exited with status {}", WEXITSTATUS(status));
    ViolationRecord& rec = result.violations[std::string(name_of(Oracle::kCrash))];
    rec.count = 1;
    rec.first_example = fmt::format("the case's process {} before reporting; its stderr ends: {}",
                                    how, tail_lines(captured, 1500));
    result.verdict = Verdict::kFail;
    result.message = "crash: " + how;
  }
  result.subject = target.subject;
  judge(s.expect, target.promises, result, forced || !reported);
  if (forced && result.verdict == Verdict::kTimeout && !result.sanitizer_reports.empty()) {
    result.message += "\n(and ThreadSanitizer reported " +
                      std::to_string(result.sanitizer_reports.size()) + " finding(s))";
  }
  return result;
}

std::unique_ptr<Runner> make_stress_runner() { return std::make_unique<StressRunner>(); }

}  // namespace tlab::tool
