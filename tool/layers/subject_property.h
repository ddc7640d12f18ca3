// tlab/tool/layers/subject_property.h: the property layer on any loop-driven
// subject (tlab/subject.h): a rapidcheck test that drives one fresh instance per
// test case with a random sequence of ABI calls on virtual time, judges every
// call against a reference model, and shrinks a failure to a short, numbered,
// replayable sequence of ABI calls.
//
// It follows tests/property/queue_property_test.cc (random commands against a
// reference model, shrinking) and departs from it in two ways: the commands are a
// plain generated vector whose handle and deadline references are resolved while
// running (so every shrunk sequence is valid and no rc::state preconditions are
// needed), and the counterexample is the transcript of the ABI calls actually
// made, with what the subject answered, not the generated commands.
//
// Commands (a test case is up to max_size of them, after create(now=0)):
//   | command    | ABI calls                      | drawn from                                  |
//   |------------|--------------------------------|---------------------------------------------|
//   | Schedule   | schedule(now, delay, cookie)   | delay 0 .. 20 ticks (quarter ticks, +-1 ns);|
//   |            |                                | far (0 .. 40000 ticks, denser near 0); a    |
//   |            |                                | pending timer's deadline (a tie); huge      |
//   |            |                                | (INT64_MAX - up to 3 ticks); negative       |
//   | Cancel     | cancel(h)                      | a pending timer, or any handle ever given   |
//   |            |                                | (stale: fired, cancelled)                   |
//   | Reschedule | cancel(h), then schedule(...)  | a pending timer and a new delay             |
//   | Advance    | poll(now + dt)                 | dt 0 .. 3 ticks, 0 .. 100 ticks, far (as    |
//   |            |                                | delays), or a jump to (near) INT64_MAX      |
// then destroy(). Cookies are 1, 2, 3 ... one per schedule() call; "h3" is the
// handle schedule() returned for cookie 3. pending(), called after every command
// when promised, is read-only and appears in the transcript only where it is wrong.
//
// The reference model is a TimerLedger (oracles/timer_ledger.h) in its sequential
// order, steps being transcript lines: every timer's state, and the rules below,
// are the ledger's, with the generic driver's sentences ("at step 4"); this layer
// keeps the transcript, the ABI rules and the shrinking. Its ledger leaves out
// fifo_later_first (the sequential order judges a tie at the later one's fire),
// prevented_twice (below: a repeated cancel may answer anything) and pending_list.
// (Deadline = now + delay saturated at INT64_MAX; tick =
// SubjectPropertyOptions::tick_ns, passed to create() as the allowed lateness.)
// clang-format off
//   | promise         | judged at           | wrong when                                          |
//   |-----------------|---------------------|-----------------------------------------------------|
//   | delivery        | each poll(now)      | an accepted timer never cancelled (a cancel refused |
//   |                 |                     | with EINVAL does not count) with deadline <= now -  |
//   |                 |                     | tick has not fired                                  |
//   | exactly_once    | each fired(cookie)  | the cookie fired before                             |
//   | never_early     | each fired(cookie)  | now < deadline                                      |
//   | accurate_cancel | cancel(h), fired()  | PREVENTED for a fired timer; TOO_LATE for one       |
//   |                 |                     | neither fired nor cancelled before; a fire after    |
//   |                 |                     | PREVENTED. UNKNOWN makes no claim: after it (or an  |
//   |                 |                     | unjudged TOO_LATE) the timer may fire or not. A     |
//   |                 |                     | repeated cancel of an unfired timer may answer      |
//   |                 |                     | anything (its effect on others is judged instead)   |
//   | fifo_ties       | each fired(cookie)  | an equal-deadline timer scheduled earlier and never |
//   |                 |                     | cancelled has not fired yet                         |
//   | pending_count   | after every command | pending() outside [live, live + doubtful] (doubtful:|
//   |                 |                     | cancel said TOO_LATE or UNKNOWN, not fired since)   |
//   | (abi, always)   | every call          | create() not OK; schedule() not OK, EINVAL or       |
//   |                 |                     | ENOMEM, or EINVAL for a delay in [0, max_delay_ns]; |
//   |                 |                     | cancel() not OK or EINVAL, or a result outside      |
//   |                 |                     | tlab_cancel_result; poll() or pending() not OK;     |
//   |                 |                     | fired() of a cookie never armed, or from inside     |
//   |                 |                     | create, schedule, cancel, pending or destroy; an    |
//   |                 |                     | exception escaping a call                           |
// clang-format on
// Only promised properties are judged (SubjectPropertyResult::judged_promises
// lists them); the ABI rules are judged for every subject, as a crash is. A
// schedule() refused with EINVAL (negative delay, or above max_delay_ns) or
// ENOMEM arms nothing and makes no claim; a cancel() refused with EINVAL cancels
// nothing (the timer must still fire).
//
// Replay: rapidcheck runs from SubjectPropertyOptions::seed with its own
// parameters (never RC_PARAMS), and the subject runs on tlab's clock only, so
// the same options on the same subject give the same transcript.
//
// Cost: tests x up to max_size commands, a few ABI calls each; a failure adds the
// shrinking runs (each a fresh instance). The defaults take a few tenths of a
// second on a sorted-vector subject. A crash inside the subject kills the process: callers
// run this in a forked child. Ground rules: one thread; the subject is called
// from it only; nothing is printed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tlab/subject.h"

