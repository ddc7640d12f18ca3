#!/usr/bin/env python3
"""A correct exec subject (docs/protocol.md) in plain Python, with seeded bugs.

tlab's own tests run it three ways:
  reference_subject.py                  correct: every promise kept; tlab check passes
  reference_subject.py --bug=NAME       a timer bug, which one oracle must catch
  reference_subject.py --misbehave=NAME a protocol failure, which must get its verdict
and with options:
  --thread-safe  promise thread_safe too: tlab's senders then pipeline requests
               (one thread serves them in order, which the protocol allows). The
               first `schedule` is served only once a second request has arrived,
               so a tlab that pipelines has two in flight in every run, and one
               that does not waits on that answer until its case's budget
  --tag=TEXT   ignored: a marker in its command line, so that a test can find its
               processes in /proc (tests/e2e/exec_test.cc: none outlives tlab)
  --helpers=N  forks N processes that sleep until killed, holding the pipes as a
               runtime's helpers would: only killing the process group ends them

One thread: select() on stdin with the nearest deadline as its timeout, a heap of
(deadline, sequence, id), time.monotonic_ns() as the clock. Periodic series of the
three kinds (docs/protocol.md, "Periodic timers"): a run is due at its grid point
(fixed_rate: missed ones caught up back to back), the first grid point after the
run began (fixed_rate_skip), or the callback's end plus the period (fixed_delay).
"""
import heapq
import json
import os
import select
import sys
import time

BUGS = {"early", "lost", "double", "after_cancel", "wrong_result", "pending_list",
        "die_on_fail", "periodic_early", "periodic_stop", "batch_cancel"}
# periodic_early: the period is rounded down to whole milliseconds (at least one), as
#   a runtime with a millisecond timer API that truncates would: a run of a series
#   whose period has a fraction of a millisecond comes early.
# periodic_stop: a cancel of a series that has run says prevented, and the series
#   runs once more (the next run was already taken off the queue).
# batch_cancel: every due timer is taken off the queue before any callback runs,
#   so a timer a sibling's callback cancels (prevented: it is still armed) in the
#   same pass runs all the same.
MS = 1_000_000
MISBEHAVIOURS = {"garbage", "exit_early", "silent", "unknown_id", "slow", "no_hello",
                 "bad_hello", "stderr", "second_answer", "fire_after_pending"}


OPTIONS = {"bug", "misbehave", "tag", "helpers", "thread-safe"}


