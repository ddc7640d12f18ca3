// tlab/tool/subjects/exec/exec_session.h (scripts: exec_session_scripts.cc): one
// instance of an exec subject: the
// subject process of a case, spoken to over docs/protocol.md and offered to the
// generic driver as a subject ABI instance (TLAB_KIND_FACILITY, TLAB_DRIVE_SELF,
// TLAB_CLOCK_MONOTONIC; exec_subject.h makes the descriptor).
//
//   | ABI call       | what the session does                                          |
//   |----------------|----------------------------------------------------------------|
//   | create         | starts the process (exec_process.h), reads its hello (it must  |
//   |                | equal the probe's), starts the reader thread                  |
//   | schedule       | writes `schedule {id = cookie}`, waits for `scheduled` (handle |
//   |                | = id) or `error` (TLAB_EINVAL: nothing was armed)             |
//   | schedule_      | the same with `period_ns` and `periodic` (a hello that lists   |
//   |  periodic      | the kind); each run's `fired` is one fired() under the id      |
//   | (extras)       | schedule_scripted: the same with `then` (a hello with the      |
//   |                | feature "scripts"); each action's answer (`by` the id whose    |
//   |                | callback performed it) goes to the bound ScriptHost, in order  |
//   | cancel         | writes `cancel {id}`, waits for `cancelled` (its result) or    |
//   |                | `error` (TLAB_EINVAL: no claim)                                |
//   | fired()        | the reader thread calls config->fired(host, id) for each       |
//   |                | `fired` line, in stdout order                                 |
//   | destroy        | writes `shutdown`, waits 20 s for `pending` and the exit, kills|
//   |                | the group, joins the reader                                   |
//
// What the session judges itself (into the case's CaseContext); the two per-timer
// rules are its own TimerLedger's (oracles/timer_ledger.h: early and pending_list
// only, on the subject's clock), while the driver's ledger judges everything else
// on tlab's clock, so no finding is reported twice:
//   | finding          | when                                                          |
//   |------------------|---------------------------------------------------------------|
//   | protocol_error   | a line read_message refuses; a second hello; an answer no    |
//   |                  | request awaits; `fired` for an id never scheduled or before   |
//   |                  | its `scheduled`; `pending` without `shutdown`; any line after |
//   |                  | `pending`; no `pending` within 20 s of `shutdown`             |
//   | crash            | stdout closes (the process exits) before `shutdown`           |
//   | task_exceptions  | after a `fail` timer fired: the process exits, or a schedule  |
//   |                  | is answered `error` (the failing callback broke the subject)  |
//   | early_fire       | fired.t_ns < scheduled.t_ns + delay_ns, by the subject's own |
//   |                  | clock (the pipe cannot hide it)                               |
//   | conservation     | the `pending` list names a timer that fired or was prevented, |
//   |                  | or omits one still armed (a cancel that said unknown excuses) |
// A protocol_error, crash or a death after a failing callback ends the case: the
// session stops the case (CaseContext::stop), kills the group, and answers every
// waiting and later call with TLAB_ENOMEM (nothing armed, no claim); ended()
// then says why, and the driver skips its end-of-case checks (what a dead subject
// did not deliver is not a lost_timer finding; the death itself is the finding).
//
// Time: subject_lateness is fired.t_ns - (scheduled.t_ns + delay_ns), from the
// subject's own timestamps; pipe_round_trip is a request written to its answer
// read, on CLOCK_MONOTONIC (both as Latency histograms of the actor "pipe#0").
//
// Memory: the ledger's record per live timer (scheduled, neither fired nor
// prevented: its subject timestamp, delay and whether its callback fails; no ring
// of settled ones); per request in flight one waiter. O(live), not O(ops).
//
// Ground rules: schedule/cancel from any thread (the driver serialises them unless
// the hello promised thread_safe: then requests are pipelined); the reader thread
// is the only one reading stdout, and the only one feeding the ledger (answers and
// fires); writes are serialised by write_mu_; state by mu_, which is taken before
// the ledger's mutex. config->fired is called without holding either.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "oracles/oracles.h"
#include "oracles/timer_ledger.h"
#include "runner/case_context.h"
#include "subjects/exec/exec_process.h"
#include "subjects/exec/exec_protocol.h"
#include "tlab/subject.h"

