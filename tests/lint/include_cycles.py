#!/usr/bin/env python3
"""tests/lint/include_cycles.py: fails if tool/ has a circular include.

A module is a file stem under tool/ (tool/cli/cli.h and tool/cli/cli.cc are module
cli/cli). Module A depends on B when any file of A includes a header of B with
#include "..." (resolved against tool/). A cycle among modules, e.g. compare.h
including cli.h while cli.cc includes compare.h, makes two modules one in all but
name; this check lists each cycle found and exits 1.

Usage: include_cycles.py TOOL_DIR
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def modules(root):
    deps = {}
    for dirpath, _, files in os.walk(root):
        for f in files:
            if not f.endswith((".h", ".cc")):
                continue
            path = os.path.join(dirpath, f)
            stem = os.path.splitext(os.path.relpath(path, root))[0]
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
            for inc in INCLUDE.findall(text):
                if os.path.exists(os.path.join(root, inc)):
                    target = os.path.splitext(inc)[0]
                    if target != stem:
                        deps.setdefault(stem, set()).add(target)
            deps.setdefault(stem, set())
    return deps


def cycles(deps):
    found, state, stack = [], {}, []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for d in sorted(deps.get(m, ())):
            if state.get(d) == 1:
                found.append(stack[stack.index(d):] + [d])
            elif d not in state:
                visit(d)
        stack.pop()
        state[m] = 2

    for m in sorted(deps):
        if m not in state:
            visit(m)
    return found


def main():
    root = sys.argv[1]
    deps = modules(root)
    found = cycles(deps)
    for c in found:
        print("circular include: " + " -> ".join(c))
    print(f"{len(deps)} modules under {root}, {len(found)} cycle(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
