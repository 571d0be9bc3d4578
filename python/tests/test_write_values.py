"""Python values written as R objects (``write_rds()``/``write_rdata()`` of
anything ``read_objects()`` gives): R loads each and compares it, with
identical(), to the object R makes itself; the circle R -> Python -> R over
the peer corpus; the errors."""

import json
import os
import warnings
from pathlib import Path

import numpy as np
import pytest

import rdarrow
from conftest import _corpus_files

pd = pytest.importorskip("pandas")
sp = pytest.importorskip("scipy.sparse")

HERE = Path(__file__).parent


def python_values():
    """One value of every row of the mapping table (and its edges)."""
    import xarray as xr

    return {
        "dbl": np.array([0.5, np.nan, -np.inf]),
        "f32": np.array([0.5, 2.0], dtype=np.float32),
        "int": np.array([1, -2], dtype=np.int32),
        "int_min": np.array([-(2**31), 5], dtype=np.int32),
        "i64_small": np.array([1, 2**31 - 1], dtype=np.int64),
        "i64_big": np.array([1, 2**40], dtype=np.int64),
        "i8": np.array([-3, 4], dtype=np.int8),
        "u16": np.array([65535], dtype=np.uint16),
        "u32_big": np.array([2**32 - 1], dtype=np.uint32),
        "u64_huge": np.array([2**64 - 1], dtype=np.uint64),
        "lgl": np.array([True, False]),
        "cplx": np.array([1 + 2j, -0.5j], dtype=np.complex64),
        "mat_c": np.arange(6, dtype=np.float64).reshape(2, 3),
        "mat_f": np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3)),
        "strided": np.arange(10.0)[::2],
        "strided_masked": np.ma.MaskedArray(np.arange(6.0), mask=[True, False, False, False, True, False])[::2],
        "arr3": np.arange(24, dtype=np.float64).reshape(2, 3, 4),
        "masked": np.ma.MaskedArray([1.5, 2.5, 3.5], mask=[False, True, False]),
        "masked_int": np.ma.MaskedArray(np.array([1, 2], dtype=np.int64), mask=[True, False]),
        "masked_lgl": np.ma.MaskedArray([True, False], mask=[False, True]),
        "masked_mat": np.ma.MaskedArray(np.ones((2, 2)), mask=[[True, False], [False, False]]),
        "chr": ["a", None, "日本"],
        "chr_arr": np.array(["x", "yz"]),
        "chr_mat": np.array([["a", None], ["b", "c"]], dtype=object),
        "nullable_int": pd.array([1, None, 3], dtype="Int64"),
        "nullable_float": pd.array([1.5, None], dtype="Float64"),
        "nullable_bool": pd.array([True, None], dtype="boolean"),
        "nullable_str": pd.array(["a", None], dtype="string"),
        "series": pd.Series([1.0, 2.0], index=["a", "b"]),
        "series_int_na": pd.Series([1, None], index=["a", "b"], dtype="Int32"),
        "series_plain": pd.Series([True, False]),
        "factor": pd.Categorical(["lo", "hi", None, "lo"], categories=["lo", "hi", "unused"]),
        "ordered": pd.Categorical(["b", "a"], categories=["b", "a"], ordered=True),
        "date": np.array(["2020-01-01", "NaT", "1969-12-31"], dtype="datetime64[D]"),
        "posix_naive": np.array(["2021-06-01T12:00:00.5", "NaT"], dtype="datetime64[us]"),
        "posix_zone": pd.Series(pd.to_datetime(["2021-06-01 12:00:00"]).tz_localize("Europe/Paris")).array,
        "difftime_s": np.array([90, 1], dtype="timedelta64[s]"),
        "difftime_d": np.array([2], dtype="timedelta64[D]"),
        "csc": sp.csc_matrix(np.array([[0, 1.5], [2, 0], [0, 0]])),
        "csr_int": sp.csr_matrix(np.array([[0, 3], [4, 0], [0, 5]], dtype=np.int64)),
        "coo": sp.coo_matrix(np.array([[0.0, 1.0], [0.0, 0.0]])),
        "lgc": sp.csc_matrix(np.array([[True, False], [False, True]])),
        "labelled_sparse": _labelled(sp.csc_matrix(np.eye(2))),
        "xarr": xr.DataArray(
            np.arange(8.0).reshape(2, 2, 2, order="F"),
            dims=["a", "b", "c"],
            coords={"a": ["a1", "a2"], "c": ["c1", "c2"]},
        ),
        "xarr_default": xr.DataArray(np.zeros((2, 2, 1)), dims=["dim_0", "dim_1", "dim_2"]),
        "named_list": {"x": 1, "y": [1, "a"], "z": None},
        "empty_dict": {},
        "list": [1.0, "a", None, b"\x00\xff"],
        "tuple": (True, 2),
        "nested": {"frame": pd.DataFrame({"a": [1, 2]}), "m": np.eye(2)},
        "none": None,
        "py_bool": True,
        "py_int": 7,
        "py_big_int": 2**40,
        "py_float": 2.5,
        "py_complex": 1 - 1j,
        "py_str": "é",
        "py_bytes": b"\x01\x02",
        "np_scalar": np.float32(1.5),
        "frame": pd.DataFrame({"i": [1, 2], "s": ["a", "b"]}),
    }


