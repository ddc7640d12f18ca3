// tlab/tool/subjects/subjects.h: the subject table: everything tlab can put
// under a scenario or a comparison, in one catalogue.
//
// A subject is a thing whose timer promises tlab checks or measures. Three
// origins share the table:
//   | origin   | rows                           | under a scenario              | in compare     |
//   |----------|--------------------------------|-------------------------------|----------------|
//   | strategy | one per queue strategy (core's | the queue an engine runs      | its descriptor |
//   |          | kStrategyInfo, derived)        | over; `--subject NAME`: the   | (QueueSubject) |
//   |          |                                | adapter (builtin/strategies.h)|                |
//   | engine   | timer_service, timed_mutex,    | selected by the roles;        | no             |
//   |          | timed_wait_group, pool,        | runs the case                 |                |
//   |          | coroutine_loop                 |                               |                |
//   |          | executor                       | selected by the roles; and    | its descriptor |
//   |          |                                | `--subject executor`          | (+ hook)       |
//   |          |                                | (builtin/executor.h)          |                |
//   |          | sharded_service,               | only `--subject NAME` or      | its descriptor |
//   |          | sharded_service_per_thread     | engine.subject (no driver;    | (+ hook)       |
//   |          |                                | builtin/sharded_service.h)    |                |
//   |          | timed_semaphore                | only `--subject NAME` (no     | no (a timed    |
//   |          |                                | driver; builtin/sync.h)       | wait)          |
//   | peer     | libuv, libevent, asio,         | `--subject NAME`: their ABI   | its descriptor |
//   |          | java_timer_heap                | descriptors (builtin/peers.h) | (+ hook)       |
//   |          |                                | on the generic driver         |                |
//
#include "subjects/bench_hook.h"
// engine rows in table order: the first row one of whose `primary` roles the
// scenario has is chosen, and every role present must be in its `accepts`
// (scenarios/README.md, "Which engine runs", is checked against this table by
// tests/unit/subjects_test.cc).
//
// To add a subject: one row in kEngineSubjects or kPeerSubjects (subjects.cc),
// with its driver or its ABI descriptor and benchmark hook (one file under
// builtin/); a strategy is added in core (strategy.h) and appears here by itself. A user's own timer needs no row: it is
// a plugin (`--subject PATH.so`, subjects/plugin.h, docs/your-own-timer.md).
//
// Cost: lookups scan ~15 rows. Ground rules: the table is built once on first use
// (thread-safe static) and is immutable.
#pragma once

#include <array>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/strategies.h"
#include "scenario/scenario.h"
#include "subjects/bench_hook.h"
#include "tlab/subject.h"
#include "types/promise.h"

namespace tlab::tool {

namespace runner {
class CaseContext;
}

enum class SubjectOrigin : std::uint8_t { kStrategy, kEngine, kPeer };
enum class SubjectKind : std::uint8_t {
  kTimerQueue,     // a queue of deadlines an owner polls (insert, cancel, expire)
  kTimerFacility,  // schedule, cancel and a way to fire (loop- or self-driven)
  kTimedWait,      // acquire_for(timeout) / release: a timed mutex, semaphore, pool
  kExecutor,       // workers with timers (seed 003)
  kCoroutineLoop,  // co_await sleep_for / with_timeout on an event loop
};
std::string_view name_of(SubjectOrigin o);
std::string_view name_of(SubjectKind k);

// A set of roles (scenario.h Role), one bit each.
class RoleSet {
 public:
  constexpr RoleSet() = default;
  constexpr RoleSet(std::initializer_list<Role> roles) {
    for (Role r : roles) bits_ |= bit(r);
  }
  constexpr bool has(Role r) const { return (bits_ & bit(r)) != 0; }
  constexpr bool empty() const { return bits_ == 0; }
  std::string names() const;  // "waiter, canceller", in enum order

 private:
  static constexpr std::uint32_t bit(Role r) { return 1u << static_cast<unsigned>(r); }
  std::uint32_t bits_ = 0;
};
static_assert(kRoleCount <= 32, "RoleSet is a 32-bit mask");

// A latency histogram a subject records, and the roles that must all be present
// for it to be recorded (empty: always). validate refuses a bound on a histogram
// the case would never record.
struct LatencyMeasure {
  std::string_view histogram;  // "fire_lateness", "cancel_to_resume"; empty: unused slot
  RoleSet needs;
};

using CaseDriver = void (*)(runner::CaseContext&);
// AbiFactory: the row's subject as a tlab/subject.h descriptor (static storage),
// given the row's name; what `--subject NAME` runs through the generic driver, and
// what `tlab compare` measures. (BenchFactory, the row's benchmark hook, is
// bench_hook.h's.)
using AbiFactory = const tlab_subject* (*)(std::string_view name);

// The default of a row: a driver is refused under --sim until it is ported to
// SimPlatform (its actors started with spawn_thread<P>, its sleeps on the case's
// clock). Every engine driver shipped today is, and says so with "".
inline constexpr std::string_view kNotSimulated =
    "its driver is not ported to SimPlatform yet (its actors are real threads on the steady "
    "clock)";

struct SubjectInfo {
  std::string_view name;
  SubjectOrigin origin;
  SubjectKind kind;
  PromiseSet promises;
  RoleSet primary;        // engines: any of these selects the row
  RoleSet accepts;        // engines: every role present must be here
  RoleSet virtual_roles;  // engines: the roles that can run on a virtual clock (empty: none)
  bool takes_strategy;    // engines: runs over the case's queue strategy
  std::string_view summary;
  CaseDriver run_case;                       // nullptr: cannot run a scenario case
  BenchFactory bench;                        // nullptr: not measured by compare (needs abi)
  std::array<LatencyMeasure, 2> measures{};  // engines: the boundable histograms recorded
  AbiFactory abi = nullptr;  // nullptr: cannot be run as `--subject NAME`
  // engines: empty when the driver runs a case under simulation (--sim,
  // runner/sim_run.h); else why it cannot, as `tlab run --sim` says it.
  std::string_view sim_refusal = kNotSimulated;
};

// subjects: every row, strategies first (in core's order), then engines (in
// selection order), then peers.
const std::vector<SubjectInfo>& subjects();
// find_subject: the row named `name`, or nullptr.
const SubjectInfo* find_subject(std::string_view name);

// sim_refusal: nullopt when the scenario's engine runs under simulation (--sim),
// else why not (no engine runs it, or SubjectInfo::sim_refusal of its engine).
std::optional<std::string> sim_refusal(const Scenario& s);

// engine_for: the engine row a scenario exercises; nullptr plus `why` when its
// roles do not form a supported mix, or its clock or token width is not supported
// (`pointer`, if given, receives the JSON pointer of the offending field).
const SubjectInfo* engine_for(const Scenario& s, std::string& why, std::string* pointer = nullptr);

// check_runnable: what `tlab validate` adds to the scenario loader's three passes:
// the scenario can run on an engine (engine_for), and every latency bound it sets
// is on a histogram that engine records for its roles. Appends errors naming
// `file` and the JSON pointer; returns whether none were added.
bool check_runnable(const Scenario& s, const std::string& file, InputErrors& errors);

// promises_of_case: what a case of `engine` over `strategy` promises: the
// engine's promises, less fifo_ties unless the strategy keeps FIFO order.
PromiseSet promises_of_case(const SubjectInfo& engine, std::string_view strategy);

}  // namespace tlab::tool
