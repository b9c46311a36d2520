#!/usr/bin/env python3
"""Function length check (docs/architecture.md §13): lists C++ function definitions longer than
N lines (default 100) under the folders given, by brace matching over a small lexer (comments,
strings and preprocessor lines dropped), and exits 1 when there is any. Length runs from the
signature's first line to the closing brace; lambdas and local classes count toward the function
they are in. Run by ctest as `function_length` over backend/, launcher/ and ui/.

Usage: function_length.py [--min N] DIR...
"""
import os, re, sys

def lex(text):
    """Yield (kind, value, line) tokens, dropping comments, strings, preprocessor lines."""
    i, n, line = 0, len(text), 1
    at_line_start = True
    while i < n:
        c = text[i]
        if c == '\n':
            line += 1; i += 1; at_line_start = True; continue
        if c in ' \t\r\f\v':
            i += 1; continue
        if at_line_start and c == '#':
            # preprocessor directive, with continuations
            while i < n and text[i] != '\n':
                if text[i] == '\\' and i + 1 < n and text[i+1] == '\n':
                    line += 1; i += 2; continue
                if text.startswith('/*', i):
                    j = text.find('*/', i + 2); j = n if j < 0 else j + 2
                    line += text.count('\n', i, j); i = j; continue
                i += 1
            continue
        at_line_start = False
        if text.startswith('//', i):
            j = text.find('\n', i); i = n if j < 0 else j; continue
        if text.startswith('/*', i):
            j = text.find('*/', i + 2); j = n if j < 0 else j + 2
            line += text.count('\n', i, j); i = j; continue
        m = re.match(r'(u8|u|U|L)?R"([^ ()\\\t\n]{0,16})\(', text[i:i+40])
        if m:
            delim = ')' + m.group(2) + '"'
            j = text.find(delim, i + m.end()); j = n if j < 0 else j + len(delim)
            yield ('str', '""', line)
            line += text.count('\n', i, j); i = j; continue
        if c == '"' or c == "'":
            # char literal vs digit separator (1'000): a quote right after an alnum inside a number
            if c == "'" and i > 0 and text[i-1].isalnum() and re.match(r"[0-9A-Fa-f]", text[i+1:i+2] or ' ') \
                    and re.search(r"\b(0[xXbB])?[0-9][0-9A-Fa-f']*$", text[max(0,i-40):i]):
                i += 1; continue
            j = i + 1
            while j < n and text[j] != c:
                if text[j] == '\\': j += 1
                if j < n and text[j] == '\n': line += 1
                j += 1
            yield ('str', c + c, line); i = j + 1; continue
        m = re.match(r'[A-Za-z_][A-Za-z_0-9]*', text[i:i+200])
        if m:
            yield ('id', m.group(0), line); i += m.end(); continue
        m = re.match(r'[0-9][0-9A-Za-z_.\']*', text[i:i+100])
        if m:
            yield ('num', m.group(0), line); i += m.end(); continue
        if text.startswith('::', i) or text.startswith('->', i):
            yield ('op', text[i:i+2], line); i += 2; continue
        yield ('op', c, line); i += 1

CLASS_KW = {'class', 'struct', 'union', 'enum'}

def classify(pre):
    """Kind of scope a '{' opens at namespace/class scope, from the tokens since the last ; { }."""
    vals = [v for _, v, _ in pre]
    if 'namespace' in vals: return 'scope'
    if len(vals) >= 2 and vals[0] == 'extern' and pre[1][0] == 'str': return 'scope'
    depth = 0; has_paren = False; has_eq = False
    for v in vals:
        if v in '([': depth += 1
        elif v in ')]': depth -= 1; has_paren = True
        elif v == '=' and depth == 0: has_eq = True
    if has_eq: return 'init'
    if any(v in CLASS_KW for v in vals) and not has_paren: return 'scope'
    if has_paren: return 'function'
    return 'init'

def func_name(pre):
    vals = [v for _, v, _ in pre]
    # first '(' at depth 0 that follows an identifier / operator
    for k, v in enumerate(vals):
        if v == '(' and k > 0:
            if 'operator' in vals[:k]:
                o = vals.index('operator')
                start = o
            else:
                start = k - 1
            while start >= 2 and vals[start-1] == '::':
                start -= 2
                if vals[start] == '>':   # Class<T>::name
                    d = 0
                    while start >= 0:
                        if vals[start] == '>': d += 1
                        elif vals[start] == '<':
                            d -= 1
                            if d == 0: break
                        start -= 1
                    start -= 1
            if start >= 1 and vals[start-1] == '~': start -= 1
            return ''.join(vals[start:k])
    return '?'

