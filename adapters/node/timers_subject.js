#!/usr/bin/env node
// timers_subject.js: Node.js timers (setTimeout, clearTimeout) as a tlab exec
// subject: JSON lines on stdin and stdout, as docs/protocol.md says.
//
// Driven as a Node user drives them: schedule is setTimeout(callback, ms) with the
// delay rounded UP to whole milliseconds, cancel is clearTimeout(timeout). Stdin is
// read with readline, so requests and timer callbacks share the one event loop.
// Run it with `tlab check --subject exec:adapters/node/timers_subject.js`.
//
// Promises, from https://nodejs.org/api/timers.html (v20) and process.html:
//   delivery, exactly_once: setTimeout "Schedules execution of a one-time callback
//     after delay milliseconds."
//   accurate_cancel: clearTimeout "Cancels a Timeout object created by setTimeout()."
//     It returns nothing, so the adapter keeps `live`: the Timeouts whose callback has
//     not begun and which no cancel reached. Callbacks and requests run on the one
//     loop thread, so a cancel finds its id in `live` exactly when this call stops the
//     callback (prevented). Whether the callback then really never runs is Node's
//     part (fired_after_cancel).
//   NOT never_early, NOT fifo_ties: "The callback will likely not be invoked in
//     precisely delay milliseconds. Node.js makes no guarantees about the exact timing
//     of when callbacks will fire, nor of their ordering."
//   NOT pending_count: Node exposes no list of active Timeouts; the `pending` answer
//     is this adapter's own bookkeeping, not Node's.
//   NOT contains_errors: an exception thrown by a callback is uncaught, and "By
//     default, Node.js handles such exceptions by printing the stack trace to stderr
//     and exiting with code 1" (process.html, 'uncaughtException'). The adapter does
//     not catch it: tlab sees what Node does with a failing callback.
//   NOT thread_safe: JavaScript runs on one thread; tlab sends one request at a time.
// Features: fail (the callback writes `fired`, then throws).
// Limits: "When delay is larger than 2147483647 or less than 1 or NaN, the delay will
// be set to 1", so a delay above 2147483647 ms is answered `error` (max_delay_ns),
// and a negative one is due at once (Node makes it 1 ms). "Non-integer delays are
// truncated to an integer", which is why the adapter rounds up itself.
'use strict';
const fs = require('node:fs');
const readline = require('node:readline');

const kMaxDelayMs = 2147483647; // TIMEOUT_MAX: 2^31 - 1 ms, about 24.8 days
const PROMISES = ['delivery', 'exactly_once', 'accurate_cancel'];

const live = new Map(); // id -> Timeout whose callback has not begun and was not cleared
const refused = new Set(); // ids whose schedule was answered `error`: nothing was armed

// hrtime counts from an arbitrary point; t_ns counts from the adapter's start so it
// stays an exact Number (below 2^53 ns, 104 days) and prints as a JSON integer.
const origin = process.hrtime.bigint();
const nowNs = () => Number(process.hrtime.bigint() - origin);

// One protocol line, written synchronously. process.stdout on a pipe is asynchronous
// on POSIX: a line queued just before a `fail` throw would die with the process.
// The adapter never touches process.stdout, so fd 1 stays the blocking pipe tlab gave.
function send(message) {
  fs.writeSync(1, JSON.stringify(message) + '\n');
}

// delay_ns in whole ms, rounded UP (rounding down would be an early fire); exact
// below 2^53 ns, and anything above that is over kMaxDelayMs anyway.
function ceilMs(delayNs) {
  if (delayNs <= 0) return 0;
  const ms = Math.floor(delayNs / 1e6);
  return ms * 1e6 < delayNs ? ms + 1 : ms;
}

function onFire(id, fail) {
  const tNs = nowNs(); // first thing in the callback: when it began
  live.delete(id);
  send({type: 'fired', id, t_ns: tNs});
  if (fail) throw new Error(`timer ${id} fails, as tlab asked (fail=true)`);
}

function schedule(id, delayNs, fail) {
  const ms = ceilMs(delayNs);
  if (ms > kMaxDelayMs) {
    refused.add(id);
    send({type: 'error', id, message: `delay ${ms} ms is above TIMEOUT_MAX (${kMaxDelayMs} ms)`});
    return;
  }
  const tNs = nowNs(); // before setTimeout reads the loop's clock for its deadline
  try {
    live.set(id, setTimeout(onFire, ms, id, fail));
  } catch (error) { // the runtime refused: nothing was armed
    refused.add(id);
    send({type: 'error', id, message: String(error)});
    return;
  }
  send({type: 'scheduled', id, t_ns: tNs});
}

function cancel(id) {
  const timeout = live.get(id);
  if (timeout === undefined) { // it has fired (or is firing), or a cancel came first
    send({type: 'cancelled', id, result: refused.has(id) ? 'unknown' : 'too_late'});
    return;
  }
  live.delete(id);
  clearTimeout(timeout);
  send({type: 'cancelled', id, result: 'prevented'});
}

send({type: 'hello', protocol: 1, name: 'node-timers', version: process.version,
      kind: 'facility', promises: PROMISES, features: ['fail'],
      max_delay_ns: kMaxDelayMs * 1e6, summary: 'setTimeout / clearTimeout'});

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
    schedule(request.id, request.delay_ns, request.fail === true);
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
