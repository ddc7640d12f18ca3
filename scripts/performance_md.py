#!/usr/bin/env python3
"""scripts/performance_md.py: renders `tlab compare` reports as docs/performance.md.

Usage: performance_md.py OUT MACHINE_JSON RUN_JSON...

MACHINE_JSON: {"date", "cpu_model", "load_average", "generator"} (scripts/performance
writes it). Each RUN_JSON: {"title", "command", "why", "report"}, where report is a
`tlab compare --report` file. Every table says which run it comes from; the run says
its command, machine and date, so the file can be regenerated and checked.

Ground rules: reads only its arguments; writes OUT atomically (a temporary file
renamed over it). A report that is not a compare report is exit 2, naming it.
"""
import json
import os
import sys

COST = ("insert_cancel", "insert_expire", "churn")
THREADED = ("mt_schedule_cancel", "mt_churn")
LATENCY = ("lateness", "cancel_to_resume")


def ns(v):
    """A duration in ns, short: 31.7, 156, 2.38k (us shown as k ns keeps one unit)."""
    if v is None:
        return "-"
    if v >= 1e5:
        return f"{v / 1e3:.0f}k"
    if v >= 1e3:
        return f"{v / 1e3:.2f}k"
    if v >= 100:
        return f"{v:.0f}"
    return f"{v:.1f}"


def us(v):
    return "-" if v is None else f"{v / 1e3:.1f}"


def rate(v):
    if v is None:
        return "-"
    for unit, scale in (("M", 1e6), ("k", 1e3)):
        if v >= scale:
            return f"{v / scale:.2f}{unit}"
    return f"{v:.0f}"


def spread(rounds):
    rounds = [r for r in (rounds or []) if r]
    if len(rounds) < 2:
        return ""
    return f" ({max(rounds) / min(rounds):.2f})"


def table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


def impl_order(results):
    order = []
    for r in results:
        if r["impl"] not in order:
            order.append(r["impl"])
    return order


def cost_tables(results):
    out = []
    pendings = sorted({r["pending"] for r in results if r["workload"] in COST})
    for w in COST:
        rows = [r for r in results if r["workload"] == w]
        if not rows:
            continue
        by = {(r["impl"], r["pending"]): r for r in rows}
        header = ["impl"] + [f"ns/op @{p:,}" for p in pendings]
        if w == "insert_cancel":
            header.append(f"B/timer @{pendings[-1]:,}")
        body = []
        for impl in impl_order(rows):
            line = [f"`{impl}`"]
            for p in pendings:
                r = by.get((impl, p))
                line.append("-" if r is None else ns(r["ns_per_op"]) + spread(r["round_ns_per_op"]))
            if w == "insert_cancel":
                r = by.get((impl, pendings[-1]))
                b = r and r.get("bytes_per_timer")
                line.append("-" if not b else f"{b:.1f}")
            body.append(line)
        out.append(f"**{w}** (CPU ns per operation, median of rounds; in brackets the "
                   f"slowest round over the fastest)\n\n" + table(header, body))
    return out


def threaded_tables(results):
    out = []
    for w in THREADED:
        rows = [r for r in results if r["workload"] == w]
        if not rows:
            continue
        cells = sorted({(r["pending"], r["threads"]) for r in rows})
        by = {(r["impl"], r["pending"], r["threads"]): r for r in rows}
        header = ["impl"] + [f"ops/s @{p:,}, {t} thr (wall ns/op)" for p, t in cells]
        body = []
        for impl in impl_order(rows):
            line = [f"`{impl}`"]
            for p, t in cells:
                r = by.get((impl, p, t))
                line.append("-" if r is None else
                            f"{rate(r['ops_per_s'])} ({ns(r['wall_ns_per_op'])})")
            body.append(line)
        out.append(f"**{w}** (operations per second over all threads, median of rounds)\n\n"
                   + table(header, body))
    return out


