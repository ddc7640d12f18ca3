#!/usr/bin/env python3
"""tests/lint/folder_layers.py: fails if a folder of tool/ includes a folder above it.

The folders of tool/ are layers, declared lowest first in TOOL_DIR/LAYERS, the one
place the order is written. A file in folder F may include (#include "G/...") only
headers of F itself or of a folder G declared before F. Then no two folders include
each other, directly or through others: the folder graph has no cycle, which is what
../shared/tools/folder-cycles checks from outside.

This check fails, printing file:line for each, when
  - a file includes a folder declared after its own (a back edge), unless LAYERS
    allows that exact include (an `allow` line);
  - a file includes a folder of tool/ that LAYERS does not declare;
  - a folder of tool/ holding C++ files is not declared, or a declared folder does
    not exist;
  - an `allow` line matches no include (the edge is gone: delete the line).

An include is a line `#include "X/..."` whose first component X is a folder of
tool/ (so "tlab/..." headers of core/, and a header next to the file, are not
folder edges). Subfolders belong to their top folder (subjects/exec is subjects).

Usage: folder_layers.py TOOL_DIR
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
SOURCES = (".h", ".cc", ".hpp", ".cpp")


def read_layers(path):
    """The declared order and the allowed back edges {(file, include): line}."""
    order, allowed, errors = [], {}, []
    with open(path, encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            line = raw.split("#", 1)[0].split()
            if not line:
                continue
            if line[0] == "allow" and len(line) == 3:
                allowed[(line[1], line[2])] = n
            elif len(line) == 1:
                if line[0] in order:
                    errors.append(f"{path}:{n}: {line[0]} is declared twice")
                order.append(line[0])
            else:
                errors.append(f"{path}:{n}: neither a folder nor `allow FILE INCLUDE`")
    return order, allowed, errors


def source_files(tool, folder):
    for dirpath, dirs, files in os.walk(os.path.join(tool, folder)):
        dirs.sort()
        for f in sorted(files):
            if f.endswith(SOURCES):
                yield os.path.join(dirpath, f)


def main():
    tool = sys.argv[1]
    layers_file = os.path.join(tool, "LAYERS")
    order, allowed, errors = read_layers(layers_file)
    rank = {f: i for i, f in enumerate(order)}
    folders = sorted(d for d in os.listdir(tool) if os.path.isdir(os.path.join(tool, d)))
    for f in order:
        if f not in folders:
            errors.append(f"{layers_file}: {f} is declared but tool/{f} does not exist")
    used = set()
    edges = 0
    for folder in folders:
        files = list(source_files(tool, folder))
        if files and folder not in rank:
            errors.append(f"{layers_file}: tool/{folder} holds C++ files but is not declared")
        for path in files:
            rel = os.path.relpath(path, tool)
            with open(path, encoding="utf-8", errors="replace") as fh:
                for n, line in enumerate(fh, 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    inc = m.group(1)
                    top = inc.split("/", 1)[0]
                    if "/" not in inc or top not in folders or top == folder:
                        continue
                    edges += 1
                    where = f"{os.path.join(os.path.basename(tool), rel)}:{n}"
                    if top not in rank:
                        errors.append(f"{where}: includes {inc}: tool/{top} is not declared in "
                                      f"{layers_file}")
                    elif folder in rank and rank[top] > rank[folder]:
                        if (rel, inc) in allowed:
                            used.add((rel, inc))
                            continue
                        errors.append(f"{where}: {folder} (layer {rank[folder]}) includes {inc}, "
                                      f"a folder above it ({top}, layer {rank[top]})")
    for (rel, inc), n in sorted(allowed.items(), key=lambda kv: kv[1]):
        if (rel, inc) not in used:
            errors.append(f"{layers_file}:{n}: allow {rel} {inc}: no such back edge any more; "
                          "delete the line")
    for e in errors:
        print(e)
    print(f"{len(order)} layers, {edges} folder includes under {tool}, {len(used)} allowed back "
          f"edge(s), {len(errors)} error(s)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
