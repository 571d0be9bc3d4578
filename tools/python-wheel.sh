#!/usr/bin/env bash
# Build the Python package (python/: crate src/rust/rdarrow-py through
# maturin, one abi3 wheel for CPython >= 3.9) and install it into the
# project's virtual environment (.venv, made by tools/setup.sh). The wheel
# carries rdarrow's DuckDB extension (tools/duckdb-extension.sh), which
# rdarrow.duckdb loads into DuckDB from pip.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=tools/env.sh
. tools/env.sh
venv="$(pwd)/.venv"
if [ ! -x "$venv/bin/maturin" ]; then
  echo "python-wheel.sh: $venv/bin/maturin not found; run tools/setup.sh first" >&2
  exit 1
fi
# the wheel is kept in target/wheels (python/README.md: pip install it)
wheels="$(pwd)/target/wheels"
mkdir -p "$wheels"
rm -f "$wheels"/rdarrow-*.whl
start=$(date +%s)
# the DuckDB extension, inside the package (python/rdarrow/, not in git)
bash tools/duckdb-extension.sh "$(pwd)/python/rdarrow"
echo "==> maturin build (python/)"
# maturin builds into cargo's one target directory (tools/env.sh), with
# the release profile and the features every binding shares: only pyo3
# and the binding crate are compiled here, the rest was by whichever build
# came first
(cd python && "$venv/bin/maturin" build --release --quiet -i "$venv/bin/python" -o "$wheels")
"$venv/bin/pip" install --quiet --disable-pip-version-check --force-reinstall --no-deps "$wheels"/rdarrow-*.whl
echo "==> Python package rdarrow built ($(ls "$wheels"/rdarrow-*.whl)) and installed in $(($(date +%s) - start)) s"
