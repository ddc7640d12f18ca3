// tlab/tool/runner/stress_runner.cc: see stress_runner.h.
#include "runner/stress_runner.h"

#include <fcntl.h>
#include <poll.h>
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
#include <mutex>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "base/interrupt.h"
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

std::string_view name_of(EngineKind k) {
  switch (k) {
    case EngineKind::kService:
      return "timer_service";
    case EngineKind::kExecutor:
      return "executor";
    case EngineKind::kMutex:
      return "timed_mutex";
    case EngineKind::kWaitGroup:
      return "timed_wait_group";
    case EngineKind::kPool:
      return "pool";
    case EngineKind::kCoroutine:
      return "coroutine_loop";
  }
  return "?";
}

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

std::int64_t lost_wakeup_grace_ns(const Scenario& s) {
  std::int64_t worst = 0;
  for (const FaultSpec& f : s.faults) worst = std::max(worst, f.delay_us.hi * 1000);
  return 500'000'000 + worst + 20 * s.engine.tick_us * 1000;
}

void set_rescue_hook(std::function<void(std::size_t)> hook) {
  std::lock_guard lk(g_rescue_mu);
  g_rescue = std::move(hook);
}

std::optional<EngineKind> engine_for(const Scenario& s, std::string& why) {
  std::array<bool, kRoleCount> has{};
  for (const Actor& a : s.actors) has[static_cast<std::size_t>(a.role)] = a.count > 0;
  auto h = [&](Role r) { return has[static_cast<std::size_t>(r)]; };
  auto only = [&](std::initializer_list<Role> allowed) {
    for (std::size_t i = 0; i < kRoleCount; ++i) {
      if (!has[i]) continue;
      if (std::find(allowed.begin(), allowed.end(), static_cast<Role>(i)) == allowed.end()) {
        why = fmt::format("role {} cannot join this engine's roles", kRoleInfo[i].name);
        return false;
      }
    }
    return true;
  };
  std::optional<EngineKind> k;
  if (h(Role::kCoroutineTask)) {
    if (only({Role::kCoroutineTask})) k = EngineKind::kCoroutine;
  } else if (h(Role::kWorkerChurn)) {
    if (only({Role::kWorkerChurn, Role::kScheduler, Role::kCanceller, Role::kThrower}))
      k = EngineKind::kExecutor;
  } else if (h(Role::kMutexContender)) {
    if (only({Role::kMutexContender, Role::kTimerThread})) k = EngineKind::kMutex;
  } else if (h(Role::kWaitGroupMember) || h(Role::kWaitGroupWaiter)) {
    if (only({Role::kWaitGroupMember, Role::kWaitGroupWaiter, Role::kTimerThread}))
      k = EngineKind::kWaitGroup;
  } else if (h(Role::kPoolClient)) {
    if (only({Role::kPoolClient, Role::kTimerThread})) k = EngineKind::kPool;
  } else if (h(Role::kWaiter) || h(Role::kScheduler) || h(Role::kThrower)) {
    if (only({Role::kWaiter, Role::kCanceller, Role::kScheduler, Role::kThrower,
              Role::kTimerThread}))
      k = EngineKind::kService;
  } else {
    why = "no actor does work (add a waiter, scheduler, thrower, contender, ... )";
  }
  if (!k) return std::nullopt;
  if (count_of(s, Role::kTimerThread) > 1) {
    why = "timer_thread count must be 1: the timer service has one thread";
    return std::nullopt;
  }
  if (std::find(kSupportedTokenBits.begin(), kSupportedTokenBits.end(), s.engine.token_bits) ==
      kSupportedTokenBits.end()) {
    why = fmt::format(
        "engine.token_bits {} is not instantiated in this runner (supported: 3, 4, 8, 16, 32)",
        s.engine.token_bits);
    return std::nullopt;
  }
  if (s.engine.clock == ClockKind::kVirtual &&
      (*k != EngineKind::kService || h(Role::kWaiter) || h(Role::kTimerThread))) {
    why =
        "engine.clock virtual needs a timer-service scenario whose actors are only schedulers, "
        "throwers and cancellers (no blocking actor, no timer thread): it runs on one thread";
    return std::nullopt;
  }
  return k;
}

