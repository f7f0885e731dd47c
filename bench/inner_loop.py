#!/usr/bin/env python3
"""Count what the innermost FMA loop of an assembly file does.

    tessel build examples/matmul.tsl -o DIR --target zen3 --emit-text
    python3 bench/inner_loop.py DIR/matmul.s

Prints one Markdown row: the loop (the smallest loop whose body holds an
FMA, from its label to the jump back to it), its instructions, FMAs,
vector loads, broadcasts, stores and the registers that FMAs accumulate
into.  x86-64 assembly in AT&T syntax, as LLVM writes it.
"""
import re
import sys


def loops(lines):
    """Yield (label, body) for each label with a jump back to it."""
    for i, line in enumerate(lines):
        m = re.match(r'^(\.LBB\S+):', line)
        if not m:
            continue
        label, body = m.group(1), []
        for later in lines[i + 1:]:
            s = later.strip()
            if not s or s.startswith('.') or s.startswith('#'):
                continue
            body.append(s)
            if re.match(r'j\w+\s+' + re.escape(label) + r'$', s):
                yield label, body
                break


def row(path):
    with open(path) as f:
        lines = f.read().split('\n')
    with_fma = [(l, b) for l, b in loops(lines)
                if any(i.startswith('vfmadd') for i in b)]
    if not with_fma:
        return '| %s | no FMA loop | | | | | | |' % path
    label, body = min(with_fma, key=lambda lb: len(lb[1]))
    fmas = [i for i in body if i.startswith('vfmadd')]
    loads = [i for i in body if not i.startswith('vfmadd')
             and re.match(r'v\w+\s+[^,%]*\(', i)]
    casts = [i for i in loads if re.match(r'v(p)?broadcast', i)]
    stores = [i for i in body if re.match(r'v\w+\s+%\w+, [^,]*\(', i)]
    acc = {i.split(',')[-1].strip() for i in fmas}
    width = 'zmm' if any('zmm' in i for i in fmas) else 'ymm'
    return '| %s | %s | %d | %d | %d | %d | %d | %d %s |' % (
        path, label, len(body), len(fmas), len(loads) - len(casts),
        len(casts), len(stores), len(acc), width)


if __name__ == '__main__':
    print('| file | loop | instructions | FMAs | vector loads | '
          'broadcasts | stores | accumulators |')
    print('|---|---|---|---|---|---|---|---|')
    for p in sys.argv[1:]:
        print(row(p))
