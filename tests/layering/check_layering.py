#!/usr/bin/env python3
"""The tree is the map (docs/architecture.md §2 and §14), checked at every build and as the ctest
`layering`:

1. Every source folder (one holding C++, protobuf, Python, shell or CMake files, anywhere below the
   top but under tests/, hidden folders and build trees) has a row in §14's folder table, and every
   row names a folder that holds sources.
2. Every quoted #include is written from the one include root (the repository's top:
   "backend/plan/plan.h", never "plan.h" or "plan/plan.h"), and reaches only its own folder or what
   the folder's row lets it include (a folder, or a single file). Only direct includes are checked.
3. Every entry of a row's "may include" is used by at least one file of that folder.
4. The rows form a graph with no cycle: an entry naming a folder is an edge to that folder, an
   entry naming a file an edge to the file's folder, except the leaf files in LEAF_FILES (they
   include nothing of the project; this is checked too).
5. No layer includes the outside libraries §2 forbids it (Qt in the backend, Qt Widgets in the
   launcher, zmq or SQL in the widgets, ...). Qt is judged by module: the headers each module
   installs, read from Qt's header folder (--qt-headers, else qtpaths6, else the usual places); a
   missing header folder is a failure, never a silent pass.
6. Tests mirror the source: every folder under tests/ holding tests is a source folder's path under
   tests/, or one of the folders for what spans layers (TEST_FOLDERS_ACROSS_LAYERS).
7. Every source folder holding code (C++, protobuf, Python) has tests: a test file in
   tests/<its path>/, or its row says where ("tested in `tests/…`" or "run by `tests/…`", naming test
   folders or files that exist). WITHOUT_TESTS lists the folders excused.
8. Every repository path the Markdown files name in backticks exists (read from the top), and so
   does every relative link's target (read from the Markdown file's folder).

tests/layering/fixtures/ holds this checker's own test trees; the checker never reads it as part of
the tree it checks.

Usage: check_layering.py SOURCE_DIR [--qt-headers DIR]   (exit 1 with every violation listed)
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

CXX_EXT = ('.h', '.cpp', '.cu', '.cuh')
CODE_EXT = CXX_EXT + ('.proto', '.py')
SOURCE_EXT = CODE_EXT + ('.sh', '.cmake')
SOURCE_NAMES = ('CMakeLists.txt',)
TEST_FOLDERS_ACROSS_LAYERS = ('tests/integration', 'tests/pytorch', 'tests/bench', 'tests/support', 'tests/data',
                              'tests/layering')
FIXTURES = 'tests/layering/fixtures'
# §14: kernels/'s sub-folders include these two files of the folder that dispatches to them.
LEAF_FILES = ('kernels/dtype.h', 'kernels/stream.h')
# §14: developer tools, run by ./test.sh and by hand, and the build's precompiled headers (headers
# from outside the project, no behaviour of their own), with no tests of their own.
WITHOUT_TESTS = ('scripts', 'scripts/gpu', 'cmake/pch')
QT_HEADER_GUESSES = ('/usr/include/x86_64-linux-gnu/qt6', '/usr/include/aarch64-linux-gnu/qt6', '/usr/include/qt6')

ARCHITECTURE = 'docs/architecture.md'
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
TESTED = re.compile(r'\b(?:tested in|run by) ((?:`[^`]+`(?:,? and |, )?)+)')
BACKTICKED = re.compile(r'`([^`\s]+)`')
LINK = re.compile(r'\]\(([^)\s]+)')


@dataclass
class Ban:
    """§2's outside libraries a layer must never include."""
    why: str
    pattern: str                  # other libraries, by the start of the header's name
    qt_only: tuple | None = None  # the Qt modules the layer may use; every other one is banned
    qt_never: tuple = ()          # or: the Qt modules it may not use


EXTERNAL_BANS = {
    'backend/plan': Ban('Qt, QCustomPlot, zmq, MPI or SQLite', r'^(qcustomplot|zmq|mpi|sqlite)', qt_only=()),
    'backend/protocol': Ban('Qt, QCustomPlot, MPI or SQLite', r'^(qcustomplot|mpi|sqlite)', qt_only=()),
    'backend/trainer': Ban('Qt, QCustomPlot or SQLite', r'^(qcustomplot|sqlite)', qt_only=()),
    'kernels': Ban('Qt, QCustomPlot, zmq or MPI', r'^(qcustomplot|zmq|mpi)', qt_only=()),
    'launcher': Ban('a Qt module other than Core, Gui, Sql and Network (so no Qt Widgets), QCustomPlot or MPI',
                    r'^(qcustomplot|mpi)', qt_only=('Core', 'Gui', 'Sql', 'Network')),
    'ui': Ban('zmq, Qt Sql, SQLite or MPI', r'^(zmq|sqlite|mpi)', qt_never=('Sql',)),
}


