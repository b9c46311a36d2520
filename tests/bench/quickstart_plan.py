#!/usr/bin/env python3
"""The quick-start plan for a benchmark run: 192 steps on the sample corpus, with one parallel
setting added (a JSON value; empty: none).
Usage: quickstart_plan.py ROOT OUT PARALLEL_KEY [JSON]"""
import json
import sys

root, out, key = sys.argv[1:4]
value = sys.argv[4] if len(sys.argv) > 4 else ""
plan = json.load(open(f"{root}/resources/plans/quickstart.json"))
plan["training"]["steps"] = 192
plan["training"]["data"]["path"] = f"{root}/resources/corpus/licenses.txt"
if value:
    plan["parallel"][key] = json.loads(value)
json.dump(plan, open(out, "w"))
