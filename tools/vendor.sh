#!/usr/bin/env bash
# Release step for offline installs (the rextendr convention): vendor every
# crate the Rust workspace needs into src/rust/vendor.tar.xz, with the cargo
# configuration that points at it (src/rust/vendor-config.toml), then build
# the source package. An install from that tarball needs no network:
# src/Makevars unpacks the crates and runs cargo --offline.
#
#   bash tools/vendor.sh            # writes rdarrow_<version>.tar.gz here
#   bash tools/vendor.sh --no-build-vignettes   # arguments go to R CMD build
#
# The tarball of crates is built into the source package, not committed.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
[ -f "$HOME/.cargo/env" ] && . "$HOME/.cargo/env"
export PATH="$PATH:$HOME/.cargo/bin"

cd src/rust
rm -rf vendor vendor.tar.xz
cargo vendor --locked --versioned-dirs vendor > vendor-config.toml
# the config cargo prints names the folder relative to the manifest; the
# build unpacks the crates into src/vendor, beside src/.cargo/config.toml
sed -i 's|^directory = .*|directory = "vendor"|' vendor-config.toml
tar -cJf vendor.tar.xz vendor
rm -rf vendor
cd ../..
R CMD build "$@" .
rm -f src/rust/vendor.tar.xz src/rust/vendor-config.toml
ls -la rdarrow_*.tar.gz
