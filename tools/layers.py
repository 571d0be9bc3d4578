#!/usr/bin/env python3
"""Checks that rdarrow's layers point one way (ARCHITECTURE.md).

- Between crates: the format crate depends on no Arrow array, IPC or
  Parquet crate (cargo tree), and no crate depends on one above it.
- Inside the format crate and the Arrow crate: one folder per layer, and
  each module imports only from its own folder or the folders below; no
  module imports the crate root (lib.rs, the crate's API, is above them
  all).
- In every crate, and in the Python package: no two modules import each
  other, directly or in a loop. Python imports inside functions count (a
  lazy import of a module of the package is still an import).

Tests and comments aside. A name a folder's `mod.rs` re-exports is
counted as an import of the module that defines it. Exits non-zero,
naming each import that runs upwards and each circle; prints, per crate
and for the Python package, the modules, the imports between them, the
imports that run up and the circles.
"""
import ast
import collections
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
WS = ROOT / "src" / "rust"
PY = ROOT / "python" / "rdarrow"

# Each layered crate's folders, bottom first: a module may use its own
# folder and the folders before it, never one after it.
LAYERS = {
    "rdarrow-format": [
        "base",         # errors, cancellation, machine limits
        "tree",         # the object tree: node codes, flags, NA, ALTREP nodes, string encodings, hashed environments, object paths, making nodes
        "compression",  # codecs, one member from many blocks, compressing on all cores
        "io",           # http(s), object stores, files written whole
        "wire",         # primitives decoded and encoded, the header
        "checks",       # R's rules for what R builds, the rule for code in a file, structures for consumers
        "read",         # items to the tree, payloads left in the stream, a parsed document, listing
        "write",        # the tree to R's bytes
        "sources",      # where R data comes from; many inputs at once
    ],
    "rdarrow-arrow": [
        "mapping",      # the type table both ways, times and zones, sparse matrices, tensor shapes, what an object is
        "batches",      # a table of record batches, handed over by row group on every core
        "metadata",     # the "r" metadata: document, columns' nodes, attributes, fidelity notes, NA bits, values back
        "to_arrow",     # R to Arrow: columns, tables, streamed tables, conversion during the parse
        "from_arrow",   # Arrow to R: columns, frames, tensor columns
        "files",        # IPC, Parquet, datasets, Tensor messages, many tables as one, one file to another
    ],
}

# Crates, bottom first: each may depend only on crates before it.
CRATES = ["rdarrow-format", "rdarrow-arrow", "rdarrow-r", "rdarrow-cli", "rdarrow-py", "rdarrow-duckdb"]
FORBIDDEN_IN_FORMAT = ["arrow-array", "arrow-ipc", "arrow-schema", "arrow-select", "arrow-cast", "parquet"]


def strip(text):
    """The code of a module without its test module and comments."""
    m = re.search(r"^#\[cfg\(test\)\]\s*\n\s*(pub(\(\w+\))? )?mod tests", text, re.M)
    if m:
        text = text[: m.start()]
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return "\n".join(re.sub(r"//.*", "", line) for line in text.splitlines())


def use_paths(prefix, tree):
    """The paths of a `use` tree (`a::{b, c::{d}}`), each a list."""
    items, depth, cur = [], 0, ""
    for ch in tree:
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 0:
            items.append(cur)
            cur = ""
        else:
            cur += ch
    items.append(cur)
    out = []
    for it in (i.strip() for i in items):
        if not it:
            continue
        m = re.match(r"^([\w:]*?)(?:::)?\{(.*)\}$", it, re.S)
        if m:
            out += use_paths(prefix + [x for x in m.group(1).split("::") if x], m.group(2))
        else:
            it = re.sub(r"\s+as\s+\w+$", "", it)
            out.append(prefix + [x for x in it.split("::") if x])
    return out


def rust_modules(src):
    """Module path (a tuple) -> file, for every module of a crate."""
    mods = {}
    for f in sorted(src.rglob("*.rs")):
        parts = list(f.relative_to(src).with_suffix("").parts)
        if parts[-1] in ("mod", "lib", "main"):
            parts = parts[:-1]
        mods[tuple(parts)] = f
    return mods


