#!/usr/bin/env python3
"""scripts/soak_tally.py: the bookkeeping half of scripts/soak (not run by hand).

scripts/soak runs the suites; this reads what each run left behind and keeps the
tally in the soak's out directory OUT:

  record OUT SUITE ROUND EXIT SECONDS RESULT LOG
      reads RESULT, appends one line per test to OUT/results.tsv and one for the run
      to OUT/runs.tsv, saves each failure's output as
      OUT/failures/SUITE/TEST.round-ROUND.txt, and prints a short status for the
      progress line: "ok 41", or "FAILED 2/41: a b".
  summary OUT --planned N --suites LIST --load TEXT [--regex R]
      prints a table per suite and each failing test's first failure, writes
      OUT/soak.json, exits 0 when no run failed and 1 when one did.

What a row is, per kind of RESULT:

  | RESULT                        | suites        | row (test)                    | failed when             |
  |-------------------------------|---------------|-------------------------------|-------------------------|
  | JUnit XML (ctest)             | default, tsan | the ctest test name           | <failure> or <error>    |
  | JUnit XML (`tlab check`)      | check         | scenario/strategy[/mutant]    | <failure> or <error>    |
  | `tlab mutants --report` JSON  | kill          | mutant@layer:key (one check)  | caught in < all trials  |
  | any                           | every suite   | (exit status)                 | the command exited != 0 |

A JUnit <skipped> (ctest "Not Run", an interrupted case) is neither pass nor
failure: it counts as skipped, out of the row's runs. "(exit status)" makes a run
that failed without a failing row (a crash before any result, a kill-matrix gate
such as "caught by no layer", a ctest error) still count; its output, the log's
tail, is kept only for such a run: where failing rows explain it, theirs is.

results.tsv: round, suite, test, pass|fail|skip, failure file (or -: passed, or an
exit status that failing rows explain).
runs.tsv: round, suite, exit status, seconds. rounds.tsv (written by scripts/soak):
round, wall seconds.
"""
import argparse
import json
import os
import re
import sys
import xml.etree.ElementTree as ET

EXIT_ROW = "(exit status)"
LOG_TAIL = 40  # lines of a suite's log kept as the output of "(exit status)"
SHOWN = 12  # lines of a first failure's output printed under the tables
# The lines of a failure's output worth printing first: gtest's "file:line: Failure",
# tlab's "timeout: no hello within 1 s", a sanitizer's report, ...
TELLING = re.compile(r"fail|error|timeout|timed out|assert|abort|sanitizer|survived|"
                     r"exception|signal|segmentation", re.I)


def junit_rows(path):
    """(name, result, output) per <testcase> of a JUnit file; [] if there is none."""
    if not os.path.exists(path):
        return []
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:
        return []
    rows = []
    for tc in root.iter("testcase"):
        cls, name = tc.get("classname", ""), tc.get("name", "")
        cls = cls[len("tlab."):] if cls.startswith("tlab.") else cls  # tlab check: tlab.<scenario>
        test = name if not cls or cls == name else f"{cls}/{name}"
        bad = [e for e in tc if e.tag in ("failure", "error")]
        result = "fail" if bad else "skip" if tc.find("skipped") is not None else "pass"
        output = ""
        for e in bad + [e for e in tc if e.tag in ("system-out", "system-err")]:
            if e.get("message"):
                output += f"{e.tag}: {e.get('message')}\n"
            output += (e.text or "").rstrip() + ("\n" if e.text else "")
        rows.append((test, result, output))
    return rows


def kill_rows(path):
    """(name, result, output) per check of a `tlab mutants --report` file."""
    try:
        with open(path, encoding="utf-8") as f:
            checks = json.load(f)["kill_matrix"]["checks"]
    except (OSError, ValueError, KeyError, TypeError):
        return []
    rows = []
    for c in checks:
        caught, trials = len(c.get("detect_s") or []), c.get("trials", 0)
        result = "pass" if trials and caught == trials else "fail"
        output = (f"{c['mutant']} caught {caught}/{trials} by {c['layer']} check {c['check']}\n"
                  f"detail: {c.get('detail', '')}\n")
        rows.append((f"{c['mutant']}@{c['layer']}:{c['key']}", result, output))
    return rows


def safe(name):
    return re.sub(r"[^A-Za-z0-9_.@:-]+", "_", name)[:150]


