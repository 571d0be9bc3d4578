#!/usr/bin/env bash
# Run rdarrow's tests:
#   -. what only the tests need, installed once (tools/test-env.sh: their
#      Debian, R and Python packages, arrow R, SeuratObject 5, qs and qs2,
#      fst);
#   0. the layers point one way (tools/layers.py, ARCHITECTURE.md);
#   1. the Rust engine's own tests (cargo test, crates rdarrow-format and
#      rdarrow-arrow; no R);
#   2. build and install the package (R CMD INSTALL ., default library);
#   3. the testthat suite in tests/testthat, against the installed package,
#      its files shared among RDARROW_TEST_JOBS (default 2) R processes
#      (tools/testthat.R);
#   4. build and install the Python package (tools/python-wheel.sh) and the
#      DuckDB extension (tools/duckdb-extension.sh), and run the pytest
#      suite in python/tests (the extension's tests too), its files shared
#      among RDARROW_TEST_JOBS processes (pytest-xdist).
# Prints `testthat: N passed, N failed, N skipped` and `pytest: passed` (or
# failed), and exits non-zero if anything failed.
#
# RDARROW_PEERS_DIR defaults to ../shared/corpus/peers beside the repository,
# when that folder exists.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$(pwd)"

# shellcheck source=tools/env.sh
. tools/env.sh
if ! command -v cargo >/dev/null 2>&1; then
  echo "test.sh: cargo not found; run tools/setup.sh first (needs Rust >= 1.88)" >&2
  exit 1
fi

# what only the tests need (cached: a second run finds it all)
bash tools/test-env.sh
step_done "test environment"

if [ -z "${RDARROW_PEERS_DIR:-}" ] && [ -d "$root/../shared/corpus/peers" ]; then
  RDARROW_PEERS_DIR="$(cd "$root/../shared/corpus/peers" && pwd)"
  export RDARROW_PEERS_DIR
fi
echo "==> RDARROW_PEERS_DIR=${RDARROW_PEERS_DIR:-<unset>}"

# The Python that has pyarrow (tools/setup.sh, tools/test-env.sh), named explicitly.
if [ -z "${RETICULATE_PYTHON:-}" ] && [ -x "$root/.venv/bin/python" ]; then
  export RETICULATE_PYTHON="$root/.venv/bin/python"
fi
echo "==> RETICULATE_PYTHON=${RETICULATE_PYTHON:-<unset>}"

# The arrow and nanoarrow R packages built by tools/test-env.sh.
if [ -d "$root/.venv/r-lib" ]; then
  export R_LIBS="$root/.venv/r-lib${R_LIBS:+:$R_LIBS}"
fi
echo "==> R_LIBS=${R_LIBS:-<unset>}"

# The object store tests start an S3-compatible server (moto, in the
# venv); here a missing server fails them rather than skipping them.
export RDARROW_REQUIRE_STORE=1
# Spark's tests (local mode, Java 17 from set-up): here a missing Spark or
# Java fails them rather than skipping them.
export RDARROW_REQUIRE_SPARK=1
# SeuratObject 5 from set-up (.seurat5): the tests of Seurat v5 objects
# made by it (hostile single-cell files among them) fail without it here.
if [ -d "$root/.seurat5" ]; then
  RDARROW_SEURAT5_LIB="$(cd "$root/.seurat5" && pwd -P)"
  export RDARROW_SEURAT5_LIB
fi
export RDARROW_REQUIRE_SEURAT5=1
echo "==> RDARROW_SEURAT5_LIB=${RDARROW_SEURAT5_LIB:-<unset>}"
# qs and qs2 from set-up (.qs-lib): the tests of .qs, .qs2 and .qdata files
# made by them fail without it here.
if [ -d "$root/.qs-lib" ]; then
  RDARROW_QS_LIB="$(cd "$root/.qs-lib" && pwd -P)"
  export RDARROW_QS_LIB
