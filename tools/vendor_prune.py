#!/usr/bin/env python3
"""Release step (tools/vendor.sh): leaves in the vendored crates only what
a build of the R package reads, on the platforms R builds packages on.

1. Rust sources. The R binding is checked (`cargo check --release`, from
   the vendored crates, offline) for each platform, at its baseline CPU and,
   for x86_64 and aarch64, at a CPU with every feature (code chosen by
   `cfg(target_feature)`). rustc's dependency files then list every source
   file each crate's compilation read, `include!`s and `include_str!`s
   among them. A crate compiled for the platforms keeps exactly the files
   read there; a crate compiled for the build machine (a build script's or
   a procedural macro's dependency, on whatever machine builds) keeps all.
   The list is kept in the cache under a key of the lock file, the
   manifests, rustc's version and the platforms, so the checks run once
   per change of those. A failing check fails the release: the package
   must compile for every platform it is vendored for. Without rustup or a
   platform's standard library (and no network to fetch it), this step is
   skipped and said so.
2. What no build reads. In every crate: its own lock file, the manifest as
   written before publishing (`Cargo.toml.orig`), Markdown no compilation
   read, and the folders and files of its repository's tools (`.github`,
   `.travis.yml` and the like). In a crate compiled for the platforms only
   and without a build script (which might read any of its files): every
   file no compilation read but its manifest, checksums, licences and C
   headers (test data, the tables code was generated from, scripts).
3. The C libraries' translations, manuals, tests and programs (liblzma's
   xz, zstd): their build scripts compile only the library sources.

Removed files leave each crate's `.cargo-checksum.json` too, so cargo
accepts the crates.

    python3 tools/vendor_prune.py WORKSPACE VENDOR --cache DIR
    python3 tools/vendor_prune.py --platforms   # the platforms, one a line
    python3 tools/vendor_prune.py --fetch       # their standard libraries
"""
import argparse
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

# bumped when what this script keeps changes
VERSION = "1"

# The platforms R builds packages on (CRAN's and R's own builds): the
# crates are vendored, and the package checked, for these.
PLATFORMS = [
    "x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu",
    "x86_64-apple-darwin", "aarch64-apple-darwin",
    "x86_64-pc-windows-gnu", "aarch64-pc-windows-gnullvm",
]

# A CPU with every feature the platforms' crates choose code by.
FULL_CPU = {
    "x86_64-unknown-linux-gnu": "sapphirerapids",
    "aarch64-unknown-linux-gnu": "neoverse-v2",
}

# What the C libraries' build scripts never compile or include.
C_EXTRAS = {
    "liblzma-sys": [
        "xz/po", "xz/po4a", "xz/doc", "xz/tests", "xz/debug", "xz/windows",
        "xz/dos", "xz/m4", "xz/cmake", "xz/build-aux", "xz/extra", "xz/lib",
        "xz/doxygen", "xz/src/xz", "xz/src/xzdec", "xz/src/lzmainfo",
        "xz/src/scripts",
    ],
    "zstd-sys": ["zstd/build", "zstd/contrib"],
}

# A crate's licence and notices, kept whatever else goes.
LICENCE = re.compile(r"(^|/)(LICEN[CS]E|COPYING|NOTICE|COPYRIGHT|AUTHORS|THIRD[-_]PARTY|UNLICENSE)", re.I)
CARGO_FILES = ("Cargo.toml", ".cargo-checksum.json", ".cargo_vcs_info.json")

# The C compiler and archiver of a check for another platform: no code is
# generated, so they check that the sources named exist, note them in
# $CHECK_CC_LOG and write empty objects and archives.
FAKE_CC = r"""#!/bin/sh
out=; prev=
for a in "$@"; do
  case "$prev" in -o) out="$a";; esac
  case "$a" in
    -E) exit 0;;
    --version|-dumpversion) echo "check-cc 1.0"; exit 0;;
    -*) ;;
    *.c|*.S|*.s|*.asm) [ -f "$a" ] || { echo "check-cc: no source $a" >&2; exit 1; }
                       echo "$a" >> "$CHECK_CC_LOG";;
  esac
  prev="$a"
done
[ -n "$out" ] && : > "$out"
exit 0
"""
FAKE_AR = r"""#!/bin/sh
lib=
for a in "$@"; do
  case "$a" in
    *.a|*.lib) [ -z "$lib" ] && lib="$a";;
    *.o|*.obj) case "$a" in */vendor/*) echo "$a" >> "$CHECK_CC_LOG";; esac;;
  esac
done
[ -n "$lib" ] && : > "$lib"
exit 0
"""
# What a C library's build compiles or archives; the rest of these kinds
# (and the Perl that generates assembly) goes where a build compiled some.
C_SOURCE = (".c", ".S", ".s", ".asm", ".o", ".obj", ".pl")


def say(msg):
    print("vendor_prune: " + msg, file=sys.stderr, flush=True)


def crate_of(path):
    """(crate folder, path inside it) of a vendored file, or None."""
    # rustc names a file as the code did (`src/../README.md`)
    parts = os.path.normpath(path).replace("\\", "/").split("/vendor/")
    if len(parts) < 2:
        return None
    crate, _, rel = parts[-1].partition("/")
    return (crate, rel) if rel else None


