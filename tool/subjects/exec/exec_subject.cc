// tlab/tool/subjects/exec/exec_subject.cc: see exec_subject.h.
#include "subjects/exec/exec_subject.h"

#include <signal.h>

#include <cstdlib>
#include <memory>

#include <fmt/format.h>

#include "runner/engine_subject_calls.h"
#include "subjects/exec/adapters.h"
#include "subjects/exec/exec_session.h"

namespace tlab::tool::exec {

namespace {

// The one exec subject of this process (a case child, or the CLI's probe).
ExecProgram g_program;
std::string g_summary;
std::unique_ptr<ExecProcess> g_first;  // started, hello read: the first create() takes it
tlab_subject g_descriptor{};

std::uint64_t abi_bits_of(PromiseSet p) {
  struct Map {
    Promise p;
    std::uint64_t bit;
  };
  static constexpr Map kMap[] = {
      {Promise::kDelivery, TLAB_PROMISE_DELIVERY},
      {Promise::kExactlyOnce, TLAB_PROMISE_EXACTLY_ONCE},
      {Promise::kNeverEarly, TLAB_PROMISE_NEVER_EARLY},
      {Promise::kAccurateCancel, TLAB_PROMISE_ACCURATE_CANCEL},
      {Promise::kFifoTies, TLAB_PROMISE_FIFO_TIES},
      {Promise::kPendingCount, TLAB_PROMISE_PENDING_COUNT},
      {Promise::kThreadSafe, TLAB_PROMISE_THREAD_SAFE},
  };
  std::uint64_t bits = 0;
  for (const Map& m : kMap) {
    if (p.has(m.p)) bits |= m.bit;
  }
  return bits;
}

ExecSession* session(void* self) { return static_cast<ExecSession*>(self); }

tlab_status create_cb(const tlab_subject_config* config, void** self) {
  auto s = std::make_unique<ExecSession>(g_program, *config, std::move(g_first));
  const tlab_status st = s->start();
  *self = s.release();
  return st;
}
void destroy_cb(void* self) { delete session(self); }
tlab_status schedule_cb(void* self, std::int64_t, std::int64_t delay_ns, std::uint64_t cookie,
                        std::uint64_t* handle) {
  return session(self)->schedule(delay_ns, cookie, false, handle);
}
tlab_status schedule_failing_cb(void* self, std::int64_t, std::int64_t delay_ns,
                                std::uint64_t cookie, std::uint64_t* handle) {
  return session(self)->schedule(delay_ns, cookie, true, handle);
}
tlab_status schedule_periodic_cb(void* self, std::int64_t, std::int64_t delay_ns,
                                std::int64_t period_ns, std::uint32_t kind, std::uint64_t cookie,
                                std::uint64_t* handle) {
  return session(self)->schedule_periodic(delay_ns, period_ns, kind, cookie, handle);
}
tlab_status cancel_cb(void* self, std::uint64_t handle, std::int32_t* result) {
  return session(self)->cancel(handle, result);
}
tlab_status schedule_scripted_cb(void* self, std::int64_t delay_ns, std::uint64_t cookie,
                                 const std::vector<runner::ScriptAction>& then,
                                 std::uint64_t* handle) {
  return session(self)->schedule_scripted(delay_ns, cookie, then, handle);
}
void bind_script_host_cb(void* self, runner::ScriptHost* host) {
  session(self)->bind_script_host(host);
}
bool excused_cb(void* self, std::uint64_t cookie, std::int64_t grace_ns) {
  return session(self)->excused_after_failure(cookie, grace_ns);
}

// command_of: what follows "exec:", split into argv; a single word that names a
// shipped adapter (adapters.h) is that adapter's command line. False with `error`.
bool command_of(const std::string& spec, std::vector<std::string>& argv, std::string& error) {
  std::string why;
  argv = split_command(spec.substr(kExecPrefix.size()), why);
  if (argv.size() == 1 && argv[0].find('/') == std::string::npos) {
    if (const ExecAdapter* a = find_adapter(argv[0])) argv = adapter_argv(*a, why);
  }
  if (argv.empty()) error = fmt::format("--subject {}: {}", spec, why);
  return !argv.empty();
}

// start_and_hello: a started process whose hello was read, or nullptr with `error`
// ("--subject exec:...: timeout: no hello within 20 s ...").
std::unique_ptr<ExecProcess> start_and_hello(const std::string& spec,
                                             const std::vector<std::string>& argv, Hello& hello,
                                             std::string& error) {
  auto proc = std::make_unique<ExecProcess>();
  std::string why, key;
  if (!proc->start(argv, why)) {
    error = fmt::format("--subject {}: cannot start: {}", spec, why);
    return nullptr;
  }
  if (!read_hello(*proc, hello, key, why)) {
    error = fmt::format("--subject {}: {}: {}", spec, key, why);
    return nullptr;
  }
  return proc;
}

// SigpipeIgnored: SIGPIPE ignored while it lives (a probe writing to a subject
// that already died must get EPIPE, not kill the CLI), then restored.
class SigpipeIgnored {
 public:
  SigpipeIgnored() {
    struct sigaction ign{};
    ign.sa_handler = SIG_IGN;
    ::sigaction(SIGPIPE, &ign, &old_);
  }
  ~SigpipeIgnored() { ::sigaction(SIGPIPE, &old_, nullptr); }
  SigpipeIgnored(const SigpipeIgnored&) = delete;
  SigpipeIgnored& operator=(const SigpipeIgnored&) = delete;