namespace tlab::tool {

// The default number of sequences: 20,000 take a few tenths of a second on a
// sorted-vector subject (tens of microseconds each), and a bug that needs a rare
// shape (a far delay, then the advances that cross its wheel level) has shown up
// anywhere from sequence 1,000 to 13,000, depending on the seed.
inline constexpr int kDefaultPropertyTests = 20'000;

struct SubjectPropertyOptions {
  std::uint64_t seed = 0;
  int tests = kDefaultPropertyTests;  // random command sequences (rapidcheck's max_success)
  int max_size = 60;  // commands per sequence at most (rapidcheck's max_size)
  // The lateness allowed (tlab_subject_config::tick_ns) and the generator's unit:
  // delays and advances are drawn in quarter ticks so rounding to a tick is hit.
  std::int64_t tick_ns = 1'000'000;
};

struct SubjectPropertyResult {
  std::string subject;         // the descriptor's name
  std::uint64_t seed = 0;      // as given: the same options replay this result
  bool passed = true;          // also true when the layer does not apply
  std::string not_applicable;  // non-empty: why this subject cannot be run (not a failure)
  int tests_run = 0;           // sequences run, the failing one included
  // On failure: the shrunk counterexample, one numbered ABI call a line, the
  // wrong one ending in "   <- wrong: <why> (<promise or abi>)"; or rapidcheck's
  // own message if the run itself failed.
  std::string failure;
  // On failure: what the counterexample breaks: a promise (types/promise.h name)
  // or "abi" (the rules every subject keeps); empty when rapidcheck itself failed.
  std::string broken;
  std::vector<std::string> judged_promises;  // types/promise.h names, in enum order
};

// check_subject_properties: runs the property layer on `s`.
// Requires: check_descriptor(s) (subjects/plugin.h) holds; 0 < options.tick_ns
//   <= 1 h, options.tests > 0, options.max_size >= 0 (std::invalid_argument
//   otherwise: the loader and the CLI check these first).
// Ensures: not_applicable is set, and nothing is called, unless `s` is a
//   loop-driven facility on the host clock that promises TLAB_PROMISE_VIRTUAL.
SubjectPropertyResult check_subject_properties(const tlab_subject& s,
                                               const SubjectPropertyOptions& options);

// describe: `result` for the console, one or more lines ending in '\n': the
// verdict, the promises judged, and on failure the counterexample and the seed
// that replays it.
std::string describe(const SubjectPropertyResult& result);

}  // namespace tlab::tool