def latency_table(results, baselines):
    rows = [r for r in results if r["workload"] in LATENCY and r.get("latency")]
    if not rows:
        return []
    sleep = (baselines.get("clock_nanosleep") or {}).get("lateness") or {}
    wake = baselines.get("cv_wake") or {}
    body = []
    for impl in impl_order(rows):
        line = [f"`{impl}`"]
        for w in LATENCY:
            r = next((x for x in rows if x["impl"] == impl and x["workload"] == w), None)
            if r is None:
                line += ["-", "-"]
                continue
            h = r["latency"]
            line += [f"{us(h['p50'])} / {us(h['p99'])}", f"{r['ratio']:.2f}x"]
        body.append(line)
    head = ("**lateness and cancel-to-resume** (microseconds; the ratio is against the OS "
            f"limit measured in the same run: lateness p99 over `clock_nanosleep`'s p99, "
            f"{us(sleep.get('p99'))} us; cancel-to-resume p50 over a condition-variable "
            f"wake's p50, {us(wake.get('p50'))} us, measured in rounds interleaved with "
            "each subject)\n\n")
    return [head + table(["impl", "lateness p50 / p99", "x clock_nanosleep p99",
                          "cancel-to-resume p50 / p99", "x cv wake p50"], body)]


def versus_table(c):
    rows = c.get("versus_peers") or []
    if not rows:
        return []
    body = [[r["workload"], f"{r['pending']:,}", r["threads"] or "-", r["measure"],
             f"`{r['ours']}` {ns(r['ours_ns'])}", f"`{r['peer']}` {ns(r['peer_ns'])}",
             f"{r['factor']:.2f}x"] for r in rows]
    return ["**versus peers**: our least-cost subject against the fastest peer in each cost "
            "cell (factor = peer / ours; above 1, ours is faster)\n\n"
            + table(["workload", "pending", "threads", "measure", "ours (ns/op)",
                     "fastest peer (ns/op)", "factor"], body)]


def scaling_table(c):
    rows = c.get("scaling") or []
    if not rows:
        return []
    body = [[r["workload"], f"`{r['impl']}`", f"{r['pending']:,}", r["threads"],
             rate(r["ops_per_s"]), f"{r['vs_base']:.2f}x"] for r in rows]
    return ["**scaling**: ops/s over the same subject's at the fewest threads measured\n\n"
            + table(["workload", "impl", "pending", "threads", "ops/s", "vs fewest"], body)]


def run_section(run, machine):
    try:
        with open(run["report"]) as f:
            doc = json.load(f)
        c = doc["compare"]
        env = doc["environment"]
    except (OSError, ValueError, KeyError) as e:
        print(f"performance_md.py: {run['report']}: not a tlab compare report ({e})",
              file=sys.stderr)
        sys.exit(2)
    base = c["baselines"]
    cpus = env["cpus"]
    cpus = cpus.get("available", cpus.get("online")) if isinstance(cpus, dict) else cpus
    parts = [f"## {run['title']}\n", run["why"] + "\n",
             f"```sh\n{run['command']}\n```\n",
             f"Measured {machine['date']} on {machine['cpu_model']}, {cpus} CPUs "
             f"available, load average {machine['load_average']} at the start; "
             f"{env['compiler']}, {env['build_type']} `{env['flags']}`; "
             f"{env['kernel']}, timer slack {env['timer_slack_ns']} ns; tlab "
             f"{env['tlab_version']} ({env['git_revision']}); {c['wall_s']:.0f} s wall.\n",
             f"Baselines of this run: CAS {base['cas_uncontended_ns']:.1f} ns uncontended, "
             f"{base['cas_contended_ns']:.1f} ns contended ({base['cas_contended_threads']} "
             "threads).\n"]
    parts += cost_tables(c["results"])
    parts += threaded_tables(c["results"])
    parts += latency_table(c["results"], base)
    parts += scaling_table(c)
    parts += versus_table(c)
    return "\n".join(parts)


def main(argv):
    if len(argv) < 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    out, machine_path, runs = argv[1], argv[2], argv[3:]
    with open(machine_path) as f:
        machine = json.load(f)
    sections = []
    for path in runs:
        with open(path) as f:
            sections.append(run_section(json.load(f), machine))
    text = (
        "# Performance\n\n"
        f"Generated by `{machine['generator']}` on {machine['date']}; do not edit by hand. "
        "Every table below comes from the `tlab compare` command printed above it, run on "
        "the machine it names; run `scripts/performance` to measure your own machine (it "
        "rewrites this file). What the workloads and measures are, and how to read them: "
        "[guide.md](guide.md#which-strategy-at-what-cost-tlab-compare).\n\n"
        + "\n".join(sections))
    tmp = out + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