fi
export RDARROW_REQUIRE_QS=1
echo "==> RDARROW_QS_LIB=${RDARROW_QS_LIB:-<unset>}"
# fst from set-up (.fst-lib): the tests of .fst files made by it fail
# without it here.
if [ -d "$root/.fst-lib" ]; then
  RDARROW_FST_LIB="$(cd "$root/.fst-lib" && pwd -P)"
  export RDARROW_FST_LIB
fi
export RDARROW_REQUIRE_FST=1
echo "==> RDARROW_FST_LIB=${RDARROW_FST_LIB:-<unset>}"

echo "==> layers (tools/layers.py)"
python3 tools/layers.py
echo "==> one build (tools/one_build.py)"
python3 tools/one_build.py
step_done "layers and one build"

echo "==> cargo test --release -p rdarrow-format -p rdarrow-arrow"
cargo test --release --manifest-path src/rust/Cargo.toml -p rdarrow-format -p rdarrow-arrow 2>&1 | rdarrow_note_build
step_done "cargo test"

echo "==> R CMD INSTALL ."
log="$(mktemp -t rdarrow-install.XXXXXX)"
if ! R CMD INSTALL --no-multiarch . >"$log" 2>&1; then
  cat "$log"
  echo "test.sh: R CMD INSTALL failed" >&2
  echo "testthat: 0 passed, 1 failed, 0 skipped"
  rm -f "$log"
  exit 1
fi
rdarrow_note_build <"$log" >/dev/null
rm -f "$log"
step_done "R CMD INSTALL"

echo "==> testthat (tests/testthat, installed package, ${RDARROW_TEST_JOBS:-2} processes)"
r_status=0
times_file=""
[ -n "$rdarrow_cache" ] && times_file="$rdarrow_cache/testthat-times.tsv"
NOT_CRAN="${NOT_CRAN:-true}" Rscript --no-init-file tools/testthat.R "${RDARROW_TEST_JOBS:-2}" "$times_file" || r_status=$?
step_done "testthat"

# The Python package: built from this tree, then its pytest suite (which
# checks files written by R itself, so R_LIBS and TZ as above).
py_status=0
if [ -x "$root/.venv/bin/maturin" ]; then
  bash tools/python-wheel.sh 2>&1 | rdarrow_note_build || py_status=$?
  step_done "Python wheel"
  # the DuckDB extension, which python/tests/test_duckdb.py loads (here a
  # missing extension fails those tests rather than skipping them)
  if [ "$py_status" -eq 0 ]; then
    bash tools/duckdb-extension.sh "$root/target/duckdb" 2>&1 | rdarrow_note_build || py_status=$?
    export RDARROW_DUCKDB_EXTENSION="$root/target/duckdb/rdarrow.duckdb_extension"
    export RDARROW_REQUIRE_DUCKDB=1
    step_done "DuckDB extension"
  fi
  if [ "$py_status" -eq 0 ]; then
    # its files shared among as many processes as testthat's (a file's
    # tests stay together, so that its fixtures are made once)
    echo "==> pytest (python/tests, ${RDARROW_TEST_JOBS:-2} processes)"
    "$root/.venv/bin/python" -m pytest python/tests -q -rs -p no:cacheprovider --durations=15 \
      -n "${RDARROW_TEST_JOBS:-2}" --dist loadfile || py_status=$?
  fi
  step_done "pytest"
else
  echo "test.sh: .venv/bin/maturin not found (run tools/setup.sh): the Python package is not tested" >&2
  py_status=1
fi
# each crate compiled once into the one target directory, by set-up and
# by these tests alike (tools/one_build.py)
build_status=0
python3 tools/one_build.py --compiled "$RDARROW_BUILD_LOG" || build_status=$?
echo "==> seconds per step:"
printf '%s\n' "${steps[@]}"
echo "pytest: $([ "$py_status" -eq 0 ] && echo passed || echo failed)"
[ "$r_status" -eq 0 ] && [ "$py_status" -eq 0 ] && [ "$build_status" -eq 0 ]
