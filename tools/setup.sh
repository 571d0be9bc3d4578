#!/usr/bin/env bash
# Set up a Debian 12 machine for rdarrow, build and install the package,
# and run a short demo.
#
#   bash tools/setup.sh            # install what is missing, build, demo
#   bash tools/setup.sh --no-demo  # the same without the demo
#
# Installs R and the R packages the tests and benchmarks use from Debian's
# archive (only those not installed yet; apt is skipped entirely when all
# are present). Rust (cargo, rustc >= 1.88) must already be installed, e.g.
# with rustup.
set -euo pipefail

demo=1
for arg in "$@"; do
  case "$arg" in
    --no-demo) demo=0 ;;
    -h | --help)
      sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "setup.sh: unknown argument '$arg' (try --help)" >&2
      exit 2
      ;;
  esac
done

cd "$(dirname "${BASH_SOURCE[0]}")/.."

# R warns about an unknown timezone on machines without one configured.
export TZ="${TZ:-UTC}"

# --- Debian packages ---------------------------------------------------------
apt_packages=(
  r-base-dev
  r-cran-testthat r-cran-roxygen2 r-cran-reticulate r-cran-bit64 r-cran-hms
  r-cran-tibble r-cran-data.table r-cran-cli r-cran-rlang r-cran-bench
  r-cran-knitr r-cran-rmarkdown r-cran-rcmdcheck r-cran-lubridate
  r-cran-withr r-cran-callr r-cran-jsonlite
  python3-venv libpython3-dev
)

if command -v dpkg-query >/dev/null 2>&1; then
  missing=()
  for p in "${apt_packages[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
      missing+=("$p")
    fi
  done
  if [ "${#missing[@]}" -gt 0 ]; then
    echo "==> Installing Debian packages: ${missing[*]}"
    sudo=()
    if [ "$(id -u)" -ne 0 ]; then
      if ! command -v sudo >/dev/null 2>&1; then
        echo "setup.sh: need root or sudo to install: ${missing[*]}" >&2
        exit 1
      fi
      sudo=(sudo)
    fi
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y --no-install-recommends "${missing[@]}"
  else
    echo "==> Debian packages: all present"
  fi
elif command -v R >/dev/null 2>&1; then
  echo "==> Not a Debian system (no dpkg-query); using the R on the PATH"
else
  echo "setup.sh: R is not installed and this is not a Debian system;" >&2
  echo "          install R (>= 4.2) and the packages testthat and roxygen2." >&2
  exit 1
fi

# --- Rust --------------------------------------------------------------------
if [ -f "$HOME/.cargo/env" ]; then
  # shellcheck disable=SC1091
  . "$HOME/.cargo/env"
fi
export PATH="$PATH:$HOME/.cargo/bin"
if ! command -v cargo >/dev/null 2>&1 || ! command -v rustc >/dev/null 2>&1; then
  cat >&2 <<'MSG'
setup.sh: cargo/rustc not found on the PATH (nor in $HOME/.cargo/bin).
          rdarrow needs Rust >= 1.88 (Debian 12's own rustc is too old).
          Install it with rustup (https://rustup.rs), then run this again.
MSG
  exit 1
fi
echo "==> $(cargo --version), $(rustc --version)"

# --- Python with pyarrow (the tests check what Arrow consumers see) ---------
# A virtual environment of Debian's Python (which has the shared libpython
# that R's reticulate embeds), in .venv/ of the repository. The tests point
# RETICULATE_PYTHON at it. pyarrow is pinned to the release whose libarrow
# the arrow R package below is built against: a process that loads arrow R
# and another pyarrow crashes.
pyarrow_version=25.0.1
venv="$(pwd)/.venv"
if ! "$venv/bin/python" -c "import pyarrow, polars, duckdb, pandas, pytest, maturin, dask.dataframe, distributed, pyreadr, rdata; assert pyarrow.__version__ == '$pyarrow_version'" >/dev/null 2>&1; then
  echo "==> Python environment with pyarrow $pyarrow_version in $venv"
  /usr/bin/python3 -m venv "$venv"
  # maturin builds the Python package (python/); pytest runs its tests
  "$venv/bin/pip" install --quiet --disable-pip-version-check "pyarrow==$pyarrow_version" \
    polars duckdb pandas pytest "maturin>=1.7,<2" "dask[dataframe]" distributed \
    pyreadr rdata  # the other Python readers, compared in the tests and bench/python.py
else
  echo "==> Python environment: pyarrow $pyarrow_version present in $venv"
fi

# --- The arrow and nanoarrow R packages (what arrow R users see) -------------
# CRAN is not reachable here: both are built from the sources in
# ../shared/arrow-r against the libarrow inside the venv's pyarrow, into
# .venv/r-lib (beside that libarrow, which they load); tools/test.sh puts
# that library on R's path. Test-only: they stay in Suggests.
arrow_r="$(pwd)/../shared/arrow-r/install.sh"
if [ -f "$arrow_r" ]; then
  echo "==> arrow and nanoarrow R packages in $venv/r-lib"
  mkdir -p "$venv/r-lib"
  bash "$arrow_r" "$venv/r-lib" "$venv/bin/python"
else
  echo "==> $arrow_r not found: the tests that need the arrow R package will skip"
fi

# --- Build and install ---------------------------------------------------------
echo "==> R CMD INSTALL ."
start=$(date +%s)
R CMD INSTALL .
echo "==> Installed rdarrow in $(($(date +%s) - start)) s"

# --- The Python package (python/, the same engine through pyo3) --------------
bash tools/python-wheel.sh

# --- Demo --------------------------------------------------------------------
if [ "$demo" -eq 1 ]; then
  echo "==> Demo: tools/demo.R"
  Rscript tools/demo.R
fi
