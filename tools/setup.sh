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
# shellcheck source=tools/env.sh
. tools/env.sh

# --- Debian packages ---------------------------------------------------------
apt_packages=(
  r-base-dev
  r-cran-testthat r-cran-roxygen2 r-cran-reticulate r-cran-bit64 r-cran-hms
  r-cran-tibble r-cran-data.table r-cran-cli r-cran-rlang r-cran-bench
  r-cran-knitr r-cran-rmarkdown r-cran-rcmdcheck r-cran-lubridate r-cran-pkgdown
  r-cran-withr r-cran-callr r-cran-jsonlite r-cran-waldo r-cran-matrix
  r-cran-nlme r-cran-dplyr
  # lme4's fits and profiles (S4 objects, closures in their formulas'
  # environments) for the Arrow circle of every object with data
  r-cran-lme4
  # glmmTMB fits (an engine environment, external pointers) for the same
  r-cran-glmmtmb
  # Biobase's own test data: S4 objects saved before R 2.4 (no S4 bit)
  r-bioc-biobase
  # single-cell objects for read_anndata()'s tests and bench/anndata.py:
  # SeuratObject 4.1 (with pbmc_small), SingleCellExperiment and
  # SummarizedExperiment
  r-cran-seuratobject r-bioc-singlecellexperiment
  # Seurat 4.3 itself: NormalizeData() runs on the v4 objects Python writes
  r-cran-seurat
  # Java for Spark (pyspark 4) in the data source's tests and bench/spark.py
  openjdk-17-jre-headless
  qpdf devscripts  # what R CMD check --as-cran uses (PDF sizes, checkbashisms)
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
# tools/vendor.sh vendors only the crates of the platforms R builds on
if ! cargo vendor-filterer --help >/dev/null 2>&1; then
  echo "==> cargo install cargo-vendor-filterer"
  cargo install --locked --quiet cargo-vendor-filterer@0.5.18
fi

step_done "Rust tools"

# --- Python with pyarrow, and arrow R (what Arrow consumers see) -------------
# A virtual environment of Debian's Python (which has the shared libpython
# that R's reticulate embeds) with the packages of tools/requirements-test.txt,
# the lock of tools/requirements-test.in (every package at one exact version;
# tools/lock-test-env.sh makes it).
# The arrow and nanoarrow R packages are built (CRAN is not reachable here)
# from the sources in ../shared/arrow-r against the libarrow inside that
# venv's pyarrow, into its r-lib/ (beside that libarrow, which they load);
# tools/test.sh puts that library on R's path. Test-only: they stay in
# Suggests. The whole environment is one cache entry, keyed by the Python
# and R versions, the requirements and the arrow R sources; .venv in the
# repository links to it.
arrow_r_dir="$(pwd)/../shared/arrow-r"
venv_key="$( {
  /usr/bin/python3 --version
  R --version | head -1
  cat tools/requirements-test.txt
  if [ -d "$arrow_r_dir" ]; then sha256sum "$arrow_r_dir"/*.tar.gz "$arrow_r_dir"/install.sh | cut -c1-64; fi
} | rdarrow_hash)"
if [ -n "$rdarrow_cache" ]; then
  venv_real="$rdarrow_cache/venv-$venv_key"
  if [ -e .venv ] && [ ! -L .venv ]; then
    echo "==> .venv is a folder of its own: using it instead of the cache"
    venv_real="$(pwd)/.venv"
  else
    ln -sfn "$venv_real" .venv
  fi
else
  venv_real="$(pwd)/.venv"
fi
venv="$(pwd)/.venv"
if [ -f "$venv_real/.rdarrow-complete" ]; then
  echo "==> Python environment and arrow R: cached in $venv_real"
  touch "$venv_real"
else
  start=$(date +%s)
  echo "==> Python environment in $venv_real"
  rm -rf "$venv_real"
  /usr/bin/python3 -m venv "$venv_real"
  "$venv_real/bin/pip" install --quiet --disable-pip-version-check --no-deps -r tools/requirements-test.txt
  "$venv_real/bin/pip" check
  if [ -f "$arrow_r_dir/install.sh" ]; then
    echo "==> arrow and nanoarrow R packages in $venv_real/r-lib"
    mkdir -p "$venv_real/r-lib"
    bash "$arrow_r_dir/install.sh" "$venv_real/r-lib" "$venv_real/bin/python"
    touch "$venv_real/.rdarrow-complete"
  else
    echo "==> $arrow_r_dir/install.sh not found: the tests that need the arrow R package will skip"
  fi
  echo "==> Python environment ready in $(($(date +%s) - start)) s"
fi

step_done "Python environment and arrow R"

# --- SeuratObject 5 (test-only) ----------------------------------------------
# Debian has SeuratObject 4.1 (Seurat v4 objects); the tests of Seurat v5
# objects (Assay5, LogMaps, split layers) make them with the real
# SeuratObject 5.3.0 and Matrix 1.6-5 from ../shared/seurat5, built into a
# library of their own (a cache entry keyed by R's version and the
# sources; .seurat5 in the repository links to it). Only the R processes
# that make v5 objects put it on their library path.
seurat5_dir="$(pwd)/../shared/seurat5"
if [ -f "$seurat5_dir/install.sh" ]; then
  seurat5_key="$( { R --version | head -1; sha256sum "$seurat5_dir"/*.tar.gz "$seurat5_dir"/install.sh | cut -c1-64; } | rdarrow_hash)"
  seurat5_lib="${rdarrow_cache:-$(pwd)/.cache}/seurat5-$seurat5_key"
  if [ -f "$seurat5_lib/.rdarrow-complete" ]; then
    echo "==> SeuratObject 5: cached in $seurat5_lib"
    touch "$seurat5_lib"
  else
    echo "==> SeuratObject 5 and Matrix 1.6-5 in $seurat5_lib"
    rm -rf "$seurat5_lib"
    bash "$seurat5_dir/install.sh" "$seurat5_lib" 2>&1 | tail -n 3
    touch "$seurat5_lib/.rdarrow-complete"
  fi
  ln -sfn "$seurat5_lib" .seurat5
else
  echo "==> $seurat5_dir/install.sh not found: the tests of Seurat v5 objects made by SeuratObject 5 will skip"
fi

step_done "SeuratObject 5"

# --- qs and qs2 (test-only) ---------------------------------------------------
# The tests of .qs, .qs2 and .qdata files make them with the real qs 0.27.3
# and qs2 0.2.1 from ../shared/qs (with RApiSerialize and stringfish; Rcpp,
# RcppParallel and BH from Debian), built into a library of their own (a
# cache entry keyed by R's version and the sources; .qs-lib in the
# repository links to it). rdarrow itself reads and writes these files
# without them.
qs_dir="$(pwd)/../shared/qs"
if [ -f "$qs_dir/install.sh" ]; then
  qs_key="$( { R --version | head -1; sha256sum "$qs_dir"/*.tar.gz "$qs_dir"/install.sh | cut -c1-64; } | rdarrow_hash)"
  qs_lib="${rdarrow_cache:-$(pwd)/.cache}/qs-$qs_key"
  if [ -f "$qs_lib/.rdarrow-complete" ]; then
    echo "==> qs and qs2: cached in $qs_lib"
    touch "$qs_lib"
  else
    echo "==> qs 0.27.3 and qs2 0.2.1 in $qs_lib"
    rm -rf "$qs_lib"
    JOBS=2 bash "$qs_dir/install.sh" "$qs_lib" 2>&1 | tail -n 5
    touch "$qs_lib/.rdarrow-complete"
  fi
  ln -sfn "$qs_lib" .qs-lib
else
  echo "==> $qs_dir/install.sh not found: the tests of files made by qs and qs2 will skip"
fi

step_done "qs and qs2"

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
  # with the arrow R package built above, to show the Arrow hand-off
  if [ -d "$venv/r-lib" ]; then
    R_LIBS="$venv/r-lib${R_LIBS:+:$R_LIBS}" Rscript tools/demo.R
  else
    Rscript tools/demo.R
  fi
  step_done "demo"
fi

echo "==> set-up, seconds per step:"
printf '%s\n' "${steps[@]}"