@dataclass
class Row:
    """One row of §14's folder table."""
    text: str       # what lives there
    entries: set    # may include: 'a/b/' for a folder, 'a/b/c.h' for a file

    def folders(self):
        return {e.rstrip('/') for e in self.entries if e.endswith('/')}

    def files(self):
        return {e for e in self.entries if not e.endswith('/')}


def table_rows(architecture):
    """The cells of each row of §14's table "| folder | ... | may include |"."""
    text = open(architecture, encoding='utf-8').read()
    section = re.search(r'^## 14\..*?(?=^## |\Z)', text, re.S | re.M)
    if not section:
        sys.exit(f'{architecture}: no "## 14." section')
    lines = section.group(0).splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('| folder |')), None)
    if start is None:
        sys.exit(f'{architecture}: §14 has no "| folder | ... | may include |" table')
    for line in lines[start + 2:]:
        if not line.startswith('|'):
            break
        yield [c.strip() for c in line.strip().strip('|').split('|')]


def read_rules(architecture):
    """§14's folder table: {folder: Row}."""
    rules = {}
    for cells in table_rows(architecture):
        if len(cells) >= 3:
            folder = cells[0].strip('`').rstrip('/')
            rules[folder] = Row(' | '.join(cells[1:-1]), set(re.findall(r'`([^`]+)`', cells[-1])))
    return rules


def skipped(path, rel):
    """What no check reads: hidden folders, build trees, what Python and pip leave, the fixtures."""
    name = os.path.basename(path)
    return (name.startswith('.') or name in ('__pycache__', 'build') or name.startswith('build-')
            or name.endswith('.egg-info') or rel == FIXTURES or os.path.exists(os.path.join(path, 'CMakeCache.txt')))


def walk(top, start):
    """(folder relative to top, file names) for start and every folder below it not skipped."""
    for dirpath, dirnames, filenames in os.walk(os.path.join(top, start)):
        rel = os.path.normpath(os.path.relpath(dirpath, top))
        dirnames[:] = sorted(d for d in dirnames
                             if not skipped(os.path.join(dirpath, d), os.path.normpath(f'{rel}/{d}')))
        yield rel, sorted(filenames)


def top_folders(top):
    return sorted(d for d in os.listdir(top)
                  if os.path.isdir(os.path.join(top, d)) and not skipped(os.path.join(top, d), d))


def is_source(name):
    return name.endswith(SOURCE_EXT) or name in SOURCE_NAMES


def is_test_file(name):
    return name.startswith('tst_') or name.endswith('.py')


def includes(path):
    """(line number, '<' or '"', target) of each #include of a file."""
    with open(path, encoding='utf-8', errors='replace') as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield number, m.group(1), m.group(2)


def reachable(graph, start):
    seen, todo = set(), [start]
    while todo:
        for nxt in graph[todo.pop()]:
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return seen


def cycles(graph):
    """The groups of nodes that reach each other (each holds a cycle), sorted."""
    reach = {node: reachable(graph, node) for node in graph}
    groups = {frozenset(other for other in reach[node] if node in reach[other])
              for node in graph if node in reach[node]}
    return sorted(sorted(group) for group in groups)


def find_qt_headers(given):
    """Qt's header folder (the one holding QtCore/), or None."""
    candidates = [given] if given else [qtpaths_headers(), *QT_HEADER_GUESSES]
    return next((c for c in candidates if c and os.path.isdir(os.path.join(c, 'QtCore'))), None)


