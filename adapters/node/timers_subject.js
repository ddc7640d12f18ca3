#!/usr/bin/env node
// timers_subject.js: Node.js timers (setTimeout, clearTimeout, setInterval,
// clearInterval) as a tlab exec subject: JSON lines on stdin and stdout, as
// docs/protocol.md says.
//
// Driven as a Node user drives them: schedule is setTimeout(callback, ms) with the
// delay rounded UP to whole milliseconds, cancel is clearTimeout(timeout). Stdin is
// read with readline, so requests and timer callbacks share the one event loop.
// Run it with `tlab check --subject exec:adapters/node/timers_subject.js`.
//
// Promises, from https://nodejs.org/api/timers.html (v20) and process.html:
//   delivery, exactly_once: setTimeout "Schedules execution of a one-time callback
//     after delay milliseconds." setInterval "Schedules repeated execution of
//     callback every delay milliseconds": a series runs until a cancel stops it, one
//     callback (one `fired` line) per run.
//   accurate_cancel: clearTimeout "Cancels a Timeout object created by setTimeout()."
//     clearInterval "Cancels a Timeout object created by setInterval()." Both return
//     nothing, so the adapter keeps `live`: the one-shot Timeouts whose callback has
//     not begun and which no cancel reached, and every series no cancel reached.
//     Callbacks and requests run on the one loop thread, so a cancel never meets a
//     run in progress: it finds its id in `live` exactly when this call stops the
//     timer (prevented), and otherwise the timer has fired or an earlier cancel
//     stopped it (too_late). Whether the callback then really never runs again is
//     Node's part (fired_after_cancel).
//   NOT never_early, NOT fifo_ties: "The callback will likely not be invoked in
//     precisely delay milliseconds. Node.js makes no guarantees about the exact timing
//     of when callbacks will fire, nor of their ordering." That holds for every run
//     of a series as for a one-shot (README.md, "Periodic timers").
//   NOT pending_count: Node exposes no list of active Timeouts; the `pending` answer
//     is this adapter's own bookkeeping, not Node's.
//   NOT contains_errors: an exception thrown by a callback is uncaught, and "By
//     default, Node.js handles such exceptions by printing the stack trace to stderr
//     and exiting with code 1" (process.html, 'uncaughtException'). The adapter does
//     not catch it: tlab sees what Node does with a failing callback.
//   NOT thread_safe: JavaScript runs on one thread; tlab sends one request at a time.
// Features: fail (the callback writes `fired`, then throws). Never sent with a period.
//   scripts (a `then` on a one-shot: the callback writes `fired`, then performs each
//   action in order before it returns, as a user's callback would: setTimeout for a
//   schedule, clearTimeout for a cancel, under the rules of the requests below, each
//   answer carrying `by`). Never sent with a period either.
// Periodic: fixed_delay, and only that. setInterval "Schedules repeated execution of
//   callback every delay milliseconds"; Node's timer code (lib/internal/timers.js,
//   listOnTimeout) reads the loop clock just before a repeating callback and, once it
//   returns, re-arms the timer `delay` ms after that reading: run k+1 is due at S_k + P
//   (S_k the start of run k, E_k its end), which is inside fixed_delay's window
//   [S_k + P, E_k + P]. Missed runs are neither caught up (not fixed_rate) nor kept on
//   a grid (not fixed_rate_skip): a late run moves every later one. The period is
//   rounded UP to whole ms (Limits), so Node's own rule is never early; but the loop
//   clock it reads is whole milliseconds, so a run can begin up to 1 ms before
//   S_k + P, as a one-shot can before its deadline (NOT never_early). setInterval's
//   first run comes `delay` after the call, and the protocol's first run comes
//   delay_ns after the schedule, so a series is setTimeout(delay) whose callback is
//   run 0 and starts setInterval(period) (README.md, "Periodic timers").
// Limits: "When delay is larger than 2147483647 or less than 1 or NaN, the delay will
// be set to 1" (setTimeout and setInterval alike), so a delay above 2147483647 ms is
// answered `error` (max_delay_ns), a negative one is due at once (Node makes it 1 ms),
// and a period above 2147483647 ms is answered `error` too. "Non-integer delays are
// truncated to an integer", which is why the adapter rounds delays and periods up
// itself (a period of 1.7 ms would run every 1 ms: early).
'use strict';
const fs = require('node:fs');
const readline = require('node:readline');

