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
(deadline, sequence, id), time.monotonic_ns() as the clock.
"""
import heapq
import json
import os
import select
import sys
import time

BUGS = {"early", "lost", "double", "after_cancel", "wrong_result", "pending_list",
        "die_on_fail"}
MISBEHAVIOURS = {"garbage", "exit_early", "silent", "unknown_id", "slow", "no_hello",
                 "bad_hello", "stderr", "second_answer", "fire_after_pending"}


OPTIONS = {"bug", "misbehave", "tag", "helpers", "thread-safe"}


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
                 kind="facility", features=["fail"],
                 promises=["delivery", "exactly_once", "never_early", "accurate_cancel",
                           "pending_count", "contains_errors"])
    if "thread-safe" in opt:
        hello["promises"].append("thread_safe")
    if misbehave == "bad_hello":
        hello["promises"] = ["delivery", "virtual_time"]
    send(**hello)
    heap, live, seq, requests = [], {}, 0, 0  # live: id -> (deadline, fail)
    fired_once = set()
    misbehaved = False  # unknown_id, second_answer: done once
    held = None  # --thread-safe: the first schedule's line, until a second request comes
    hold_first = "thread-safe" in opt
    buf = b""
    while True:
        now = time.monotonic_ns()
        while heap and heap[0][0] <= now:
            deadline, _, tid = heapq.heappop(heap)
            if tid not in live:
                continue  # cancelled
            _, fail = live.pop(tid)
            t = time.monotonic_ns()
            send(type="fired", id=tid, t_ns=t - (2_000_000 if bug == "early" else 0))
            if bug == "double" and tid % 7 == 0:
                send(type="fired", id=tid, t_ns=time.monotonic_ns())
            fired_once.add(tid)
            if fail:
                try:
                    raise RuntimeError(f"timer {tid} fails by design")
                except RuntimeError as e:
                    if bug == "die_on_fail":
                        raise
                    print(f"reference_subject.py: contained: {e}", file=sys.stderr)
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
                t = time.monotonic_ns()
                deadline = t + max(0, msg["delay_ns"])
                seq += 1
                if not (bug == "lost" and tid % 5 == 0):
                    heapq.heappush(heap, (deadline, seq, tid))
                live[tid] = (deadline, msg.get("fail", False))
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
                was_live = live.pop(tid, None) is not None
                if bug == "after_cancel" and was_live and tid % 3 == 0:
                    live[tid] = (0, False)  # says prevented, fires anyway
                if bug == "wrong_result" and tid in fired_once:
                    was_live = True
                send(type="cancelled", id=tid, result="prevented" if was_live else "too_late")
            elif kind == "shutdown":
                ids = sorted(live)
                if bug == "pending_list" and ids:
                    ids = ids[1:]
                send(type="pending", ids=ids)
                if misbehave == "fire_after_pending" and fired_once:
                    send(type="fired", id=max(fired_once), t_ns=time.monotonic_ns())
                return


if __name__ == "__main__":
    main()
