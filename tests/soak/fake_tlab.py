#!/usr/bin/env python3
"""tests/soak/fake_tlab.py: stands in for build/default/tool/tlab in the soak fixture.

soak_test.py installs it as the fixture's build/default/tool/tlab and
build/tsan/tool/tlab. It answers the two command lines scripts/soak runs, with
results that fail on odd calls of each command (1st, 3rd, ...), counted in a file
next to itself, so the tally's expected numbers are known:

  check --junit F
      JUnit XML with 3 cases; on odd calls racing_cancellers/hashed_wheel fails
  mutants --layers scenario,sim,tsan --tsan-tlab T --report F   (T executable)
      a report whose kill matrix has 3 checks; on odd calls
      token_flag_only@sim:racing_cancellers catches its mutant in 19 of 20 trials

Any other command line is exit 2 (usage), which soak_test.py would see as a
failing "(exit status)" row: so the test also holds soak to those command lines.
"""
import json
import os
import sys


def calls(cmd):
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"fake_tlab.{cmd}.count")
    try:
        with open(path, encoding="utf-8") as f:
            n = int(f.read()) + 1
    except OSError:
        n = 1
    with open(path, "w", encoding="utf-8") as f:
        f.write(str(n))
    return n


def usage():
    print(f"fake tlab: unexpected command line: {sys.argv[1:]}", file=sys.stderr)
    return 2


def check(args):
    if len(args) != 2 or args[0] != "--junit":
        return usage()
    bad = calls("check") % 2 == 1
    failure = ('<failure message="violations: double_resume">double_resume: 1 (first: '
               'fake: waiter#0 resumed twice on an odd call)</failure>')
    with open(args[1], "w", encoding="utf-8") as f:
        f.write(f"""<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="tlab check" tests="3" failures="{int(bad)}" errors="0" skipped="0" time="0.3">
  <testsuite name="racing_cancellers" tests="3" failures="{int(bad)}" errors="0" skipped="0" time="0.3">
    <testcase classname="tlab.racing_cancellers" name="binary_heap" time="0.100"/>
    <testcase classname="tlab.racing_cancellers" name="hashed_wheel" time="0.100">{failure if bad else ''}</testcase>
    <testcase classname="tlab.racing_cancellers" name="binary_heap/token_flag_only" time="0.100">
      <system-out>caught, as required</system-out>
    </testcase>
  </testsuite>
</testsuites>
""")
    print("fake tlab check: 3 cases" + (", 1 failed" if bad else ""))
    return 1 if bad else 0


def mutants(args):
    expected = ["--layers", "scenario,sim,tsan", "--tsan-tlab", None, "--report", None]
    if len(args) != len(expected) or any(e and a != e for a, e in zip(args, expected)):
        return usage()
    if not os.access(args[3], os.X_OK):
        print(f"fake tlab: --tsan-tlab {args[3]} is not executable", file=sys.stderr)
        return 2
    bad = calls("mutants") % 2 == 1

    def check_row(mutant, layer, key, trials, caught):
        return {"mutant": mutant, "layer": layer, "key": key, "check": key, "trials": trials,
                "detect_s": [0.01] * caught, "detail": f"fake {layer} detail"}

    checks = [check_row("token_flag_only", "scenario", "racing_cancellers", 1, 1),
              check_row("token_flag_only", "sim", "racing_cancellers", 20, 19 if bad else 20),
              check_row("lost_notify", "tsan", "timer_service_thread_test", 1, 1)]
    report = {"command": "mutants",
              "kill_matrix": {"checks": checks, "summary": {"exit_code": int(bad)}}}
    with open(args[5], "w", encoding="utf-8") as f:
        json.dump(report, f)
    print("fake tlab mutants: 3 checks" + ("; SIM BELOW 100%" if bad else ""))
    return 1 if bad else 0


def main():
    cmd, args = (sys.argv[1], sys.argv[2:]) if len(sys.argv) > 1 else ("", [])
    return {"check": check, "mutants": mutants}.get(cmd, lambda _: usage())(args)


if __name__ == "__main__":
    sys.exit(main())
