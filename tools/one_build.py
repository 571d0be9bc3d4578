#!/usr/bin/env python3
"""Check that every crate is compiled once for everything the repository
builds (tools/test.sh runs this):

1. each crate that two builds share (the R package's rdarrow-r, the Python
   wheel's rdarrow-py, the command line, the DuckDB extension, and the
   engine's `cargo test`) is asked for the same features by each, so that
   cargo builds it once into the one target directory (tools/env.sh) and
   every later build finds it fresh; cargo's own feature unification
   across a workspace is not stable yet, so the bindings ask alike;
2. no crate is compiled in two versions, except those listed in EXPLAINED
   with the reason (versions our dependencies pin, which we cannot choose).

With `--compiled LOG`, it checks instead what the builds of tools/setup.sh
and tools/test.sh really did: LOG (in the target directory, see
tools/env.sh) gathers their cargo output, and no crate of the registry may
have been compiled twice into that target directory (a crate of the
workspace is compiled again whenever its code changes).

Prints what differs and exits non-zero, or one line saying all is well.
"""
import pathlib
import re
import subprocess
import sys

WS = pathlib.Path(__file__).resolve().parent.parent / "src" / "rust"

# name -> why two versions are compiled
EXPLAINED = {
    "syn": "extendr's macros (R), tracing's and zerocopy's derives and libduckdb-sys's bindings generator are on syn 2, the rest on syn 3",
    "getrandom": "ring (TLS) is on 0.2, ahash (arrow) on 0.3, rand and uuid (object_store) on 0.4",
    "digest": "object_store's MD5 (md-5) is on 0.11, its CRC crate (crc-fast) on 0.10",
    "crypto-common": "with digest",
}

BUILDS = {
    "R package": ["-p", "rdarrow-r"],
    "Python wheel": ["-p", "rdarrow-py"],
    "command line": ["-p", "rdarrow-cli"],
    "DuckDB extension": ["-p", "rdarrow-duckdb"],
    "cargo test": ["-p", "rdarrow-format", "-p", "rdarrow-arrow", "-e", "dev"],
}


def tree(args):
    cmd = ["cargo", "tree", "--manifest-path", str(WS / "Cargo.toml"), "--prefix", "none"] + args
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"one_build: {' '.join(cmd)} failed: {out.stderr.strip()}")
    return out.stdout


def features(args):
    """(name, version) -> features, for the crates compiled for the target."""
    got = {}
    text = tree(["-e", "normal", "-f", "{p} [{f}]"] + args)
    for line in text.splitlines():
        m = re.match(r"(\S+) (v\S+)(?: \(.*?\))? \[(.*)\]", line.strip())
        if m:
            got[(m[1], m[2])] = m[3]
    return got


def host_crates():
    """Crates compiled for build scripts and proc macros (under a
    `[build-dependencies]` of the tree): cargo compiles those for the host
    apart from the library's own copy, with the build-script profile."""
    host = set()
    under = None
    for line in tree_indented():
        depth = len(line) - len(line.lstrip(" │├└─"))
        if "[build-dependencies]" in line:
            under = depth
            continue
        if under is not None and depth <= under:
            under = None
        m = re.search(r"(\S+) v(\S+)", line)
        if under is not None and m:
            host.add(f"{m[1]} v{m[2]}")
    return host


def tree_indented():
    cmd = ["cargo", "tree", "--manifest-path", str(WS / "Cargo.toml"), "--workspace", "-e", "normal,build", "--no-dedupe"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"one_build: {' '.join(cmd)} failed: {out.stderr.strip()}")
    return out.stdout.splitlines()


def compiled_twice(log):
    """The registry crates the log shows compiled more than once (a crate
    also compiled for the host, twice at most)."""
    seen = {}
    for line in pathlib.Path(log).read_text(errors="replace").splitlines():
        m = re.match(r"\s*Compiling (\S+) v(\S+)(?: \((.*)\))?", line)
        if not m or m[3]:
            continue
        key = f"{m[1]} v{m[2]}"
        seen[key] = seen.get(key, 0) + 1
    host = host_crates()
    twice = sorted(k for k, n in seen.items() if n > (2 if k in host else 1))
    if twice:
        print("one_build: compiled more than once into the one target directory (a flag or feature"
              " differs between two builds; after changing features, tools/setup.sh builds anew):")
        for k in twice:
            print(f"  {k}: {seen[k]} times")
        return 1
    print(f"one_build: {len(seen)} registry crates compiled by set-up and tests, each once (and once for the host where a build script needs it)")
    return 0


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--compiled":
        return compiled_twice(sys.argv[2])
    problems = []
    per_build = {name: features(args) for name, args in BUILDS.items()}
    crates = set().union(*per_build.values())
    for crate in sorted(crates):
        asked = {b: f[crate] for b, f in per_build.items() if crate in f}
        if len(set(asked.values())) > 1:
            problems.append(
                f"{crate[0]} {crate[1]} is built with other features by "
                + "; ".join(f"{b}: [{f}]" for b, f in asked.items())
            )
    versions = {}
    for line in tree(["--workspace", "-e", "normal,build", "-f", "{p}"]).splitlines():
        m = re.match(r"(\S+) v(\S+)", line.strip())
        if m:
            versions.setdefault(m[1], set()).add(m[2])
    for name, vs in sorted(versions.items()):
        if len(vs) > 1 and name not in EXPLAINED:
            problems.append(f"{name} is compiled in {len(vs)} versions ({', '.join(sorted(vs))})")
    if problems:
        print("one_build: crates compiled more than once:")
        for p in problems:
            print("  " + p)
        return 1
    dup = sorted(n for n, vs in versions.items() if len(vs) > 1)
    print(
        f"one_build: {len(crates)} crates, each asked for the same features by every build; "
        f"two versions only of {', '.join(dup) or 'none'} (explained in tools/one_build.py)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
