"""read_objects()' NumPy and pandas values, against what R itself holds:
arrays over the engine's own buffers (no copy), R's shape and order, NA
as the mask, names and dimnames as pandas labels, factors, times; and every
vector, matrix and array of the peer corpus against R's values."""

import math
import os

import numpy as np
import pandas as pd
import pytest

import rdarrow
from rdarrow._rdarrow import Payload

VALUES_R = r"""
set.seed(2)
m <- matrix(rnorm(12), 3, 4); m[2, 3] <- NA; m[1, 4] <- NaN
mi <- matrix(1:6, 2, dimnames = list(c("r1", "r2"), c("a", "b", "c")))
named <- c(x = 1L, y = NA, z = 3L)
lg <- c(TRUE, NA, FALSE)
cx <- complex(real = c(1, 2), imaginary = c(-1, NA))
fac <- factor(c("lo", NA, "hi", "lo"), levels = c("lo", "mid", "hi"))
ord <- factor(c("b", "a"), levels = c("b", "a"), ordered = TRUE)
day <- as.Date(c("2020-02-29", NA, "1969-12-31"))
at <- as.POSIXct(c("2021-06-01 12:30:00", NA), tz = "America/New_York")
utc <- as.POSIXct(c(0.5, 86400), origin = "1970-01-01", tz = "")
arr <- array(1:24, c(2, 3, 4), dimnames = list(c("a", "b"), NULL, paste0("k", 1:4)))
chm <- matrix(c("p", NA, "r", "s"), 2)
i64 <- bit64::as.integer64(c("9007199254740993", NA, "-5"))
df <- data.frame(n = c(1.5, NA), f = factor(c("u", "v")), row.names = c("first", "second"))
lst <- list(a = 1:3, b = list(c = "x", d = c(TRUE, FALSE)))
# levels as.character(1:3) makes: R's compact (ALTREP) deferred strings
deferred <- factor(c(1, 3, 1), levels = 1:3)
save(m, mi, named, lg, cx, fac, ord, day, at, utc, arr, chm, i64, df, lst, deferred, file = "{path}")
"""


@pytest.fixture(scope="module")
def values(tmp_path_factory, run_r):
    path = tmp_path_factory.mktemp("values") / "values.RData"
    run_r(VALUES_R.replace("{path}", str(path)))
    return rdarrow.read_objects(path), path


def _payload(a):
    """The engine's Payload under an array (walking its bases)."""
    b = a
    while isinstance(b, np.ndarray):
        b = b.base
    return b


def test_a_matrix_is_an_ndarray_of_r_shape_over_the_engine_buffer(values):
    v, _ = values
    m = v["m"]
    assert isinstance(m, np.ma.MaskedArray) and m.shape == (3, 4)
    data = np.ma.getdata(m)
    assert data.flags.f_contiguous and not data.flags.c_contiguous
    p = _payload(data)
    assert isinstance(p, Payload) and p.address == data.ctypes.data  # no copy
    assert m.mask.tolist()[1][2] is True and m.mask.sum() == 1  # NA masked
    assert math.isnan(data[0, 3]) and not m.mask[0, 3]  # NaN is a value


def test_names_and_dimnames_are_pandas_labels(values):
    v, _ = values
    mi = v["mi"]
    assert isinstance(mi, pd.DataFrame)
    assert list(mi.index) == ["r1", "r2"] and list(mi.columns) == ["a", "b", "c"]
    assert mi.to_numpy().tolist() == [[1, 3, 5], [2, 4, 6]]
    named = v["named"]
    assert isinstance(named, pd.Series) and list(named.index) == ["x", "y", "z"]
    assert str(named.dtype) == "Int32" and named.isna().tolist() == [False, True, False]
    xr = pytest.importorskip("xarray")
    arr = v["arr"]
    assert isinstance(arr, xr.DataArray) and arr.shape == (2, 3, 4)
    assert list(arr.coords["dim_0"].values) == ["a", "b"] and "dim_1" not in arr.coords
    assert int(arr.sel(dim_0="b", dim_2="k4")[2]) == 24


