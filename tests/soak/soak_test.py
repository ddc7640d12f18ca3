#!/usr/bin/env python3
"""tests/soak/soak_test.py: scripts/soak, shown failing and cleaning up, on a fixture.

Usage: soak_test.py SOAK FIXTURE_DIR WORK_DIR [CMAKE]
(CMAKE: the cmake to configure the fixture with; its ctest is the one soak runs)

Copies FIXTURE_DIR (a CMake project whose tests fail on a known schedule,
fixture/CMakeLists.txt) to WORK_DIR, configures its default and tsan presets,
installs fake_tlab.py as both builds' tool/tlab and points scripts/soak at it
(TLAB_SOAK_ROOT). No test here depends on timing: every failure comes from a
counter, and the one wait (for the hanging test to start) waits for a file.

  1. a missing build is exit 2 naming the command that builds it; a bad suite is exit 2
  2. `soak 2 --no-load` over all four suites: exit 1; each suite's alternating row
     failed 1/2 and every other row 0/2, in soak.json and the printed table; the
     first failure's saved output is the fixture's own message
  3. `soak 1` with (a tiny) load: the load's process group and its file are gone
     after soak exits
  4. Ctrl-C (SIGINT to soak's process group, as a terminal sends it) while a test
     hangs: exit 130, the load, ctest and the hanging test are all gone
The load in 3 and 4 is one busy loop, 8 MiB and 1 MiB for about a second.
"""
import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import time

SOAK, FIXTURE, WORK = sys.argv[1:4]
if len(sys.argv) > 4:
    os.environ["PATH"] = os.path.dirname(sys.argv[4]) + os.pathsep + os.environ["PATH"]
TREE = os.path.join(WORK, "tree")
TINY_LOAD = {"TLAB_SOAK_CPU_HOGS": "1", "TLAB_SOAK_MEM_MB": "8", "TLAB_SOAK_IO_MB": "1"}
failures = []