namespace tlab::tool::exec {

// What every session of this process shares: the command, the probe's hello,
// and where findings go (bound once per case child: exec_subject.h).
struct ExecProgram {
  std::string spec;               // "exec:..." as given
  std::vector<std::string> argv;  // split_command of it
  Hello hello;                    // what the probe read
  runner::CaseContext* ctx = nullptr;
  runner::ActorState* pipe_st = nullptr;  // "pipe#0"
  runner::ActorLog* pipe_log = nullptr;   // its histograms; guarded by the session's stats_mu_
};

// How long a subject may take to say hello (a JVM compiling a source file on a
// loaded machine takes seconds): kDefaultHelloLimitS, or the environment's
// TLAB_HELLO_TIMEOUT_S, a number of seconds from 0.1 to 600 (hello_limit_s
// returns 0 for anything else, and the probe refuses it: exit 2 naming the
// variable). And how long it may take to answer `shutdown` with `pending` and exit:
// as long, since a runtime's exit (a JVM's shutdown hooks) on a loaded machine is
// no faster than its start; only a subject that never stops waits it out.
inline constexpr double kDefaultHelloLimitS = 20;
double hello_limit_s();
inline constexpr int kShutdownLimitMs = 20'000;

// read_hello: the first line of `proc`, which must be a hello, within
// kHelloLimitMs. On false, `key` is "timeout", "crash" or "protocol_error" and
// `why` a sentence (with the tail of its stderr where that helps).
bool read_hello(ExecProcess& proc, Hello& hello, std::string& key, std::string& why);

class ExecSession {
 public:
  // `started`: a process already started whose hello was read (the probe of the
  // case child keeps it for the first instance); nullptr: start() starts one.
  ExecSession(const ExecProgram& program, const tlab_subject_config& config,
              std::unique_ptr<ExecProcess> started);
  ~ExecSession();
  ExecSession(const ExecSession&) = delete;
  ExecSession& operator=(const ExecSession&) = delete;

  tlab_status start();
  tlab_status schedule(std::int64_t delay_ns, std::uint64_t id, bool fail, std::uint64_t* handle);
  // schedule_periodic: a series of `kind` (one TLAB_PERIODIC_* bit of the hello's).
  tlab_status schedule_periodic(std::int64_t delay_ns, std::int64_t period_ns, std::uint32_t kind,
                                std::uint64_t id, std::uint64_t* handle);
  tlab_status cancel(std::uint64_t id, std::int32_t* result);
  // schedule_scripted: a one-shot whose callback performs `then` (SubjectExtras).
  tlab_status schedule_scripted(std::int64_t delay_ns, std::uint64_t id,
                                const std::vector<runner::ScriptAction>& then,
                                std::uint64_t* handle);
  // bind_script_host: where the answers of scripts go (before the first schedule).
  void bind_script_host(runner::ScriptHost* host);
  void shutdown();  // destroy(): idempotent
  // ended: why the session ended the case early ("" while it has not).
  std::string ended();
  // excused_after_failure: a failing callback has fired, and `id` is a timer the
  // session holds whose deadline on the subject's clock had not passed by more
  // than `grace_ns` when that callback fired, or one refused (SubjectExtras).
  bool excused_after_failure(std::uint64_t id, std::int64_t grace_ns);

 private:
  enum class Kind : std::uint8_t { kSchedule, kCancel };
  struct Waiter {
    Kind kind = Kind::kSchedule;
    std::string line;           // what was sent, for sentences
    std::uint64_t line_no = 0;  // its number on the subject's stdin
    std::int64_t sent_ns = 0;
    std::int64_t delay_ns = 0;  // a schedule's delay and fail flag, for the ledger
    bool fail = false;
    std::int64_t period_ns = 0;  // a periodic schedule's period and kind (0: one-shot)
    std::uint32_t periodic = 0;
    std::vector<runner::ScriptAction> then;  // a scripted schedule's actions
    bool answered = false;
    MessageType answer = MessageType::kError;
    CancelResult result = CancelResult::kUnknown;
    std::string error;
  };
  // Format: the ledger's sentences in the protocol's terms: a timer by its id,
  // an instant by the subject's own clock from the first t_ns it reported in the
  // case (origin(), which the sentence's lead names), not as a raw reading.
  class Format : public LedgerFormat {
   public:
    std::string at(const LedgerInstant& i) const override;  // "its t=1.957ms"
    std::string timer(std::uint64_t id) const override;     // "id 5"
    // saw: a t_ns the subject reported; the first becomes the origin. The reader
    // thread only (so are the ledger's calls of at()); relaxed atomics.
    void saw(std::int64_t t_ns);
    std::int64_t origin() const { return origin_.load(std::memory_order::relaxed); }

