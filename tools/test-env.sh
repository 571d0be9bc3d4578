#!/usr/bin/env bash
# What only the tests need, installed once into the caches of tools/env.sh
# (run by tools/test.sh before the suite; a second run finds everything
# and costs seconds):
#   - the Debian packages the tests and benchmarks use (testthat, the R
#     packages whose objects the tests read, Java for Spark, R CMD check's
#     tools);
#   - cargo-vendor-filterer and the Rust standard libraries of the
#     platforms the vendored source package is checked for (its tests);
#   - the test lock (tools/requirements-test.txt) in the Python environment
#     set-up made (.venv), and the arrow and nanoarrow R packages built
#     against its pyarrow's libarrow (../shared/arrow-r) into .venv/r-lib;
#   - SeuratObject 5 (../shared/seurat5, .seurat5) and qs and qs2
#     (../shared/qs, .qs-lib), fst (../shared/fst, .fst-lib).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# shellcheck source=tools/env.sh
. tools/env.sh

# --- Debian packages ---------------------------------------------------------
test_packages=(
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
  # the shared libpython that reticulate embeds
  libpython3-dev
)
rdarrow_apt "${test_packages[@]}"
step_done "test: Debian packages"

# --- Rust tools ----------------------------------------------------------------
# tools/vendor.sh vendors only the crates of the platforms R builds on
if ! cargo vendor-filterer --help >/dev/null 2>&1; then
  echo "==> cargo install cargo-vendor-filterer"
  cargo install --locked --quiet cargo-vendor-filterer@0.5.18
fi
# the standard libraries of the platforms tools/vendor.sh checks the R
# binding for (without them it keeps the vendored crates whole)
python3 tools/vendor_prune.py --fetch
step_done "test: Rust tools"

# --- The test lock and arrow R -----------------------------------------------
# Every package of tools/requirements-test.txt at its exact version (the
# lock of tools/requirements-test.in, made by tools/lock-test-env.sh),
# installed without resolving, then checked. The arrow and nanoarrow R
# packages are built (CRAN is not reachable here) from the sources in
# ../shared/arrow-r against the libarrow inside that environment's pyarrow,
# into its r-lib/ (beside that libarrow, which they load); tools/test.sh
# puts that library on R's path. Test-only: they stay in Suggests.
arrow_r_dir="$(pwd)/../shared/arrow-r"
rdarrow_venv
if [ -f "$venv_real/.rdarrow-complete" ]; then
  echo "==> test environment and arrow R: cached in $venv_real"
else
  start=$(date +%s)
  echo "==> test environment in $venv_real (tools/requirements-test.txt)"
  "$venv_real/bin/pip" install --quiet --disable-pip-version-check --no-deps -r tools/requirements-test.txt
  "$venv_real/bin/pip" check
  if [ -f "$arrow_r_dir/install.sh" ]; then
    echo "==> arrow and nanoarrow R packages in $venv_real/r-lib"
    rm -rf "$venv_real/r-lib"
    mkdir -p "$venv_real/r-lib"
    bash "$arrow_r_dir/install.sh" "$venv_real/r-lib" "$venv_real/bin/python"
    touch "$venv_real/.rdarrow-complete"
  else
    echo "==> $arrow_r_dir/install.sh not found: the tests that need the arrow R package will skip"
  fi
  echo "==> test environment ready in $(($(date +%s) - start)) s"
fi
step_done "test: Python environment and arrow R"

# --- SeuratObject 5 and qs/qs2 (test-only R libraries) ------------------------
# The library that ../shared/NAME/install.sh builds, in a cache entry keyed
# by R's version and its sources, linked as LINK in the repository; WHAT
# names it.
shared_r_lib() {
  local name="$1" link="$2" what="$3" dir key lib
  dir="$(pwd)/../shared/$name"
  if [ ! -f "$dir/install.sh" ]; then
    echo "==> $dir/install.sh not found: the tests of $what will skip"
    return 0
  fi
  key="$( { R --version | head -1; sha256sum "$dir"/*.tar.gz "$dir"/install.sh | cut -c1-64; } | rdarrow_hash)"
  lib="${rdarrow_cache:-$(pwd)/.cache}/$name-$key"
  if [ -f "$lib/.rdarrow-complete" ]; then
    echo "==> $what: cached in $lib"
    touch "$lib"
  else
    echo "==> $what in $lib"
    rm -rf "$lib"
    JOBS=2 bash "$dir/install.sh" "$lib" 2>&1 | tail -n 5
    touch "$lib/.rdarrow-complete"
  fi
  ln -sfn "$lib" "$link"
}

# Debian has SeuratObject 4.1 (Seurat v4 objects); the tests of Seurat v5
# objects (Assay5, LogMaps, split layers) make them with the real
# SeuratObject 5.3.0 and Matrix 1.6-5 from ../shared/seurat5. Only the R
# processes that make v5 objects put it on their library path.
shared_r_lib seurat5 .seurat5 "SeuratObject 5 (with Matrix 1.6-5)"
step_done "test: SeuratObject 5"

# The tests of .qs, .qs2 and .qdata files make them with the real qs 0.27.3
# and qs2 0.2.1 from ../shared/qs (with RApiSerialize and stringfish; Rcpp,
# RcppParallel and BH from Debian). rdarrow itself reads and writes these
# files without them.
shared_r_lib qs .qs-lib "qs 0.27.3 and qs2 0.2.1"
step_done "test: qs and qs2"

# The tests of .fst files make them with the real fst 0.9.8 and fstcore
# 0.10.0 from ../shared/fst (Rcpp, data.table and bit64 from Debian) and
# read rdarrow's back with them. rdarrow reads and writes .fst without them.
shared_r_lib fst .fst-lib "fst 0.9.8 and fstcore 0.10.0"
step_done "test: fst"

echo "==> test environment, seconds per step:"
printf '%s\n' "${steps[@]}"