 private:
  struct sigaction old_{};
};

}  // namespace

bool is_exec_spec(std::string_view spec) { return spec.substr(0, kExecPrefix.size()) == kExecPrefix; }

std::optional<SubjectFacts> probe_exec_subject(const std::string& spec, std::string& error) {
  if (hello_limit_s() == 0) {
    error = fmt::format("--subject {}: TLAB_HELLO_TIMEOUT_S={} is not a number of seconds from "
                        "0.1 to 600",
                        spec, std::getenv("TLAB_HELLO_TIMEOUT_S"));
    return std::nullopt;
  }
  std::vector<std::string> argv;
  if (!command_of(spec, argv, error)) return std::nullopt;
  const SigpipeIgnored guard;
  Hello hello;
  std::unique_ptr<ExecProcess> proc = start_and_hello(spec, argv, hello, error);
  if (proc == nullptr) return std::nullopt;
  // The shutdown handshake, with nothing scheduled: an empty pending list, exit 0.
  std::string line, how, why;
  (void)proc->write_line(shutdown_line());
  const ExecProcess::Read r =
      proc->read_line(line, runner::monotonic_ns() + std::int64_t{kShutdownLimitMs} * 1'000'000,
                      kMaxLineBytes);
  const std::optional<Message> m =
      r == ExecProcess::Read::kLine ? read_message(line, 2, why) : std::nullopt;
  if (r != ExecProcess::Read::kLine) {
    error = fmt::format("--subject {}: protocol_error: no `pending` answer to shutdown within {} s "
                        "({})",
                        spec, kShutdownLimitMs / 1000,
                        r == ExecProcess::Read::kEof ? "it closed its stdout" : "it said nothing");
    return std::nullopt;
  }
  if (!m) {
    error = fmt::format("--subject {}: protocol_error: {}", spec, why);
    return std::nullopt;
  }
  if (m->type != MessageType::kPending || !m->ids.empty()) {
    error = fmt::format("--subject {}: protocol_error: line 2 {}: the answer to shutdown with "
                        "nothing scheduled is {{\"type\":\"pending\",\"ids\":[]}}",
                        spec, quote_line(line));
    return std::nullopt;
  }
  if (!proc->wait_exit(kShutdownLimitMs, how) || how != "exit status 0") {
    error = fmt::format("--subject {}: protocol_error: after pending it must exit with status 0; "
                        "it {}",
                        spec, proc->exited() ? "ended with " + how
                                             : fmt::format("was still running {} s later",
                                                           kShutdownLimitMs / 1000));
    return std::nullopt;
  }
  SubjectFacts f;
  f.spec = spec;
  f.name = hello.name;
  f.summary = hello.summary.empty()
                  ? fmt::format("{} {} over the exec protocol", hello.name, hello.version)
                  : hello.summary;
  f.kind = TLAB_KIND_FACILITY;
  f.drive = TLAB_DRIVE_SELF;
  f.clock = TLAB_CLOCK_MONOTONIC;
  f.promise_bits = abi_bits_of(hello.promises);
  f.promises = hello.promises;
  f.max_delay_ns = hello.max_delay_ns;
  f.command = spec.substr(kExecPrefix.size());
  f.version = hello.version;
  f.can_fail = hello.can_fail;
  f.periodic = hello.periodic;
  return f;
}

const tlab_subject* open_exec_subject(const std::string& spec, std::string& error) {
  // For good in a case child: a subject that died must not kill the case (EPIPE).
  ::signal(SIGPIPE, SIG_IGN);
  g_program.spec = spec;
  if (!command_of(spec, g_program.argv, error)) return nullptr;
  g_first = start_and_hello(spec, g_program.argv, g_program.hello, error);
  if (g_first == nullptr) return nullptr;
  const Hello& h = g_program.hello;
  g_summary = h.summary.empty() ? fmt::format("{} {} over the exec protocol", h.name, h.version)
                                : h.summary;
  tlab_subject& d = g_descriptor;
  d.abi_version = TLAB_SUBJECT_ABI_VERSION;
  d.struct_size = sizeof(tlab_subject);
  d.name = h.name.c_str();
  d.summary = g_summary.c_str();
  d.kind = TLAB_KIND_FACILITY;
  d.drive = TLAB_DRIVE_SELF;
  d.clock = TLAB_CLOCK_MONOTONIC;
  d.promises = abi_bits_of(h.promises);
  d.max_delay_ns = h.max_delay_ns;
  d.create = &create_cb;
  d.destroy = &destroy_cb;
  d.schedule = &schedule_cb;
  d.cancel = &cancel_cb;
  d.periodic = h.periodic;
  if (h.periodic != 0) d.schedule_periodic = &schedule_periodic_cb;
  return &d;
}

runner::SubjectExtras extras_of(const SubjectFacts& f) {
  runner::SubjectExtras x;
  if (f.command.empty()) return x;
  if (f.can_fail) x.schedule_failing = &schedule_failing_cb;
  x.contains_errors = f.promises.has(Promise::kContainsErrors);
  x.excused_after_failure = &excused_cb;
  return x;
}

runner::SubjectExtras bind_exec_case(runner::CaseContext& ctx) {
  g_program.ctx = &ctx;
  g_program.pipe_st = &ctx.add_actor("pipe#0");
  g_program.pipe_log = &ctx.log_of(*g_program.pipe_st);
  g_program.pipe_st->set(runner::Phase::kWorking);
  runner::SubjectExtras x;
  if (g_program.hello.can_fail) x.schedule_failing = &schedule_failing_cb;
  x.contains_errors = g_program.hello.promises.has(Promise::kContainsErrors);
  x.excused_after_failure = &excused_cb;
  if (g_program.hello.scripts) {
    x.schedule_scripted = &schedule_scripted_cb;
    x.bind_script_host = &bind_script_host_cb;
  }
  return x;
}

}  // namespace tlab::tool::exec
