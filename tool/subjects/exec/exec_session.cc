// tlab/tool/subjects/exec/exec_session.cc: see exec_session.h.
#include "subjects/exec/exec_session.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <optional>

#include <fmt/format.h>

#include "oracles/oracles.h"
#include "runner/engine_subject_calls.h"

namespace tlab::tool::exec {

using runner::monotonic_ns;

namespace {

// How long a request may wait before the case notes it (once): a slow subject
// is then named even if the budget, not tlab, ends the case.
constexpr std::int64_t kSlowAnswerNs = 1'000'000'000;

}  // namespace

ExecSession::ExecSession(const ExecProgram& program, const tlab_subject_config& config,
                         std::unique_ptr<ExecProcess> started)
    : program_(program), config_(config), proc_(std::move(started)), ledger_(ledger_options()) {}

TimerLedger::Options ExecSession::ledger_options() {
  TimerLedger::Options o;
  // What only the subject's own timestamps and list can show; no settled timers
  // are kept (a late fire or cancel is the driver's ledger's to judge).
  o.rules = LedgerRules::none().with(LedgerRule::kEarly).with(LedgerRule::kPendingList);
  o.order = LedgerOrder::kOverlapping;
  o.ring = 0;
  o.format = &format_;
  o.sink = [this](Oracle oracle, const std::string& sentence) {
    program_.ctx->violation(oracle, sentence);
  };
  o.lateness = [this](std::int64_t late) { sample(runner::Latency::kSubjectLateness, late); };
  return o;
}

std::string ExecSession::Format::at(const LedgerInstant& i) const {
  const std::int64_t o = origin();
  return o == INT64_MIN ? fmt::format("its t_ns {}", i.t) : "its t=" + fmt_ns(i.t - o);
}
void ExecSession::Format::saw(std::int64_t t_ns) {
  if (origin() == INT64_MIN) origin_.store(t_ns, std::memory_order::relaxed);
}
std::string ExecSession::Format::timer(std::uint64_t id) const { return fmt::format("id {}", id); }

ExecSession::~ExecSession() { shutdown(); }

std::string ExecSession::at(std::int64_t mono_ns) const { return program_.ctx->at(mono_ns); }

std::string ExecSession::stderr_note() const {
  const std::string tail = proc_->stderr_tail(6);
  return tail.empty() ? std::string(" (nothing on stderr)")
                      : fmt::format("; the last lines of its stderr:\n{}", tail);
}

void ExecSession::sample(runner::Latency l, std::int64_t ns) {
  std::lock_guard lk(stats_mu_);
  program_.pipe_log->sample(l, ns);
}

bool ExecSession::excused_after_failure(std::uint64_t id, std::int64_t grace_ns) {
  std::lock_guard lk(mu_);
  if (fail_fired_ == 0) return false;
  const std::optional<LedgerView> t = ledger_.view(id);
  if (!t) return true;  // refused (its schedule was answered `error`)
  return t->deadline > runner::sat_add(fail_fired_t_ns_, -grace_ns);
}

std::string ExecSession::ended() {
  std::lock_guard lk(mu_);
  return ended_;
}

void ExecSession::end(Oracle o, const std::string& sentence) {
  {
    std::lock_guard lk(mu_);
    if (!ended_.empty()) return;
    ended_ = fmt::format("{}: {}", name_of(o), sentence.substr(0, sentence.find('\n')));
  }
  program_.ctx->violation(o, sentence);
  program_.ctx->stop();
  proc_->kill_group();
  cv_.notify_all();
}

double hello_limit_s() {
  const char* v = std::getenv("TLAB_HELLO_TIMEOUT_S");
  if (v == nullptr || *v == '\0') return kDefaultHelloLimitS;
  char* end = nullptr;
  const double s = std::strtod(v, &end);
  return *end == '\0' && s >= 0.1 && s <= 600 ? s : 0;
}

bool read_hello(ExecProcess& proc, Hello& hello, std::string& key, std::string& why) {
  std::string line;
  const double limit = hello_limit_s() > 0 ? hello_limit_s() : kDefaultHelloLimitS;
  const std::int64_t deadline = monotonic_ns() + static_cast<std::int64_t>(limit * 1e9);
  const ExecProcess::Read r = proc.read_line(line, deadline, kMaxLineBytes);
  const std::string tail = proc.stderr_tail(6);
  const std::string err = tail.empty() ? " (nothing on stderr)"
                                       : fmt::format("; the last lines of its stderr:\n{}", tail);
  key = "protocol_error";
  if (r == ExecProcess::Read::kTimeout) {
    key = "timeout";
    why = fmt::format("no hello within {} s (TLAB_HELLO_TIMEOUT_S){}", limit, err);
    return false;
  }
  if (r == ExecProcess::Read::kEof) {
    std::string how = "still running";
    proc.wait_exit(1000, how);
    key = "crash";
    why = fmt::format("the process closed its stdout before its hello ({}){}", how, err);
    return false;
  }
  if (r == ExecProcess::Read::kTooLong) {
    why = fmt::format("line 1: longer than {} bytes", kMaxLineBytes);
    return false;
  }
  const std::optional<Message> m = read_message(line, 1, why);
  if (!m) return false;
  if (m->type != MessageType::kHello) {
    why = fmt::format("line 1 {}: the first line must be a hello, not {}", quote_line(line),
                      name_of(m->type));
    return false;
  }
  hello = hello_of(*m);
  return true;
}

tlab_status ExecSession::start() {
  if (proc_ == nullptr) {
    proc_ = std::make_unique<ExecProcess>();
    std::string error;
    if (!proc_->start(program_.argv, error)) {
      end(Oracle::kCrash, fmt::format("{} could not be started: {}", program_.spec, error));
      return TLAB_OK;  // the case ends with the finding; every call answers TLAB_ENOMEM
    }
    Hello h;
    std::string key, why;
    if (!read_hello(*proc_, h, key, why)) {
      end(key == "crash" ? Oracle::kCrash : Oracle::kProtocolError, why);
      return TLAB_OK;
    }
    const Hello& first = program_.hello;
    if (h.name != first.name || h.promise_names != first.promise_names ||
        h.can_fail != first.can_fail || h.max_delay_ns != first.max_delay_ns) {
      end(Oracle::kProtocolError,
          fmt::format("line 1: this hello (name {}, promises [{}]) differs from the first one "
                      "(name {}, promises [{}]): a subject must say the same hello every time",
                      h.name, h.promises.names(), first.name, first.promises.names()));
      return TLAB_OK;
    }
  }
  lines_in_ = 1;
  reader_ = std::thread([this] { reader_loop(); });
  return TLAB_OK;
}

bool ExecSession::request(Kind kind, std::uint64_t id, std::string line, Waiter& w) {
  w.kind = kind;
  // Filled before mu_ publishes the waiter to the reader (the pipe orders the
  // answer after the write, but that order is not one the memory model sees).
  w.line = line;
  w.line.pop_back();  // the "\n"
  {
    std::lock_guard wl(write_mu_);
    {
      std::lock_guard lk(mu_);
      if (!ended_.empty() || pending_seen_) return false;
      w.line_no = ++lines_out_;
      w.sent_ns = monotonic_ns();
      waiting_[id].push_back(&w);
      max_in_flight_ = std::max(max_in_flight_, ++in_flight_);
      if (kind == Kind::kSchedule) max_id_ = std::max(max_id_, id);
    }
    // A broken pipe means the process is gone: the reader sees its stdout close
    // and ends the case with what it can tell (the exit status, stderr).
    (void)proc_->write_line(line);
  }
  program_.pipe_st->set(runner::Phase::kWaiting, id);
  std::unique_lock lk(mu_);
  bool noted = false;
  while (!w.answered && ended_.empty()) {
    cv_.wait_for(lk, std::chrono::milliseconds(200));
    if (!noted && !w.answered && monotonic_ns() - w.sent_ns > kSlowAnswerNs) {
      noted = true;
      program_.ctx->note(fmt::format("no answer after {} to line {} `{}` (sent at {})",
                                     fmt_ns(kSlowAnswerNs), w.line_no, w.line, at(w.sent_ns)));
    }
  }
  if (!w.answered) {
    auto it = waiting_.find(id);
    if (it != waiting_.end()) {
      std::erase(it->second, &w);
      if (it->second.empty()) waiting_.erase(it);
    }
    --in_flight_;
    return false;
  }
  lk.unlock();
  program_.pipe_st->set(runner::Phase::kWorking);
  return true;
}

tlab_status ExecSession::schedule(std::int64_t delay_ns, std::uint64_t id, bool fail,
                                  std::uint64_t* handle) {
  Waiter w;
  w.delay_ns = delay_ns;
  w.fail = fail;
  if (!request(Kind::kSchedule, id, schedule_line(id, delay_ns, fail), w)) return TLAB_ENOMEM;
  if (w.answer == MessageType::kError) return TLAB_EINVAL;
  *handle = id;
  return TLAB_OK;
}

tlab_status ExecSession::schedule_periodic(std::int64_t delay_ns, std::int64_t period_ns,
                                           std::uint32_t kind, std::uint64_t id,
                                           std::uint64_t* handle) {
  Waiter w;
  w.delay_ns = delay_ns;
  w.period_ns = period_ns;
  w.periodic = kind;
  if (!request(Kind::kSchedule, id, schedule_periodic_line(id, delay_ns, period_ns, kind), w)) {
    return TLAB_ENOMEM;
  }
  if (w.answer == MessageType::kError) return TLAB_EINVAL;
  *handle = id;
  return TLAB_OK;
}

tlab_status ExecSession::cancel(std::uint64_t id, std::int32_t* result) {
  Waiter w;
  if (!request(Kind::kCancel, id, cancel_line(id), w)) return TLAB_ENOMEM;
  if (w.answer == MessageType::kError) return TLAB_EINVAL;
  *result = abi_result_of(w.result);
  return TLAB_OK;
}

// ---- the reader -----------------------------------------------------------------

void ExecSession::reader_loop() {
  std::string line;
  for (;;) {
    const ExecProcess::Read r = proc_->read_line(line, monotonic_ns() + 100'000'000, kMaxLineBytes);
    if (r == ExecProcess::Read::kTimeout) {
      if (reader_stop_.load(std::memory_order::acquire)) return;  // pairs with shutdown()
      // A leader that exited while something it forked still holds its stdout
      // never closes it: its exit is the end all the same.
      bool gone = false;
      {
        std::lock_guard pl(proc_mu_);
        std::string how;
        gone = proc_->wait_exit(0, how);
      }
      if (gone) {
        on_eof();
        return;
      }
      continue;
    }
    if (r == ExecProcess::Read::kEof) {
      on_eof();
      return;
    }
    ++lines_in_;
    if (r == ExecProcess::Read::kTooLong) {
      end(Oracle::kProtocolError,
          fmt::format("line {}: longer than {} bytes", lines_in_, kMaxLineBytes));
      return;
    }
    std::string why;
    const std::optional<Message> m = read_message(line, lines_in_, why);
    if (!m) {
      end(Oracle::kProtocolError, why);
      return;
    }
    if (!dispatch(*m, line)) return;
  }
}

bool ExecSession::dispatch(const Message& m, const std::string& line) {
  const std::string where = fmt::format("line {} {}", lines_in_, quote_line(line));
  switch (m.type) {
    case MessageType::kHello:
      end(Oracle::kProtocolError, where + ": a second hello (it comes once, first)");
      return false;
    case MessageType::kScheduled:
    case MessageType::kCancelled:
    case MessageType::kError:
      return m.by != 0 ? on_script_answer(m, where) : answer(m, where);
    case MessageType::kFired:
      return on_fired(m, where);
    case MessageType::kPending:
      return on_pending(m, where);
  }
  return false;
}

bool ExecSession::answer(const Message& m, const std::string& where) {
  std::unique_lock lk(mu_);
  if (pending_seen_) {
    lk.unlock();
    end(Oracle::kProtocolError, where + ": a line after `pending` (the subject must stop there)");
    return false;
  }
  auto it = waiting_.find(m.id);
  if (it == waiting_.end() || it->second.empty()) {
    lk.unlock();
    end(Oracle::kProtocolError,
        fmt::format("{}: {} for id {}, but no request for id {} awaits an answer (an id tlab "
                    "never sent, or a second answer)",
                    where, name_of(m.type), m.id, m.id));
    return false;
  }
  Waiter& w = *it->second.front();
  const bool fits = m.type == MessageType::kError ||
                    (m.type == MessageType::kScheduled) == (w.kind == Kind::kSchedule);
  if (!fits) {
    lk.unlock();
    end(Oracle::kProtocolError,
        fmt::format("{}: {} answers line {} `{}`, which is a {}", where, name_of(m.type), w.line_no,
                    w.line, w.kind == Kind::kSchedule ? "schedule" : "cancel"));
    return false;
  }
  it->second.pop_front();
  if (it->second.empty()) waiting_.erase(it);
  --in_flight_;
  const std::int64_t now = monotonic_ns();
  w.answered = true;
  w.answer = m.type;
  w.result = m.result;
  w.error = m.text;
  if (m.type == MessageType::kScheduled) {
    format_.saw(m.t_ns);
    LedgerSchedule ls;
    ls.at = LedgerInstant{m.t_ns, 0};
    ls.delay = w.delay_ns;
    ls.mark = w.fail ? kFailMark : std::uint8_t{0};
    ls.period = w.period_ns;
    ls.periodic = w.periodic;
    ledger_.schedule(m.id, ls);
    ledger_.armed(m.id, m.id);
    if (!w.then.empty()) expect_script(m.id, std::move(w.then));
  } else if (m.type == MessageType::kCancelled) {
    LedgerCancel c;
    c.cookie = c.handle = m.id;
    ledger_.cancelled(c, abi_result_of(m.result));
  } else if (w.kind == Kind::kSchedule && fail_fired_ != 0) {
    program_.ctx->violation(
        Oracle::kTaskExceptions,
        fmt::format("{}: schedule id {} was refused after the failing callback of id {} ran at "
                    "{}: \"{}\" (the failure broke the timer for everyone)",
                    where, m.id, fail_fired_, at(fail_fired_at_), m.text));
  }
  const std::int64_t sent = w.sent_ns;
  lk.unlock();
  cv_.notify_all();
  sample(runner::Latency::kPipeRoundTrip, now - sent);
  return true;
}

bool ExecSession::on_fired(const Message& m, const std::string& where) {
  std::unique_lock lk(mu_);
  if (pending_seen_) {
    lk.unlock();
    end(Oracle::kProtocolError,
        fmt::format("{}: fired after `pending` (after shutdown nothing may fire)", where));
    return false;
  }
  if (m.id > max_id_) {
    lk.unlock();
    end(Oracle::kProtocolError,
        fmt::format("{}: fired id {}, which tlab never scheduled", where, m.id));
    return false;
  }
  // early_fire by the subject's own clock, and its lateness (subject_lateness).
  format_.saw(m.t_ns);
  const LedgerFired f = ledger_.fired(
      m.id, LedgerInstant{m.t_ns, 0},
      fmt::format("{}: by the subject's own clock (t=0 at its first answer, t_ns {}), ", where,
                  format_.origin()));
  // A periodic run's callback has begun and, for this ledger, ended: the
  // session cannot see it return (overlapping runs are the driver's to judge).
  if (f.periodic) ledger_.run_ended(m.id, LedgerInstant{m.t_ns, 0});
  if (!f.periodic) {
    // Its callback performs its script now: the answers follow, `by` this id
    // (also for a fire that is a finding: after prevented, the script still runs).
    if (auto sc = scripted_.find(m.id); sc != scripted_.end()) {
      performed_.insert(m.id);
      reporting_[m.id] = std::deque<runner::ScriptAction>(
          std::make_move_iterator(sc->second.begin()), std::make_move_iterator(sc->second.end()));
      scripted_.erase(sc);
    }
  }
  if (f.first) {
    if ((f.mark & kFailMark) != 0 && fail_fired_ == 0) {
      fail_fired_ = m.id;
      fail_fired_at_ = monotonic_ns();
      fail_fired_t_ns_ = m.t_ns;
    }
    lk.unlock();
  } else {
    auto w = waiting_.find(m.id);
    const bool unanswered =
        (w != waiting_.end() && !w->second.empty() && w->second.front()->kind == Kind::kSchedule) ||
        unarmed_.contains(m.id);
    lk.unlock();
    if (unanswered) {
      end(Oracle::kProtocolError,
          fmt::format("{}: fired id {} before answering its schedule (`scheduled` comes first)",
                      where, m.id));
      return false;
    }
    // A second fire, a fire after `prevented` or after an `error`: the driver
    // judges these (double_resume, fired_after_cancel, wrong_result).
  }
  config_.fired(config_.host, m.id);
  return true;
}

bool ExecSession::on_pending(const Message& m, const std::string& where) {
  std::unique_lock lk(mu_);
  if (!shutdown_sent_ || pending_seen_) {
    lk.unlock();
    end(Oracle::kProtocolError,
        fmt::format("{}: pending {}", where,
                    shutdown_sent_ ? "a second time" : "before tlab sent shutdown"));
    return false;
  }
  pending_seen_ = true;
  if (!reporting_.empty()) {
    const std::uint64_t by = reporting_.begin()->first;
    const std::string next = action_sentence(reporting_.begin()->second.front());
    lk.unlock();
    end(Oracle::kProtocolError,
        fmt::format("{}: pending, but the callback of id {} never answered its script's {} (a "
                    "callback performs its script before it returns)",
                    where, by, next));
    return false;
  }
  // conservation: the list must name exactly the timers still armed (one whose
  // cancel said unknown may be left out).
  ledger_.pending_list(m.ids, where + ": ");
  lk.unlock();
  cv_.notify_all();
  return true;
}

void ExecSession::on_eof() {
  std::unique_lock lk(mu_);
  if (pending_seen_ || !ended_.empty()) return;  // the normal end, or already ended
  const bool after_shutdown = shutdown_sent_;
  const std::uint64_t fail = fail_fired_;
  const std::int64_t fail_at = fail_fired_at_;
  lk.unlock();
  std::string how = "still running";
  {
    std::lock_guard pl(proc_mu_);
    proc_->wait_exit(1000, how);
  }
  if (after_shutdown) {
    end(Oracle::kProtocolError,
        fmt::format("the process closed its stdout after shutdown without answering pending "
                    "({}){}",
                    how, stderr_note()));
  } else if (fail != 0) {
    end(Oracle::kTaskExceptions,
        fmt::format("the process ended ({}) after the failing callback of id {} ran at {}: a "
                    "failing callback took the subject down with every timer it held{}",
                    how, fail, at(fail_at), stderr_note()));
  } else {
    end(Oracle::kCrash,
        fmt::format("the process closed its stdout before shutdown ({}){}", how, stderr_note()));
  }
}

void ExecSession::shutdown() {
  if (stopped_) return;
  stopped_ = true;
  bool send = false;
  {
    std::lock_guard wl(write_mu_);
    {
      std::lock_guard lk(mu_);
      send = ended_.empty() && reader_.joinable();
      shutdown_sent_ = send;
    }
    if (send) (void)proc_->write_line(shutdown_line());
  }
  if (send) {
    std::unique_lock lk(mu_);
    const bool got = cv_.wait_for(lk, std::chrono::milliseconds(kShutdownLimitMs),
                                  [&] { return pending_seen_ || !ended_.empty(); });
    lk.unlock();
    if (!got) {
      end(Oracle::kProtocolError, fmt::format("no `pending` within {} s of shutdown{}",
                                              kShutdownLimitMs / 1000, stderr_note()));
    }
  }
  std::string how;
  bool exited = false;
  if (send && ended().empty()) {
    std::lock_guard pl(proc_mu_);
    exited = proc_->wait_exit(kShutdownLimitMs, how);
  }
  proc_->kill_group();
  reader_stop_.store(true, std::memory_order::release);  // pairs with reader_loop
  if (reader_.joinable()) reader_.join();
  if (send && ended().empty()) {
    if (!exited) {
      end(Oracle::kProtocolError, fmt::format("the process did not exit within {} s of answering "
                                              "pending (it was killed)",
                                              kShutdownLimitMs / 1000));
    } else if (how != "exit status 0") {
      end(Oracle::kProtocolError,
          fmt::format("the process ended with {} after pending (the protocol "
                      "asks for exit status 0){}",
                      how, stderr_note()));
    }
  }
  std::lock_guard pl(proc_mu_);
  proc_->wait_exit(kShutdownLimitMs, how);
  {
    std::lock_guard lk(mu_);
    // How many requests were ever in flight at once: 1 unless the subject promised
    // thread_safe and tlab's senders pipelined.
    program_.ctx->set_counter("max_in_flight", max_in_flight_);
  }
  // stderr is the subject's to use (logs, a runtime's report of a failing
  // callback) and never judged; the report says how much there was, and its last
  // line, so a reader knows where to look.
  if (const std::uint64_t bytes = proc_->stderr_bytes(); bytes > 0) {
    program_.ctx->add("subject_stderr_bytes", bytes);
    program_.ctx->note(fmt::format("the subject wrote {} bytes to stderr, ending: {}", bytes,
                                   proc_->stderr_tail(1)));
  }
}

}  // namespace tlab::tool::exec