def tail(path, n):
    """The last n lines of the file at path (all of them if n is None); "" if unreadable."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return "".join(f.readlines()[-n:] if n else f.readlines())
    except OSError:
        return ""


def excerpt(path):
    """Up to SHOWN lines of a saved failure: the telling ones, else its last ones."""
    lines = tail(path, None).rstrip("\n").split("\n")
    telling = list(dict.fromkeys(line for line in lines if TELLING.search(line)))
    return telling[:SHOWN] if telling else lines[-SHOWN:]


def record(a):
    rows = kill_rows(a.result) if a.suite == "kill" else junit_rows(a.result)
    exit_output = (f"{a.suite} exited {a.exit}; full log: {a.log}\n"
                   f"--- last {LOG_TAIL} lines ---\n{tail(a.log, LOG_TAIL)}")
    rows.append((EXIT_ROW, "fail" if a.exit != 0 else "pass", exit_output))
    failed = [test for test, result, _ in rows if result == "fail" and test != EXIT_ROW]
    with open(os.path.join(a.out, "results.tsv"), "a", encoding="utf-8") as tsv:
        for test, result, output in rows:
            saved = "-"
            # A failed exit status that failing tests explain keeps no output of its own.
            if result == "fail" and not (test == EXIT_ROW and failed):
                d = os.path.join(a.out, "failures", a.suite)
                os.makedirs(d, exist_ok=True)
                saved = os.path.join(d, f"{safe(test)}.round-{a.round}.txt")
                with open(saved, "w", encoding="utf-8") as f:
                    f.write(output)
            tsv.write(f"{a.round}\t{a.suite}\t{test}\t{result}\t{saved}\n")
    with open(os.path.join(a.out, "runs.tsv"), "a", encoding="utf-8") as tsv:
        tsv.write(f"{a.round}\t{a.suite}\t{a.exit}\t{a.seconds}\n")
    n = len(rows) - 1
    if a.exit == 0 and not failed:
        print(f"ok {n}")
    elif failed:
        shown = " ".join(failed[:3]) + (" ..." if len(failed) > 3 else "")
        print(f"FAILED {len(failed)}/{n}: {shown}")
    else:
        print(f"FAILED (exit {a.exit}, no failing test in {n}; see the log)")


def read_tsv(path):
    try:
        with open(path, encoding="utf-8") as f:
            return [line.rstrip("\n").split("\t") for line in f if line.strip()]
    except OSError:
        return []


def summary(a):
    tests = {}  # suite -> test -> {"runs", "failed", "skipped", "first_failure"}
    for rnd, suite, test, result, saved in read_tsv(os.path.join(a.out, "results.tsv")):
        t = tests.setdefault(suite, {}).setdefault(
            test, {"runs": 0, "failed": 0, "skipped": 0, "first_failure": None})
        if result == "skip":
            t["skipped"] += 1
            continue
        t["runs"] += 1
        if result == "fail":
            t["failed"] += 1
            if t["first_failure"] is None and saved != "-":
                t["first_failure"] = {"round": int(rnd), "output": saved}
    runs = {}
    for rnd, suite, code, secs in read_tsv(os.path.join(a.out, "runs.tsv")):
        runs.setdefault(suite, []).append({"round": int(rnd), "exit": int(code),
                                           "seconds": float(secs)})
    rounds = [{"round": int(r), "seconds": float(s)}
              for r, s in read_tsv(os.path.join(a.out, "rounds.tsv"))]

    any_failed = False
    report = {"rounds_planned": a.planned, "rounds_done": len(rounds),
              "load": a.load, "regex": a.regex, "rounds": rounds,
              "wall_seconds": round(sum(r["seconds"] for r in rounds), 1), "suites": {}}
    firsts = []
    for suite in [s for s in a.suites.split(",") if s in tests]:
        rows = sorted(tests[suite].items(),
                      key=lambda kv: (-kv[1]["failed"], kv[0] != EXIT_ROW, kv[0]))
        width = max(len("TEST"), *(len(name) for name, _ in rows))
        n_failed = sum(1 for _, t in rows if t["failed"])
        any_failed = any_failed or n_failed > 0
        secs = [r["seconds"] for r in runs.get(suite, [])]
        mean = sum(secs) / len(secs) if secs else 0
        print(f"== {suite}: {len(rows) - 1} tests, {len(secs)} runs (mean {mean:.1f}s), "
              f"{n_failed} rows failed at least once")
        print(f"{'TEST':<{width}}  FAILED")
        for name, t in rows:
            skipped = f" ({t['skipped']} skipped)" if t["skipped"] else ""
            print(f"{name:<{width}}  {t['failed']}/{t['runs']}{skipped}")
            if t["first_failure"]:
                firsts.append((suite, name, t))
        print()
        report["suites"][suite] = {
            "runs": runs.get(suite, []),
            "tests": [{"name": name, **t} for name, t in rows]}

    if firsts:
        print("== first failure of each failing test (all of them: "
              f"{os.path.join(a.out, 'failures')})")
        for suite, name, t in firsts:
            f = t["first_failure"]
            print(f"-- {suite} {name}: failed {t['failed']}/{t['runs']}, first in round "
                  f"{f['round']}: {f['output']}")
            for line in excerpt(f["output"]):
                print("   | " + line)
        print()
    walls = ", ".join(f"{r['round']}: {r['seconds']:.1f}s" for r in rounds)
    print(f"== soak: {len(rounds)}/{a.planned} rounds in {report['wall_seconds']:.1f}s "
          f"(per round: {walls or '-'}); load: {a.load}")
    report["failed"] = any_failed
    with open(os.path.join(a.out, "soak.json"), "w", encoding="utf-8") as f:
        json.dump(report, f, indent=2)
        f.write("\n")
    verdict = "FAILED: some test failed at least once" if any_failed else "no run failed"
    print(f"== soak: {verdict}; tally in {os.path.join(a.out, 'soak.json')}")
    return 1 if any_failed else 0


def main():
    p = argparse.ArgumentParser(prog="soak_tally.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    for arg in ("out", "suite"):
        r.add_argument(arg)
    r.add_argument("round", type=int)
    r.add_argument("exit", type=int)
    r.add_argument("seconds")
    r.add_argument("result")
    r.add_argument("log")
    s = sub.add_parser("summary")
    s.add_argument("out")
    s.add_argument("--planned", type=int, required=True)
    s.add_argument("--suites", required=True)
    s.add_argument("--load", required=True)
    s.add_argument("--regex", default="")
    a = p.parse_args()
    if a.cmd == "record":
        record(a)
        return 0
    return summary(a)


if __name__ == "__main__":
    sys.exit(main())