def dep_files(pattern):
    """{crate folder: {files}} named by rustc's dependency files."""
    found = {}
    for d in glob.glob(pattern):
        with open(d, errors="replace") as f:
            for line in f:
                head, sep, rest = line.partition(": ")
                if not sep:
                    continue
                for p in rest.split():
                    hit = crate_of(p)
                    if hit:
                        found.setdefault(hit[0], set()).add(hit[1])
    return found


def merge(into, more):
    for k, v in more.items():
        into.setdefault(k, set()).update(v)


def key_of(ws, platforms):
    h = hashlib.sha256(VERSION.encode())
    for rel in ["Cargo.lock", "Cargo.toml"] + sorted(glob.glob("*/Cargo.toml", root_dir=ws)):
        with open(os.path.join(ws, rel), "rb") as f:
            h.update(rel.encode() + b"\0" + f.read())
    h.update(subprocess.run(["rustc", "-vV"], capture_output=True, check=True).stdout)
    h.update(",".join(platforms).encode())
    return h.hexdigest()[:16]


def have_platforms(platforms):
    """Whether rustup has (or can fetch) every platform's standard library."""
    if shutil.which("rustup") is None:
        say("rustup is not here: the crates' Rust sources are kept whole")
        return False
    got = subprocess.run(["rustup", "target", "list", "--installed"], capture_output=True, text=True)
    missing = [p for p in platforms if p not in got.stdout.split()]
    if missing:
        say("fetching the standard library of " + ", ".join(missing))
        r = subprocess.run(["rustup", "target", "add"] + missing, capture_output=True, text=True)
        if r.returncode != 0:
            why = (r.stderr.strip().splitlines() or ["no reason given"])[-1]
            say("rustup could not fetch them (%s): the crates' Rust sources are kept whole" % why)
            return False
    return True


def check_all(ws, vendor, target_dir, platforms):
    """Runs the checks; returns, each as {crate folder: {files}}: what the
    compilations for the platforms read, what those for the build machine
    read (its crates), what the build scripts' compilations read, and the
    C sources the build scripts compiled."""
    tools = tempfile.mkdtemp(prefix="rdarrow-check-")
    try:
        cc, ar = os.path.join(tools, "cc"), os.path.join(tools, "ar")
        for path, text in ((cc, FAKE_CC), (ar, FAKE_AR)):
            with open(path, "w") as f:
                f.write(text)
            os.chmod(path, 0o755)
        # ring's build asks for "clang" by name for Windows on arm
        os.symlink(cc, os.path.join(tools, "clang"))
        home = os.path.join(tools, "cargo-home")
        os.makedirs(home)
        with open(os.path.join(home, "config.toml"), "w") as f:
            f.write('[source.crates-io]\nreplace-with = "vendored-sources"\n\n'
                    '[source.vendored-sources]\ndirectory = "%s"\n' % os.path.abspath(vendor))
        env = dict(os.environ, CARGO_HOME=home, CARGO_NET_OFFLINE="true",
                   PATH=os.environ["PATH"] + ":" + tools)
        env.pop("RUSTFLAGS", None)
        env.pop("CARGO_BUILD_TARGET", None)
        # the C sources the build scripts compiled, noted as they ran (a
        # check whose build scripts ran before there was a note starts over)
        for tdir in (target_dir, target_dir + "-full-cpu"):
            if os.path.isdir(tdir) and not os.path.exists(os.path.join(tdir, "c-sources.log")):
                shutil.rmtree(tdir)
            os.makedirs(tdir, exist_ok=True)
            open(os.path.join(tdir, "c-sources.log"), "a").close()
        runs = [(p, None) for p in platforms] + [(p, cpu) for p, cpu in FULL_CPU.items() if p in platforms]
        for platform, cpu in runs:
            low = platform.replace("-", "_")
            tdir = target_dir + ("-full-cpu" if cpu else "")
            run_env = dict(env, **{"CC_" + low: cc, "AR_" + low: ar,
                                   "CHECK_CC_LOG": os.path.join(tdir, "c-sources.log")})
            if cpu:
                run_env["CARGO_TARGET_%s_RUSTFLAGS" % low.upper()] = "-C target-cpu=" + cpu
            say("checking the R binding for %s%s" % (platform, " (target-cpu=%s)" % cpu if cpu else ""))
            r = subprocess.run(
                ["cargo", "check", "-j", "2", "--offline", "--release", "--lib", "-p", "rdarrow-r",
                 "--target", platform, "--target-dir", tdir, "--manifest-path", os.path.join(ws, "Cargo.toml")],
                env=run_env, capture_output=True, text=True)
            if r.returncode != 0:
                sys.stderr.write(r.stderr[-6000:])
                sys.exit("vendor_prune: the R binding does not compile for %s" % platform)
        target, host, other, c = {}, {}, {}, {}
        for tdir in (target_dir, target_dir + "-full-cpu"):
            with open(os.path.join(tdir, "c-sources.log"), errors="replace") as f:
                for line in f:
                    hit = crate_of(line.strip())
                    if hit:
                        c.setdefault(hit[0], set()).add(hit[1])
            for platform in platforms:
                merge(target, dep_files(os.path.join(tdir, platform, "release", "deps", "*.d")))
            merge(host, dep_files(os.path.join(tdir, "release", "deps", "*.d")))
            merge(other, dep_files(os.path.join(tdir, "release", "build", "*", "*.d")))
        return target, host, other, c
    finally:
        shutil.rmtree(tools, ignore_errors=True)