def expect(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def soak(args, root=TREE, env=None):
    """Runs scripts/soak to its end; one that has not ended after 60 s (a fixture round
    takes well under a second) is killed and fails here."""
    e = dict(os.environ, TLAB_SOAK_ROOT=root, PYTHON3=sys.executable)
    e.pop("SOAK_FIXTURE_HANG", None)
    e.update(env or {})
    try:
        return subprocess.run([SOAK, *args], env=e, capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired as t:
        expect(False, f"soak {' '.join(args)}: still running after 60 s")
        text = [x.decode(errors="replace") if isinstance(x, bytes) else x or ""
                for x in (t.stdout, t.stderr)]
        return subprocess.CompletedProcess(t.cmd, -1, *text)


def live(pgid=None, pid=None):
    """Pids of live processes in process group pgid (or pid itself). A zombie (exited,
    waiting for a parent that may not be ours to reap it) counts as gone."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or (pid is not None and int(d) != pid):
            continue
        try:
            with open(f"/proc/{d}/stat", encoding="utf-8") as f:
                state, _, pgrp = f.read().rsplit(")", 1)[1].split()[:3]
        except OSError:
            continue  # exited while we looked
        if state != "Z" and (pgid is None or int(pgrp) == pgid):
            found.append(int(d))
    return found


def setup():
    shutil.rmtree(WORK, ignore_errors=True)
    shutil.copytree(FIXTURE, TREE)
    for preset in ("default", "tsan"):
        subprocess.run(["cmake", "--preset", preset], cwd=TREE, check=True,
                       stdout=subprocess.DEVNULL)
        tool = os.path.join(TREE, "build", preset, "tool")
        os.makedirs(tool)
        tlab = os.path.join(tool, "tlab")
        with open(os.path.join(os.path.dirname(__file__), "fake_tlab.py"), encoding="utf-8") as f:
            body = f.read().split("\n", 1)[1]
        with open(tlab, "w", encoding="utf-8") as f:
            f.write(f"#!{sys.executable}\n{body}")  # this interpreter: no PATH lookup
        os.chmod(tlab, os.stat(tlab).st_mode | stat.S_IXUSR)


def missing_build():
    empty = os.path.join(WORK, "empty")
    os.makedirs(empty)
    shutil.copy(os.path.join(FIXTURE, "CMakePresets.json"), empty)
    r = soak(["1", "--suites", "default", "--no-load"], root=empty)
    expect(r.returncode == 2, f"no build: exit 2 (got {r.returncode})")
    expect("missing: build/default" in r.stderr and "cmake --build --preset default" in r.stderr,
           f"no build: names it and its build command: {r.stderr.strip()!r}")
    r = soak(["1", "--suites", "default,nightly"])
    expect(r.returncode == 2 and "unknown suite 'nightly'" in r.stderr,
           f"bad suite: exit 2 naming it (got {r.returncode}: {r.stderr.strip()!r})")


def tally_run():
    out = os.path.join(WORK, "out")
    r = soak(["2", "--no-load", "--out", out])
    print(r.stdout)
    expect(r.returncode == 1, f"a flaky test: exit 1 (got {r.returncode}; stderr {r.stderr!r})")
    with open(os.path.join(out, "soak.json"), encoding="utf-8") as f:
        tally = json.load(f)
    expected = {
        "default": ("flaky", ["steady_a", "steady_b", "hang"]),
        "tsan": ("flaky", ["steady_a", "steady_b", "hang"]),
        "check": ("racing_cancellers/hashed_wheel",
                  ["racing_cancellers/binary_heap", "racing_cancellers/binary_heap/token_flag_only"]),
        "kill": ("token_flag_only@sim:racing_cancellers",
                 ["token_flag_only@scenario:racing_cancellers",
                  "lost_notify@tsan:timer_service_thread_test"]),
    }
    expect(tally["rounds_done"] == 2 and len(tally["rounds"]) == 2, "soak.json: 2 rounds")
    for suite, (flaky, steady) in expected.items():
        tests = {t["name"]: t for t in tally["suites"].get(suite, {}).get("tests", [])}
        expect(set(tests) == {flaky, "(exit status)", *steady},
               f"{suite}: rows {sorted(tests)}")
        for name, failed in [(flaky, 1), ("(exit status)", 1)] + [(s, 0) for s in steady]:
            t = tests.get(name, {})
            expect((t.get("failed"), t.get("runs")) == (failed, 2),
                   f"{suite} {name}: failed {failed}/2 (got {t.get('failed')}/{t.get('runs')})")
        first = (tests.get(flaky) or {}).get("first_failure") or {}
        expect(first.get("round") == 1, f"{suite} {flaky}: first failure in round 1")
        expect(any(line.split() == [flaky, "1/2"] for line in r.stdout.splitlines()),
               f"{suite} {flaky}: '1/2' in the printed table")
        if suite in ("default", "tsan") and first.get("output"):
            with open(first["output"], encoding="utf-8") as f:
                expect("flaky: run 1 fails" in f.read(),
                       f"{suite} flaky: the saved first failure is the test's own output")
    expect(not os.path.exists(os.path.join(out, "load.pgid")), "--no-load: no load started")


def load_cleanup():
    out = os.path.join(WORK, "out-load")
    r = soak(["1", "--suites", "default", "--out", out], env=TINY_LOAD)
    with open(os.path.join(out, "load.pgid"), encoding="utf-8") as f:
        pgid = int(f.read())
    expect("== soak: load: busy loops: 1" in r.stdout, "with load: it says what load runs")
    # The flaky test's 3rd run (after the two above): it fails, and soak says so.
    expect(r.returncode == 1, f"with load: exit 1, the flaky test's 3rd run (got {r.returncode})")
    expect(not live(pgid=pgid), f"with load: no process of the load's group {pgid} is left")
    reap(pgid)
    expect(not os.path.exists(os.path.join(out, "io-hog.bin")), "with load: the I/O hog's file is gone")


def interrupt():
    out, hang = os.path.join(WORK, "out-int"), os.path.join(WORK, "hang.pid")
    e = dict(os.environ, TLAB_SOAK_ROOT=TREE, PYTHON3=sys.executable, SOAK_FIXTURE_HANG=hang,
             **TINY_LOAD)
    # Output to a file, not a pipe: reading a pipe to its end would also wait for
    # any process that soak left holding it.
    log = open(os.path.join(WORK, "interrupt.log"), "w+", encoding="utf-8")
    p = subprocess.Popen([SOAK, "3", "--suites", "default", "-R", "^hang$", "--out", out], env=e,
                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 60  # an upper bound on a start, never a measured time
    while not os.path.exists(hang) and p.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    expect(os.path.exists(hang), "Ctrl-C: the hanging test started")
    if not os.path.exists(hang):
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        log.seek(0)
        print(log.read())
        log.close()
        return
    with open(hang, encoding="utf-8") as f:
        hang_pid = int(f.read())
    with open(os.path.join(out, "load.pgid"), encoding="utf-8") as f:
        pgid = int(f.read())
    expect(live(pgid=pgid), "Ctrl-C: the load runs while the test hangs")
    os.killpg(p.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the foreground group
    try:
        p.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    log.seek(0)
    print(log.read())
    log.close()
    expect(p.returncode == 130, f"Ctrl-C: exit 130 (got {p.returncode})")
    expect(not live(pgid=pgid), f"Ctrl-C: no process of the load's group {pgid} is left")
    expect(not live(pid=hang_pid), "Ctrl-C: the hanging test is gone")
    expect(not live(pgid=p.pid), "Ctrl-C: nothing of soak's own group (ctest, tests) is left")
    reap(pgid, p.pid)


def reap(*pgids):
    """Kills what a broken soak left behind in these groups, so a failing run of this
    test leaves no hog on the machine either."""
    for g in pgids:
        try:
            os.killpg(g, signal.SIGKILL)
        except ProcessLookupError:
            pass


def main():
    setup()
    missing_build()
    tally_run()
    load_cleanup()
    interrupt()
    if failures:
        print(f"\nsoak_test: {len(failures)} checks failed:\n  " + "\n  ".join(failures))
        return 1
    print("\nsoak_test: all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