def re_exports(mods):
    """(module, name) -> the module a folder's mod.rs (or lib.rs) re-exports
    the name from; None for a name from another crate."""
    out = {}
    for mp, f in mods.items():
        if f.name not in ("mod.rs", "lib.rs"):
            continue
        for m in re.finditer(r"\bpub(?:\([\w ]+\))?\s+use\s+([^;]*);", strip(f.read_text()), re.S):
            for p in use_paths([], m.group(1)):
                if p[0] == "crate":
                    base, q = [], p[1:]
                elif p[0] == "self":
                    base, q = list(mp), p[1:]
                else:
                    base, q = list(mp), p
                while q and q[0] == "super":
                    base, q = base[:-1], q[1:]
                local = p[0] in ("crate", "self", "super") or tuple(base + q[:1]) in mods
                out[(mp, p[-1])] = tuple(base + q[:-1]) if local else None
    return out


def rust_graph(src):
    """module -> {module it imports}, and the imports of the crate root."""
    mods = rust_modules(src)
    rx = re_exports(mods)
    graph = collections.defaultdict(set)
    for mp, f in mods.items():
        code = strip(f.read_text())
        paths = []
        for m in re.finditer(r"\buse\s+((?:crate|super|self)\b[^;]*);", code, re.S):
            paths += use_paths([], m.group(1))
        for m in re.finditer(r"\b((?:crate|super)(?:::\w+)+)", code):
            paths.append(m.group(1).split("::"))
        if f.name in ("mod.rs", "lib.rs", "main.rs"):
            kids = {k[-1] for k in mods if len(k) == len(mp) + 1 and k[: len(mp)] == mp}
            for m in re.finditer(r"(?<![:\w])(\w+)::", code):
                if m.group(1) in kids:
                    paths.append(["self", m.group(1)])
            for m in re.finditer(r"\buse\s+(\w+)::([^;]*);", code, re.S):
                if m.group(1) in kids:
                    paths += use_paths(["self", m.group(1)], m.group(2))
        for p in paths:
            cur = list(mp)
            if p[0] == "crate":
                cur, p = [], p[1:]
            else:
                while p and p[0] in ("super", "self"):
                    if p[0] == "super":
                        cur = cur[:-1]
                    p = p[1:]
            full = cur + p
            best = max((tuple(full[:i]) for i in range(len(full) + 1) if tuple(full[:i]) in mods), key=len)
            hops = 0
            while best is not None and len(full) > len(best) and (best, full[len(best)]) in rx and hops < 8:
                target = rx[(best, full[len(best)])]
                if target is None:
                    best = None
                    break
                full = list(target) + full[len(best):]
                best = max((tuple(full[:i]) for i in range(len(full) + 1) if tuple(full[:i]) in mods), key=len)
                hops += 1
            if best is None or best == mp:
                continue
            graph[mp].add(best)
    return mods, graph


