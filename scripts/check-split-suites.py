#!/usr/bin/env python3
"""Every test function of a Qt Test suite split into ctest entries runs in exactly one of them.

Usage: scripts/check-split-suites.py BUILD/Testing/split_suites.txt
Each line of the file (written by cmake/TrellisTesting.cmake): the suite's program, then per entry
"ENTRY:CASE" followed by that entry's other cases. The program's own list (-functions) must equal
the union of the entries' cases, none named twice and none unknown: a case added to a file and
named in no entry would otherwise never run, and one named twice would run twice. Exit 1 naming
what is wrong.
"""
import subprocess
import sys


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    problems = []
    suites = 0
    for line in open(sys.argv[1], encoding="utf-8"):
        words = line.split()
        if not words:
            continue
        program, tokens = words[0], words[1:]
        entries = {}
        current = None
        for token in tokens:
            if ":" in token:
                current, token = token.split(":", 1)
                entries.setdefault(current, [])
            entries[current].append(token)
        try:
            listed = subprocess.run([program, "-functions"], capture_output=True, text=True, timeout=30)
        except (OSError, subprocess.TimeoutExpired) as e:
            problems.append(f"{program}: cannot list its functions: {e}")
            continue
        if listed.returncode != 0:
            problems.append(f"{program} -functions exited {listed.returncode}: {listed.stderr.strip()[:300]}")
            continue
        functions = [f[:-2] for f in listed.stdout.split() if f.endswith("()")]
        suites += 1
        seen = {}
        for entry, cases in entries.items():
            for case in cases:
                if case in seen:
                    problems.append(f"{program}: {case} runs in both {seen[case]} and {entry}")
                seen[case] = entry
                if case not in functions:
                    problems.append(f"{program}: entry {entry} names {case}, which is not one of its test functions")
        for function in functions:
            if function not in seen:
                problems.append(f"{program}: {function} runs in no ctest entry (add it to one in its CMakeLists.txt)")
    for p in problems:
        print(p)
    if problems:
        return 1
    print(f"{suites} split suites: every test function runs in exactly one ctest entry")
    return 0


if __name__ == "__main__":
    sys.exit(main())
