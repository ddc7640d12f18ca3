#!/usr/bin/env bash
# tests/e2e/browser_test.sh TLAB SOURCE_DIR: renders tlab's HTML pages in a real
# browser (Debian's chromium, headless) and checks what a reader would see.
#
# Pages (work bounded by counts: operations, cells, samples, the suite's cases):
#   - `tlab run --html`: one failing case (a mutant on racing_cancellers, 300 ops,
#     under --sim, so it fails in every run);
#   - `tlab check --html`: tests/e2e/browser/tiny_races.json (simulated too), one
#     clean case and one caught mutant pair, so the mutant-pairs section shows;
#   - `tlab compare --html`: three workloads, two strategies and the peers, 1 and 2
#     threads, 2 rounds of 2 ms per cell, 50 samples, so the scaling and versus
#     tables show (tool/compare/html.h, summary.h);
#   - `tlab mutants --layers scenario --html`: the kill matrix, the built-in suite's
#     mutant cases once each (~12 s, most of it the cases' own waits).
# For each page:
#   - `--dump-dom` gives the DOM after parsing; it must end with </html> and hold
#     the footer#end (the page was complete) and every key element, by id or class;
#   - the browser's log (--enable-logging=stderr) must hold no CONSOLE line: no
#     script error, no console.* call, no blocked resource;
#   - a --screenshot must come out as a PNG over 20 KB (a blank 1280x2000 page is
#     ~12 KB; the smallest page here, check.html, is ~160 KB).
#
# `browser_test.sh --check-page FILE ID...` runs the checks on one file (how a
# missing element was shown to fail).
set -euo pipefail

browser=$(command -v chromium || command -v chromium-browser || true)
if [[ -z $browser ]]; then
  echo "browser_test: no chromium (scripts/setup installs it)" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# render FILE: writes $work/dom.html and $work/log.txt.
render() {
  # --no-sandbox: CI containers run as root, where chromium's sandbox refuses to start.
  "$browser" --headless --no-sandbox --disable-gpu --user-data-dir="$(mktemp -d -p "$work")" \
    --enable-logging=stderr --v=0 --dump-dom "file://$1" >"$work/dom.html" 2>"$work/log.txt"
}

# check_page FILE ID...: an ID is "#id" or ".class" (attribute present in the DOM).
check_page() {
  local file=$1
  shift
  render "$file"
  local bad=0
  if ! tail -c 200 "$work/dom.html" | grep -q '</html>'; then
    echo "browser_test: $file: the DOM does not end with </html>" >&2
    bad=1
  fi
  for want in '#end' "$@"; do
    local pattern
    case $want in
      '#'*) pattern="id=\"${want#\#}\"" ;;
      '.'*) pattern="class=\"([^\"]* )?${want#.}( [^\"]*)?\"" ;;
    esac
    if ! grep -Eq "$pattern" "$work/dom.html"; then
      echo "browser_test: $file: no element $want in the rendered DOM" >&2
      bad=1
    fi
  done
  if grep -q 'CONSOLE' "$work/log.txt"; then
    echo "browser_test: $file: console messages:" >&2
    grep 'CONSOLE' "$work/log.txt" >&2
    bad=1
  fi
  local shot="$work/shot.png"
  "$browser" --headless --no-sandbox --disable-gpu --user-data-dir="$(mktemp -d -p "$work")" \
    --window-size=1280,2000 --screenshot="$shot" "file://$file" >/dev/null 2>&1
  local size
  size=$(stat -c %s "$shot" 2>/dev/null || echo 0)
  if [[ $(head -c 4 "$shot" 2>/dev/null | tail -c 3) != PNG || $size -lt 20000 ]]; then
    echo "browser_test: $file: screenshot missing or blank ($size bytes)" >&2
    bad=1
  fi
  rm -f "$shot"
  return "$bad"
}

if [[ ${1:-} == --check-page ]]; then
  shift
  check_page "$@"
  exit
fi

tlab=$1
src=$2
cd "$work"

# A failing case: exit 1 is the verdict, anything else is a broken run.
set +e
"$tlab" run "$src/scenarios/racing_cancellers.json" --mutant token_flag_only \
  --strategy binary_heap --operations 300 --sim random --budget 60s --report run.json \
  --html run.html >/dev/null
rc=$?
set -e
[[ $rc == 1 ]] || { echo "browser_test: tlab run exited $rc, not 1" >&2; exit 1; }
check_page "$work/run.html" '#summary' '#cases' '#oracles' '#latency' '#replay' '#unpromised' \
  '.outcome-violation' '.replay-link' '.replay' '.cdf' '.histogram'
grep -q 'tlab replay run.json --case racing_cancellers/binary_heap/token_flag_only' "$work/dom.html"

"$tlab" check "$src/tests/e2e/browser/tiny_races.json" --html check.html >/dev/null
check_page "$work/check.html" '#summary' '#cases' '#mutant-pairs' '.outcome-caught'

"$tlab" compare --workload insert_cancel,lateness,mt_schedule_cancel \
  --strategies binary_heap,sorted_list --peers --pending 1000,10000 --threads 1,2 --rounds 2 \
  --cell-ms 2 --samples 50 --html compare.html >/dev/null
check_page "$work/compare.html" '#conclusion' '#results' '#scaling' '#versus' '.cost' '.cdf'

# The kill matrix: the built-in suite's mutant cases, once each (exit 1: some
# mutants are caught by no scenario, which the matrix shows).
set +e
"$tlab" mutants --layers scenario --html mutants.html >/dev/null 2>&1
rc=$?
set -e
[[ $rc == 0 || $rc == 1 ]] || { echo "browser_test: tlab mutants exited $rc" >&2; exit 1; }
check_page "$work/mutants.html" '#kill-matrix' '#mutant-pairs' '#cases' '.mutant' '.layers'
echo "browser_test: 4 pages rendered and checked"
