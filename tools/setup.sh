#!/usr/bin/env bash
# Set up a Debian 12 machine for rdarrow: what the package needs, the R
# package built and installed, the Python wheel built and installed, and a
# short demo.
#
#   bash tools/setup.sh            # install what is missing, build, demo
#   bash tools/setup.sh --no-demo  # the same without the demo
#
# Installs R from Debian's archive (only what is not installed yet; apt is
# not called when all is present) and a Python environment (.venv) with
# pyarrow and maturin. Rust (cargo, rustc >= 1.88) must already be
# installed, e.g. with rustup. What only the tests need (their R and Python
# packages, arrow R, SeuratObject 5, qs and qs2) the test command installs,
# once (tools/test-env.sh).
set -euo pipefail

demo=1
for arg in "$@"; do
  case "$arg" in
    --no-demo) demo=0 ;;
    -h | --help)
      sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "setup.sh: unknown argument '$arg' (try --help)" >&2
      exit 2
      ;;
  esac
done

cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=tools/env.sh
. tools/env.sh

# --- Debian packages ---------------------------------------------------------
# R and its build tools; Python's venv for the wheel
rdarrow_apt r-base-dev python3-venv
step_done "Debian packages"

# --- Rust and the caches (tools/env.sh) ------------------------------------
if ! command -v cargo >/dev/null 2>&1 || ! command -v rustc >/dev/null 2>&1; then
  cat >&2 <<'MSG'
setup.sh: cargo/rustc not found on the PATH (nor in $HOME/.cargo/bin).
          rdarrow needs Rust >= 1.88 (Debian 12's own rustc is too old).
          Install it with rustup (https://rustup.rs), then run this again.
MSG
  exit 1
fi
echo "==> $(cargo --version), $(rustc --version)"
echo "==> cache: ${rdarrow_cache:-<none: inside the repository>}"
rdarrow_prune_cache
step_done "Rust"

# --- Python: pyarrow and maturin, for the wheel -------------------------------
# (at the versions of the test lock, tools/requirements-test.txt, which the
# test command completes in the same environment)
rdarrow_venv
venv="$(pwd)/.venv"
if [ -f "$venv_real/.rdarrow-package" ]; then
  echo "==> Python environment: cached in $venv_real"
else
  echo "==> Python environment in $venv_real (pyarrow, maturin)"
  # shellcheck disable=SC2046
  "$venv_real/bin/pip" install --quiet --disable-pip-version-check --no-deps \
    $(grep -E '^(pyarrow|maturin)==' tools/requirements-test.txt)
  touch "$venv_real/.rdarrow-package"
fi
step_done "Python environment"

# --- Build and install ---------------------------------------------------------
echo "==> R CMD INSTALL ."
start=$(date +%s)
R CMD INSTALL . 2>&1 | rdarrow_note_build
echo "==> Installed rdarrow in $(($(date +%s) - start)) s"

step_done "R CMD INSTALL"

# --- The Python package (python/, the same engine through pyo3) --------------
bash tools/python-wheel.sh 2>&1 | rdarrow_note_build
step_done "Python wheel"

# --- Demo --------------------------------------------------------------------
if [ "$demo" -eq 1 ]; then
  echo "==> Demo: tools/demo.R"
  # with the arrow R package where the test command has built it, to show
  # the Arrow hand-off (the demo says when it is not there yet)
  if [ -d "$venv/r-lib/arrow" ]; then
    R_LIBS="$venv/r-lib${R_LIBS:+:$R_LIBS}" Rscript tools/demo.R
  else
    Rscript tools/demo.R
  fi
  step_done "demo"
fi

echo "==> set-up, seconds per step:"
printf '%s\n' "${steps[@]}"
