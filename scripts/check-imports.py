#!/usr/bin/env python3
"""The workspace's import graph has no circle: neither between crates nor between the modules of a crate.

Crates: the scalebench-* entries of each crate's [dependencies] (cargo refuses a circle there, this names
the order). Modules: a file's module uses another when its code names `crate::a::b`, `super::x` or a
child module declared in it (`child::item`); doc comments, re-exports (`pub use`) and the file's own tests
(`mod tests`) do not count. A circle of module uses is printed with its files, and the script exits 1.
Usage: scripts/check-imports.py [WORKSPACE]   (run by scripts/test.sh before the tests)
"""

import re
import sys
from pathlib import Path

root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent)


def crate_dependencies():
    graph = {}
    for manifest in sorted(root.glob("crates/*/Cargo.toml")):
        text = manifest.read_text()
        name = re.search(r'^name\s*=\s*"([^"]+)"', text, re.M).group(1)
        deps = re.search(r"^\[dependencies\]\n(.*?)(?=^\[|\Z)", text, re.M | re.S)
        graph[name] = sorted(set(re.findall(r"^(scalebench[\w-]*)", deps.group(1) if deps else "", re.M)))
    return graph


def module_of(src, path):
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("lib", "main", "mod"):
        parts.pop()
    return tuple(parts)


def code_only(text):
    # Leave out comments, re-exports (`pub use a::B` names, it does not depend) and the unit tests
    # at the end of a file (they may use anything).
    text = re.split(r"\n#\[cfg\(test\)\]\s*\nmod tests", text)[0]
    text = re.sub(r"^\s*pub(?:\([a-z]+\))? use [^;]*;", "", text, flags=re.M)
    return "\n".join(line.split("//")[0] for line in text.splitlines())


def resolve(modules, path):
    # The longest known module that `path` (crate-relative segments) starts with.
    for n in range(len(path), 0, -1):
        if tuple(path[:n]) in modules:
            return tuple(path[:n])
    return ()


def module_uses(crate_dir):
    src = crate_dir / "src"
    files = {module_of(src, p): p for p in src.rglob("*.rs")}
    uses = {m: set() for m in files}
    for m, p in files.items():
        code = code_only(p.read_text())
        for path in re.findall(r"\bcrate((?:::[a-z_][a-z0-9_]*)+)", code):
            uses[m].add(resolve(files, path.split("::")[1:]))
        for path in re.findall(r"(?<!pub\()\bsuper\b((?:::[a-z_][a-z0-9_]*)*)", code):
            # `super` from a.rs or a/mod.rs is the parent of module a
            uses[m].add(resolve(files, list(m[:-1]) + path.split("::")[1:]))
        for child in re.findall(r"^\s*(?:pub(?:\([a-z]+\))? )?mod ([a-z_][a-z0-9_]*);", code, re.M):
            if re.search(r"(?<![:\w])" + child + r"::", code):
                uses[m].add(m + (child,))
        uses[m].discard(m)
    return files, uses


def circles(uses):
    # Tarjan's strongly connected components; a component of more than one module is a circle.
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in uses.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(10000)
    for v in list(uses):
        if v not in index:
            visit(v)
    return found


def main():
    crates = crate_dependencies()
    failed = False
    for crate_dir in sorted(root.glob("crates/*")):
        if not (crate_dir / "src").is_dir():
            continue
        files, uses = module_uses(crate_dir)
        for component in circles(uses):
            failed = True
            names = ", ".join(str(files[m].relative_to(root)) for m in component)
            print(f"import circle in {crate_dir.name}: {names}")
    order = []
    while len(order) < len(crates):
        ready = [c for c in crates if c not in order and all(d in order for d in crates[c] if d in crates)]
        if not ready:
            print("crate circle among: " + ", ".join(c for c in crates if c not in order))
            return 1
        order += sorted(ready)
    if failed:
        return 1
    print(f"no import circle: {len(crates)} crates, bottom to top: {' < '.join(order)}")
    return 0


sys.exit(main())