def _labelled(m):
    m.dimnames = [["r1", "r2"], None]
    return m


# what R makes of each (compared with identical())
EXPECTED_R = r"""
suppressMessages(library(Matrix))
i64 <- function(x) structure(x, class = "integer64")
bits <- function(...) { v <- c(...); r <- numeric(length(v)); for (k in seq_along(v)) r[k] <- readBin(writeBin(as.integer(c(v[k] %% 2^32 - (v[k] %% 2^32 >= 2^31) * 2^32, v[k] %/% 2^32)), raw()), "double"); r }
want <- list(
  dbl = c(0.5, NaN, -Inf),
  f32 = c(0.5, 2),
  int = c(1L, -2L),
  int_min = i64(bits(-2^31, 5)),
  i64_small = c(1L, .Machine$integer.max),
  i64_big = i64(bits(1, 2^40)),
  i8 = c(-3L, 4L),
  u16 = 65535L,
  u32_big = i64(bits(2^32 - 1)),
  u64_huge = 2^64,
  lgl = c(TRUE, FALSE),
  cplx = c(1 + 2i, complex(real = 0, imaginary = -0.5)),
  mat_c = matrix(c(0, 3, 1, 4, 2, 5), 2, 3),
  mat_f = matrix(c(0L, 3L, 1L, 4L, 2L, 5L), 2, 3),
  strided = c(0, 2, 4, 6, 8),
  strided_masked = c(NA, 2, NA),
  arr3 = aperm(array(0:23 + 0, c(4, 3, 2)), 3:1),
  masked = c(1.5, NA, 3.5),
  masked_int = c(NA, 2L),
  masked_lgl = c(TRUE, NA),
  masked_mat = matrix(c(NA, 1, 1, 1), 2, 2),
  chr = c("a", NA, "\u65e5\u672c"),
  chr_arr = c("x", "yz"),
  chr_mat = matrix(c("a", "b", NA, "c"), 2, 2),
  nullable_int = c(1L, NA, 3L),
  nullable_float = c(1.5, NA),
  nullable_bool = c(TRUE, NA),
  nullable_str = c("a", NA),
  series = c(a = 1, b = 2),
  series_int_na = c(a = 1L, b = NA),
  series_plain = c(TRUE, FALSE),
  factor = factor(c("lo", "hi", NA, "lo"), levels = c("lo", "hi", "unused")),
  ordered = factor(c("b", "a"), levels = c("b", "a"), ordered = TRUE),
  date = as.Date(c("2020-01-01", NA, "1969-12-31")),
  posix_naive = .POSIXct(c(as.numeric(as.POSIXct("2021-06-01 12:00:00", tz = "UTC")) + 0.5, NA)),
  posix_zone = .POSIXct(as.numeric(as.POSIXct("2021-06-01 12:00:00", tz = "Europe/Paris")), tz = "Europe/Paris"),
  difftime_s = as.difftime(c(90, 1), units = "secs"),
  difftime_d = as.difftime(2, units = "days"),
  csc = as(as(Matrix(c(0, 2, 0, 1.5, 0, 0), 3, 2, sparse = TRUE), "generalMatrix"), "CsparseMatrix"),
  csr_int = as(as(Matrix(c(0, 4, 0, 3, 0, 5), 3, 2, sparse = TRUE), "generalMatrix"), "CsparseMatrix"),
  coo = as(as(Matrix(c(0, 0, 1, 0), 2, 2, sparse = TRUE), "generalMatrix"), "CsparseMatrix"),
  lgc = as(as(Matrix(c(TRUE, FALSE, FALSE, TRUE), 2, 2, sparse = TRUE), "generalMatrix"), "CsparseMatrix"),
  labelled_sparse = as(as(Matrix(diag(2), sparse = TRUE, dimnames = list(c("r1", "r2"), NULL)), "generalMatrix"), "CsparseMatrix"),
  xarr = array(0:7 + 0, c(2, 2, 2), dimnames = list(a = c("a1", "a2"), b = NULL, c = c("c1", "c2"))),
  xarr_default = array(0, c(2, 2, 1)),
  named_list = list(x = 1L, y = list(1L, "a"), z = NULL),
  empty_dict = setNames(list(), character(0)),
  list = list(1, "a", NULL, as.raw(c(0, 255))),
  tuple = list(TRUE, 2L),
  nested = list(frame = data.frame(a = 1:2), m = diag(2)),
  none = NULL,
  py_bool = TRUE,
  py_int = 7L,
  py_big_int = i64(bits(2^40)),
  py_float = 2.5,
  py_complex = complex(real = 1, imaginary = -1),
  py_str = "\u00e9",
  py_bytes = as.raw(1:2),
  np_scalar = 1.5,
  frame = data.frame(i = 1:2, s = c("a", "b"))
)
"""