const kMaxDelayMs = 2147483647; // TIMEOUT_MAX: 2^31 - 1 ms, about 24.8 days
const PROMISES = ['delivery', 'exactly_once', 'accurate_cancel'];
const PERIODIC = ['fixed_delay']; // setInterval (header: "Periodic")

// id -> a one-shot Timeout whose callback has not begun and was not cleared, or a
// Series (below) no cancel has stopped: exactly the ids a cancel would prevent, and
// the ids the `pending` answer lists.
const live = new Map();
const refused = new Set(); // ids whose schedule was answered `error`: nothing was armed
// The one-shot whose callback is running now, while it performs its script.
let firing = null; // {id, timeout}

// hrtime counts from an arbitrary point; t_ns counts from the adapter's start so it
// stays an exact Number (below 2^53 ns, 104 days) and prints as a JSON integer.
const origin = process.hrtime.bigint();
const nowNs = () => Number(process.hrtime.bigint() - origin);

// One protocol line, written synchronously. process.stdout on a pipe is asynchronous
// on POSIX: a line queued just before a `fail` throw would die with the process.
// The adapter never touches process.stdout, so fd 1 stays the blocking pipe tlab gave.
// `by`: the id whose callback performed the action this line answers (a script's).
function send(message, by) {
  if (by !== undefined) message.by = by;
  fs.writeSync(1, JSON.stringify(message) + '\n');
}

// delay_ns in whole ms, rounded UP (rounding down would be an early fire); exact
// below 2^53 ns, and anything above that is over kMaxDelayMs anyway.
function ceilMs(delayNs) {
  if (delayNs <= 0) return 0;
  const ms = Math.floor(delayNs / 1e6);
  return ms * 1e6 < delayNs ? ms + 1 : ms;
}

function onFire(id, fail, then) {
  const tNs = nowNs(); // first thing in the callback: when it began
  const timeout = live.get(id);
  live.delete(id);
  send({type: 'fired', id, t_ns: tNs});
  if (then !== undefined) {
    // The script, in order, inside this callback, before it returns: the same calls
    // and the same answers as the requests, each answer `by` this id.
    firing = {id, timeout};
    try {
      for (const action of then) {
        if (action.do === 'schedule') {
          schedule(action.id, action.delay_ns, false, undefined, undefined, action.then, id);
        } else {
          cancel(action.id, id);
        }
      }
    } finally {
      firing = null;
    }
  }
  if (fail) throw new Error(`timer ${id} fails, as tlab asked (fail=true)`);
}

// A periodic series: `first` is the setTimeout of run 0, `interval` the setInterval
// of runs 1, 2, ... once run 0 has begun. `stopped` is set by the cancel that clears
// them; from then on nothing arms the series again.
class Series {
  constructor(periodMs) {
    this.periodMs = periodMs;
    this.first = null;
    this.interval = null;
    this.stopped = false;
  }
}

// Every run of a series, run 0 included: `fired` first, read at the run's start.
function onRun(id, series) {
  const tNs = nowNs(); // first thing in the callback: when it began
  send({type: 'fired', id, t_ns: tNs});
  if (series.stopped) { // Node ran a cleared timer: the `fired` line shows it to tlab
    console.error(`timers_subject: series ${id} ran after clearTimeout/clearInterval`);
  }
}

// Run 0 (setTimeout's callback): the run, then setInterval for runs 1, 2, ... Node
// counts the interval from its loop clock read at this call, after S_0 and before
// E_0: run 1 is due within [S_0 + P, E_0 + P], as fixed_delay says. A cancel cannot
// come between the two (one thread): the series is either not begun (first) or
// running on its interval.
function onFirstRun(id, series) {
  onRun(id, series);
  if (!series.stopped) series.interval = setInterval(onRun, series.periodMs, id, series);
}

function refuse(id, message, by) {
  refused.add(id);
  send({type: 'error', id, message}, by);
}

// A request's schedule, or a script's (`by` the id whose callback performs it; a
// script's schedule is a one-shot and never fails, and `then` is its own script).
function schedule(id, delayNs, fail, periodNs, periodic, then, by) {
  const ms = ceilMs(delayNs);
  if (ms > kMaxDelayMs) {
    refuse(id, `delay ${ms} ms is above TIMEOUT_MAX (${kMaxDelayMs} ms)`, by);
    return;
  }
  if (periodNs !== undefined || periodic !== undefined) {
    scheduleSeries(id, ms, fail, periodNs, periodic, then);
    return;
  }
  const tNs = nowNs(); // before setTimeout reads the loop's clock for its deadline
  try {
    live.set(id, setTimeout(onFire, ms, id, fail, then));
  } catch (error) { // the runtime refused: nothing was armed
    refuse(id, String(error), by);
    return;
  }
  send({type: 'scheduled', id, t_ns: tNs}, by);
}

