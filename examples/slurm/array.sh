#!/bin/sh
# tlab on Slurm: a job array of 3 tasks runs `tlab check` as 3 shards, and a job
# that depends on the whole array merges their reports (docs/scale-out.md).
#
#   examples/slurm/array.sh submit     # from the repository root, on a login node
#
# submits this script twice: as the array (--array=1-3; tlab reads
# SLURM_ARRAY_TASK_ID relative to SLURM_ARRAY_TASK_MIN, so ids 1, 2, 3 are shards
# 0, 1, 2 of SLURM_ARRAY_TASK_COUNT) and as the merge job, with
# --dependency=afterany on the array, so it runs when every task has ended, failed
# or not, and names any shard whose report is missing. `tlab` must be on PATH on
# the compute nodes, and the submit directory on a shared file system.
#
# A task's exit 1 is a finding, kept in its report; the merge job's exit is the
# gate (0 pass, 1 a violation or surviving mutant, 2 a missing shard).
#
# tests/recipes/recipes_test.py runs the task part 3 times with the variables Slurm
# sets for --array=1-3, then the merge part, and compares with an unsharded run.
#SBATCH --job-name=tlab-check
#SBATCH --time=01:00:00
#SBATCH --cpus-per-task=2
set -u

# The scenarios to check; empty means tlab's built-in suite.
SCENARIOS=${SCENARIOS-"scenarios/facility_ties.json scenarios/fixed_rate_drift.json scenarios/huge_and_negative_delays.json"}
SHARDS=3

case "${1:-task}" in
  submit)
    array=$(sbatch --parsable --array=1-$SHARDS "$0" task) || exit
    sbatch --dependency=afterany:"$array" --export=ALL,REPORT_DIR="reports-$array" "$0" merge
    ;;
  task)
    dir=${REPORT_DIR:-reports-$SLURM_ARRAY_JOB_ID}
    mkdir -p "$dir"
    tlab check --report "$dir/shard-$SLURM_ARRAY_TASK_ID.json" $SCENARIOS
    rc=$?
    [ "$rc" -le 1 ] || exit "$rc"
    ;;
  merge)
    tlab merge "$REPORT_DIR"/shard-*.json --report "$REPORT_DIR/merged.json" \
      --junit "$REPORT_DIR/merged.xml"
    ;;
  *)
    echo "usage: $0 [submit|task|merge]" >&2
    exit 2
    ;;
esac