def qtpaths_headers():
    if not shutil.which('qtpaths6'):
        return None
    done = subprocess.run(['qtpaths6', '--query', 'QT_INSTALL_HEADERS'], capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def qt_modules(headers):
    """{module: the names of its headers} (module 'Widgets' for the folder QtWidgets/)."""
    return {d[2:]: set(os.listdir(os.path.join(headers, d))) for d in os.listdir(headers)
            if d.startswith('Qt') and os.path.isdir(os.path.join(headers, d))}


class Checker:
    def __init__(self, top, qt_headers):
        self.top = top
        self.rules = read_rules(os.path.join(top, ARCHITECTURE))
        self.sources = self.source_folders()
        self.roots = set(top_folders(top))
        self.qt_given = qt_headers
        self.qt_headers = find_qt_headers(qt_headers)
        self.qt = qt_modules(self.qt_headers) if self.qt_headers else None
        self.problems = []

    def run(self):
        self.check_qt_found()
        self.check_rows()
        self.check_unused(self.check_includes())
        self.check_cycles()
        self.check_leaf_files()
        self.check_tests_mirror()
        self.check_tested()
        self.check_docs()
        return self.problems

    def path(self, rel):
        return os.path.join(self.top, rel)

    def source_folders(self):
        """{folder: its source files} for every folder outside tests/ holding sources."""
        found = {}
        for start in (f for f in top_folders(self.top) if f != 'tests'):
            for rel, files in walk(self.top, start):
                sources = [f for f in files if is_source(f)]
                if sources:
                    found[rel] = sources
        return found

    def check_qt_found(self):
        if not self.qt_headers:
            tried = self.qt_given or 'qtpaths6, ' + ', '.join(QT_HEADER_GUESSES)
            self.problems.append(f"Qt's header folder not found (tried {tried}): no include can be judged by Qt "
                                 "module; pass --qt-headers DIR")

    def check_rows(self):
        for folder in sorted(set(self.sources) - set(self.rules)):
            self.problems.append(f'{folder}/: a source folder with no row in {ARCHITECTURE} §14 '
                                 '(say what lives there and what it may include)')
        for folder in sorted(set(self.rules) - set(self.sources)):
            self.problems.append(f'{ARCHITECTURE} §14: `{folder}/` has a row but holds no sources')

    def check_includes(self):
        """Every #include of every row's C++ files; returns {folder: the entries of its row used}."""
        used = {folder: set() for folder in self.rules}
        for folder in sorted(set(self.rules) & set(self.sources)):
            for name in self.sources[folder]:
                if name.endswith(CXX_EXT):
                    self.check_file(folder, f'{folder}/{name}', used[folder])
        return used

    def check_file(self, folder, rel, used):
        for number, kind, target in includes(self.path(rel)):
            where = f'{rel}:{number}: #include {kind}{target}{">" if kind == "<" else kind}'
            if kind == '<':
                self.check_external(where, folder, target)
            else:
                self.check_quoted(where, folder, target, used)

    def check_quoted(self, where, folder, target, used):
        if target.endswith('.moc'):
            return
        if target.split('/')[0] not in self.roots:
            self.problems.append(f"{where}: not from the include root (write the path from the repository's top)")
            return
        row, target_folder = self.rules[folder], os.path.dirname(target)
        if target_folder == folder:
            return
        entry = target if target in row.files() else target_folder + '/'
        if entry in row.entries:
            used.add(entry)
        else:
            self.problems.append(f'{where}: {folder}/ may not include {target_folder}/ '
                                 '(its row in §14 does not allow it)')

    def check_external(self, where, folder, target):
        ban = next((b for p, b in EXTERNAL_BANS.items() if folder == p or folder.startswith(p + '/')), None)
        if ban and (re.search(ban.pattern, target) or self.qt_banned(target, ban)):
            self.problems.append(f'{where}: {folder}/ must never use {ban.why} (§2)')

    def qt_banned(self, target, ban):
        """Whether target is a header of banned Qt modules only (one that an allowed module also installs,
        such as QtWidgets' forwarding qundostack.h, is allowed)."""
        first, _, rest = target.partition('/')
        modules = {first[2:]} if rest and first.startswith('Qt') else {
            m for m, names in (self.qt or {}).items() if target in names}
        if not modules:
            return ban.qt_only == () and target.startswith('Q')
        banned = {m for m in modules if (m not in ban.qt_only if ban.qt_only is not None else m in ban.qt_never)}
        return banned == modules

    def check_unused(self, used):
        for folder in sorted(set(self.rules) & set(self.sources)):
            for entry in sorted(self.rules[folder].entries - used[folder]):
                self.problems.append(f'{ARCHITECTURE} §14: `{folder}/` may include `{entry}`, but no file there '
                                     'includes it (an unused allowance: remove it)')

    def row_graph(self):
        """{row: the rows its entries reach}; a file's entry reaches the file's folder, but for LEAF_FILES."""
        graph = {}
        for folder, row in self.rules.items():
            reached = row.folders() | {os.path.dirname(f) for f in row.files() if f not in LEAF_FILES}
            graph[folder] = sorted(r for r in reached if r != folder and r in self.rules)
        return graph

    def check_cycles(self):
        for group in cycles(self.row_graph()):
            rows = ', '.join(f'`{folder}/`' for folder in group)
            self.problems.append(f'{ARCHITECTURE} §14: a cycle among the rows {rows} (each may include the others, '
                                 'directly or through other rows)')

    def check_leaf_files(self):
        named = {f for row in self.rules.values() for f in row.files()}
        for leaf in sorted(named & set(LEAF_FILES)):
            if os.path.isfile(self.path(leaf)):
                for number, kind, target in includes(self.path(leaf)):
                    if kind == '"':
                        self.problems.append(f'{leaf}:{number}: #include "{target}": a leaf file of §14 (it may close '
                                             'a cycle of rows) includes nothing of the project')

    def check_tests_mirror(self):
        for rel, files in walk(self.top, 'tests'):
            if any(rel == t or rel.startswith(t + '/') for t in TEST_FOLDERS_ACROSS_LAYERS):
                continue
            mirrored = rel[len('tests/'):]
            if any(is_test_file(f) for f in files) and mirrored not in self.sources:
                self.problems.append(f'{rel}/: tests of a folder that does not exist ({mirrored}/); tests mirror the '
                                     'source tree')

    def check_tested(self):
        for folder in sorted(set(self.rules) & set(self.sources)):
            if folder in WITHOUT_TESTS or not any(f.endswith(CODE_EXT) for f in self.sources[folder]):
                continue
            tests = self.path(f'tests/{folder}')
            if os.path.isdir(tests) and any(is_test_file(f) for f in os.listdir(tests)):
                continue
            self.check_tested_in(folder)

    def check_tested_in(self, folder):
        text = self.rules[folder].text
        named = [p for m in TESTED.finditer(text) for p in re.findall(r'`([^`]+)`', m.group(1))]
        if not named:
            self.problems.append(f'{folder}/: no tests in tests/{folder}/, and its row in §14 does not say where '
                                 'it is tested ("tested in `tests/…`")')
        for name in named:
            if 'tests' not in name.split('/') or not os.path.exists(self.path(name)):
                self.problems.append(f'{ARCHITECTURE} §14: `{folder}/` is tested in `{name}`, which is no test '
                                     'folder or file')

    def check_docs(self):
        for rel, files in walk(self.top, '.'):
            for name in files:
                if name.endswith('.md'):
                    self.check_markdown(os.path.normpath(f'{rel}/{name}'))

    def check_markdown(self, doc):
        with open(self.path(doc), encoding='utf-8') as f:
            for number, line in enumerate(f, 1):
                for raw in BACKTICKED.findall(line):
                    if not self.repository_path_exists(raw):
                        self.problems.append(f'{doc}:{number}: `{raw}` does not exist')
                for link in LINK.findall(line):
                    if not self.link_exists(os.path.dirname(doc), link):
                        self.problems.append(f'{doc}:{number}: the link ({link}) leads nowhere')

    def repository_path_exists(self, raw):
        """Whether a backticked path from the top exists (True for what is no such path)."""
        path = re.sub(r':\d+(-\d+)?$', '', raw.split('#')[0].rstrip('.,;:)'))
        if '/' not in path or path.split('/')[0] not in self.roots or '…' in path or '<' in path:
            return True
        if any(c in path for c in '*?['):
            return bool(glob.glob(self.path(path)))
        return os.path.exists(self.path(path))

    def link_exists(self, folder, link):
        """Whether a link's target exists: from the Markdown file's folder, or from the top if it starts with '/'."""
        target = link.split('#')[0]
        if not target or re.match(r'^[a-zA-Z][a-zA-Z0-9+.-]*:', target):
            return True
        return os.path.exists(self.path(target.lstrip('/') if target.startswith('/') else os.path.join(folder, target)))


def main(argv=None):
    parser = argparse.ArgumentParser(description='The tree is the map (docs/architecture.md §2, §14).')
    parser.add_argument('source_dir', nargs='?', default='.')
    parser.add_argument('--qt-headers', help="Qt's header folder (the one holding QtCore/, QtWidgets/, ...)")
    args = parser.parse_args(argv)
    checker = Checker(args.source_dir, args.qt_headers)
    problems = checker.run()
    if problems:
        print('The tree is not the map (docs/architecture.md §2, §14):')
        for p in problems:
            print('  ' + p)
        return 1
    print(f"Layering: {len(checker.rules)} folders, every include allowed and every allowance used, no cycle but "
          f"through the leaf files, Qt judged by module ({checker.qt_headers}), every code folder tested, the docs' "
          "paths and links exist")
    return 0


if __name__ == '__main__':
    sys.exit(main())
