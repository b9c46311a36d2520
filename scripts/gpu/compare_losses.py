#!/usr/bin/env python3
"""Compares two trainer dumps (--dump-losses: float64 per step; --dump-params/--dump-grads: float32):
losses step by step (the largest |a - b| / |b|), parameters and gradients as a relative L2 norm.
Prints one line; exit 0 when within the bound, 1 when not, 2 when a file is missing or unreadable.
Usage: compare_losses.py losses|params A B BOUND [--final-only]"""
import array
import math
import sys

args = [a for a in sys.argv[1:] if not a.startswith("--")]
if "-h" in sys.argv or "--help" in sys.argv or len(args) != 4 or args[0] not in ("losses", "params"):
    print(__doc__)
    sys.exit(0 if ("-h" in sys.argv or "--help" in sys.argv) else 2)
kind, a_path, b_path, bound = args[0], args[1], args[2], float(args[3])


def load(path):
    values = array.array("d" if kind == "losses" else "f")
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        print("cannot read %s: %s" % (path, e.strerror))
        sys.exit(2)
    if not data or len(data) % values.itemsize:
        print("%s: %d bytes, not a %s dump" % (path, len(data), kind))
        sys.exit(2)
    values.frombytes(data)
    return values


a, b = load(a_path), load(b_path)
if len(a) != len(b):
    print("%s has %d values, %s has %d" % (a_path, len(a), b_path, len(b)))
    sys.exit(1)
if kind == "losses":
    pairs = list(zip(a, b))[-1:] if "--final-only" in sys.argv else list(zip(a, b))
    worst, at = 0.0, 0
    for i, (x, y) in enumerate(pairs):
        d = abs(x - y) / abs(y) if y else abs(x - y)
        if not math.isfinite(x) or d > worst or math.isnan(d):
            worst, at = (math.inf if not math.isfinite(x) else d), i
    step = len(a) if "--final-only" in sys.argv else at + 1
    print("%d steps; worst relative loss difference %.3g at step %d (%.6f against %.6f); bound %.3g"
          % (len(a), worst, step, pairs[at][0], pairs[at][1], bound))
    sys.exit(0 if worst <= bound else 1)
num = sum((x - y) ** 2 for x, y in zip(a, b))
den = sum(y * y for y in b) or 1.0
rel = math.sqrt(num / den)
print("%d values; relative L2 difference %.3g; bound %.3g" % (len(a), rel, bound))
sys.exit(0 if rel <= bound else 1)
