"""Every data frame of the peer corpus (files written by real R, 2.7 to 4.6,
named by RDARROW_PEERS_DIR), read through the Python package: its values
against what R itself loads from the same file, printed by Rscript, and
against pyreadr where pyreadr reads the file."""

import json
import math
import os
import re
from pathlib import Path

import pyarrow as pa
import pytest

import rdarrow

SKIP = re.compile(
    r"\.(csv|md|txt|json|py|R|jl|rs|java)$|(^|/)(LICENSE|COPYING|README)[^/]*$", re.I
)

# For each data frame R loads from a file: its rows, names and, for each
# column of a plain kind, its values as strings (doubles as "%.17g", so
# every bit shows) with the positions of NA apart. Data frames that arrow
# R cannot convert either (columns of functions, environments, S4 objects
# or mixed lists; columns not as long as the row names say) are marked.
DUMP_R = r"""
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
res <- list()
for (f in files) {
  env <- new.env()
  kind <- tryCatch({ quietly(load(f, envir = env)); "rda" }, error = function(e) NULL)
  if (is.null(kind)) {
    kind <- tryCatch({ assign("value", quietly(readRDS(f)), envir = env); "rds" },
                     error = function(e) NULL)
  }
  if (is.null(kind)) next
  for (nm in ls(env, all.names = TRUE)) {
    df <- tryCatch(get(nm, envir = env), error = function(e) NULL)
    if (!is_df(df)) next
    lens <- vapply(unclass(df), NROW, 1L)
    names <- names(df)
    names[is.na(names)] <- "NA"
    res[[length(res) + 1L]] <- list(
      file = f, object = if (kind == "rds") NULL else nm,
      rows = nrow(df), names = I(enc2utf8(names)),
      convertible = !unconvertible(df) && all(lens == nrow(df)),
      columns = unname(lapply(unclass(df), column)))
  }
}
jsonlite::write_json(res, args[[2]], auto_unbox = TRUE, null = "null", digits = NA)
"""


def _corpus_files():
    d = os.environ.get("RDARROW_PEERS_DIR")
    if not d or not Path(d).is_dir():
        pytest.skip("RDARROW_PEERS_DIR does not name the peer corpus: the corpus tests are not run")
    root = Path(d)
    return sorted(
        str(p) for p in root.rglob("*") if p.is_file() and not SKIP.search(str(p.relative_to(root)))
    )


@pytest.fixture(scope="module")
def r_frames(tmp_path_factory, run_r):
    files = _corpus_files()
    d = tmp_path_factory.mktemp("corpus")
    listing = d / "files.txt"
    listing.write_text("\n".join(files) + "\n", encoding="utf-8")
    out = d / "frames.json"
    script = d / "dump.R"
    script.write_text(DUMP_R, encoding="utf-8")
    import subprocess
    import shutil

    res = subprocess.run(
        [shutil.which("Rscript"), "--vanilla", str(script), str(listing), str(out)],
        capture_output=True,
        text=True,
        env={**os.environ, "TZ": "UTC"},
    )
    assert res.returncode == 0, res.stderr
    frames = json.loads(out.read_text(encoding="utf-8"))
    assert len(frames) > 50, "the corpus holds data frames"
    return frames


def _num(x):
    if isinstance(x, float):
        if math.isnan(x):
            return "NaN"
        if math.isinf(x):
            return "Inf" if x > 0 else "-Inf"
    return "%.17g" % x


_UNIT = {"s": 1, "ms": 1000, "us": 10**6, "ns": 10**9}


def _values(arr, kind):
    """The column's values as the R dump writes them, and its NA positions."""
    arr = arr.combine_chunks() if isinstance(arr, pa.ChunkedArray) else arr
    t = arr.type
    if pa.types.is_dictionary(t):
        arr = arr.dictionary_decode()
        t = arr.type
    if pa.types.is_timestamp(t):
        # seconds, correctly rounded from the integer
        raw = arr.cast(pa.int64()).to_pylist()
        vals = [None if v is None else _num(v / _UNIT[t.unit]) for v in raw]
    elif pa.types.is_date32(t):
        vals = [None if v is None else _num(float(v)) for v in arr.cast(pa.int32()).to_pylist()]
    elif pa.types.is_boolean(t):
        vals = [None if v is None else ("TRUE" if v else "FALSE") for v in arr.to_pylist()]
    elif pa.types.is_floating(t):
        vals = [None if v is None else _num(v) for v in arr.to_pylist()]
    elif pa.types.is_integer(t):
        vals = [
            None if v is None else (_num(float(v)) if kind in ("double", "Date", "POSIXct") else str(v))
            for v in arr.to_pylist()
        ]
    else:
        vals = arr.to_pylist()
    na = [i for i, v in enumerate(vals) if v is None]
    return [("" if v is None else v) for v in vals], na


