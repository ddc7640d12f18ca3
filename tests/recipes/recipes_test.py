#!/usr/bin/env python3
"""Runs each scale-out recipe's shard command locally, as its system would run it,
then its merge command, and compares the merged report with an unsharded run.

usage: recipes_test.py TLAB SOURCE_DIR [RECIPE...]   (RECIPE: github, k8s, slurm;
default all)

  github  examples/ci/github-actions.yml: the `shard` step's script once per
          matrix value (${{ matrix.shard }} substituted, the workflow's env set),
          then the `merge` step's script in the same directory (the artifacts
          downloaded there).
  k8s     examples/k8s/indexed-job.yaml: the Indexed Job's container command once
          per index 0..completions-1 with JOB_COMPLETION_INDEX and the container's
          env (REPORT_DIR pointed at a scratch directory), then the merge Job's.
  slurm   examples/slurm/array.sh: `task` once per id of --array=1-3 with the
          variables Slurm sets (SLURM_ARRAY_TASK_ID, _MIN, _MAX, _COUNT, _STEP,
          SLURM_ARRAY_JOB_ID), then `merge`.

Each runs in a scratch directory where `scenarios` links to the source tree's and
tlab's directory leads PATH; the sharding variables of this process's own
environment are removed first. The merged report must equal `tlab check
$SCENARIOS` run unsharded, after stripping what differs between two runs
(environment, merged, cases' duration_s and peak_rss_bytes, and for mutant cases
counters.detect_us and violations' first_example, which read the real clock;
tests/e2e/shard_merge_test.cc shows the rest is deterministic). Exit 0 when every
recipe matches, 1 otherwise, naming the recipe and the first difference.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

SHARD_VARIABLES = [
    "TEST_SHARD_INDEX", "TEST_TOTAL_SHARDS", "TEST_SHARD_STATUS_FILE", "GTEST_SHARD_INDEX",
    "GTEST_TOTAL_SHARDS", "JOB_COMPLETION_INDEX", "TLAB_TOTAL_SHARDS", "CI_NODE_INDEX",
    "CI_NODE_TOTAL", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_COUNT", "SLURM_ARRAY_TASK_MIN",
    "SLURM_ARRAY_TASK_MAX", "SLURM_ARRAY_TASK_STEP", "SLURM_ARRAY_JOB_ID",
]


def strip(report):
    for key in ("environment", "merged", "shard"):
        report.pop(key, None)
    for case in report["cases"]:
        case.pop("duration_s", None)
        case.pop("peak_rss_bytes", None)
        if case["expect_fail"]:
            case["counters"].pop("detect_us", None)
            for v in case["violations"].values():
                v.pop("first_example", None)
    return report


class Recipe:
    def __init__(self, tlab, source):
        self.tlab = tlab
        self.source = source
        self.dir = tempfile.mkdtemp(prefix="tlab_recipe_")
        os.symlink(os.path.join(source, "scenarios"), os.path.join(self.dir, "scenarios"))
        self.env = {k: v for k, v in os.environ.items() if k not in SHARD_VARIABLES}
        self.env["PATH"] = os.path.dirname(os.path.abspath(tlab)) + os.pathsep + self.env["PATH"]

    def sh(self, script, extra, argv=(), ok=(0,)):
        env = dict(self.env)
        env.update(extra)
        r = subprocess.run(["sh", "-c", script, "sh", *argv], cwd=self.dir, env=env,
                           capture_output=True, text=True, timeout=120)
        if r.returncode not in ok:
            raise AssertionError(f"exit {r.returncode} from {script!r} with {extra}:\n{r.stderr}")
        return r

    def compare(self, merged_path, scenarios):
        self.sh(f"tlab check --report whole.json {scenarios}", {})
        with open(os.path.join(self.dir, merged_path)) as f:
            merged = strip(json.load(f))
        with open(os.path.join(self.dir, "whole.json")) as f:
            whole = strip(json.load(f))
        if merged != whole:
            ids = ([c["id"] for c in merged["cases"]], [c["id"] for c in whole["cases"]])
            raise AssertionError(f"merged report differs from the unsharded run; case ids {ids}")

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def github(r):
    with open(os.path.join(r.source, "examples/ci/github-actions.yml")) as f:
        wf = yaml.safe_load(f)
    env = {k: str(v) for k, v in wf.get("env", {}).items()}
    shard_job, merge_job = wf["jobs"]["shard"], wf["jobs"]["merge"]
    step = next(s for s in shard_job["steps"] if s.get("id") == "shard")
    for value in shard_job["strategy"]["matrix"]["shard"]:
        r.sh(step["run"].replace("${{ matrix.shard }}", str(value)), env)
    merge = next(s for s in merge_job["steps"] if s.get("id") == "merge")
    r.sh(merge["run"], env)
    r.compare("merged.json", env["SCENARIOS"])


def k8s(r):
    with open(os.path.join(r.source, "examples/k8s/indexed-job.yaml")) as f:
        docs = [d for d in yaml.safe_load_all(f) if d and d["kind"] == "Job"]
    shards = next(d for d in docs if d["spec"].get("completionMode") == "Indexed")
    merge = next(d for d in docs if d is not shards)

    def container(job):
        c = job["spec"]["template"]["spec"]["containers"][0]
        env = {e["name"]: str(e["value"]) for e in c.get("env", [])}
        env["REPORT_DIR"] = r.dir  # the shared volume
        assert c["command"][:2] == ["sh", "-c"], c["command"]
        return c["command"][2], env

    script, env = container(shards)
    if env.get("TLAB_TOTAL_SHARDS") != str(shards["spec"]["completions"]):
        raise AssertionError("TLAB_TOTAL_SHARDS differs from the Job's completions")
    for index in range(shards["spec"]["completions"]):
        r.sh(script, dict(env, JOB_COMPLETION_INDEX=str(index)))
    merge_script, merge_env = container(merge)
    r.sh(merge_script, merge_env)
    r.compare(os.path.join(r.dir, "merged.json"), env["SCENARIOS"])


def slurm(r):
    script = os.path.join(r.source, "examples/slurm/array.sh")
    first, last, job = 1, 3, "4242"  # sbatch --array=1-3
    base = {"SLURM_ARRAY_JOB_ID": job, "SLURM_ARRAY_TASK_MIN": str(first),
            "SLURM_ARRAY_TASK_MAX": str(last), "SLURM_ARRAY_TASK_COUNT": str(last - first + 1),
            "SLURM_ARRAY_TASK_STEP": "1"}
    for task in range(first, last + 1):
        r.sh('exec "$1" task', dict(base, SLURM_ARRAY_TASK_ID=str(task)), argv=[script])
    r.sh('exec "$1" merge', {"REPORT_DIR": f"reports-{job}"}, argv=[script])
    with open(script) as f:
        line = next(l for l in f if l.startswith("SCENARIOS="))
    r.compare(f"reports-{job}/merged.json", re.search(r'"(.*)"', line).group(1))


def main():
    tlab, source = sys.argv[1], sys.argv[2]
    recipes = {"github": github, "k8s": k8s, "slurm": slurm}
    names = sys.argv[3:] or list(recipes)
    failed = 0
    for name in names:
        r = Recipe(tlab, source)
        try:
            recipes[name](r)
            print(f"recipe {name}: merged report equals the unsharded run")
        except (AssertionError, KeyError, StopIteration, subprocess.TimeoutExpired) as e:
            print(f"recipe {name}: FAILED: {e}", file=sys.stderr)
            failed += 1
        finally:
            r.close()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
