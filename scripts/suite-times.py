#!/usr/bin/env python3
"""Per-suite wall times from ctest's JUnit files (ctest --output-junit FILE), slowest first.

    scripts/suite-times.py build/ctest-junit.xml                 one run
    scripts/suite-times.py before.xml after.xml [--top N]       two runs side by side
    scripts/suite-times.py --cases build/Testing/cases [--top N] each Qt Test case, slowest first

test.sh writes build/ctest-junit.xml on every run; docs/benchmarks.md ("The suite's own time")
keeps the figures this prints. Standard library only.
"""
import argparse
import sys
import xml.etree.ElementTree as ET


def read(path):
    root = ET.parse(path).getroot()
    suites = root if root.tag == "testsuite" else root.find("testsuite")
    times, status = {}, {}
    for case in suites.iter("testcase"):
        name = case.get("name")
        times[name] = float(case.get("time", "0") or 0)
        if case.find("failure") is not None:
            status[name] = "failed"
        elif case.find("skipped") is not None:
            status[name] = "skipped"
        else:
            status[name] = case.get("status", "run")
    return times, status, float(suites.get("time", "0") or 0)


def cases(folder, top):
    """Qt Test's own JUnit reports (one per ctest entry, written by every run): case -> seconds."""
    import glob
    import os
    rows = []
    for path in sorted(glob.glob(os.path.join(folder, "*.xml"))):
        entry = os.path.basename(path)[:-4]
        try:
            root = ET.parse(path).getroot()
        except (OSError, ET.ParseError) as e:
            print(f"suite-times: {path}: {e} (a suite still running, or killed before it ended, has written no report)", file=sys.stderr)
            continue
        for case in root.iter("testcase"):
            name = case.get("name", "")
            if name in ("initTestCase", "cleanupTestCase") and float(case.get("time", "0") or 0) < 0.5:
                continue
            status = "failed" if case.find("failure") is not None else ("skipped" if case.find("skipped") is not None else "")
            rows.append((float(case.get("time", "0") or 0), f"{entry}::{name}", status))
    if not rows:
        print(f"suite-times: no Qt Test reports in {folder}", file=sys.stderr)
        return 2
    rows.sort(reverse=True)
    for seconds, name, status in rows[: top or len(rows)]:
        print(f"{seconds:8.1f} s  {name} {status}".rstrip())
    print(f"{sum(r[0] for r in rows):8.1f} s  sum of {len(rows)} cases")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("junit", nargs="*", help="one or two ctest JUnit files")
    parser.add_argument("--cases", metavar="DIR", help="Qt Test's per-case reports (build/Testing/cases)")
    parser.add_argument("--top", type=int, default=0, help="only the N slowest suites (of the last run)")
    args = parser.parse_args()
    if args.cases:
        return cases(args.cases, args.top)
    if not args.junit or len(args.junit) > 2:
        parser.error("one or two JUnit files")
    runs = []
    for path in args.junit:
        try:
            runs.append(read(path))
        except (OSError, ET.ParseError) as e:
            print(f"suite-times: {path}: {e}", file=sys.stderr)
            return 2
    last = runs[-1][0]
    names = sorted(set().union(*(r[0] for r in runs)), key=lambda n: -last.get(n, runs[0][0].get(n, 0)))
    if args.top:
        names = names[: args.top]
    header = "suite".ljust(40) + "".join(f"{p[-28:]:>30}" for p in args.junit)
    print(header)
    for n in names:
        cells = []
        for times, status, _ in runs:
            t = times.get(n)
            cells.append(f"{'—' if t is None else f'{t:8.1f} s'}{'' if status.get(n, 'run') in ('run', 'passed') else ' ' + status.get(n, '')}")
        print(n.ljust(40) + "".join(f"{c:>30}" for c in cells))
    print("sum of suites".ljust(40) + "".join(f"{sum(r[0].values()):28.1f} s" for r in runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