[[noreturn]] void emit_and_exit(CaseContext& ctx, std::optional<Verdict> forced,
                                const std::string& message) {
  if (g_emitted.exchange(true)) {
    // Someone else is emitting; they will _exit for the whole process.
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  // Samples only when nobody can still be writing them (a normal end).
  const bool normal = !forced.has_value();
  nlohmann::json j = ctx.snapshot(forced.value_or(Verdict::kPass), message, normal);
  j["forced"] = forced.has_value();
  write_all(g_result_fd, j.dump());
  ::close(g_result_fd);
  std::fflush(stderr);
  ::_exit(0);
}

namespace {

void monitor_loop(CaseContext& ctx, std::atomic<bool>& done) {
  const std::int64_t budget_ns = static_cast<std::int64_t>(ctx.spec().budget_s * 1e9);
  const std::int64_t grace = lost_wakeup_grace_ns(ctx.scenario());
  std::vector<std::int64_t> rescued_since(ctx.actors().size(), -1);
  while (!done.load(std::memory_order::acquire)) {  // pairs with the driver's release
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (ctx.elapsed_ns() > budget_ns) {
      emit_and_exit(ctx, Verdict::kTimeout,
                    fmt::format("budget of {}s expired after {} operations; actor states:\n{}",
                                ctx.spec().budget_s, ctx.ops_done(), ctx.actor_report()));
    }
    const std::int64_t now = steady_ns();
    for (std::size_t i = 0; i < ctx.actors().size() && i < rescued_since.size(); ++i) {
      ActorState& a = ctx.actors()[i];
      if (a.phase.load(std::memory_order::relaxed) != Phase::kParked) continue;
      const std::int64_t dl = a.deadline_ns.load(std::memory_order::relaxed);
      const std::int64_t since = a.since_ns.load(std::memory_order::relaxed);
      if (dl == 0 || now - dl < grace || rescued_since[i] == since) continue;
      rescued_since[i] = since;
      ctx.violation(
          Oracle::kLostWakeup,
          fmt::format("{}: parked on 0x{:x} since {}; its deadline passed at {} and nobody "
                      "woke it within {} (the watchdog unparked it)",
                      a.name, a.object.load(std::memory_order::relaxed), ctx.at(since), ctx.at(dl),
                      fmt_ns(grace)));
      std::function<void(std::size_t)> hook;
      {
        std::lock_guard lk(g_rescue_mu);
        hook = g_rescue;
      }
      if (hook) hook(i);
    }
  }
}

[[noreturn]] void child_main(const CaseSpec& spec, EngineKind kind, int result_fd, int stderr_fd) {
  g_result_fd = result_fd;
  ::dup2(stderr_fd, 2);
  ::close(stderr_fd);
  const std::int64_t start = steady_ns();
  CaseContext ctx(spec, start);
  stress::configure(spec.mutant, spec.scenario->fault_plans());
  std::atomic<bool> done{false};
  std::thread monitor;
  std::string message;
  std::optional<Verdict> forced;
  try {
    // The monitor starts once the driver has registered its actors (it reads the
    // actor list without a lock): drivers call ctx.actors_ready().
    ctx.on_actors_ready = [&] { monitor = std::thread([&] { monitor_loop(ctx, done); }); };
    switch (kind) {
      case EngineKind::kService:
        run_service_engine(ctx);
        break;
      case EngineKind::kExecutor:
        run_executor_engine(ctx);
        break;
      case EngineKind::kMutex:
        run_mutex_engine(ctx);
        break;
      case EngineKind::kWaitGroup:
        run_wait_group_engine(ctx);
        break;
      case EngineKind::kPool:
        run_pool_engine(ctx);
        break;
      case EngineKind::kCoroutine:
        run_coroutine_engine(ctx);
        break;
    }
    message = fmt::format("engine {}", name_of(kind));
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

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string tail_lines(const std::string& text, std::size_t max_chars) {
  if (text.size() <= max_chars) return text;
  return "..." + text.substr(text.size() - max_chars);
}

void check_bound(CaseResult& r, const std::string& name, const Histogram& h,
                 const LatencyBound& b) {
  const auto check = [&](const std::optional<std::int64_t>& bound_us, double pct,
                         const char* label) {
    if (!bound_us || h.count() == 0) return;
    const std::int64_t v = pct >= 100 ? h.max() : h.percentile(pct);
    if (v > *bound_us * 1000) {
      ViolationRecord& rec = r.violations["latency." + name];
      if (rec.count++ == 0) {
        rec.first_example = fmt::format("{} {} = {} exceeds the bound {} us ({} samples)", name,
                                        label, fmt_ns(v), *bound_us, h.count());
      }
    }
  };
  check(b.p50_max, 50, "p50");
  check(b.p90_max, 90, "p90");
  check(b.p99_max, 99, "p99");
  check(b.p999_max, 99.9, "p99.9");
  check(b.max, 100, "max");
}

Verdict verdict_of(const Scenario& s, CaseResult& r) {
  bool fail = false;
  for (const auto& [key, rec] : r.violations) {
    std::uint64_t bound = 0;
    for (std::size_t i = 0; i < kOracleCount; ++i) {
      if (kOracleNames[i] == key) bound = s.expect.max_violations[i];
    }
    if (key.rfind("at_least.", 0) == 0) {
      fail = true;
      continue;
    }
    if (rec.count > bound) fail = true;
  }
  return fail ? Verdict::kFail : Verdict::kPass;
}

}  // namespace

}  // namespace runner

CaseResult StressRunner::run_case(const CaseSpec& spec, const RunContext& context) {
  using namespace runner;
  CaseResult result;
  const Scenario& s = *spec.scenario;
  std::string why;
  const std::optional<EngineKind> kind = engine_for(s, why);
  if (!kind) {
    result.verdict = Verdict::kError;
    result.message = "scenario not supported by the stress runner: " + why;
    return result;
  }
  int pipefd[2];
  if (::pipe(pipefd) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  char tmpl[] = "/tmp/tlab-case-stderr-XXXXXX";
  const int errfd = ::mkstemp(tmpl);
  if (errfd < 0) {
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    throw std::runtime_error(std::string("mkstemp: ") + std::strerror(errno));
  }
  const std::string err_path = tmpl;
  std::fflush(stdout);
  std::fflush(stderr);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(pipefd[0]);
    ::close(pipefd[1]);
    ::close(errfd);
    ::unlink(err_path.c_str());
    throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    ::close(pipefd[0]);
    child_main(spec, *kind, pipefd[1], errfd);
  }
  ::close(pipefd[1]);
  ::close(errfd);

  std::string payload;
  bool killed_budget = false, killed_interrupt = false;
  // The child's own watchdog fires at the budget; 5 s more covers a child too stuck
  // to report (or a slow TSan start-up) before it is killed.
  const double hard_limit_s = spec.budget_s + 5.0;
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
    if (elapsed > hard_limit_s) {
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
  result.duration_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::string captured = read_file(err_path);
  ::unlink(err_path.c_str());

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
  nlohmann::json j;
  bool parsed = false;
  if (!payload.empty()) {
    j = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
    parsed = !j.is_discarded();
  }
  if (!parsed) {
    // The child died before reporting: a core invariant (TLAB_CHECK abort) or a crash.
    std::string how =
        WIFSIGNALED(status)
            ? fmt::format("killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)))
            : fmt::format("exited with status {}", WEXITSTATUS(status));
    ViolationRecord& rec = result.violations["crash"];
    rec.count = 1;
    rec.first_example = fmt::format("the case's process {} before reporting; its stderr ends: {}",
                                    how, tail_lines(captured, 1500));
    result.verdict = Verdict::kFail;
    result.message = "crash: " + how;
  } else {
    for (const auto& [k, v] : j["violations"].items()) {
      result.violations[k] =
          ViolationRecord{v["count"].get<std::uint64_t>(), v["first_example"].get<std::string>()};
    }
    for (const auto& [k, v] : j["counters"].items()) result.counters[k] = v.get<std::uint64_t>();
    for (const auto& [k, v] : j["samples"].items()) {
      Histogram h;
      for (const auto& x : v) h.record(x.get<std::int64_t>());
      result.latency[k] = std::move(h);
    }
    result.message = j["message"].get<std::string>();
    const Verdict child =
        verdict_from_name(j["verdict"].get<std::string>()).value_or(Verdict::kError);
    if (j["forced"].get<bool>()) result.verdict = child;
  }
  if (auto it = result.latency.find("fire_lateness"); it != result.latency.end()) {
    check_bound(result, "fire_lateness", it->second, s.expect.fire_lateness_us);
  }
  if (auto it = result.latency.find("cancel_to_resume"); it != result.latency.end()) {
    check_bound(result, "cancel_to_resume", it->second, s.expect.cancel_to_resume_us);
  }
  for (std::size_t i = 0; i < kOracleCount; ++i) {
    const std::uint64_t need = s.expect.min_violations[i];
    if (need == 0) continue;
    auto it = result.violations.find(std::string(kOracleNames[i]));
    const std::uint64_t seen = it == result.violations.end() ? 0 : it->second.count;
    if (seen < need) {
      result.violations["at_least." + std::string(kOracleNames[i])] = ViolationRecord{
          1, fmt::format("expect.at_least requires {} {} violation(s); the case saw {}", need,
                         kOracleNames[i], seen)};
    }
  }
  if (!result.sanitizer_reports.empty()) {
    ViolationRecord& rec = result.violations["sanitizer"];
    rec.count = result.sanitizer_reports.size();
    rec.first_example = tail_lines(result.sanitizer_reports.front(), 600);
  }
  if (!parsed) return result;
  if (j["forced"].get<bool>()) {
    if (result.verdict == Verdict::kTimeout && !result.sanitizer_reports.empty()) {
      result.message += "\n(and ThreadSanitizer reported " +
                        std::to_string(result.sanitizer_reports.size()) + " finding(s))";
    }
    return result;
  }
  result.verdict = verdict_of(s, result);
  return result;
}

std::unique_ptr<Runner> make_stress_runner() { return std::make_unique<StressRunner>(); }

}  // namespace tlab::tool