COMPARE_R = r"""
got <- new.env()
load(file.path(out, "values.RData"), got)
stopifnot(setequal(ls(got, all.names = TRUE), names(want)))
for (n in names(want)) {
  same <- identical(get(n, got), want[[n]])
  cat(n, if (same) "same" else paste("DIFFERENT:", paste(deparse(get(n, got)), collapse = " ")), "\n")
}
"""


@pytest.mark.parametrize("compress,version", [("gzip", 3), ("xz", 2), ("bzip2", 3), ("none", 3)])
def test_every_row_of_the_table_is_what_r_makes(tmp_path, run_r, compress, version):
    values = python_values()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rdarrow.write_rdata(values, tmp_path / "values.RData", compress=compress, version=version)
    # a 64-bit unsigned value past 2**53 is not exact as a double: said
    assert any("2**53" in str(w.message) for w in caught)
    out = run_r(f"out <- '{tmp_path}'\n" + EXPECTED_R + COMPARE_R)
    lines = dict(line.split(" ", 1) for line in out.strip().splitlines())
    assert set(lines) == set(values)
    different = {k: v for k, v in lines.items() if v.strip() != "same"}
    assert not different, different


def test_fortran_order_is_not_copied_and_c_order_is_laid_out(tmp_path, run_r):
    big = np.asfortranarray(np.random.default_rng(1).random((300, 200)))
    c_order = np.ascontiguousarray(big)
    rdarrow.write_rdata({"f": big, "c": c_order}, tmp_path / "m.RData", compress="none")
    out = run_r(
        f"e <- new.env(); load('{tmp_path}/m.RData', e); cat(identical(e$f, e$c), dim(e$f), e$f[2, 3] == e$f[[2 + 2 * 300]])"
    )
    assert out.split() == ["TRUE", "300", "200", "TRUE"]
    # the values R holds are NumPy's
    back = rdarrow.read_objects(tmp_path / "m.RData")
    assert np.array_equal(back["f"], big) and np.array_equal(back["c"], big)


def test_read_objects_values_go_back_as_they_were(tmp_path, run_r):
    run_r(
        f"""
        suppressMessages(library(Matrix))
        m <- matrix(c(1.5, NA, 3, 4), 2, dimnames = list(rows = c("a", "b"), cols = c("x", "y")))
        s <- sparseMatrix(i = c(1, 3), j = c(2, 2), x = c(1, 2), dims = c(3, 2), dimnames = list(c("a", "b", "c"), NULL))
        sym <- forceSymmetric(Matrix(c(2, 1, 1, 3), 2, sparse = TRUE))
        rs <- as(s, "RsparseMatrix")
        df <- data.frame(d = as.Date("2020-01-01") + 0:1, f = factor(c("u", NA)), row.names = c("r1", "r2"))
        x <- list(a = 1:3, b = list(m = m, s = s), c = c(p = "q"), t = .POSIXct(c(0, 1e9), tz = "America/New_York"))
        S4cls <- setClass("Pt", representation(x = "numeric", lab = "character", extra = "ANY"))
        pt <- S4cls(x = c(1, 2), lab = "p", extra = NULL)
        save(m, s, sym, rs, df, x, pt, file = "{tmp_path}/orig.RData")
        """
    )
    values = rdarrow.read_objects(tmp_path / "orig.RData")
    rdarrow.write_rdata(values, tmp_path / "back.RData")
    out = run_r(
        f"""
        suppressMessages(library(Matrix))
        setClass("Pt", representation(x = "numeric", lab = "character", extra = "ANY"))
        a <- new.env(); b <- new.env()
        load("{tmp_path}/orig.RData", a); load("{tmp_path}/back.RData", b)
        for (n in sort(ls(a))) cat(n, identical(get(n, a), get(n, b)), "\n")
        """
    )
    assert out.split() == ["df", "TRUE", "m", "TRUE", "pt", "TRUE", "rs", "TRUE", "s", "TRUE", "sym", "TRUE", "x", "TRUE"]


