#!/usr/bin/env python3
"""asyncio_subject.py: Python asyncio's timers (loop.call_later, TimerHandle.cancel)
as a tlab exec subject: JSON lines on stdin and stdout, as docs/protocol.md says.

Driven as an asyncio user drives them: schedule is loop.call_later(delay, callback),
cancel is TimerHandle.cancel(), on the default loop that asyncio.run() makes. Stdin
is read through loop.connect_read_pipe, so requests and timer callbacks share the
one loop thread. Run it with `tlab check --subject exec:adapters/python/asyncio_subject.py`.

Promises, from https://docs.python.org/3/library/asyncio-eventloop.html (3.11:
"Scheduling delayed callbacks", "Callback Handles", "Error Handling API"):
  delivery, exactly_once: call_later: "callback will be called exactly once."
  never_early: call_later: "Schedule callback to be called after the given delay
    number of seconds". The implementation departs from that sentence by one clock
    resolution: BaseEventLoop._run_once runs every timer whose `when` is below
    time() + clock_resolution (1 ns for CLOCK_MONOTONIC on Linux), and `when` is the
    float time() + delay. tlab judges the documented sentence; the adapter adds no
    earliness of its own (the delay is rounded UP to a float, and scheduled.t_ns is
    read before call_later reads the loop's clock).
  accurate_cancel: Handle.cancel: "Cancel the callback. If the callback has already
    been canceled or executed, this method has no effect." cancel() returns None, so
    the adapter keeps `live`: the handles whose callback has not begun and which no
    cancel reached. Callbacks and requests run on the one loop thread, so a cancel
    finds its id in `live` exactly when this call stops the callback (prevented).
    Whether the callback then really never runs is asyncio's part (fired_after_cancel).
  NOT fifo_ties: call_later: "If two callbacks are scheduled for exactly the same
    time, the order in which they are called is undefined."
  NOT pending_count: asyncio exposes no list of scheduled timers (loop._scheduled is
    private); the `pending` answer is this adapter's own bookkeeping, not asyncio's.
  NOT contains_errors: the docs say only that the default exception handler "is
    called when an exception occurs and no exception handler is set" (its context may
    name the 'handle'), never that the loop goes on running callbacks afterwards.
  NOT thread_safe: call_soon "is not thread-safe"; tlab sends one request at a time.
Features: fail (the callback writes `fired`, then raises RuntimeError; asyncio hands
it to the loop's exception handler, which logs it to stderr), scripts (a `then` on a
one-shot: the callback writes `fired`, then performs each action in order before it
returns, as a user's callback would: loop.call_later for a schedule, TimerHandle.cancel()
for a cancel, under the rules of the requests below, each answer carrying `by`).
Limits: none on the delay (the one-day limit went in 3.8); a negative delay is due
at once (call_later takes it as a `when` in the past).
"""
import asyncio
import json
import math
import platform
import sys
import time
from fractions import Fraction

PROMISES = ["delivery", "exactly_once", "never_early", "accurate_cancel"]

live = {}  # id -> TimerHandle whose callback has not begun and was not cancelled
refused = set()  # ids whose schedule was answered `error`: nothing was armed
firing = None  # (id, TimerHandle) of the callback running now, while it performs its script


def send(message, by=None):
    """Writes one protocol line; stdout carries nothing else (logs go to stderr).
    `by`: the id whose callback performed the action this line answers (a script's)."""
    if by is not None:
        message["by"] = by
    sys.stdout.write(json.dumps(message, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def seconds_up(delay_ns):
    """delay_ns as float seconds, rounded UP: a float below the delay is an early fire."""
    seconds = delay_ns / 1e9  # correctly rounded, so at most one step below
    if Fraction(seconds) < Fraction(delay_ns, 10**9):
        seconds = math.nextafter(seconds, math.inf)
    return seconds


def on_fire(timer_id, fail, then):
    global firing
    t_ns = time.monotonic_ns()  # first thing in the callback: when it began
    # pop, not del: were asyncio to run a callback twice, its second `fired` line
    # must reach tlab (double_resume), not die on a KeyError before it is written.
    handle = live.pop(timer_id, None)
    send({"type": "fired", "id": timer_id, "t_ns": t_ns})
    # The script, in order, inside this callback, before it returns: the same calls
    # and the same answers as the requests, each answer `by` this id.
    loop = asyncio.get_running_loop()
    firing = (timer_id, handle)
    try:
        for action in then:
            if action["do"] == "schedule":
                schedule(loop, action["id"], action["delay_ns"], False,
                         action.get("then", ()), by=timer_id)
            else:
                cancel(action["id"], by=timer_id)
    finally:
        firing = None
    if fail:
        raise RuntimeError(f"timer {timer_id} fails, as tlab asked (fail=true)")


def schedule(loop, timer_id, delay_ns, fail, then=(), by=None):
    t_ns = time.monotonic_ns()  # before call_later reads loop.time() for its deadline
    try:
        live[timer_id] = loop.call_later(seconds_up(delay_ns), on_fire, timer_id, fail,
                                         then)
    except Exception as error:  # the runtime refused: nothing was armed
        refused.add(timer_id)
        send({"type": "error", "id": timer_id, "message": repr(error)}, by)
        return
    send({"type": "scheduled", "id": timer_id, "t_ns": t_ns}, by)


def cancel(timer_id, by=None):
    handle = live.pop(timer_id, None)
    if handle is None:  # it has fired (or is firing), or a cancel came first
        result = "unknown" if timer_id in refused else "too_late"
        if firing is not None and firing[0] == timer_id and firing[1] is not None:
            # A script cancelling its own timer: its callback calls cancel() on its own
            # handle, as a user's would. The callback has begun, so nothing is
            # prevented; cancel() returns None and the answer stays too_late.
            try:
                firing[1].cancel()
            except Exception as error:
                send({"type": "error", "id": timer_id, "message": repr(error)}, by)
                return
    else:
        try:
            handle.cancel()
        except Exception as error:
            send({"type": "error", "id": timer_id, "message": repr(error)}, by)
            return
        result = "prevented"
    send({"type": "cancelled", "id": timer_id, "result": result}, by)


async def main():
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    send({"type": "hello", "protocol": 1, "name": "python-asyncio",
          "version": platform.python_version(), "kind": "facility",
          "promises": PROMISES, "features": ["fail", "scripts"],
          "summary": "asyncio loop.call_later / TimerHandle.cancel"})
    while line := await reader.readline():
        try:
            request = json.loads(line)
            kind = request["type"]
        except (ValueError, KeyError, TypeError) as error:
            print(f"asyncio_subject: ignoring {line!r}: {error!r}", file=sys.stderr)
            continue
        if kind == "schedule":
            schedule(loop, request["id"], request["delay_ns"], request.get("fail", False),
                     request.get("then", ()))
        elif kind == "cancel":
            cancel(request["id"])
        elif kind == "shutdown":
            send({"type": "pending", "ids": sorted(live)})
            # asyncio.run() runs the loop again while it closes; nothing may fire then.
            for handle in live.values():
                handle.cancel()
            return
        else:
            print(f"asyncio_subject: unknown request {line!r}", file=sys.stderr)
    print("asyncio_subject: stdin closed before shutdown", file=sys.stderr)


if __name__ == "__main__":
    asyncio.run(main())
