"""Shared helpers: R data files written by the real R (Rscript), so that
every test checks what R itself saved."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


LOCK = Path(os.environ.get("RDARROW_TEST_LOCK") or Path(__file__).resolve().parents[2] / "tools" / "requirements-test.txt")


def _lock_mismatches():
    """The packages of the test lock (tools/requirements-test.txt) missing
    from this environment or at another version."""
    from importlib import metadata

    def norm(name):
        return re.sub(r"[-_.]+", "-", name).lower()

    installed = {norm(d.metadata["Name"]): d.version for d in metadata.distributions() if d.metadata["Name"]}
    out = []
    for line in LOCK.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" not in line:
            continue
        name, version = (x.strip() for x in line.split("==", 1))
        have = installed.get(norm(name))
        if have != version:
            out.append(f"{name}=={version} (installed: {have or 'none'})")
    return out


def pytest_sessionstart(session):
    """The suite runs in the locked environment (tools/test-env.sh installs
    it); anything else fails at once, saying what differs."""
    if not LOCK.is_file() or os.environ.get("RDARROW_SKIP_LOCK_CHECK"):
        return
    wrong = _lock_mismatches()
    if wrong:
        pytest.exit(
            "the Python environment does not match the test lock tools/requirements-test.txt "
            f"({len(wrong)} packages: {', '.join(wrong[:8])}{', ...' if len(wrong) > 8 else ''}); "
            "run bash tools/test-env.sh, or tools/lock-test-env.sh to change the lock on purpose",
            returncode=3,
        )


def _rscript():
    r = shutil.which("Rscript")
    if r is None:
        pytest.skip("Rscript is not on the PATH: these tests check files written by R itself")
    return r


@pytest.fixture(scope="session")
def run_r():
    """Run R code (with `out` bound to the output folder) and return its
    standard output."""
    rscript = _rscript()

    def run(code, **env):
        res = subprocess.run(
            [rscript, "--vanilla", "-e", code],
            capture_output=True,
            text=True,
            env={**os.environ, "TZ": "UTC", **env},
        )
        if res.returncode != 0:
            raise AssertionError(f"R failed:\n{res.stderr}")
        return res.stdout

    return run


def cargo_cli():
    """The cargo-built ``rdarrow`` binary (RDARROW_CLI, else built into the
    project's target directory)."""
    exe = os.environ.get("RDARROW_CLI")
    root = Path(__file__).resolve().parents[2]
    if not exe:
        target = os.environ.get("CARGO_TARGET_DIR", str(root / "src" / "rust" / "target"))
        exe = str(Path(target) / "release" / "rdarrow")
    if not Path(exe).exists():
        subprocess.run(
            ["cargo", "build", "--release", "-p", "rdarrow-cli", "--manifest-path", str(root / "src" / "rust" / "Cargo.toml")],
            check=True,
        )
    return exe


def seurat5_lib():
    """The library of the real SeuratObject 5 (RDARROW_SEURAT5_LIB, built by
    tools/test-env.sh into .seurat5); a skip when it is not built, a failure
    where the suite requires it (RDARROW_REQUIRE_SEURAT5=1)."""
    lib = os.environ.get("RDARROW_SEURAT5_LIB")
    if lib and Path(lib).is_dir():
        return lib
    why = "SeuratObject 5 is not built (tools/test-env.sh builds it from ../shared/seurat5 into .seurat5)"
    if os.environ.get("RDARROW_REQUIRE_SEURAT5") == "1":
        raise AssertionError(why)
    pytest.skip(why)


def qs_lib():
    """The library of the real qs and qs2 (RDARROW_QS_LIB, built by
    tools/test-env.sh into .qs-lib); a skip when it is not built, a failure
    where the suite requires it (RDARROW_REQUIRE_QS=1)."""
    lib = os.environ.get("RDARROW_QS_LIB")
    if lib and (Path(lib) / "qs2").is_dir():
        return lib
    why = "qs and qs2 are not built (tools/test-env.sh builds them from ../shared/qs into .qs-lib)"
    if os.environ.get("RDARROW_REQUIRE_QS") == "1":
        raise AssertionError(why)
    pytest.skip(why)


def fst_lib():
    """The library of the real fst (RDARROW_FST_LIB, built by
    tools/test-env.sh into .fst-lib); a skip when it is not built, a
    failure where the suite requires it (RDARROW_REQUIRE_FST=1)."""
    lib = os.environ.get("RDARROW_FST_LIB")
    if lib and (Path(lib) / "fst").is_dir():
        return lib
    why = "fst is not built (tools/test-env.sh builds it from ../shared/fst into .fst-lib)"
    if os.environ.get("RDARROW_REQUIRE_FST") == "1":
        raise AssertionError(why)
    pytest.skip(why)


def need_single_cell_r(run_r):
    """Skip unless R has SeuratObject and SingleCellExperiment (the
    single-cell tests make their objects with them)."""
    try:
        # installed (found, not loaded: loading them takes seconds)
        run_r("if (length(find.package(c('SeuratObject', 'SingleCellExperiment'), quiet = TRUE)) < 2) quit(status = 3)")
    except AssertionError:
        pytest.skip("SeuratObject or SingleCellExperiment is not installed in R (tools/test-env.sh installs them)")


# A data frame of every column kind rdarrow maps (factor and ordered
# factor, Date, POSIXct in a zone, integer64, difftime, list and matrix
# columns), NA in the plain ones, `n` rows: the Polars and Spark tests'.
KINDS_R = r"""
set.seed(5)
df <- data.frame(
  i = c(NA, seq_len(n - 1L)),
  d = c(rnorm(n - 1L), NA),
  b = c(NA, rep(c(TRUE, FALSE), length.out = n - 1L)),
  s = c(NA, sample(c("a", "é", "日本"), n - 1L, TRUE)),
  f = factor(sample(c("lo", "hi", NA), n, TRUE), levels = c("lo", "hi", "none")),
  o = factor(sample(c("S", "M", "L"), n, TRUE), levels = c("S", "M", "L"), ordered = TRUE),
  day = as.Date("2020-01-01") + seq_len(n),
  t = as.POSIXct("2021-06-01", tz = "Europe/Paris") + seq_len(n) * 60,
  big = bit64::as.integer64(seq_len(n)) * 1000000000L,
  dt = as.difftime(seq_len(n), units = "mins"),
  stringsAsFactors = FALSE)
df$l <- lapply(seq_len(n), function(k) seq_len(k %% 3))
df$m <- matrix(seq_len(2 * n), n)
out <- Sys.getenv("OUT")
"""

# A data frame with every common column kind, NA in each; the same code
# makes it in every test that needs it.
FRAME_R = r"""
n <- 1000L
set.seed(1)
df <- data.frame(
  i = c(NA, seq_len(n - 1L)),
  d = c(rnorm(n - 2L), NA, NaN),
  b = c(NA, rep(c(TRUE, FALSE), length.out = n - 1L)),
  s = c(NA, sample(c("a", "é", "日本", ""), n - 1L, replace = TRUE)),
  f = factor(c(NA, sample(c("lo", "mid", "hi"), n - 1L, replace = TRUE)),
             levels = c("lo", "mid", "hi", "unused")),
  day = as.Date("2020-01-01") + c(NA, seq_len(n - 1L)),
  t = as.POSIXct("2021-06-01", tz = "UTC") + c(NA, seq_len(n - 1L)) * 60,
  stringsAsFactors = FALSE
)
attr(df$t, "tzone") <- "UTC"
"""


@pytest.fixture(scope="session")
def frame_files(tmp_path_factory, run_r):
    """The frame saved by save() (gzip), saveRDS() (xz) and, for
    comparison, written by arrow R's write_feather() (what arrow R makes of
    it), when arrow R is installed."""
    d = tmp_path_factory.mktemp("frame")
    files = {
        "rdata": d / "frame.RData",
        "rds": d / "frame.rds",
        "feather": d / "frame.arrow",
        "json": d / "frame.json",
    }
    run_r(
        FRAME_R
        + f"""
save(df, file = "{files['rdata']}")
saveRDS(df, "{files['rds']}", compress = "xz")
if (requireNamespace("arrow", quietly = TRUE)) {{
  arrow::write_feather(df, "{files['feather']}", compression = "uncompressed")
}}
"""
    )
    return files


def plain(arr):
    """An Arrow array's values as Python values, NaN as the string "NaN"
    (NaN equals nothing, itself included), for comparing two arrays."""
    import math

    def fix(x):
        if isinstance(x, float) and math.isnan(x):
            return "NaN"
        if isinstance(x, dict):
            return {k: fix(v) for k, v in x.items()}
        if isinstance(x, list):
            return [fix(v) for v in x]
        return x

    return [fix(x) for x in arr.to_pylist()]


# The peer corpus's data frames as R itself loads them (test_corpus.py and
# test_duckdb.py check every reader against these).
SKIP = re.compile(
    r"\.(csv|md|txt|json|py|R|jl|rs|java)$|(^|/)(LICENSE|COPYING|README)[^/]*$", re.I
)

# For each data frame R loads from a file: its rows, names and, for each
# column of a plain kind, its values as strings (doubles as "%.17g", so
# every bit shows) with the positions of NA apart. Data frames that arrow
# R cannot convert either (columns of functions, environments, S4 objects
# or mixed lists; columns not as long as the row names say) are marked.
DUMP_HELPERS_R = r"""
args <- commandArgs(trailingOnly = TRUE)
files <- readLines(args[[1]])
quietly <- function(expr) suppressMessages(suppressWarnings(expr))
is_df <- function(x) isTRUE(tryCatch(quietly(inherits(x, "data.frame")), error = function(e) FALSE))
unconvertible <- function(df) {
  for (j in seq_along(df)) {
    x <- df[[j]]
    if (is_df(x)) { if (unconvertible(x)) return(TRUE); next }
    if (isS4(x) || is.function(x) || is.environment(x) || is.language(x)) return(TRUE)
    if (is.list(x)) {
      items <- Filter(Negate(is.null), x)
      sig <- unique(vapply(items, function(v) paste(typeof(v), paste(class(v), collapse = "/")), ""))
      if (length(sig) > 1L || any(vapply(items, function(v) is.list(v) || isS4(v), TRUE))) return(TRUE)
    }
  }
  FALSE
}
num <- function(x) ifelse(is.na(x) & !is.nan(x), "", sprintf("%.17g", as.double(x)))
column <- function(x) {
  cls <- class(x)
  kind <- if (identical(cls, "factor") || identical(cls, c("ordered", "factor"))) "factor"
    else if (identical(cls, "Date")) "Date"
    else if (identical(cls, c("POSIXct", "POSIXt"))) "POSIXct"
    else if (!is.object(x) && is.null(dim(x)) && typeof(x) %in% c("logical", "integer", "double", "character"))
      typeof(x)
    else "other"
  if (kind == "character" && any(Encoding(x) == "bytes")) kind <- "other"
  if (kind == "factor" && any(Encoding(levels(x)) == "bytes")) kind <- "other"
  out <- list(kind = kind)
  if (kind == "other") return(out)
  na <- is.na(x) & !(is.double(x) & is.nan(x))
  out$na <- I(which(na) - 1L)
  out$values <- I(switch(kind,
    logical = ifelse(na, "", ifelse(x, "TRUE", "FALSE")),
    integer = ifelse(na, "", as.character(x)),
    character = ifelse(na, "", enc2utf8(x)),
    factor = ifelse(na, "", enc2utf8(as.character(x))),
    num(unclass(x))))
  if (kind == "factor") out$levels <- I(enc2utf8(levels(x)))
  out
}
# fun(file, name (NULL for an .rds), value) of each object R loads
each_object <- function(files, fun) {
  for (f in files) {
    env <- new.env()
    kind <- tryCatch({ quietly(load(f, envir = env)); "rda" }, error = function(e) NULL)
    if (is.null(kind)) {
      kind <- tryCatch({ assign("value", quietly(readRDS(f)), envir = env); "rds" },
                       error = function(e) NULL)
    }
    if (is.null(kind)) next
    for (nm in ls(env, all.names = TRUE)) {
      x <- tryCatch(get(nm, envir = env), error = function(e) NULL)
      fun(f, if (kind == "rds") NULL else nm, x)
    }
  }
}
"""

DUMP_R = DUMP_HELPERS_R + r"""
res <- list()
each_object(files, function(f, nm, df) {
  if (!is_df(df)) return(invisible())
  lens <- vapply(unclass(df), NROW, 1L)
  names <- names(df)
  names[is.na(names)] <- "NA"
  res[[length(res) + 1L]] <<- list(
    file = f, object = nm,
    rows = nrow(df), names = I(enc2utf8(names)),
    convertible = !unconvertible(df) && all(lens == nrow(df)),
    columns = unname(lapply(unclass(df), column)))
})
jsonlite::write_json(res, args[[2]], auto_unbox = TRUE, null = "null", digits = NA)
"""


# Every top-level vector, matrix or array of a plain kind (logical,
# integer, double, character, factor, Date, POSIXct) R loads from a corpus
# file: its dim and its values in R's (column-major) order, as DUMP_R
# writes a column's.
DUMP_VECTORS_R = DUMP_HELPERS_R + r"""
res <- list()
each_object(files, function(f, nm, x) {
  if (is.null(x) || is_df(x) || !is.atomic(x) || isS4(x)) return(invisible())
  d <- dim(x)
  attr(x, "dim") <- NULL
  attr(x, "dimnames") <- NULL
  if (!is.object(x)) x <- as.vector(x)
  col <- column(x)
  if (col$kind == "other") return(invisible())
  # strings R holds as bytes that are not UTF-8 are made valid text by
  # rdarrow's one repair rule (its own tests), not compared here
  if (col$kind == "character" && !all(validUTF8(x[!is.na(x)]))) return(invisible())
  col$file <- f
  col$object <- nm
  col$dim <- if (is.null(d)) NULL else I(d)
  col$length <- length(x)
  res[[length(res) + 1L]] <<- col
})
jsonlite::write_json(res, args[[2]], auto_unbox = TRUE, null = "null", digits = NA)
"""


def _dump(tmp_path_factory, script_text, name):
    """Run a dump script of R over the corpus; its JSON."""
    files = _corpus_files()
    d = tmp_path_factory.mktemp(name)
    listing = d / "files.txt"
    listing.write_text("\n".join(files) + "\n", encoding="utf-8")
    out = d / "dump.json"
    script = d / "dump.R"
    script.write_text(script_text, encoding="utf-8")
    res = subprocess.run(
        [shutil.which("Rscript"), "--vanilla", str(script), str(listing), str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "TZ": "UTC"},
    )
    assert res.returncode == 0, res.stderr
    return json.loads(out.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def r_vectors(tmp_path_factory):
    """The corpus's vectors, matrices and arrays as R loads them."""
    vectors = _dump(tmp_path_factory, DUMP_VECTORS_R, "corpus-vectors")
    assert len(vectors) > 50, "the corpus holds vectors"
    return vectors


def _corpus_files():
    d = os.environ.get("RDARROW_PEERS_DIR")
    if not d or not Path(d).is_dir():
        pytest.skip("RDARROW_PEERS_DIR does not name the peer corpus: the corpus tests are not run")
    root = Path(d)
    return sorted(
        str(p) for p in root.rglob("*") if p.is_file() and not SKIP.search(str(p.relative_to(root)))
    )


@pytest.fixture(scope="session")
def r_frames(tmp_path_factory, run_r):
    frames = _dump(tmp_path_factory, DUMP_R, "corpus")
    assert len(frames) > 50, "the corpus holds data frames"
    return frames


# Spark in local mode, started once for the session (the data source's
# tests, and the object store's).
REQUIRE = os.environ.get("RDARROW_REQUIRE_SPARK") == "1"


def _need(what, why):
    if REQUIRE:
        raise AssertionError(f"{what}: {why} (tools/test-env.sh installs it)")
    pytest.skip(f"{what}: {why}")


@pytest.fixture(scope="session")
def spark():
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        _need("pyspark", "not installed")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        _need("Java", "no java on the PATH (Spark needs Java 17)")
    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    s = (
        SparkSession.builder.master("local[2]")
        .appName("rdarrow-tests")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .getOrCreate()
    )
    s.sparkContext.setLogLevel("ERROR")
    import rdarrow.spark

    rdarrow.spark.register(s)
    yield s
    s.stop()


# Where each crafted file's promise is, as the error must name it.
CRAFTED_PLACES = {
    "top.rds": "'top'",
    "element.rds": "'element[[2]]'",
    "attribute.rds": "'attr(attribute, \"foo\")'",
    "slot.rds": "'slot@foo'",
    "binding.RData": "'x'",
}


@pytest.fixture(scope="session")
def crafted(tmp_path_factory, run_r):
    """Files holding a promise where R keeps none, crafted byte by byte by
    the R tests' own helper (tests/testthat/helper-crafted.R): at the top
    level, as a list element, an attribute, an S4 slot and an .RData
    binding, gzip-compressed. Their code would create the file
    ``ran`` beside them. Returns (folder, {file name: place})."""
    d = tmp_path_factory.mktemp("crafted")
    helper = Path(__file__).resolve().parents[2] / "tests" / "testthat" / "helper-crafted.R"
    run_r(
        f'source("{helper}"); d <- "{d}"; cases <- promise_cases(file.path(d, "ran"))\n'
        "for (n in names(cases)) {\n"
        "  cs <- cases[[n]]\n"
        '  f <- file.path(d, paste0(n, if (cs$rdata) ".RData" else ".rds"))\n'
        "  craft_file(craft_bytes(cs$node, rdata = cs$rdata), f, gzip = TRUE)\n"
        "}\n"
    )
    assert sorted(p.name for p in d.iterdir()) == sorted(CRAFTED_PLACES)
    return d, CRAFTED_PLACES
