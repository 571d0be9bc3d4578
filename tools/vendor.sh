#!/usr/bin/env bash
# Release step: the source package as CRAN takes a package with Rust code
# (the rextendr convention). Builds the package with `R CMD build`, then, in
# the built package:
#   - the cargo workspace holds only what the R package compiles (the
#     crates rdarrow-format, rdarrow-arrow and rdarrow-r; the Python
#     binding, the DuckDB extension, the command line and the fuzzers are
#     left out), its lock file pruned
#     to their dependencies;
#   - every crate those need is vendored into src/rust/vendor.tar.xz (only
#     the platforms R builds packages on, with cargo-vendor-filterer when it
#     is installed), with the cargo configuration that points at it
#     (src/rust/vendor-config.toml);
#   - of those crates, only the files a build on those platforms reads
#     (tools/vendor_prune.py, which checks that the R binding compiles for
#     each of them).
# An install from that tarball needs no network: src/Makevars unpacks the
# crates and runs cargo --offline with a cargo home inside the build folder.
#
#   bash tools/vendor.sh            # writes rdarrow_<version>.tar.gz here
#   bash tools/vendor.sh --no-build-vignettes   # arguments go to R CMD build
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$(pwd)"
if [ -f "$HOME/.cargo/env" ]; then
  # shellcheck disable=SC1091
  . "$HOME/.cargo/env"
fi
export PATH="$PATH:$HOME/.cargo/bin"

stage="$(mktemp -d -t rdarrow-vendor.XXXXXX)"
trap 'rm -rf "$stage"' EXIT

# 1. the source package, as R CMD build makes it
(cd "$stage" && R CMD build "$@" "$root")
tarball="$(cd "$stage" && ls rdarrow_*.tar.gz)"
tar -xzf "$stage/$tarball" -C "$stage"
rm "$stage/$tarball"
pkg="$stage/rdarrow"

# 2. the workspace of the R package only
ws="$pkg/src/rust"
rm -rf "$ws/rdarrow-py" "$ws/rdarrow-cli" "$ws/rdarrow-duckdb" "$ws/fuzz" "$ws/target"
sed -i 's|^members = .*|members = ["rdarrow-format", "rdarrow-arrow", "rdarrow-r"]|' "$ws/Cargo.toml"
cp "$ws/Cargo.lock" "$stage/Cargo.lock.full"
# prunes the lock file to what the three crates use, changing no version
cargo metadata --format-version 1 --offline --manifest-path "$ws/Cargo.toml" >/dev/null 2>&1 ||
  cargo metadata --format-version 1 --manifest-path "$ws/Cargo.toml" >/dev/null
python3 - "$stage/Cargo.lock.full" "$ws/Cargo.lock" <<'PY'
import re, sys
def packages(path):
    text = open(path).read()
    return {(m.group(1), m.group(2)) for m in re.finditer(r'name = "([^"]+)"\nversion = "([^"]+)"', text)}
full, pruned = packages(sys.argv[1]), packages(sys.argv[2])
new = pruned - full
if new:
    sys.exit("vendor.sh: pruning the lock file changed versions: %s" % sorted(new))
print("vendor.sh: %d of %d locked packages are the R package's" % (len(pruned), len(full)))
PY

# 3. the crates, for the platforms R builds packages on
cd "$ws"
mapfile -t platforms < <(python3 "$root/tools/vendor_prune.py" --platforms)
if cargo vendor-filterer --help >/dev/null 2>&1; then
  args=()
  for p in "${platforms[@]}"; do args+=("--platform=$p"); done
  # what no build reads: the crates' tests, benchmarks and examples
  # (tracing's test macros alone are 9 MB)
  for path in tests benches examples test-macros; do args+=("--exclude-crate-path=*#$path"); done
  cargo vendor-filterer "${args[@]}" --versioned-dirs vendor >vendor-config.toml
else
  echo "vendor.sh: cargo-vendor-filterer is not installed (tools/test-env.sh installs it): vendoring every platform's crates" >&2
  cargo vendor --locked --versioned-dirs vendor >vendor-config.toml
fi
# only what a build on those platforms reads (the checks that tell run once
# per change of the lock file or the manifests; their cache is beside the
# build's target directory)
checks="${RDARROW_TARGET_DIR:-${CARGO_TARGET_DIR:-$stage/target}}-platforms"
python3 "$root/tools/vendor_prune.py" . vendor --cache "$checks"
# the config cargo prints names the folder relative to the manifest; the
# build unpacks the crates into src/vendor, beside src/.cargo/config.toml
sed -i 's|^directory = .*|directory = "vendor"|' vendor-config.toml
# the same dates for every file, whenever this runs: a build from the
# unpacked crates then sees them unchanged since its last build
find vendor -exec touch -h -t 202001010000 {} +
# in name order (each crate's files together, the same archive every run),
# at xz's level 9: 0.6 MB less than the default order and level
XZ_OPT=-9 tar --sort=name --owner=0 --group=0 --numeric-owner -cJf vendor.tar.xz vendor
rm -rf vendor
echo "vendor.sh: vendored crates: $(du -h vendor.tar.xz | cut -f1)"

# 4. the source package again
cd "$stage"
tar -czf "$root/$tarball" rdarrow
ls -la "$root/$tarball"
