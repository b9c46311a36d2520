#!/usr/bin/env python3
"""The tree is the map (docs/architecture.md §2 and §14), checked at every build and as the ctest
`layering`:

1. Every source folder (one holding .h/.cpp/.cu/.cuh/.proto/.py files under app/, backend/,
   kernels/, launcher/, ui/, python/) has a row in §14's folder table, and every row names a folder
   that exists.
2. Every quoted #include is written from the one include root (the repository's top:
   "backend/plan/plan.h", never "plan.h" or "plan/plan.h"), and reaches only its own folder or what
   the folder's row lets it include (a folder, or a single file). Only direct includes are checked.
3. No layer includes the outside libraries §2 forbids it (Qt in the backend, Qt Widgets in the
   launcher, zmq or SQL in the widgets, ...).
4. Tests mirror the source: every folder under tests/ holding tests is a source folder's path under
   tests/, or one of the folders for what spans layers (integration/, pytorch/, bench/, support/,
   data/, layering/).
5. Every repository path the docs name in backticks (docs/*.md, README.md) exists.

Usage: check_layering.py SOURCE_DIR   (exit 1 with every violation listed)
"""
import glob
import os
import re
import sys

ROOTS = ('app', 'backend', 'kernels', 'launcher', 'ui', 'tests', 'python')
SOURCE_ROOTS = ('app', 'backend', 'kernels', 'launcher', 'ui', 'python')
SOURCE_EXT = ('.h', '.cpp', '.cu', '.cuh', '.proto', '.py')
CXX_EXT = ('.h', '.cpp', '.cu', '.cuh')
TEST_FOLDERS_ACROSS_LAYERS = ('tests/integration', 'tests/pytorch', 'tests/bench', 'tests/support', 'tests/data',
                              'tests/layering')
DOC_PATH_ROOTS = ('app', 'backend', 'kernels', 'launcher', 'ui', 'tests', 'python', 'scripts', 'resources', 'examples',
                  'docs', 'packaging', 'translations', 'cmake')

# §2: the outside libraries each layer must never include (angle-bracket includes).
QT = r'^<Q|^<qcustomplot'
WIDGETS = r'^<QtWidgets|^<QWidget|^<QApplication|^<QMainWindow|^<QDialog|^<QMessageBox|^<qcustomplot'
EXTERNAL_BANS = [
    ('backend/plan', QT + r'|^<zmq|^<mpi|^<sqlite', 'Qt, QCustomPlot, zmq, MPI or SQLite'),
    ('backend/protocol', QT + r'|^<mpi|^<sqlite', 'Qt, QCustomPlot, MPI or SQLite'),
    ('backend/trainer', QT + r'|^<sqlite', 'Qt, QCustomPlot or SQLite'),
    ('kernels', QT + r'|^<zmq|^<mpi', 'Qt, QCustomPlot, zmq or MPI'),
    ('launcher', WIDGETS + r'|^<mpi', 'Qt Widgets, QCustomPlot or MPI'),
    ('ui', r'^<zmq|^<QSql|^<QtSql|^<sqlite|^<mpi', 'zmq, SQL or MPI'),
]


def read_rules(architecture):
    """§14's folder table: {folder: (allowed folders, allowed files)}."""
    text = open(architecture, encoding='utf-8').read()
    section = re.search(r'^## 14\..*?(?=^## )', text, re.S | re.M)
    if not section:
        sys.exit(f'{architecture}: no "## 14." section')
    rules = {}
    in_table = False
    for line in section.group(0).splitlines():
        if line.startswith('| folder |'):
            in_table = True
            continue
        if in_table and not line.startswith('|'):
            break
        if not in_table or line.startswith('|---'):
            continue
        cells = [c.strip() for c in line.strip().strip('|').split('|')]
        if len(cells) < 3:
            continue
        folder = cells[0].strip('`').rstrip('/')
        folders, files = set(), set()
        for item in re.findall(r'`([^`]+)`', cells[-1]):
            if item.endswith('/'):
                folders.add(item.rstrip('/'))
            else:
                files.add(item)
        rules[folder] = (folders, files)
    if not rules:
        sys.exit(f'{architecture}: §14 has no "| folder | ... | may include |" table')
    return rules


