#!/usr/bin/env python3
"""Adopt recomputed cells into a committed results folder, row by row.

    scripts/replace-cells.py EXPERIMENT RECOMPUTED_ROOT KEY[,KEY...] [--only COLUMN=VALUE]

replaces each row of results/EXPERIMENT/cells.csv whose key columns match a row of
RECOMPUTED_ROOT/EXPERIMENT/cells.csv (the output of `rfx run --out RECOMPUTED_ROOT`) by that row; rows not
recomputed stay as they are, each keeping its own commit column. `--only dataset=uci/elevators` adopts only the
recomputed rows with that value (e.g. the data sets a partial run finished). Check first with
`rfx compare results RECOMPUTED_ROOT` that the recomputed cells agree with the committed ones within tolerance,
and afterwards run `rfx run experiments/EXPERIMENT.toml` (nothing is computed) to re-render the outputs.
The header must be identical; the file is replaced atomically.
"""
import argparse
import csv
import os
import sys


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("experiment")
    p.add_argument("recomputed_root")
    p.add_argument("keys", help="key columns, comma-separated (e.g. dataset,method,seed)")
    p.add_argument("--only", action="append", default=[], metavar="COLUMN=VALUE")
    a = p.parse_args()
    exp, rec, keys = a.experiment, a.recomputed_root, a.keys.split(",")
    path = os.path.join("results", exp, "cells.csv")
    with open(path, newline="") as f:
        r = csv.reader(f)
        head, old = next(r), list(r)
    with open(os.path.join(rec, exp, "cells.csv"), newline="") as f:
        r = csv.reader(f)
        head2, new = next(r), list(r)
    if head != head2:
        sys.exit(f"{exp}: the headers differ:\n  {head}\n  {head2}")
    for o in a.only:
        col, sep, value = o.partition("=")
        if not sep or col not in head:
            sys.exit(f"--only {o}: expected COLUMN=VALUE with COLUMN one of {', '.join(head)}")
        new = [row for row in new if row[head.index(col)] == value]
    idx = [head.index(k) for k in keys]
    recomputed = {tuple(row[i] for i in idx): row for row in new}
    out = [recomputed.pop(tuple(row[i] for i in idx), row) for row in old]
    if recomputed:
        sys.exit(f"{exp}: recomputed rows without a committed row: {list(recomputed)[:3]}")
    with open(path + ".tmp", "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(head)
        w.writerows(out)
    os.replace(path + ".tmp", path)
    print(f"{exp}: {len(new)} of {len(old)} rows replaced")


if __name__ == "__main__":
    main()