class Timer:
    """One armed timer: a one-shot (period 0) or a periodic series."""

    def __init__(self, deadline, fail, period, periodic, then=()):
        self.deadline, self.fail, self.period, self.periodic = deadline, fail, period, periodic
        self.then = then  # the callback's script (docs/protocol.md, "Scripts")
        self.grid0, self.run, self.runs, self.stop_after_run = deadline, 0, 0, False

    def next_due(self, began, ended, bug):
        """The next run's due time, after the run that began and ended then."""
        period = max(MS, self.period // MS * MS) if bug == "periodic_early" else self.period
        if self.periodic == "fixed_rate":
            self.run += 1
        elif self.periodic == "fixed_rate_skip":
            self.run = max(self.run + 1, (began - self.grid0) // period + 1)
        else:  # fixed_delay
            return ended + period
        return self.grid0 + self.run * period


def main():
    args = sys.argv[1:]
    opt = dict(a[2:].split("=", 1) if "=" in a else (a[2:], "") for a in args
               if a.startswith("--"))
    bug, misbehave = opt.get("bug"), opt.get("misbehave")
    if (len(opt) != len(args) or not set(opt) <= OPTIONS or bug not in BUGS | {None}
            or misbehave not in MISBEHAVIOURS | {None} or not opt.get("helpers", "0").isdigit()):
        sys.exit(f"reference_subject.py: bad arguments {args}: "
                 f"--bug=<{'|'.join(sorted(BUGS))}>, --misbehave=<{'|'.join(sorted(MISBEHAVIOURS))}>, "
                 "--tag=TEXT, --helpers=N, --thread-safe")
    for _ in range(int(opt.get("helpers", "0"))):
        if os.fork() == 0:
            time.sleep(3600)
            os._exit(0)
    out = sys.stdout

    def send(**msg):
        out.write(json.dumps(msg, separators=(",", ":")) + "\n")
        out.flush()

    if misbehave == "no_hello":
        time.sleep(3600)
    hello = dict(type="hello", protocol=1, name="reference", version=sys.version.split()[0],
                 kind="facility", features=["fail", "scripts"],
                 periodic=["fixed_rate", "fixed_rate_skip", "fixed_delay"],
                 promises=["delivery", "exactly_once", "never_early", "accurate_cancel",
                           "pending_count", "contains_errors"])
    if "thread-safe" in opt:
        hello["promises"].append("thread_safe")
    if misbehave == "bad_hello":
        hello["promises"] = ["delivery", "virtual_time"]
    send(**hello)
    # live: id -> Timer; a series stays there until it is cancelled
    heap, live, requests = [], {}, 0
    seq = [0]  # a counter the helpers below share
    fired_once = set()

    def arm(tid, delay_ns, fail=False, period=0, periodic=None, then=()):
        """Arms a timer (or series); returns the clock reading its delay counts from."""
        t = time.monotonic_ns()
        deadline = t + max(0, delay_ns)
        seq[0] += 1
        if not (bug == "lost" and tid % 5 == 0):
            heapq.heappush(heap, (deadline, seq[0], tid))
        live[tid] = Timer(deadline, fail, period, periodic, then)
        return t

    def cancel(tid):
        """Cancels a timer (or stops a series); returns the protocol's result."""
        timer = live.pop(tid, None)
        was_live = timer is not None
        if bug == "after_cancel" and was_live and tid % 3 == 0:
            live[tid] = timer  # says prevented, fires anyway
        if bug == "periodic_stop" and was_live and timer.period and timer.runs:
            live[tid] = timer  # says prevented, runs once more
            timer.stop_after_run = True
        if bug == "wrong_result" and tid in fired_once:
            was_live = True
        return "prevented" if was_live else "too_late"

    def fire(tid, timer):
        """Runs one timer's callback (or a series' run), its script included."""
        t = time.monotonic_ns()
        send(type="fired", id=tid, t_ns=t - (2_000_000 if bug == "early" else 0))
        if timer.period:
            timer.runs += 1
            if timer.stop_after_run:
                del live[tid]
                return
            timer.deadline = timer.next_due(t, time.monotonic_ns(), bug)
            seq[0] += 1
            heapq.heappush(heap, (timer.deadline, seq[0], tid))
            return
        live.pop(tid, None)
        if bug == "double" and tid % 7 == 0:
            send(type="fired", id=tid, t_ns=time.monotonic_ns())
        fired_once.add(tid)
        for action in timer.then:  # the callback's script, in order, before it returns
            if action["do"] == "schedule":
                t = arm(action["id"], action["delay_ns"], then=action.get("then", ()))
                send(type="scheduled", id=action["id"], t_ns=t, by=tid)
            else:
                send(type="cancelled", id=action["id"], result=cancel(action["id"]), by=tid)
        if timer.fail:
            try:
                raise RuntimeError(f"timer {tid} fails by design")
            except RuntimeError as e:
                if bug == "die_on_fail":
                    raise
                print(f"reference_subject.py: contained: {e}", file=sys.stderr)

    misbehaved = False  # unknown_id, second_answer: done once
    held = None  # --thread-safe: the first schedule's line, until a second request comes
    hold_first = "thread-safe" in opt
    buf = b""
    while True:
        now, batch, taken = time.monotonic_ns(), 0, []
        # At most 256 fires before stdin is looked at again: series that fell
        # behind (fixed_rate catches up) must not starve the requests.
        while heap and heap[0][0] <= now and batch < 256:
            batch += 1
            deadline, _, tid = heapq.heappop(heap)
            timer = live.get(tid)
            if timer is None or timer.deadline != deadline:
                continue  # cancelled, or a series' entry that a later one replaced
            if bug == "batch_cancel" and not timer.period:
                taken.append((tid, timer))  # run below, even if a sibling cancels it
                continue
            fire(tid, timer)
        for tid, timer in taken:
            fire(tid, timer)
        timeout = max(0.0, (heap[0][0] - time.monotonic_ns()) / 1e9) if heap else None
        ready, _, _ = select.select([sys.stdin], [], [], timeout)
        if not ready:
            continue
        chunk = os.read(sys.stdin.fileno(), 65536)
        if not chunk:
            return  # tlab went away
        buf += chunk
        lines = []
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            lines.append(line)
        if hold_first and lines:
            hold_first = False
            if len(lines) == 1 and json.loads(lines[0])["type"] == "schedule":
                held = lines.pop()  # served with the next request: two are then in flight
                continue
        if held is not None and lines:
            lines.insert(0, held)
            held = None
        for line in lines:
            msg = json.loads(line)
            requests += 1
            if misbehave == "exit_early" and requests == 20:
                print("reference_subject.py: exiting early by design", file=sys.stderr)
                sys.exit(3)
            if misbehave == "garbage" and requests == 20:
                out.write("this is not json\n")
                out.flush()
            if misbehave == "silent" and requests == 20:
                time.sleep(3600)
            if misbehave == "slow":
                time.sleep(0.5)
            if misbehave == "stderr":
                print(f"reference_subject.py: got {msg['type']}", file=sys.stderr)
            kind, tid = msg["type"], msg.get("id")
            if kind == "schedule":
                t = arm(tid, msg["delay_ns"], msg.get("fail", False), msg.get("period_ns", 0),
                        msg.get("periodic"), msg.get("then", ()))
                send(type="scheduled", id=tid, t_ns=t)
                # At the first schedule from the 20th request on: which request is
                # the 20th (a schedule or a cancel) depends on how tlab's threads ran.
                if requests >= 20 and not misbehaved:
                    misbehaved = True
                    if misbehave == "unknown_id":
                        send(type="fired", id=tid + 1000000, t_ns=t)
                    if misbehave == "second_answer":
                        send(type="scheduled", id=tid, t_ns=t)
            elif kind == "cancel":
                send(type="cancelled", id=tid, result=cancel(tid))
            elif kind == "shutdown":
                ids = sorted(k for k, v in live.items() if not v.stop_after_run)
                if bug == "pending_list" and ids:
                    ids = ids[1:]
                send(type="pending", ids=ids)
                if misbehave == "fire_after_pending" and fired_once:
                    send(type="fired", id=max(fired_once), t_ns=time.monotonic_ns())
                return


if __name__ == "__main__":
    main()