def source_folders(top):
    found = set()
    for root in SOURCE_ROOTS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(top, root)):
            dirnames[:] = [d for d in dirnames if d not in ('__pycache__', 'build') and not d.startswith('.')
                           and not d.endswith('.egg-info')]  # what pip and Python leave
            if any(f.endswith(SOURCE_EXT) for f in filenames):
                found.add(os.path.relpath(dirpath, top))
    return found


def check_includes(top, rules, problems):
    include = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]')
    for folder in sorted(rules):
        path = os.path.join(top, folder)
        if not os.path.isdir(path):
            continue
        allowed_folders, allowed_files = rules[folder]
        bans = [(pattern, why) for prefix, pattern, why in EXTERNAL_BANS if folder == prefix or folder.startswith(prefix + '/')]
        for name in sorted(os.listdir(path)):
            if not name.endswith(CXX_EXT):
                continue
            rel = f'{folder}/{name}'
            for number, line in enumerate(open(os.path.join(path, name), encoding='utf-8', errors='replace'), 1):
                m = include.match(line)
                if not m:
                    continue
                kind, target = m.groups()
                where = f'{rel}:{number}: #include {kind}{target}'
                if kind == '<':
                    for pattern, why in bans:
                        if re.search(pattern, '<' + target):
                            problems.append(f'{where}: {folder}/ must never use {why} (§2)')
                    continue
                if target.endswith('.moc'):
                    continue
                if target.split('/')[0] not in ROOTS:
                    problems.append(f'{where}: not from the include root (write the path from the repository\'s top)')
                    continue
                target_folder = os.path.dirname(target)
                if target_folder == folder or target in allowed_files or target_folder in allowed_folders:
                    continue
                problems.append(f'{where}: {folder}/ may not include {target_folder}/ (its row in §14 does not allow it)')


def check_tests_mirror(top, sources, problems):
    for dirpath, dirnames, filenames in os.walk(os.path.join(top, 'tests')):
        rel = os.path.relpath(dirpath, top)
        if any(rel == t or rel.startswith(t + '/') for t in TEST_FOLDERS_ACROSS_LAYERS):
            continue
        if not any(f.startswith('tst_') or f.endswith('.py') for f in filenames):
            continue
        mirrored = rel[len('tests/'):]
        if mirrored not in sources:
            problems.append(f'{rel}/: tests of a folder that does not exist ({mirrored}/); tests mirror the source tree')


def check_doc_paths(top, problems):
    docs = sorted(glob.glob(os.path.join(top, 'docs', '*.md'))) + [os.path.join(top, 'README.md')]
    token = re.compile(r'`([^`\s]+)`')
    for doc in docs:
        for number, line in enumerate(open(doc, encoding='utf-8'), 1):
            for raw in token.findall(line):
                path = raw.split('#')[0].rstrip('.,;:)')
                path = re.sub(r':\d+(-\d+)?$', '', path)
                if '/' not in path or path.split('/')[0] not in DOC_PATH_ROOTS or '…' in path or '<' in path:
                    continue
                hits = glob.glob(os.path.join(top, path)) if any(c in path for c in '*?[') else (
                    [path] if os.path.exists(os.path.join(top, path)) else [])
                if not hits:
                    problems.append(f'{os.path.relpath(doc, top)}:{number}: `{raw}` does not exist')


def main():
    top = sys.argv[1] if len(sys.argv) > 1 else '.'
    rules = read_rules(os.path.join(top, 'docs', 'architecture.md'))
    sources = source_folders(top)
    problems = []
    for folder in sorted(sources - set(rules)):
        problems.append(f'{folder}/: a source folder with no row in docs/architecture.md §14 (say what lives there and what it may include)')
    for folder in sorted(set(rules) - sources):
        problems.append(f'docs/architecture.md §14: `{folder}/` has a row but holds no sources')
    check_includes(top, rules, problems)
    check_tests_mirror(top, sources, problems)
    check_doc_paths(top, problems)
    if problems:
        print('The tree is not the map (docs/architecture.md §2, §14):')
        for p in problems:
            print('  ' + p)
        return 1
    print(f'Layering: {len(rules)} folders, every include allowed, tests mirror the source, the docs\' paths exist')
    return 0


if __name__ == '__main__':
    sys.exit(main())
