#!/usr/bin/env bash
# scripts/soak_load.sh SOAK_PID OUT CPU_HOGS MEM_MB IO_MB: the load of scripts/soak
# (not run by hand). scripts/soak starts it with setsid, so it leads a session and
# process group of its own that soak kills as one when it exits. Its children, at
# normal priority (not niced: the tests must really compete for the machine):
#
#   | hog    | how many | what it does, until killed                              |
#   |--------|----------|---------------------------------------------------------|
#   | busy   | CPU_HOGS | a bash loop that never sleeps: one core each            |
#   | memory | 1        | holds MEM_MB of RAM and writes one byte of each 64-byte |
#   |        |          | cache line of it, pass after pass: the tests fight for  |
#   |        |          | memory bandwidth and caches, and have MEM_MB less RAM   |
#   | I/O    | 1        | writes OUT/io-hog.bin (IO_MB) and fsyncs it, in a loop  |
#
# Each hog also checks, every pass (~0.1 s for a busy loop, one pass over the
# buffer, one file), that SOAK_PID still runs and stops when it does not: a soak
# killed by SIGKILL, which runs no trap, leaves no hog behind for long. A zombie
# counts as gone: its parent may be waiting for something else before it reaps it.
set -euo pipefail

soak=$1 out=$2 cpu_hogs=$3 mem_mb=$4 io_mb=$5

# soak_runs: SOAK_PID exists and is not a zombie (/proc/PID/stat: "pid (comm) S ...").
soak_runs() {
  local stat
  { stat=$(<"/proc/$soak/stat"); } 2>/dev/null || return 1
  stat=${stat##*) }
  [[ ${stat%% *} != Z ]]
}

busy_hog() {
  local i
  while soak_runs; do
    for ((i = 0; i < 100000; i++)); do :; done
  done
}

mem_hog() {
  python3 - "$soak" "$mem_mb" <<'EOF'
import os, sys
soak, size = int(sys.argv[1]), int(sys.argv[2]) << 20
buf = bytearray(size)
# Two patterns, made once, of one byte per cache line of the buffer: a pass writes
# one of them through buf[::64], touching every line.
patterns = [bytes([v]) * len(range(0, size, 64)) for v in (1, 2)]
n = 0
while True:
    try:
        with open(f"/proc/{soak}/stat") as f:
            if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                break  # a zombie: gone (see soak_runs)
    except OSError:
        break
    buf[::64] = patterns[n % 2]
    n += 1
EOF
}

io_hog() {
  while soak_runs; do
    dd if=/dev/zero of="$out/io-hog.bin" bs=1M count="$io_mb" conv=fsync status=none
  done
  rm -f "$out/io-hog.bin"
}

for ((n = 0; n < cpu_hogs; n++)); do busy_hog & done
mem_hog &
io_hog &
wait