// A series: run 0 `delayMs` from now, then one run per period (fixed_delay).
function scheduleSeries(id, delayMs, fail, periodNs, periodic, then) {
  if (!PERIODIC.includes(periodic) || typeof periodNs !== 'number' || !(periodNs >= 1)) {
    refuse(id, `periodic ${JSON.stringify(periodic)} with period_ns ${periodNs}: this ` +
               `subject arms only ${PERIODIC.join(', ')} series (setInterval), period_ns >= 1`);
    return;
  }
  if (fail) { // the protocol never sends both; a series has no failing run to offer
    refuse(id, 'fail is not offered for a periodic series');
    return;
  }
  if (then !== undefined) { // likewise: scripts come only with one-shot timers
    refuse(id, 'a script (then) is not offered for a periodic series');
    return;
  }
  // Whole ms, rounded UP and at least 1: Node truncates a fraction and makes 0 into 1
  // itself, and a shorter period than asked would make every run after the first early.
  const periodMs = Math.max(1, ceilMs(periodNs));
  if (periodMs > kMaxDelayMs) {
    refuse(id, `period ${periodMs} ms is above TIMEOUT_MAX (${kMaxDelayMs} ms)`);
    return;
  }
  const series = new Series(periodMs);
  const tNs = nowNs(); // before setTimeout reads the loop's clock for its deadline
  try {
    series.first = setTimeout(onFirstRun, delayMs, id, series);
  } catch (error) { // the runtime refused: nothing was armed
    refuse(id, String(error));
    return;
  }
  live.set(id, series);
  send({type: 'scheduled', id, t_ns: tNs});
}

// A request's cancel, or a script's (`by` the id whose callback performs it).
function cancel(id, by) {
  const entry = live.get(id); // a one-shot's Timeout or a Series
  if (entry === undefined) { // it has fired (or is firing), or a cancel came first
    if (firing !== null && firing.id === id && firing.timeout !== undefined) {
      // A script cancelling its own timer: its callback calls clearTimeout on its own
      // Timeout, as a user's would. The callback has begun, so nothing is prevented;
      // clearTimeout returns nothing and the answer stays too_late.
      clearTimeout(firing.timeout);
    }
    send({type: 'cancelled', id, result: refused.has(id) ? 'unknown' : 'too_late'}, by);
    return;
  }
  live.delete(id);
  if (entry instanceof Series) {
    // A live series: no run is in progress (requests and callbacks share the loop
    // thread), so clearing run 0's Timeout, or the Interval once run 0 has begun,
    // leaves nothing armed, and a stopped series is never armed again: no run
    // begins after this answer.
    entry.stopped = true;
    if (entry.interval === null) {
      clearTimeout(entry.first);
    } else {
      clearInterval(entry.interval);
    }
    send({type: 'cancelled', id, result: 'prevented'}, by);
    return;
  }
  clearTimeout(entry);
  send({type: 'cancelled', id, result: 'prevented'}, by);
}

send({type: 'hello', protocol: 1, name: 'node-timers', version: process.version,
      kind: 'facility', promises: PROMISES, features: ['fail', 'scripts'], periodic: PERIODIC,
      max_delay_ns: kMaxDelayMs * 1e6,
      summary: 'setTimeout / clearTimeout; series: setTimeout then setInterval / clearInterval'});

const input = readline.createInterface({input: process.stdin, crlfDelay: Infinity});
input.on('line', (line) => {
  let request;
  try {
    request = JSON.parse(line);
  } catch (error) {
    console.error(`timers_subject: ignoring ${JSON.stringify(line)}: ${error}`);
    return;
  }
  if (request.type === 'schedule') {
    schedule(request.id, request.delay_ns, request.fail === true, request.period_ns,
             request.periodic, request.then);
  } else if (request.type === 'cancel') {
    cancel(request.id);
  } else if (request.type === 'shutdown') {
    send({type: 'pending', ids: [...live.keys()]});
    process.exit(0); // nothing fires after `pending`: the armed Timeouts die with us
  } else {
    console.error(`timers_subject: unknown request ${JSON.stringify(line)}`);
  }
});
input.on('close', () => {
  console.error('timers_subject: stdin closed before shutdown');
  process.exit(0);
});