def test_logical_complex_integer64_character(values):
    v, _ = values
    assert v["lg"].dtype == bool and v["lg"].mask.tolist() == [False, True, False]
    assert np.ma.getdata(v["lg"])[[0, 2]].tolist() == [True, False]
    assert v["cx"].dtype == np.complex128 and v["cx"][0] == 1 - 1j and v["cx"].mask.tolist() == [False, True]
    i64 = v["i64"]
    assert i64.dtype == np.int64 and np.ma.getdata(i64)[[0, 2]].tolist() == [9007199254740993, -5]
    assert i64.mask.tolist() == [False, True, False]
    chm = v["chm"]
    assert chm.dtype == object and chm.shape == (2, 2) and chm.tolist() == [["p", "r"], [None, "s"]]


def test_factors_are_categoricals_and_times_datetime64(values):
    v, _ = values
    fac = v["fac"]
    assert isinstance(fac, pd.Categorical) and list(fac.categories) == ["lo", "mid", "hi"]
    assert not fac.ordered and fac.codes.tolist() == [0, -1, 2, 0]
    assert v["ord"].ordered and list(v["ord"].categories) == ["b", "a"]
    deferred = v["deferred"]
    assert list(deferred.categories) == ["1", "2", "3"] and deferred.codes.tolist() == [0, 2, 0]
    day = v["day"]
    assert day.dtype == np.dtype("datetime64[D]")
    assert str(day[0]) == "2020-02-29" and np.isnat(day[1]) and str(day[2]) == "1969-12-31"
    at = v["at"]
    assert str(at.tz) == "America/New_York" and at[0] == pd.Timestamp("2021-06-01 12:30", tz="America/New_York")
    assert pd.isna(at[1])
    utc = v["utc"]
    assert utc.dtype == np.dtype("datetime64[us]") and utc[0] == np.datetime64("1970-01-01T00:00:00.500000")


def test_data_frames_are_what_read_pandas_gives_and_lists_stay_lists(values):
    v, path = values
    pd.testing.assert_frame_equal(v["df"], rdarrow.read_pandas(path, object="df"))
    assert list(v["df"].index) == ["first", "second"]
    lst = v["lst"]
    assert list(lst) == ["a", "b"] and lst["a"].tolist() == [1, 2, 3]
    assert lst["b"]["c"] == ["x"] and lst["b"]["d"].tolist() == [True, False]


def test_plain_values_remain(values):
    _, path = values
    p = rdarrow.read_objects(path, ["named", "fac", "m"], plain=True)
    assert p["named"] == {"x": 1, "y": None, "z": 3}
    assert p["fac"] == ["lo", None, "hi", "lo"]
    assert isinstance(p["m"], list) and len(p["m"]) == 12 and p["m"][7] is None


def _num(x):
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Inf" if x > 0 else "-Inf"
    return "%.17g" % x


def _flat(value, kind):
    """A value's items in R's order as the dump writes them ("" for NA)."""
    if isinstance(value, pd.DataFrame):
        cols = [value.iloc[:, j] for j in range(value.shape[1])]
        return [x for c in cols for x in _flat(c, kind)]
    if isinstance(value, pd.Series):
        value = value.array
    if isinstance(value, pd.Categorical):
        return ["" if c < 0 else str(value.categories[c]) for c in value.codes]
    if hasattr(value, "dtype") and str(value.dtype).startswith("datetime64[ns,"):
        ns = np.asarray(value.asi8 if hasattr(value, "asi8") else value.view("int64"))
        return ["" if pd.isna(t) else _num(n / 1e9) for t, n in zip(value, ns)]
    if isinstance(value, list):
        return ["" if x is None else x for x in value]
    if isinstance(value, np.ndarray) and value.dtype == object:
        return ["" if x is None else x for x in value.ravel(order="F")]
    if isinstance(value, (pd.api.extensions.ExtensionArray,)):
        mask = np.asarray(pd.isna(value))
        data = value.to_numpy(dtype=object, na_value=None)
    else:
        arr = np.ma.asarray(value)
        mask = np.ma.getmaskarray(arr).ravel(order="F")
        data = np.ma.getdata(arr).ravel(order="F")
    out = []
    for na, x in zip(mask, data):
        if na:
            out.append("")
        elif isinstance(x, np.datetime64):
            if np.isnat(x):
                out.append("")
            elif kind == "Date":
                out.append(_num(float(x.astype("datetime64[D]").astype(np.int64))))
            else:
                out.append(_num(x.astype("datetime64[us]").astype(np.int64) / 1e6))
        elif kind in ("character", "factor"):
            out.append(x)
        elif kind == "logical":
            out.append("TRUE" if x else "FALSE")
        elif kind == "integer":
            out.append(str(int(x)))
        else:
            out.append(_num(float(x)))
    return out


