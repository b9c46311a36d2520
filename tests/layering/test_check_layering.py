#!/usr/bin/env python3
"""The layering check's own test (the ctest `layering_checker`): check_layering.py run on the trees
under fixtures/ (docs/architecture.md §14). `clean/` keeps every rule, with the kernels' leaf-file
exception that keeps its rows from a cycle; `broken/` breaks each rule once, and each violation is
reported on a line of its own, with nothing else reported; `qt/` is a Qt header folder with a few
headers of four modules.

Usage: test_check_layering.py   (stdlib unittest; exit 0 when every case passes)
"""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, 'check_layering.py')
FIXTURES = os.path.join(HERE, 'fixtures')
QT = os.path.join(FIXTURES, 'qt')

# One line of the report per violation of broken/, each in the words the checker uses.
BROKEN = {
    'a folder without a row': 'extra/: a source folder with no row',
    'a row without a folder': '`ghost/` has a row but holds no sources',
    'an include not allowed': 'ui/view.cpp:2: #include "core/core.h": ui/ may not include core/',
    'an include not from the root': 'core/core.cpp:1: #include "core.h": not from the include root',
    'a test folder mirroring nothing': 'tests/nowhere/: tests of a folder that does not exist',
    'a doc path that does not exist': 'docs/architecture.md:9: `core/missing.h` does not exist',
    'a relative link leading nowhere': 'docs/guide.md:3: the link (../nothing.md) leads nowhere',
    'a cycle among rows': 'a cycle among the rows `core/`, `launcher/`',
    'an unused allowance': '`ui/` may include `kernels/`, but no file there includes it',
    'a leaf file that is none': 'kernels/dtype.h:3: #include "kernels/cpu/cpu_ops.h": a leaf file',
    'a Widgets header by its name': 'launcher/widget.cpp:3: #include <QLabel>: launcher/ must never use',
    'a Widgets header by its module':
        'launcher/widget.cpp:4: #include <QtWidgets/QPushButton>: launcher/ must never use',
    'a Qt Sql header in the widgets': 'ui/view.cpp:3: #include <QSqlDatabase>: ui/ must never use',
    'a code folder with no tests': 'untested/: no tests in tests/untested/',
    'a test named that is no test': '`misnamed/` is tested in `misnamed/m.h`, which is no test folder or file',
}


def check(tree, qt_headers=QT):
    """(exit code, the problems reported, the whole output) of the checker run on tree."""
    done = subprocess.run([sys.executable, CHECKER, tree, '--qt-headers', qt_headers], capture_output=True,
                          text=True, check=False)
    problems = [line.strip() for line in done.stdout.splitlines() if line.startswith('  ')]
    return done.returncode, problems, done.stdout + done.stderr


class CheckLayeringTest(unittest.TestCase):
    def test_clean_tree_passes(self):
        code, problems, output = check(os.path.join(FIXTURES, 'clean'))
        self.assertEqual((code, problems), (0, []), output)
        self.assertIn('Layering:', output)

    def test_each_violation_is_reported_once(self):
        code, problems, output = check(os.path.join(FIXTURES, 'broken'))
        self.assertEqual(code, 1, output)
        for violation, words in BROKEN.items():
            with self.subTest(violation):
                self.assertEqual(sum(words in p for p in problems), 1, output)
        self.assertEqual(len(problems), len(BROKEN), output)

    def test_qt_header_folder_not_found_fails(self):
        missing = os.path.join(FIXTURES, 'no-such-folder')
        code, problems, output = check(os.path.join(FIXTURES, 'clean'), qt_headers=missing)
        self.assertEqual(code, 1, output)
        self.assertEqual(len(problems), 1, output)
        self.assertIn("Qt's header folder not found", problems[0])

    def test_fixtures_inside_a_tree_are_not_read(self):
        with tempfile.TemporaryDirectory() as tree:
            shutil.copytree(os.path.join(FIXTURES, 'clean'), tree, dirs_exist_ok=True)
            shutil.copytree(FIXTURES, os.path.join(tree, 'tests', 'layering', 'fixtures'))
            code, problems, output = check(tree)
        self.assertEqual((code, problems), (0, []), output)


if __name__ == '__main__':
    unittest.main()
