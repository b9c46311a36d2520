#!/usr/bin/env python3
"""Fills the unfinished messages of translations/trellis_<lang>.ts from a JSON file of
{"context": {"source": "translation" | ["singular", "plural"]}} (after the trellis_ui_lupdate target
added the new sources). Only unfinished messages whose context and source match are touched; a
plural form list goes to numerusforms. Prints what is still unfinished.

Usage: scripts/fill-translations.py LANG TRANSLATIONS.json
"""
import html
import json
import re
import sys

lang, table_path = sys.argv[1], sys.argv[2]
path = f'translations/trellis_{lang}.ts'
table = json.load(open(table_path, encoding='utf-8'))
text = open(path, encoding='utf-8').read()

def esc(s):
    return html.escape(s, quote=False).replace('"', '&quot;').replace("'", '&apos;')

out, left = [], []
pos = 0
for ctx in re.finditer(r'<context>\s*<name>(.*?)</name>(.*?)</context>', text, re.S):
    name = html.unescape(ctx.group(1))
    body = ctx.group(2)
    def fill(m):
        block = m.group(0)
        if 'type="unfinished"' not in block:
            return block
        source = html.unescape(re.search(r'<source>(.*?)</source>', block, re.S).group(1))
        wanted = table.get(name, {}).get(source)
        if wanted is None:
            left.append(f'{name} | {source}')
            return block
        if isinstance(wanted, list):
            forms = ''.join(f'\n            <numerusform>{esc(f)}</numerusform>' for f in wanted)
            new = f'<translation>{forms}\n        </translation>'
        else:
            new = f'<translation>{esc(wanted)}</translation>'
        return re.sub(r'<translation type="unfinished">.*?</translation>', lambda _: new, block, flags=re.S)
    new_body = re.sub(r'<message[^>]*>.*?</message>', fill, body, flags=re.S)
    out.append(text[pos:ctx.start(2)])
    out.append(new_body)
    pos = ctx.end(2)
out.append(text[pos:])
open(path, 'w', encoding='utf-8').write(''.join(out))
for l in left:
    print('unfinished:', l)