def _label(fr, root):
    return f"{os.path.relpath(fr['file'], root)} [{fr['object']}]"


def test_every_corpus_frame_has_the_values_r_loads(r_frames):
    root = os.environ["RDARROW_PEERS_DIR"]
    failures, checked, columns = [], 0, 0
    for fr in r_frames:
        if not fr["convertible"]:
            continue
        label = _label(fr, root)
        try:
            t = rdarrow.read_table(fr["file"], object=fr["object"])
        except rdarrow.RDataError as e:
            failures.append(f"{label}: {type(e).__name__}: {e}")
            continue
        t.validate(full=True)
        checked += 1
        if t.num_rows != fr["rows"] or t.column_names != fr["names"]:
            failures.append(
                f"{label}: {t.num_rows} rows {t.column_names}, R has {fr['rows']} rows {fr['names']}"
            )
            continue
        for j, (name, col) in enumerate(zip(fr["names"], fr["columns"])):
            kind = col["kind"]
            if kind == "other":
                continue
            columns += 1
            vals, na = _values(t.column(j), kind)
            if na != col["na"]:
                failures.append(f"{label} column {name!r}: NA at {na[:5]}..., R has {col['na'][:5]}...")
            elif vals != col["values"]:
                k = next(i for i, (a, b) in enumerate(zip(vals, col["values"])) if a != b)
                failures.append(
                    f"{label} column {name!r} ({kind}, {t.schema.field(j).type}): "
                    f"row {k} is {vals[k]!r}, R has {col['values'][k]!r}"
                )
            elif kind == "factor":
                levels = t.column(j).combine_chunks().dictionary.to_pylist()
                if levels != col["levels"]:
                    failures.append(f"{label} column {name!r}: levels {levels}, R has {col['levels']}")
    assert checked > 50 and columns > 200, (checked, columns)
    assert not failures, f"{len(failures)} of {checked} data frames differ:\n" + "\n".join(failures)


def test_corpus_frames_agree_with_pyreadr_where_it_reads_them(r_frames):
    pyreadr = pytest.importorskip("pyreadr", reason="pyreadr is not installed (tools/setup.sh installs it)")
    import pandas as pd

    root = os.environ["RDARROW_PEERS_DIR"]
    failures, compared = [], 0
    read = {}
    for fr in r_frames:
        if not fr["convertible"]:
            continue
        if fr["file"] not in read:
            try:
                read[fr["file"]] = pyreadr.read_r(fr["file"])
            except Exception:
                read[fr["file"]] = None
        theirs_all = read[fr["file"]]
        if not theirs_all:
            continue
        key = fr["object"] if fr["object"] is not None else None
        theirs = theirs_all.get(key) if key is not None else next(iter(theirs_all.values()))
        if theirs is None or len(theirs) != fr["rows"]:
            continue  # pyreadr dropped or reshaped it
        ours = rdarrow.read_pandas(fr["file"], object=fr["object"])
        compared += 1
        label = _label(fr, root)
        for name, col in zip(fr["names"], fr["columns"]):
            if col["kind"] not in ("integer", "double", "character", "logical") or name not in theirs:
                continue
            if list(ours.columns).count(name) != 1:
                continue
            # pyreadr has no nullable types and no NA apart from NaN
            a = [None if pd.isna(x) else x for x in ours[name]]
            b = [None if pd.isna(x) else x for x in theirs[name]]
            if col["kind"] in ("integer", "double"):
                same = all(
                    (x is None and y is None) or (x is not None and y is not None and float(x) == float(y))
                    for x, y in zip(a, b)
                )
            else:
                same = a == b
            if not same:
                failures.append(f"{label} column {name!r}: differs from pyreadr")
    assert compared > 20, compared
    assert not failures, "\n".join(failures)