def closing_brace(toks, i):
    """Index of the '}' that closes the '{' at toks[i] (len(toks) when the file ends first)."""
    d = 0; j = i
    while j < len(toks):
        if toks[j][1] == '{' and toks[j][0] == 'op': d += 1
        elif toks[j][1] == '}' and toks[j][0] == 'op':
            d -= 1
            if d == 0: break
        j += 1
    return j

def scan(path):
    text = open(path, encoding='utf-8', errors='replace').read()
    toks = list(lex(text))
    out = []
    stack = []   # kinds of open braces: 'scope', 'function', 'other'
    pre = []     # tokens since last ; { } at a non-function scope
    i = 0
    while i < len(toks):
        kind, v, line = toks[i]
        if v == '{' and kind == 'op':
            c = classify(pre)
            # constructor initializer lists: "f(...) : a(x), b{y} {" — braces after an identifier
            # (or a template argument list) in the list initialise a member, not open the body.
            if c == 'function':
                vals = [t[1] for t in pre]
                depth = 0; colon_at = None
                for k, t in enumerate(vals):
                    if t in '([': depth += 1
                    elif t in ')]': depth -= 1
                    elif t == ':' and depth == 0 and k > 0 and vals[k-1] == ')':
                        colon_at = k; break
                if colon_at is not None and pre and (pre[-1][0] == 'id' or pre[-1][1] == '>') \
                        and pre[-1][1] not in ('const', 'override', 'noexcept', 'final', 'mutable'):
                    # skip the balanced braced initializer, keep it in the preamble
                    d = 0
                    while i < len(toks):
                        pre.append(toks[i])
                        if toks[i][1] == '{': d += 1
                        elif toks[i][1] == '}':
                            d -= 1
                            if d == 0: break
                        i += 1
                    i += 1
                    continue
                start_line = pre[0][2] if pre else line
                name = func_name(pre)
                j = closing_brace(toks, i)
                end_line = toks[j][2] if j < len(toks) else toks[-1][2]
                out.append((name, start_line, end_line, end_line - start_line + 1,
                            end_line - line + 1))
                i = j + 1; pre = []; continue
            if c == 'scope':
                stack.append('scope'); pre = []; i += 1; continue
            # initializer or other block at scope level: skip it balanced, it ends a declaration
            j = closing_brace(toks, i)
            # a long initializer (e.g. lambda-valued variable) is reported too, marked
            sl = pre[0][2] if pre else line
            el = toks[j][2] if j < len(toks) else line
            if el - sl + 1 > 0 and any(t[1] == '[' for t in pre) and any(t[1] == '=' for t in pre):
                out.append(('<init ' + (func_name(pre) if '(' in [t[1] for t in pre] else ' '.join(t[1] for t in pre[:4])) + '>', sl, el, el - sl + 1, el - line + 1))
            i = j + 1; pre = []; continue
        if v == '}' and kind == 'op':
            if stack: stack.pop()
            pre = []; i += 1; continue
        if v == ';' and kind == 'op':
            pre = []; i += 1; continue
        # access specifiers end a preamble
        if v == ':' and len(pre) == 1 and pre[0][1] in ('public', 'private', 'protected', 'signals', 'slots', 'Q_SIGNALS', 'Q_SLOTS'):
            pre = []; i += 1; continue
        if v == ':' and len(pre) == 2 and pre[1][1] in ('slots', 'Q_SLOTS'):
            pre = []; i += 1; continue
        if kind == 'id' and v in ('Q_OBJECT', 'Q_GADGET') and not pre:
            i += 1; continue
        pre.append(toks[i]); i += 1
    return out

def main():
    args = sys.argv[1:]
    minimum = 100
    if args and args[0] == '--min':
        minimum = int(args[1]); args = args[2:]
    rows = []
    for root in args:
        for dp, _, files in os.walk(root):
            for f in sorted(files):
                if f.endswith(('.cpp', '.h', '.cu', '.cuh', '.hpp', '.cc')):
                    p = os.path.join(dp, f)
                    for name, s, e, length, body in scan(p):
                        if length > minimum:
                            rows.append((length, name, p, s, e, body))
    rows.sort(key=lambda r: -r[0])
    print(f'{"lines":>5s} {"body":>5s}  {"function":45s} file:first-last')
    for length, name, p, s, e, body in rows:
        print(f'{length:5d} {body:5d}  {name:45s} {p}:{s}-{e}')
    print(f'{len(rows)} function(s) over {minimum} lines')
    return 1 if rows else 0

if __name__ == '__main__':
    sys.exit(main())
