#!/usr/bin/env python3
"""Import cycles between a crate's modules (one module per .rs file).

Usage: scripts/module-cycles.py src transforms/src search/src
(exit status 1 when a crate has a cycle or a layer imports one above it).

References are `crate::a::b`, `super::x` and `self::x` paths (in `use`
items and inline), outside `#[cfg(test)]` modules; each resolves to the
deepest known module it names. Edges between a module and its own
ancestors or descendants (a parent re-exporting its child, a child using
its parent's types) are listed separately: they are not between
independent modules.
"""
import os, re, sys

def modules(root):
    mods = {}
    for d, _, fs in os.walk(root):
        for f in fs:
            if not f.endswith('.rs'):
                continue
            p = os.path.join(d, f)
            rel = os.path.relpath(p, root)[:-3].split(os.sep)
            if rel[-1] in ('mod', 'lib', 'main'):
                rel = rel[:-1]
            if rel and rel[0] == 'bin':
                continue
            mods[tuple(rel)] = p
    return mods

def strip_tests(text):
    m = re.search(r'#\[cfg\(test\)\]\s*mod tests', text)
    text = text[:m.start()] if m else text
    text = re.sub(r'//[^\n]*', '', text)
    return text

PATH = re.compile(r'\b(crate|super|self)((?:::(?:\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*))+)')

def refs(mod, text, mods):
    out = set()
    for m in PATH.finditer(text):
        head, rest = m.group(1), m.group(2)
        if head == 'crate':
            base = ()
        elif head == 'self':
            base = mod
        else:
            base = mod[:-1]
            while rest.startswith('::super'):
                rest = rest[len('::super'):]
                base = base[:-1]
        # expand one level of braces
        parts = rest.strip(':').split('::')
        groups = [[]]
        for p in parts:
            if p.startswith('{'):
                inner = [x.strip().split('::')[0] for x in p[1:-1].split(',') if x.strip()]
                groups = [g + [x] for g in groups for x in inner]
                break
            groups = [g + [p] for g in groups]
        for g in groups:
            path = base + tuple(g)
            while path and path not in mods:
                path = path[:-1]
            if path != mod:
                out.add(path)
    return out

def related(a, b):
    return a[:len(b)] == b or b[:len(a)] == a

def cycles(root):
    mods = modules(root)
    graph = {m: set() for m in mods}
    family = []
    for m, p in mods.items():
        for r in refs(m, strip_tests(open(p).read()), mods):
            if related(m, r):
                family.append((m, r))
            else:
                graph[m].add(r)
    # strongly connected components (Tarjan)
    index, low, stack, on, comps = {}, {}, [], set(), []
    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v); on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w); low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            c = []
            while True:
                w = stack.pop(); on.discard(w); c.append(w)
                if w == v: break
            if len(c) > 1: comps.append(c)
    sys.setrecursionlimit(10000)
    for v in graph:
        if v not in index: visit(v)
    return mods, comps, family

# The engine's top-level modules, lowest layer first (docs/ARCHITECTURE.md):
# a module may import its own layer and the ones before it, never a later one.
LAYERS = {
    'src': [
        {'input', 'shown', 'launch'},
        {'source', 'diag'},
        {'cuda'},
        {'cost'},
        {'ir'},
        {'sim'},
        {'poly'},
        {'absint'},
        {'bound'},
        {'lint'},
    ],
}

def layer_violations(root, mods):
    """Imports from a lower top-level module to a higher one."""
    layers = LAYERS.get(os.path.normpath(root))
    if not layers:
        return []
    rank = {top: i for i, tops in enumerate(layers) for top in tops}
    out = []
    for m, p in mods.items():
        if not m or m[0] not in rank:
            continue
        for r in refs(m, strip_tests(open(p).read()), mods):
            if r and r[0] in rank and rank[r[0]] > rank[m[0]]:
                out.append((m, r))
    unplaced = sorted({m[0] for m in mods if m and m[0] not in rank})
    return sorted(out) + [((u,), None) for u in unplaced]

def name(m):
    return '::'.join(m) or 'crate'

found = False
for root in sys.argv[1:]:
    mods, comps, _ = cycles(root)
    print(f'{root}: {len(mods)} modules, {len(comps)} cycles')
    for c in comps:
        found = True
        print('  cycle:', ', '.join(sorted(name(m) for m in c)))
    for m, r in layer_violations(root, mods):
        found = True
        if r is None:
            print(f'  layer: top-level module {name(m)} is in no layer (add it to LAYERS)')
        else:
            print(f'  layer: {name(m)} imports {name(r)}, a higher layer')
sys.exit(1 if found else 0)
