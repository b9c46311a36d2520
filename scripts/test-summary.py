#!/usr/bin/env python3
"""After ctest: what was skipped and why, so a skip never reads as a pass.

Usage: scripts/test-summary.py BUILD_DIR JUNIT_XML
Reads ctest's JUnit file (which suites ran, failed or were skipped) and Testing/Temporary/
LastTest.log (their whole output: Qt Test's "SKIP   :" lines, a skipping program's reason).
Prints the skipped suites with their reasons, then the rows skipped inside suites that ran,
grouped by reason. Always exits 0: ctest's own exit status is what decides.
"""
import re
import sys
import xml.etree.ElementTree as ET
from collections import OrderedDict


def outputs(log_path):
    """ctest's LastTest.log: test name -> its output."""
    result = {}
    try:
        text = open(log_path, encoding="utf-8", errors="replace").read()
    except OSError:
        return result
    for m in re.finditer(r"^\d+/\d+ Testing: (\S+)\n.*?^Output:\n-+\n(.*?)^<end of output>", text, re.S | re.M):
        result[m.group(1)] = m.group(2)
    return result


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 0
    build, junit = sys.argv[1], sys.argv[2]
    try:
        cases = ET.parse(junit).getroot().iter("testcase")
    except (OSError, ET.ParseError) as e:
        print(f"test summary: cannot read {junit}: {e}")
        return 0
    logs = outputs(f"{build}/Testing/Temporary/LastTest.log")
    ran = failed = 0
    skipped_suites = []
    rows = OrderedDict()  # reason -> [suite: function(row)]
    for case in cases:
        name, status = case.get("name"), case.get("status")
        out = logs.get(name, "")
        skip = case.find("skipped")
        if status == "notrun" or skip is not None:
            reason = None
            m = re.search(r"^SKIP\s*:\s*(?:\S+::\S+\(\)\s*)?(.*)$", out, re.M)
            if m:
                reason = m.group(1).strip()
            elif skip is not None:
                reason = skip.get("message", "")
            skipped_suites.append((name, reason or "no reason given"))
            continue
        ran += 1
        if status == "fail" or case.find("failure") is not None:
            failed += 1
        for m in re.finditer(r"^SKIP   : \S+::(\S+?(?:\([^)]*\))?) (.*)$", out, re.M):
            rows.setdefault(m.group(2).strip() or "no reason given", []).append(f"{name}: {m.group(1)}")
    print(f"\nTest summary: {ran} suites ran ({failed} failed), {len(skipped_suites)} skipped as a whole, "
          f"{sum(len(v) for v in rows.values())} rows skipped inside suites that ran.")
    if skipped_suites:
        print("Skipped suites:")
        for name, reason in skipped_suites:
            print(f"  {name}: {reason}")
    if rows:
        print("Skipped rows (the rest of each suite ran):")
        for reason, where in rows.items():
            shown = ", ".join(where[:4]) + (f", and {len(where) - 4} more" if len(where) > 4 else "")
            print(f"  {len(where)} × {reason}\n      {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
