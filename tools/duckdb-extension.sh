#!/usr/bin/env bash
# Build rdarrow's DuckDB loadable extension: the crate rdarrow-duckdb
# (src/rust), with the metadata footer DuckDB reads from the last 512 bytes
# of an extension file, written as
#   OUT/rdarrow.duckdb_extension   (OUT: $1, default target/duckdb)
# Load it in a DuckDB started with unsigned extensions allowed:
#   duckdb -unsigned -c "LOAD 'target/duckdb/rdarrow.duckdb_extension'; ..."
#   duckdb.connect(config={"allow_unsigned_extensions": "true"})
# The footer says: ABI C_STRUCT (DuckDB's stable C API), C API version
# v1.2.0 (the oldest whose functions the extension calls; any later DuckDB
# loads it), the platform, and the extension's version.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$(pwd)"
. tools/env.sh
out="${1:-$root/target/duckdb}"
mkdir -p "$out"
echo "==> cargo build --release -p rdarrow-duckdb"
cargo build --release --manifest-path src/rust/Cargo.toml -p rdarrow-duckdb
lib="${CARGO_TARGET_DIR:-src/rust/target}/release/librdarrow_duckdb.so"
case "$(uname -m)" in
  x86_64) platform=linux_amd64 ;;
  aarch64 | arm64) platform=linux_arm64 ;;
  *) echo "duckdb-extension.sh: no DuckDB platform name for $(uname -m)" >&2; exit 1 ;;
esac
version="v$(sed -n 's/^version = "\(.*\)"/\1/p' src/rust/rdarrow-duckdb/Cargo.toml | head -1)"
api_version="$(sed -n 's/^pub const MIN_DUCKDB: &str = "\(.*\)";/\1/p' src/rust/rdarrow-duckdb/src/lib.rs)"
tmp="$out/.rdarrow.duckdb_extension.tmp"
python3 - "$lib" "$tmp" "$platform" "$version" "$api_version" <<'PY'
import sys
lib, out, platform, version, api_version = sys.argv[1:]
def field(s):
    b = s.encode("ascii")
    assert len(b) <= 32, s
    return b + b"\0" * (32 - len(b))
footer = bytes([0x00, 0x93, 0x04, 0x10]) + b"duckdb_signature" + bytes([0x80, 0x04])
for s in ["", "", "", "C_STRUCT", version, api_version, platform, "4"]:
    footer += field(s)
footer += b"\0" * 256
assert len(footer) == 534
with open(lib, "rb") as f, open(out, "wb") as o:
    o.write(f.read())
    o.write(footer)
PY
mv "$tmp" "$out/rdarrow.duckdb_extension"
echo "==> $out/rdarrow.duckdb_extension ($platform, C API $api_version, $version)"
