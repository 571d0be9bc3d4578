#!/usr/bin/env python3
"""Checks that rdarrow's layers point one way (ARCHITECTURE.md).

Between crates: the format crate depends on no Arrow array, IPC or Parquet
crate (cargo tree), and no crate depends on one above it. Inside the format
crate: each module imports only from modules of its own layer or below
(tests and doc comments aside). Exits non-zero, naming each import that
runs upwards.
"""
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
WS = ROOT / "src" / "rust"

# The format crate's modules, bottom layer first; a module may use its own
# layer and those before it. lib.rs (the crate's API) is above them all.
FORMAT_LAYERS = [
    ["error", "cancel", "limits"],                    # errors, cancellation, machine limits
    ["tree", "altrep", "encoding", "envir"],          # the object tree: node codes, flags, NA, ALTREP nodes; string encodings; hashed environments
    ["compression", "remote", "store", "file_out", "joined", "parallel"],  # bytes in and out: codecs, one member from many blocks, URLs, object stores, atomic files
    ["input", "output", "header"],                    # primitives and the header, read and written
    ["read", "validate", "trust", "object_path", "build", "spill", "structure"],  # items to the tree and back to R's rules; what may be handed on; structures checked for consumers
    ["layout", "write"],                              # the tree to bytes
    ["document", "summary"],                          # a parsed stream, its objects and listing
    ["source", "lazyload", "many"],                   # where R data comes from; many inputs at once
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
    rank = {m: i for i, layer in enumerate(FORMAT_LAYERS) for m in layer}
    src = WS / "rdarrow-format" / "src"
    for f in sorted(src.glob("*.rs")):
        name = f.stem
        if name == "lib":
            continue
        if name not in rank:
            problems.append(f"rdarrow-format/src/{f.name}: module not placed in a layer (tools/layers.py)")
            continue
        code = strip(f.read_text())
        used = set(re.findall(r"crate::(\w+)", code))
        for block in re.findall(r"crate::\{([^}]*)\}", code):
            used |= set(re.findall(r"\b([a-z_]+)\b(?:::|,|\s*$)", block))
        for u in sorted(used):
            if u in rank and rank[u] > rank[name]:
                problems.append(f"rdarrow-format/src/{f.name}: uses crate::{u}, a layer above its own")
            elif u not in rank and u[:1].islower() and u not in ("self",):
                # a function of the crate root: the API is above every module
                problems.append(f"rdarrow-format/src/{f.name}: uses crate::{u} of the crate root, above every module")
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
    print(f"layers: {len(CRATES)} crates and {len(rank)} format modules point one way")
    return 0


if __name__ == "__main__":
    sys.exit(main())
