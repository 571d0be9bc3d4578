#!/usr/bin/env python3
"""Checks that rdarrow's layers point one way (ARCHITECTURE.md).

Between crates: the format crate depends on no Arrow array, IPC or Parquet
crate (cargo tree), and no crate depends on one above it. Inside the format
crate: one folder per layer, and each module imports only from its own
folder or the folders below (tests and doc comments aside). Exits non-zero, naming each import that
runs upwards.
"""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
WS = ROOT / "src" / "rust"

# The format crate's layers, one folder each, bottom first: a module may
# use its own folder and the folders before it, never one after it.
# lib.rs (the crate's API) is above them all.
FORMAT_LAYERS = [
    "base",         # errors, cancellation, machine limits
    "tree",         # the object tree: node codes, flags, NA, ALTREP nodes, string encodings, hashed environments, object paths, making nodes
    "compression",  # codecs, one member from many blocks, compressing on all cores
    "io",           # http(s), object stores, files written whole
    "wire",         # primitives decoded and encoded, the header
    "checks",       # R's rules for what R builds, the rule for code in a file, structures for consumers
    "read",         # items to the tree, payloads left in the stream, a parsed document, listing
    "write",        # the tree to R's bytes
    "sources",      # where R data comes from; many inputs at once
]

# Crates, bottom first: each may depend only on crates before it.
CRATES = ["rdarrow-format", "rdarrow-arrow", "rdarrow-r", "rdarrow-cli", "rdarrow-py", "rdarrow-duckdb"]
FORBIDDEN_IN_FORMAT = ["arrow-array", "arrow-ipc", "arrow-schema", "arrow-select", "arrow-cast", "parquet"]


def strip(text):
    """The code of a module without its test module and comments."""
    m = re.search(r"^#\[cfg\(test\)\]\s*\n\s*(pub(\(\w+\))? )?mod tests", text, re.M)
    if m:
        text = text[: m.start()]
    return "\n".join(re.sub(r"//.*", "", line) for line in text.splitlines())


def main():
    problems = []
    rank = {f: i for i, f in enumerate(FORMAT_LAYERS)}
    src = WS / "rdarrow-format" / "src"
    modules = 0
    for f in sorted(src.rglob("*.rs")):
        rel = f.relative_to(src)
        if rel.as_posix() == "lib.rs":
            continue
        modules += 1
        folder = rel.parts[0] if len(rel.parts) > 1 else None
        if folder not in rank:
            problems.append(f"rdarrow-format/src/{rel}: not in a layer's folder (tools/layers.py)")
            continue
        code = strip(f.read_text())
        used = set(re.findall(r"crate::(\w+)", code))
        for block in re.findall(r"crate::\{([^}]*)\}", code):
            used |= set(re.findall(r"(?:^|[{,])\s*([a-z_]+)\b(?:::|,|\s*$)", block))
        for u in sorted(used):
            if u in rank and rank[u] > rank[folder]:
                problems.append(f"rdarrow-format/src/{rel}: uses crate::{u}, a layer above its own ({folder})")
            elif u not in rank and u[:1].islower() and u not in ("self",):
                # a function of the crate root: the API is above every module
                problems.append(f"rdarrow-format/src/{rel}: uses crate::{u} of the crate root, above every module")
    # crates
    for i, crate in enumerate(CRATES):
        out = subprocess.run(
            ["cargo", "tree", "--manifest-path", str(WS / "Cargo.toml"), "-p", crate,
             "-e", "normal,build", "--prefix", "none", "--offline"],
            capture_output=True, text=True,
        )
        if out.returncode != 0:
            out = subprocess.run(
                ["cargo", "tree", "--manifest-path", str(WS / "Cargo.toml"), "-p", crate,
                 "-e", "normal,build", "--prefix", "none"],
                capture_output=True, text=True,
            )
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
    if problems:
        print("layers: imports that run upwards:")
        for p in problems:
            print("  " + p)
        return 1
    print(f"layers: {len(CRATES)} crates and {modules} format modules in {len(rank)} layers point one way")
    return 0


if __name__ == "__main__":
    sys.exit(main())