def remove(vendor, crate, rels):
    """Removes files of a crate (paths its checksum file lists), their
    lines in that file and the folders they leave empty; {file: bytes}."""
    if not rels:
        return {}
    cdir = os.path.join(vendor, crate)
    sums_path = os.path.join(cdir, ".cargo-checksum.json")
    with open(sums_path) as f:
        sums = json.load(f)
    sizes = {}
    for rel in rels:
        p = os.path.join(cdir, rel)
        if os.path.lexists(p):
            sizes[rel] = os.lstat(p).st_size
            os.remove(p)
        sums["files"].pop(rel, None)
    with open(sums_path, "w") as f:
        json.dump(sums, f, separators=(",", ":"))
    for root, _, _ in os.walk(cdir, topdown=False):
        if root != cdir and not os.listdir(root):
            os.rmdir(root)
    return sizes


# What goes, by why (the report's lines).
RUST, C_UNUSED, UNREAD, C_EXTRA = (
    "Rust sources no platform compiles", "C sources no platform compiles",
    "what no build reads", "C libraries' extras")


def what_goes(crate, files, listing):
    """{file: why} of the files of `crate` (those its checksum file lists)
    no build reads; `listing` is None where the checks could not run."""
    gone = {}

    def mark(why, rels):
        for r in rels:
            gone.setdefault(r, why)

    kept = listing["files"].get(crate, set()) if listing else set()
    for_platforms = listing is not None and crate not in listing["host"]
    if for_platforms and crate in listing["target"]:
        mark(RUST, (r for r in files if r.endswith(".rs") and r != "build.rs" and r not in kept))
        if "build.rs" not in files:
            # no build script that might read any of its files
            mark(UNREAD, (r for r in files if r not in kept and r not in CARGO_FILES
                          and not LICENCE.search(r) and not r.endswith(".h")))
    if for_platforms and crate in listing["c"]:
        mark(C_UNUSED, (r for r in files if r.endswith(C_SOURCE) and r not in kept))
    # Markdown only where the dependency files say which a build reads
    mark(UNREAD, (r for r in files if r not in kept and r not in CARGO_FILES
                  and (r in ("Cargo.lock", "Cargo.toml.orig") or (listing and r.lower().endswith(".md"))
                       or any(part.startswith(".") for part in r.split("/")))))
    for folder in C_EXTRAS.get(crate.rsplit("-", 1)[0], []):
        mark(C_EXTRA, (r for r in files if r.startswith(folder + "/")))
    return gone


def main():
    if sys.argv[1:] == ["--platforms"]:
        print("\n".join(PLATFORMS))
        return
    if sys.argv[1:] == ["--fetch"]:
        have_platforms(PLATFORMS)
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("workspace")
    ap.add_argument("vendor")
    ap.add_argument("--cache", required=True)
    a = ap.parse_args()
    platforms = PLATFORMS
    os.makedirs(a.cache, exist_ok=True)

    # the listing: the files each crate's builds read, and which crates were
    # compiled for the platforms, for the build machine, and with C
    key = key_of(a.workspace, platforms)
    path = os.path.join(a.cache, "read-%s.json" % key)
    listing = None
    if os.path.exists(path):
        with open(path) as f:
            saved = {k: set(v) for k, v in json.load(f).items()}
        say("what the builds read: from the cache (%s)" % os.path.basename(path))
    elif have_platforms(platforms):
        target, host, other, c = check_all(a.workspace, a.vendor, os.path.join(a.cache, "target"), platforms)
        saved = {}
        for part in (target, host, other, c):
            merge(saved, part)
        saved.update({"\0host": set(host), "\0target": set(target), "\0c": set(c)})
        with open(path + ".tmp", "w") as f:
            json.dump({k: sorted(v) for k, v in saved.items()}, f)
        os.replace(path + ".tmp", path)
    if os.path.exists(path):
        listing = {part: saved.pop("\0" + part) for part in ("host", "target", "c")}
        listing["files"] = saved

    freed = dict.fromkeys((RUST, C_UNUSED, UNREAD, C_EXTRA), 0)
    for crate in sorted(os.listdir(a.vendor)):
        cdir = os.path.join(a.vendor, crate)
        if not os.path.isdir(cdir):
            continue
        with open(os.path.join(cdir, ".cargo-checksum.json")) as f:
            files = list(json.load(f)["files"])
        gone = what_goes(crate, files, listing)
        for rel, size in remove(a.vendor, crate, gone).items():
            freed[gone[rel]] += size
    for what, size in freed.items():
        say("%s: %.1f MB removed" % (what, size / 1e6))


if __name__ == "__main__":
    main()