def circles(nodes, graph):
    """The strongly connected components of more than one module."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in nodes:
        if v not in index:
            visit(v)
    return out


def name(mp):
    return "::".join(mp) or "lib.rs"


def check_crate(crate, problems, summary, src=None, layers=None):
    src = src or WS / crate / "src"
    mods, graph = rust_graph(src)
    layers = layers if layers is not None else LAYERS.get(crate)
    rank = {f: i for i, f in enumerate(layers or [])}
    up = 0
    for mp in mods:
        if not mp:
            continue
        if layers is not None and mp[0] not in rank:
            problems.append(f"{crate}/src/{mods[mp].relative_to(src)}: not in a layer's folder (tools/layers.py)")
            continue
        for t in sorted(graph.get(mp, ())):
            if t == ():
                if layers is not None:
                    up += 1
                    problems.append(f"{crate}: {name(mp)} imports the crate root (lib.rs), above every module")
            elif layers is not None and rank.get(t[0], -1) > rank[mp[0]]:
                up += 1
                problems.append(f"{crate}: {name(mp)} imports {name(t)}, a layer above its own ({mp[0]})")
    found = circles(list(mods), graph)
    for c in found:
        problems.append(f"{crate}: a circle of imports: {' -> '.join(name(m) for m in c)}")
    edges = sum(len(v) for k, v in graph.items() if k)
    summary.append((crate, len(mods) - 1, edges, up if layers is not None else "-", len(found)))


def python_graph(root=PY):
    """Python module -> {modules of the package it imports} (imports made
    inside functions included)."""
    mods = {}
    for f in sorted(root.rglob("*.py")):
        parts = list(f.relative_to(root).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join([root.name] + parts)] = f
    graph = collections.defaultdict(set)
    for mod, f in mods.items():
        pkg = mod if f.name == "__init__.py" else mod.rsplit(".", 1)[0]
        tree = ast.parse(f.read_text())
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = pkg.split(".")
                    base = base[: len(base) - node.level + 1]
                    stem = ".".join(base + ([node.module] if node.module else []))
                else:
                    stem = node.module or ""
                for a in node.names:
                    targets.append(stem + "." + a.name if stem + "." + a.name in mods else stem)
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for t in targets:
                while t and t not in mods:
                    t = t.rpartition(".")[0]
                if t and t != mod:
                    graph[mod].add(t)
    return mods, graph


def check_python(problems, summary, root=PY):
    mods, graph = python_graph(root)
    # a module imports its package's __init__ when it is imported: a
    # submodule importing its own package is not a circle of code
    for m in list(graph):
        graph[m] = {t for t in graph[m] if not m.startswith(t + ".")}
    found = circles(list(mods), graph)
    for c in found:
        problems.append(f"python: a circle of imports: {' -> '.join(c)}")
    summary.append(("python/rdarrow", len(mods), sum(len(v) for v in graph.values()), "-", len(found)))


def check_crate_deps(problems):
    for i, crate in enumerate(CRATES):
        args = ["cargo", "tree", "--manifest-path", str(WS / "Cargo.toml"), "-p", crate,
                "-e", "normal,build", "--prefix", "none"]
        out = subprocess.run(args + ["--offline"], capture_output=True, text=True)
        if out.returncode != 0:
            out = subprocess.run(args, capture_output=True, text=True)
        if out.returncode != 0:
            problems.append(f"cargo tree -p {crate} failed: {out.stderr.strip()}")
            continue
        deps = {line.split()[0] for line in out.stdout.splitlines() if line.strip()}
        for above in CRATES[i + 1:]:
            if above in deps:
                problems.append(f"{crate} depends on {above}, a crate above it")
        if crate == "rdarrow-format":
            for bad in FORBIDDEN_IN_FORMAT:
                if bad in deps:
                    problems.append(f"rdarrow-format depends on {bad} (R's format needs no Arrow arrays, IPC or Parquet)")


def self_test():
    """The checker finds what it is for, in a made-up crate and package:
    an import of a folder above, of the crate root, a circle through a
    folder's re-export, and a Python circle hidden in a function."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        src = pathlib.Path(d) / "src"
        files = {
            "lib.rs": "pub mod low;\npub mod high;\npub fn api() {}\n",
            "low/mod.rs": "pub mod a;\npub mod b;\npub use b::B;\n",
            "low/a.rs": "use crate::high::h::H;\nuse crate::low::B;\npub struct A;\n",
            "low/b.rs": "use crate::low::a::A;\npub struct B;\n",
            "high/mod.rs": "pub mod h;\n",
            # (a test module's imports do not count)
            "high/h.rs": "pub fn f() { crate::api() }\npub struct H;\n"
                         "#[cfg(test)]\nmod tests {\n    use crate::low::a::A;\n}\n",
        }
        for name, text in files.items():
            (src / name).parent.mkdir(parents=True, exist_ok=True)
            (src / name).write_text(text)
        py = pathlib.Path(d) / "pkg"
        py.mkdir()
        (py / "__init__.py").write_text("")
        (py / "_one.py").write_text("from ._two import x\n")
        (py / "_two.py").write_text("def x():\n    from . import _one\n    return _one\n")
        problems, summary = [], []
        check_crate("made-up", problems, summary, src=src, layers=["low", "high"])
        check_python(problems, summary, root=py)
    want = [
        "made-up: low::a imports high::h, a layer above its own (low)",
        "made-up: high::h imports the crate root (lib.rs), above every module",
        "made-up: a circle of imports: low::a -> low::b",
        "python: a circle of imports: pkg._one -> pkg._two",
    ]
    missing = [w for w in want if w not in problems]
    extra = [p for p in problems if p not in want]
    if missing or extra:
        print("layers: the self-test failed")
        for m in missing:
            print("  not found: " + m)
        for e in extra:
            print("  found, not expected: " + e)
        return 1
    return 0


def main():
    if self_test():
        return 1
    problems, summary = [], []
    for crate in CRATES:
        check_crate(crate, problems, summary)
    check_python(problems, summary)
    check_crate_deps(problems)
    print(f"{'layers:':<16} {'modules':>7} {'imports':>7} {'up':>3} {'circles':>7}")
    for row in summary:
        print(f"  {row[0]:<14} {row[1]:>7} {row[2]:>7} {row[3]:>3} {row[4]:>7}")
    if problems:
        print("layers: imports that run upwards or in a circle:")
        for p in problems:
            print("  " + p)
        return 1
    print(f"layers: {len(CRATES)} crates and the Python package point one way, without circles")
    return 0


if __name__ == "__main__":
    sys.exit(main())
