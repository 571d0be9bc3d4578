#!/usr/bin/env bash
# Run rdarrow's tests:
#   1. the Rust engine's own tests (cargo test, crate rdarrow-core; no R);
#   2. build and install the package (R CMD INSTALL ., default library);
#   3. the testthat suite in tests/testthat, against the installed package;
#   4. build and install the Python package (tools/python-wheel.sh) and run
#      its pytest suite in python/tests.
# Prints `testthat: N passed, N failed, N skipped` and `pytest: passed` (or
# failed), and exits non-zero if anything failed.
#
# RDARROW_PEERS_DIR defaults to ../shared/corpus/peers beside the repository,
# when that folder exists.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$(pwd)"

if [ -f "$HOME/.cargo/env" ]; then
  # shellcheck disable=SC1091
  . "$HOME/.cargo/env"
fi
export PATH="$PATH:$HOME/.cargo/bin"
if ! command -v cargo >/dev/null 2>&1; then
  echo "test.sh: cargo not found; run tools/setup.sh first (needs Rust >= 1.88)" >&2
  exit 1
fi

# Keep R quiet about a missing timezone on minimal machines.
export TZ="${TZ:-UTC}"

if [ -z "${RDARROW_PEERS_DIR:-}" ] && [ -d "$root/../shared/corpus/peers" ]; then
  RDARROW_PEERS_DIR="$(cd "$root/../shared/corpus/peers" && pwd)"
  export RDARROW_PEERS_DIR
fi
echo "==> RDARROW_PEERS_DIR=${RDARROW_PEERS_DIR:-<unset>}"

# The Python that has pyarrow (made by tools/setup.sh), named explicitly.
if [ -z "${RETICULATE_PYTHON:-}" ] && [ -x "$root/.venv/bin/python" ]; then
  export RETICULATE_PYTHON="$root/.venv/bin/python"
fi
echo "==> RETICULATE_PYTHON=${RETICULATE_PYTHON:-<unset>}"

# The arrow and nanoarrow R packages built by tools/setup.sh.
if [ -d "$root/.venv/r-lib" ]; then
  export R_LIBS="$root/.venv/r-lib${R_LIBS:+:$R_LIBS}"
fi
echo "==> R_LIBS=${R_LIBS:-<unset>}"

echo "==> cargo test --release -p rdarrow-core"
cargo test --release --manifest-path src/rust/Cargo.toml -p rdarrow-core

echo "==> R CMD INSTALL ."
log="$(mktemp -t rdarrow-install.XXXXXX)"
start=$(date +%s)
if ! R CMD INSTALL --no-multiarch . >"$log" 2>&1; then
  cat "$log"
  echo "test.sh: R CMD INSTALL failed" >&2
  echo "testthat: 0 passed, 1 failed, 0 skipped"
  rm -f "$log"
  exit 1
fi
rm -f "$log"
echo "==> installed in $(($(date +%s) - start)) s"

echo "==> testthat (tests/testthat, installed package)"
runner="$(mktemp -t rdarrow-testthat.XXXXXX)"
trap 'rm -f "$runner"' EXIT
cat >"$runner" <<'RCODE'
counts <- c(passed = 0L, failed = 0L, skipped = 0L)
ok <- tryCatch(
  {
    res <- testthat::test_dir(
      "tests/testthat",
      package = "rdarrow",
      load_package = "installed",
      reporter = testthat::ProgressReporter$new(
        show_praise = FALSE,
        max_failures = Inf,
        update_interval = if (cli::is_dynamic_tty()) 0.1 else Inf
      ),
      stop_on_failure = FALSE,
      stop_on_warning = FALSE
    )
    for (test in res) {
      for (e in test$results) {
        if (inherits(e, "expectation_success")) {
          counts[["passed"]] <- counts[["passed"]] + 1L
        } else if (inherits(e, "expectation_failure") || inherits(e, "expectation_error")) {
          counts[["failed"]] <- counts[["failed"]] + 1L
        } else if (inherits(e, "expectation_skip")) {
          counts[["skipped"]] <- counts[["skipped"]] + 1L
        }
      }
    }
    TRUE
  },
  error = function(e) {
    message("test.sh: the test run itself failed: ", conditionMessage(e))
    FALSE
  }
)
if (!ok) counts[["failed"]] <- counts[["failed"]] + 1L
cat(sprintf(
  "testthat: %d passed, %d failed, %d skipped\n",
  counts[["passed"]], counts[["failed"]], counts[["skipped"]]
))
quit(save = "no", status = if (counts[["failed"]] > 0L) 1L else 0L)
RCODE
r_status=0
NOT_CRAN="${NOT_CRAN:-true}" Rscript --no-init-file "$runner" || r_status=$?

# The Python package: built from this tree, then its pytest suite (which
# checks files written by R itself, so R_LIBS and TZ as above).
py_status=0
if [ -x "$root/.venv/bin/maturin" ]; then
  bash tools/python-wheel.sh || py_status=$?
  if [ "$py_status" -eq 0 ]; then
    echo "==> pytest (python/tests)"
    "$root/.venv/bin/python" -m pytest python/tests -q -rs -p no:cacheprovider || py_status=$?
  fi
else
  echo "test.sh: .venv/bin/maturin not found (run tools/setup.sh): the Python package is not tested" >&2
  py_status=1
fi
echo "pytest: $([ "$py_status" -eq 0 ] && echo passed || echo failed)"
[ "$r_status" -eq 0 ] && [ "$py_status" -eq 0 ]