def _same(got, want, kind):
    if got == want:
        return True
    if kind in ("Date", "POSIXct") and len(got) == len(want):
        # Date floors to days, POSIXct rounds to microseconds
        for g, w in zip(got, want):
            if (g == "") != (w == "") or (g and abs(float(g) - float(w)) > (1.0 if kind == "Date" else 1e-6)):
                return g in ("", "NaN") and w in ("NaN", "Inf", "-Inf", "")
        return True
    return False


def test_every_corpus_vector_has_the_values_r_loads(r_vectors):
    root = os.environ["RDARROW_PEERS_DIR"]
    failures, checked = [], 0
    for vec in r_vectors:
        name = vec.get("object") or os.path.splitext(os.path.basename(vec["file"]))[0]
        label = f"{os.path.relpath(vec['file'], root)} [{name}]"
        try:
            got = rdarrow.read_objects(vec["file"], [vec.get("object")] if vec.get("object") else None)
        except rdarrow.RDataError as e:
            failures.append(f"{label}: {type(e).__name__}: {e}")
            continue
        value = next(iter(got.values())) if vec.get("object") is None else got[vec.get("object")]
        checked += 1
        dim = vec.get("dim")
        shape = getattr(value, "shape", None)
        if dim and len(dim) >= 2 and shape is not None and list(shape) != list(dim):
            failures.append(f"{label}: shape {shape}, R has {dim}")
            continue
        flat = _flat(value, vec["kind"])
        if not _same(flat, list(vec["values"]), vec["kind"]):
            k = next((i for i, (a, b) in enumerate(zip(flat, vec["values"])) if a != b), min(len(flat), len(vec["values"])))
            failures.append(
                f"{label} ({vec['kind']}): item {k} is {flat[k] if k < len(flat) else '<none>'!r}, "
                f"R has {vec['values'][k] if k < len(vec['values']) else '<none>'!r} ({len(flat)} vs {len(vec['values'])})"
            )
    assert checked > 50, checked
    assert not failures, f"{len(failures)} of {checked} vectors differ:\n" + "\n".join(failures[:40])


def test_every_corpus_file_reads_as_values_or_fails_as_plain_does():
    """Every object of every corpus file: the NumPy/pandas values are made
    (lists, S4 objects, data frames included) wherever the plain values
    are, and a file that cannot be read fails the same way in both."""
    import warnings

    from conftest import _corpus_files

    made, failed = 0, []
    for f in _corpus_files():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                plain = rdarrow.read_objects(f, plain=True)
            except rdarrow.RDataError as e:
                with pytest.raises(type(e)):
                    rdarrow.read_objects(f)
                continue
            try:
                shaped = rdarrow.read_objects(f)
            except Exception as e:  # noqa: BLE001 - every failure is reported
                failed.append(f"{os.path.basename(f)}: {type(e).__name__}: {e}")
                continue
        assert list(shaped) == list(plain), f
        made += 1
    assert made > 500, made
    assert not failed, "\n".join(failed[:20])