   private:
    std::atomic<std::int64_t> origin_{INT64_MIN};
  };
  // The ledger mark of a timer whose callback fails (a `fail` schedule).
  static constexpr std::uint8_t kFailMark = 1;

  // request: writes `line` and waits for its answer; false once the session ended.
  bool request(Kind kind, std::uint64_t id, std::string line, Waiter& w);
  void reader_loop();
  // dispatch: one message from the reader; returns false when it ended the case.
  bool dispatch(const Message& m, const std::string& line);
  bool answer(const Message& m, const std::string& line);
  bool on_fired(const Message& m, const std::string& line);
  bool on_pending(const Message& m, const std::string& line);
  // on_script_answer: an answer `by` a callback performing its script.
  bool on_script_answer(const Message& m, const std::string& where);
  // expect_script: `id` is armed with `then` (mu_ held): its fire will report it.
  void expect_script(std::uint64_t id, std::vector<runner::ScriptAction> then);
  void on_eof();
  // end: records a violation of `o` with `sentence`, stops the case, wakes every
  // waiter. Requires mu_ not held.
  void end(Oracle o, const std::string& sentence);
  std::string stderr_note() const;
  std::string at(std::int64_t mono_ns) const;
  void sample(runner::Latency l, std::int64_t ns);
  TimerLedger::Options ledger_options();

  const ExecProgram& program_;
  const tlab_subject_config config_;
  std::unique_ptr<ExecProcess> proc_;
  std::thread reader_;
  std::mutex write_mu_;          // one line at a time on the subject's stdin
  std::uint64_t lines_out_ = 0;  // write_mu_

  std::mutex mu_;
  std::condition_variable cv_;
  std::unordered_map<std::uint64_t, std::deque<Waiter*>> waiting_;  // mu_: id -> in send order
  std::uint64_t max_id_ = 0;          // mu_: the highest id tlab has sent in a schedule
  std::uint64_t in_flight_ = 0;       // mu_: requests awaiting their answer
  std::uint64_t max_in_flight_ = 0;   // mu_: the most at once (counter "max_in_flight")
  std::uint64_t lines_in_ = 0;        // reader only
  std::uint64_t fail_fired_ = 0;      // mu_: the first `fail` timer that fired (0: none)
  std::int64_t fail_fired_at_ = 0;    // mu_: on tlab's clock
  std::int64_t fail_fired_t_ns_ = 0;  // mu_: its fired.t_ns (the subject's clock)
  bool shutdown_sent_ = false;        // mu_
  bool pending_seen_ = false;         // mu_
  std::string ended_;                 // mu_: why the case was ended ("": it was not)
  // Scripts (mu_): the armed timers whose fire will perform one (id -> actions),
  // the fires whose actions are being reported (id -> those not yet answered, in
  // order), and the ids a script will schedule that have no `scheduled` yet.
  std::unordered_map<std::uint64_t, std::vector<runner::ScriptAction>> scripted_;
  std::unordered_map<std::uint64_t, std::deque<runner::ScriptAction>> reporting_;
  std::unordered_map<std::uint64_t, std::uint64_t> unarmed_;  // id -> the id whose script has it
  std::unordered_set<std::uint64_t> performed_;  // ids whose script was reported (once)
  runner::ScriptHost* script_host_ = nullptr;    // set before the first schedule
  bool stopped_ = false;                         // shutdown() has run (the owning thread only)
  std::atomic<bool> reader_stop_{false};         // shutdown() tells the reader to return
  std::mutex proc_mu_;                           // wait_exit: the reader (on_eof) or shutdown()
  std::mutex stats_mu_;
  Format format_;
  // Fed by the reader under mu_; excused_after_failure reads it under mu_ too.
  TimerLedger ledger_;
};

}  // namespace tlab::tool::exec