def test_the_circle_over_the_corpus(tmp_path, run_r):
    """Every corpus file whose objects read_objects() gives whole: R reads
    write_rds()/write_rdata() of them identical() to the original, but for
    the exceptions the mapping table lists."""
    pairs = []
    for k, f in enumerate(_corpus_files()):
        if not f.lower().endswith((".rda", ".rdata", ".rds")):
            continue
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                values = rdarrow.read_objects(f)
        except rdarrow.RDataError:
            continue
        if any("left out" in str(w.message) for w in caught):
            continue  # functions, environments: no Python value
        rds = f.lower().endswith(".rds")
        dest = tmp_path / f"{k}.{'rds' if rds else 'RData'}"
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if rds:
                rdarrow.write_rds(next(iter(values.values())), dest)
            else:
                rdarrow.write_rdata(values, dest)
        pairs.append([f, str(dest)])
    assert len(pairs) > 300
    (tmp_path / "pairs.json").write_text(json.dumps(pairs))
    out = run_r(
        f"""
        source("{HERE / 'circle_exceptions.R'}")
        suppressMessages(library(Matrix))
        pairs <- jsonlite::fromJSON("{tmp_path / 'pairs.json'}")
        rd <- function(p) if (grepl("[.]rds$", p, ignore.case = TRUE)) list(x = readRDS(p)) else {{
          e <- new.env(); load(p, e); as.list(e, all.names = TRUE, sorted = TRUE) }}
        same <- 0L
        for (k in seq_len(nrow(pairs))) {{
          a <- tryCatch(rd(pairs[k, 1]), error = function(e) NULL)
          if (is.null(a)) next
          b <- rd(pairs[k, 2])
          for (n in names(a)) {{
            if (identical(a[[n]], b[[n]])) same <- same + 1L
            else if (is.null(why <- circle_exception(a[[n]]))) cat("DIFFERENT", pairs[k, 1], n, "\\n")
            else cat("EXCEPTION", why, "\\n")
          }}
        }}
        cat("SAME", same, "\\n")
        """
    )
    assert "DIFFERENT" not in out, out
    same = int(out.split("SAME")[1].split()[0])
    exceptions = out.count("EXCEPTION")
    assert same > 3 * exceptions, out


def test_unsupported_values_name_their_place(tmp_path):
    dest = tmp_path / "x.rds"
    with pytest.raises(TypeError, match=r"\$b\[\[2\]\].*a set has no R equivalent"):
        rdarrow.write_rds({"a": 1, "b": [1, {2}]}, dest)
    with pytest.raises(TypeError, match="object"):
        rdarrow.write_rds(object(), dest)
    with pytest.raises(TypeError, match="key 1 is not a str"):
        rdarrow.write_rds({1: 2}, dest)
    with pytest.raises(OverflowError, match="integer64's NA"):
        rdarrow.write_rds(np.array([-(2**63)], dtype=np.int64), dest)
    with pytest.raises(OverflowError, match="beyond R's integer64"):
        rdarrow.write_rds(2**70, dest)
    with pytest.raises(TypeError, match="NumPy dtype"):
        rdarrow.write_rds(np.zeros(2, dtype=[("a", "i4")]), dest)
    assert not dest.exists()
    assert os.listdir(tmp_path) == []


def test_anndata_is_pointed_at_its_writers(tmp_path):
    ad = pytest.importorskip("anndata")
    with pytest.raises(TypeError, match="write_sce"):
        rdarrow.write_rds(ad.AnnData(np.zeros((2, 2))), tmp_path / "a.rds")
