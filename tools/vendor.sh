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
#     (src/rust/vendor-config.toml).
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
platforms=(x86_64-unknown-linux-gnu aarch64-unknown-linux-gnu x86_64-apple-darwin aarch64-apple-darwin x86_64-pc-windows-gnu aarch64-pc-windows-gnullvm)
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
# the config cargo prints names the folder relative to the manifest; the
# build unpacks the crates into src/vendor, beside src/.cargo/config.toml
sed -i 's|^directory = .*|directory = "vendor"|' vendor-config.toml
# the same dates for every file, whenever this runs: a build from the
# unpacked crates then sees them unchanged since its last build
find vendor -exec touch -h -t 202001010000 {} +
tar -cJf vendor.tar.xz vendor
rm -rf vendor
echo "vendor.sh: vendored crates: $(du -h vendor.tar.xz | cut -f1)"

# 4. the source package again
cd "$stage"
tar -czf "$root/$tarball" rdarrow
ls -la "$root/$tarball"
