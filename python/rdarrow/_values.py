"""R objects as NumPy and pandas values (``read_objects()``'s default).

The engine hands each atomic vector over as an ``RVector``: its payload a
buffer NumPy wraps without a copy, R's ``NA`` as a mask the engine made,
and the attributes that shape it. This module is the one table of what
each becomes (the Python package's README repeats it):

======================  ==================================================
R                       Python
======================  ==================================================
double, integer,        ``numpy.ndarray`` (float64, int32, complex128,
complex                 the engine's buffer itself)
logical                 ``numpy.ndarray`` of bool
integer64 (bit64)       ``numpy.ndarray`` of int64
``NA`` in any of these  a ``numpy.ma.MaskedArray`` over the same data, its
                        mask R's ``NA`` (a double's ``NaN`` stays an
                        unmasked ``nan``); no mask when there is no ``NA``
matrix, array           the same, of R's shape in R's (column-major,
                        Fortran) order: no copy, no transpose
factor                  ``pandas.Categorical``, R's levels in R's order
                        (ordered for an ordered factor), ``NA`` a missing
                        code; a factor matrix or array an object
                        ``ndarray`` of its levels' strings in R's shape
                        (pandas has no 2-D Categorical)
Date                    ``numpy.ndarray`` of ``datetime64[D]``
POSIXct                 ``datetime64[us]`` (instants, UTC); with a time
                        zone a ``pandas`` ``DatetimeArray`` in that zone
                        (a matrix or array: ``datetime64[us]``, UTC)
``NA`` of these times   ``NaT``, their own missing value
character               a ``list`` of ``str`` (``None`` for ``NA``); a
                        character matrix or array an object ``ndarray``
names                   a ``pandas.Series`` indexed by the names (values
                        with ``NA`` as pandas' nullable arrays, the same
                        data and mask)
dimnames of a matrix    a ``pandas.DataFrame``: rows and columns labelled
dimnames beyond 2-D     an ``xarray.DataArray`` with them as coordinates
data frame              what ``read_pandas()`` gives
list                    a ``list`` (a named list a ``dict``)
raw                     ``bytes``
S4 object               a sparse matrix of the Matrix package a
                        ``scipy.sparse`` matrix over the same buffers
                        (``dimnames`` beside it as an attribute), any
                        other a ``dict`` of ``class``, ``package`` and
                        its slots
======================  ==================================================

Without pandas (or xarray) a labelled value is its array and an
:class:`RDataWarning` says which labels were left out.

Read from right to left, the table is what ``write_rds()`` and
``write_rdata()`` make of Python values (``to_r``), and what they read
goes back as it was; besides:

======================  ==================================================
Python                  R
======================  ==================================================
float16/32, int8/16,    double, integer
uint8/16 arrays
int64, uint32/64,       integer when every value fits (-2**31 is R's
Python ``int``          ``NA``: it does not), else bit64's integer64;
                        uint64 past 2**63 - 1 double (a warning where not
                        exact); -2**63 an ``OverflowError``
complex64               complex
pandas nullable arrays  their ``NA`` as R's
timedelta64             difftime (days for a day unit, else secs)
datetime64 of a day     Date; of any other unit POSIXct (no ``tzone``;
unit                    a zoned pandas array's zone as ``tzone``)
NumPy str / bytes /     character
object arrays of str
``bytes``               raw
a DataFrame             a data frame (one read from R and unchanged in its
                        columns and rows with R's types and attributes);
                        the DataFrame of a labelled matrix that matrix
scipy csc / csr / coo   dgCMatrix (lgCMatrix for bool), ``dimnames`` kept;
                        one read from R its own class (``r_class``,
                        ``r_package``, ``r_slots``)
``xarray.DataArray``    an array with dimnames (dims ``dim_0``, ... are
                        no names)
dict / list, tuple      a named list / a list (of ``str`` and ``None``:
                        character)
``None``, scalars       ``NULL``, vectors of length 1
======================  ==================================================

What NumPy and pandas do not hold does not come back (the README lists
it): attributes beyond those above, pairlists, partial names of lists,
``character(0)``, strings not in UTF-8, integer Dates, a factor matrix,
a time matrix's zone, ``NaN`` of times, difftime's units, an integer64
that fits.
"""

from __future__ import annotations

import warnings
from typing import Any, Optional

import numpy as np

from ._rdarrow import RFrame, RS4, RVector

def _note(text: str) -> None:
    from . import RDataWarning

    warnings.warn(text, RDataWarning, stacklevel=4)


def _pandas() -> Any:
    try:
        import pandas as pd
    except ImportError:
        return None
    return pd


def _numbers(v: RVector) -> np.ndarray:
    """The vector's numbers over the engine's buffer (no copy)."""
    return np.asarray(v.data)


def _mask(v: RVector) -> Optional[np.ndarray]:
    return None if v.na is None else np.asarray(v.na)


def _times(v: RVector) -> Optional[np.ndarray]:
    """A Date or POSIXct vector as datetime64 (``NaT`` for ``NA``), or
    ``None`` for other vectors."""
    cls = v.classes
    if v.kind not in ("double", "integer") or not ("Date" in cls or "POSIXct" in cls):
        return None
    x = _numbers(v).astype("float64")
    bad = ~np.isfinite(x)
    if "Date" in cls:
        days = np.floor(np.where(bad, 0.0, x))
        bad |= np.abs(days) > 2.5e11
        out = np.where(bad, 0, days).astype("int64").view("datetime64[D]")
    else:
        us = np.round(np.where(bad, 0.0, x) * 1e6)
        bad |= np.abs(us) > 9.2e18
        out = np.where(bad, 0, us).astype("int64").view("datetime64[us]")
    if v.na is not None:
        bad |= _mask(v)
    out[bad] = np.datetime64("NaT")
    return out


def _factor(v: RVector) -> Any:
    pd = _pandas()
    levels = v.levels or []
    if pd is None or len(set(levels)) != len(levels):
        # without pandas, or levels R allowed twice: the levels' strings
        if pd is None:
            _note("a factor is its levels' strings: pandas is not installed")
        codes = _numbers(v)
        return [levels[c - 1] if 1 <= c <= len(levels) else None for c in codes.tolist()]
    codes = _numbers(v).astype("int32") - 1
    if v.na is not None:
        codes[_mask(v)] = -1
    codes[(codes < -1) | (codes >= len(levels))] = -1
    return pd.Categorical.from_codes(codes, categories=levels, ordered="ordered" in v.classes, validate=False)


def _array(v: RVector) -> Any:
    """The vector's values without its labels: an ndarray (masked where R
    had ``NA``), a Categorical, times, or a list of strings."""
    if v.levels is not None and v.kind == "integer":
        return _factor(v)
    times = _times(v)
    if times is not None:
        if "POSIXct" in v.classes and v.tzone:
            pd = _pandas()
            if pd is not None:
                try:
                    return pd.array(times).tz_localize("UTC").tz_convert(v.tzone)
                except Exception:  # an unknown zone: the instants, in UTC
                    _note(f"time zone {v.tzone!r} is not known here: the times are in UTC")
        return times
    if v.kind == "character":
        return list(v.data)
    x = _numbers(v)
    if v.kind == "logical":
        x = x != 0
    if v.na is not None:
        return np.ma.MaskedArray(x, mask=_mask(v), copy=False)
    return x


def _nullable(x: Any) -> Any:
    """A (masked) 1-D array as pandas holds it: a masked one as pandas'
    nullable array over the same data and mask."""
    pd = _pandas()
    if isinstance(x, np.ma.MaskedArray):
        data, mask = np.ma.getdata(x), np.ma.getmaskarray(x)
        kinds = {"f": pd.arrays.FloatingArray, "i": pd.arrays.IntegerArray, "b": pd.arrays.BooleanArray}
        make = kinds.get(data.dtype.kind)
        if make is not None:
            return make(data, mask)
        return pd.array(np.where(mask, None, data.astype(object)), dtype=object)
    return x


def _shaped(v: RVector, x: Any) -> Any:
    """``x`` (the values) in R's shape: its dimensions in column-major
    order, a view."""
    if not v.dim or len(v.dim) < 1:
        return x
    shape = tuple(v.dim)
    if isinstance(x, list):
        x = np.array(x, dtype=object)
    if not hasattr(x, "reshape") or int(np.prod(shape)) != len(x):
        return x
    return x.reshape(shape, order="F")


def pd_isna(x: Any) -> Any:
    import pandas as pd

    return pd.isna(x)


def _labels(names: Any) -> Any:
    return None if names is None else list(names)


def vector(v: RVector) -> Any:
    """One R vector as NumPy/pandas holds it (the module's table)."""
    x = _array(v)
    dim = v.dim
    if dim and len(dim) >= 2:
        if hasattr(x, "codes"):  # pandas has no 2-D Categorical
            x = np.asarray(x.astype(object), dtype=object)
            x[pd_isna(x)] = None
        elif hasattr(x, "tz"):  # nor a 2-D zoned array
            x = np.asarray(x.tz_convert("UTC").tz_localize(None), dtype="datetime64[us]")
        x = _shaped(v, x)
        if v.dimnames is not None and any(d is not None for d in v.dimnames):
            return _with_dimnames(v, x)
        return x
    if dim and len(dim) == 1 and v.dimnames is not None and v.dimnames[0] is not None:
        names = v.dimnames[0]
    else:
        names = v.names
    if names is not None:
        pd = _pandas()
        if pd is None:
            _note("a vector's names are left out: pandas is not installed")
            return x
        values = _nullable(x) if not isinstance(x, list) else pd.array(x, dtype=object)
        return pd.Series(values, index=pd.Index(_labels(names), dtype=object), copy=False)
    return x


def _with_dimnames(v: RVector, x: Any) -> Any:
    dn = v.dimnames
    if x.ndim == 2:
        pd = _pandas()
        if pd is None:
            _note("a matrix's dimnames are left out: pandas is not installed")
            return x
        rows, cols = _labels(dn[0]), _labels(dn[1])
        index = None if rows is None else pd.Index(rows, dtype=object)
        if isinstance(x, np.ma.MaskedArray):
            df = pd.DataFrame({j: _nullable(x[:, j]) for j in range(x.shape[1])}, index=index)
            df.columns = pd.RangeIndex(x.shape[1]) if cols is None else pd.Index(cols, dtype=object)
        else:
            df = pd.DataFrame(x, index=index, columns=None if cols is None else pd.Index(cols, dtype=object), copy=False)
        names = v.dimnames_names
        if names is not None and len(names) == 2:
            df.index.name, df.columns.name = (n if n else None for n in names)
        df.attrs[MatrixFrame.key] = True  # write_rds() writes it back as a matrix
        return df
    try:
        import xarray as xr
    except ImportError:
        _note(f"an array's dimnames are left out: {x.ndim} dimensions need xarray")
        return x
    names = v.dimnames_names or [None] * x.ndim
    dims = [n if n else f"dim_{k}" for k, n in enumerate(names)]
    coords = {d: list(c) for d, c in zip(dims, dn) if c is not None}
    return xr.DataArray(x, dims=dims, coords=coords)


def frame(f: RFrame) -> Any:
    """A data frame as ``read_pandas()`` gives it."""
    import pyarrow as pa

    from . import _Capsule, _pandas_frame

    return _pandas_frame(pa.table(_Capsule(f.stream)), f.row_names)


def _entries(v: Any) -> np.ndarray:
    return _numbers(v) if isinstance(v, RVector) else np.asarray(v)


def s4(o: RS4) -> Any:
    """An S4 object: a Matrix package sparse matrix (or a class extending
    a CsparseMatrix, as Seurat's ``Graph``: its other slots in
    ``.r_slots``) as scipy.sparse over the same buffers, any other a dict
    of its class and slots. Which objects are sparse matrices, and that
    their slots agree, the engine says (``o.sparse``: the storage's
    letter)."""
    cls, slots = o.class_name, o.slots
    if o.sparse is not None:
        try:
            import scipy.sparse as sp
        except ImportError:
            sp = None
        if sp is not None:
            m = sparse(o.sparse, slots, sp)
            m.dimnames = convert(slots.get("Dimnames"))
            # what write_rds() needs to give the object back as it was
            m.r_class, m.r_package = cls, o.package
            m.r_slots = {k: convert(v) for k, v in slots.items() if k not in ("i", "j", "p", "x", "Dim", "Dimnames")}
            return m
    out = S4Value({"class": cls, "package": o.package})
    for k, v in slots.items():
        out[k] = convert(v)
    return out


def sparse(storage: str, slots: dict, sp: Any) -> Any:
    """A sparse matrix stored as ``storage`` (``C``, ``R``, ``T``: slots the
    engine checked) as a scipy.sparse matrix whose arrays are the engine's
    buffers (a pattern matrix's values are ones, a logical one's
    booleans)."""
    nr, nc = (int(d) for d in _entries(slots["Dim"]))
    key = "j" if storage == "R" else "i"
    nnz = len(_entries(slots[key]))
    x = slots.get("x")
    if x is None:
        data = np.ones(nnz, dtype=bool)
    else:
        data = _entries(x)
        if isinstance(x, RVector) and x.kind == "logical":
            data = data != 0
    if storage == "C":
        return sp.csc_matrix((data, _entries(slots["i"]), _entries(slots["p"])), shape=(nr, nc), copy=False)
    if storage == "R":
        return sp.csr_matrix((data, _entries(slots["j"]), _entries(slots["p"])), shape=(nr, nc), copy=False)
    return sp.coo_matrix((data, (_entries(slots["i"]), _entries(slots["j"]))), shape=(nr, nc), copy=False)


def convert(value: Any) -> Any:
    """The engine's values, each vector, data frame and S4 object made a
    NumPy/pandas/scipy value, lists and dicts kept."""
    if isinstance(value, RVector):
        return vector(value)
    if isinstance(value, RFrame):
        return frame(value)
    if isinstance(value, RS4):
        return s4(value)
    if isinstance(value, dict):
        return {k: convert(v) for k, v in value.items()}
    if isinstance(value, list):
        return [convert(v) for v in value]
    return value


def plain(value: Any) -> Any:
    """``read_objects(plain=True)``'s values: an S4 object a dict of its
    class and slots."""
    if isinstance(value, RS4):
        out = {"class": value.class_name, "package": value.package}
        for k, v in value.slots.items():
            out[k] = plain(v)
        return out
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value



# ---------------------------------------------------------------------------
# The way back: Python values as R objects (``write_rds()``/``write_rdata()``)
#
# Each value becomes a node of the binding's value table (``rdarrow-py``'s
# ``make``): ``("vector", type, data, mask, attrs)``, ``("s4", attrs)``,
# ``("frame", capsule, attrs)`` or ``None``. Numbers are handed over in the
# order R holds them (column-major) as NumPy arrays of R's own types: a
# Fortran-ordered array, or an array of R's type, goes as it is (no copy);
# R's ``NA`` goes as a mask, set by the engine.
# ---------------------------------------------------------------------------

_INT_MAX = 2**31 - 1  # R's integers; -2**31 is NA_integer_
_I64_MAX = 2**63 - 1  # bit64's integer64; -2**63 is its NA


class S4Value(dict):
    """An S4 object read from an R file (``read_objects()``): a dict of its
    ``class``, ``package`` and slots, written back as that S4 object."""


class MatrixFrame:  # the mark a labelled matrix's DataFrame carries
    key = "rdarrow.matrix"


class Node:
    """A node of the binding's value table made by the caller (a matrix
    with its dimnames, for the single-cell writers), written as it is."""

    __slots__ = ("node",)

    def __init__(self, node: Any) -> None:
        self.node = node


def matrix(x: Any, rows: Optional[list] = None, cols: Optional[list] = None, place: str = "") -> Node:
    """A 2-D NumPy array (or a scipy.sparse matrix) as an R matrix
    (dgCMatrix) with these dimnames."""
    mod = type(x).__module__
    if mod.startswith("scipy.sparse"):
        x.dimnames = [rows, cols]
        return Node(_sparse_node(x, place))
    mask = np.ma.getmaskarray(x) if isinstance(x, np.ma.MaskedArray) else None
    node = _ndarray_node(np.ma.getdata(x) if mask is not None else np.asarray(x), mask, place)
    if rows is not None or cols is not None:
        parts = [None if d is None else _chr(list(d)) for d in (rows, cols)]
        node[4].append(("dimnames", _vec("list", parts)))
    return Node(node)


def _vec(kind: str, data: Any, mask: Any = None, attrs: Optional[list] = None) -> tuple:
    return ("vector", kind, data, mask, attrs or [])


def _chr(items: Any, attrs: Optional[list] = None) -> tuple:
    return _vec("character", [None if s is None else str(s) for s in items], None, attrs)


def _place(place: str) -> str:
    return place or "the value"


def _unsupported(value: Any, place: str) -> TypeError:
    t = type(value)
    name = t.__name__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__name__}"
    hint = ""
    if name.startswith("anndata.") or name.startswith("mudata."):
        hint = " (AnnData and MuData objects are written by write_sce() and write_seurat())"
    return TypeError(f"cannot write {_place(place)} as an R object: a {name} has no R equivalent{hint}")


def _flat(x: np.ndarray) -> np.ndarray:
    """``x``'s values in R's (column-major) order, contiguous: a view when
    ``x`` already lies so (Fortran-ordered, or a contiguous vector), else a
    copy laid out so."""
    return np.ravel(x, order="F")


def _dim_attrs(shape: tuple) -> list:
    if len(shape) < 2:
        return []
    return [("dim", _vec("integer", np.asarray(shape, dtype=np.int32)))]


def _fits(x: np.ndarray, mask: Any, lo: int, hi: int) -> bool:
    v = x if mask is None else x[~mask]
    return v.size == 0 or (int(v.min()) >= lo and int(v.max()) <= hi)


def _integers(x: np.ndarray, mask: Any, place: str) -> tuple:
    """Integers by the table's rule: R's integer when every value fits
    (and none is R's ``NA``, -2**31), else bit64's integer64, else (an
    unsigned 64-bit value past 2**63 - 1) double, with a warning where
    the double is not exact. Never wrapped."""
    if x.dtype.itemsize <= 2 or _fits(x, mask, -_INT_MAX, _INT_MAX):
        return "integer", x.astype(np.int32, copy=False), []
    if x.dtype.kind == "u" and not _fits(x, mask, 0, _I64_MAX):
        big = x if mask is None else x[~mask]
        if (big > 2**53).any():
            _note(f"{_place(place)}: unsigned integers above 2**63 - 1 are written as doubles (rounded above 2**53)")
        return "double", x.astype(np.float64), []
    if not _fits(x, mask, -_I64_MAX, _I64_MAX):  # -2**63 is integer64's NA
        raise OverflowError(f"{_place(place)}: -2**63 is integer64's NA in R and cannot be written as a value")
    return "integer64", x.astype(np.int64, copy=False), [("class", _chr(["integer64"]))]


def _times_node(x: np.ndarray, mask: Any, tz: Optional[str], attrs: list) -> tuple:
    """datetime64 as Date (a day unit) or POSIXct (seconds; the zone, when
    there is one, as ``tzone``)."""
    unit, _ = np.datetime_data(x.dtype)
    nat = np.isnat(x)
    mask = nat if mask is None else (mask | nat)
    if unit in ("Y", "M", "W", "D") and tz is None:
        days = x.astype("datetime64[D]").astype(np.int64).astype(np.float64)
        return _vec("double", days, mask if mask.any() else None, attrs + [("class", _chr(["Date"]))])
    ns = x.astype("datetime64[ns]") if unit in ("Y", "M", "W", "D", "h", "m") else x
    unit = np.datetime_data(ns.dtype)[0]
    per = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9, "ps": 10**12, "fs": 10**15, "as": 10**18}[unit]
    secs = ns.astype(np.int64) / per
    extra = [("class", _chr(["POSIXct", "POSIXt"]))]
    if tz is not None:
        extra.append(("tzone", _chr([tz])))
    return _vec("double", secs, mask if mask.any() else None, attrs + extra)


def _difftime_node(x: np.ndarray, mask: Any, attrs: list) -> tuple:
    unit, _ = np.datetime_data(x.dtype)
    nat = np.isnat(x)
    mask = nat if mask is None else (mask | nat)
    if unit in ("D", "W"):
        vals, units = x.astype("timedelta64[D]").astype(np.int64).astype(np.float64), "days"
    else:
        vals, units = x.astype("timedelta64[ns]").astype(np.int64) / 1e9, "secs"
    return _vec(
        "double", vals, mask if mask.any() else None,
        attrs + [("class", _chr(["difftime"])), ("units", _chr([units]))],
    )


def _ndarray_node(x: np.ndarray, mask: Any, place: str, attrs: Optional[list] = None) -> tuple:
    """A NumPy array (``mask``: R's ``NA``) as an R vector of its shape."""
    attrs = list(attrs or []) + _dim_attrs(x.shape)
    flat = _flat(x)
    m = None if mask is None else _flat(np.asarray(mask, dtype=bool))
    if m is not None and not m.any():
        m = None
    k = x.dtype.kind
    if k == "b":
        return _vec("logical", flat.astype(np.int32), m, attrs)
    if k in "iu":
        kind, data, extra = _integers(flat, m, place)
        return _vec(kind, data, m, attrs + extra)
    if k == "f":
        return _vec("double", flat.astype(np.float64, copy=False), m, attrs)
    if k == "c":
        return _vec("complex", flat.astype(np.complex128, copy=False), m, attrs)
    if k == "M":
        return _times_node(flat, m, None, attrs)
    if k == "m":
        return _difftime_node(flat, m, attrs)
    if k == "U":
        return _vec("character", flat.tolist(), m, attrs)
    if k == "S":
        return _vec("character", [b.decode("utf-8") for b in flat.tolist()], m, attrs)
    if k == "O":
        items = flat.tolist()
        if m is not None:
            items = [None if na else v for v, na in zip(items, m)]
        if all(v is None or isinstance(v, str) for v in items) and any(isinstance(v, str) for v in items):
            return _vec("character", items, None, attrs)
        return _vec("list", [to_r(v, f"{place}[[{i + 1}]]") for i, v in enumerate(items)], None, attrs)
    raise TypeError(f"cannot write {_place(place)} as an R object: NumPy dtype {x.dtype} has no R equivalent")


def _labels_node(labels: Any) -> Any:
    """An index or coordinate as R's names (``None``: a default 0, 1, ...
    RangeIndex, which is no names)."""
    pd = _pandas()
    if labels is None:
        return None
    if pd is not None and isinstance(labels, pd.RangeIndex) and labels.start == 0 and labels.step == 1:
        return None
    return _chr([None if (v is None or (isinstance(v, float) and np.isnan(v))) else v for v in list(labels)])


def _pandas_array(x: Any, place: str, attrs: list) -> Optional[tuple]:
    """A pandas extension array (nullable numbers, strings, Categorical,
    zoned times) as an R vector; ``None`` for a plain NumPy one."""
    pd = _pandas()
    if pd is None:
        return None
    dtype = getattr(x, "dtype", None)
    if isinstance(dtype, np.dtype) or (
        isinstance(x, pd.arrays.NumpyExtensionArray) and not isinstance(dtype, pd.StringDtype)
    ):
        return None  # NumPy's own values
    if isinstance(dtype, pd.CategoricalDtype):
        codes = np.asarray(x.codes)
        mask = codes < 0
        levels = _chr([str(c) for c in x.categories])
        cls = ["ordered", "factor"] if x.ordered else ["factor"]
        return _vec(
            "integer", (codes.astype(np.int32) + 1), mask if mask.any() else None,
            attrs + [("levels", levels), ("class", _chr(cls))],
        )
    if isinstance(dtype, pd.DatetimeTZDtype):
        utc = np.asarray(x.tz_convert("UTC").tz_localize(None), dtype="datetime64[ns]")
        return _times_node(utc, None, str(dtype.tz), attrs)
    if isinstance(dtype, pd.api.extensions.ExtensionDtype) and not isinstance(dtype, np.dtype):
        mask = np.asarray(pd.isna(x), dtype=bool)
        kind = getattr(dtype, "kind", "O")
        if kind == "b":
            data = x.to_numpy(dtype=bool, na_value=False)
        elif kind in "iu":
            data = x.to_numpy(dtype=dtype.numpy_dtype, na_value=0)
        elif kind == "f":
            data = x.to_numpy(dtype=np.float64, na_value=np.nan)
        elif kind in "Mm":
            data = x.to_numpy(dtype=dtype.numpy_dtype if hasattr(dtype, "numpy_dtype") else None)
        else:
            items = x.to_numpy(dtype=object, na_value=None)
            return _ndarray_node(items, mask, place, attrs)
        return _ndarray_node(data, mask, place, attrs)
    return None


def _series_node(s: Any, place: str) -> tuple:
    names = _labels_node(s.index)
    attrs = [] if names is None else [("names", names)]
    node = _pandas_array(s.array, place, attrs)
    if node is not None:
        return node
    return _ndarray_node(np.asarray(s), None, place, attrs)


def _matrix_frame_node(df: Any, place: str) -> tuple:
    """A DataFrame that ``read_objects()`` made of a labelled matrix, as
    that matrix: its columns side by side, ``NA`` where pandas has it, its
    index and columns (and their names) the dimnames."""
    pd = _pandas()
    cols, masks = [], []
    for j in range(df.shape[1]):
        col = df.iloc[:, j].array
        mask = np.asarray(pd.isna(col), dtype=bool)
        dtype = col.dtype
        if isinstance(dtype, np.dtype) or isinstance(col, pd.arrays.NumpyExtensionArray):
            data = np.asarray(col)
            if data.dtype.kind != "O":
                mask = np.zeros(len(data), dtype=bool) if data.dtype.kind == "f" else mask
        elif getattr(dtype, "kind", "O") in "biuf":
            data = col.to_numpy(dtype=dtype.numpy_dtype, na_value=0)
        else:
            data = col.to_numpy(dtype=object, na_value=None)
        cols.append(data)
        masks.append(mask)
    x = np.column_stack(cols) if cols else np.zeros(df.shape)
    mask = np.column_stack(masks) if masks else None
    node = _ndarray_node(np.asfortranarray(x) if x.dtype.kind != "O" else x, mask, place)
    rows, columns = _labels_node(df.index), _labels_node(df.columns)
    names = [df.index.name, df.columns.name]
    if rows is not None or columns is not None or any(n is not None for n in names):
        dn_attrs = [] if all(n is None for n in names) else [("names", _chr(["" if n is None else n for n in names]))]
        node[4].append(("dimnames", _vec("list", [rows, columns], None, dn_attrs)))
    return node


def _xarray_node(da: Any, place: str) -> tuple:
    x = np.asarray(da.values)
    dims = list(da.dims)
    parts = [_labels_node(da.indexes[d]) if d in da.indexes else None for d in dims]
    node = _ndarray_node(x, np.ma.getmaskarray(x) if isinstance(x, np.ma.MaskedArray) else None, place)
    if x.ndim < 2:
        node[4].append(("dim", _vec("integer", np.asarray(x.shape, dtype=np.int32))))
    named = [d for k, d in enumerate(dims) if str(d) != f"dim_{k}"]
    if any(p is not None for p in parts) or named:
        dn_attrs = [("names", _chr([str(d) for d in dims]))] if named else []
        node[4].append(("dimnames", _vec("list", parts, None, dn_attrs)))
    return node


def _sparse_node(m: Any, place: str) -> tuple:
    """A scipy.sparse matrix as the Matrix package's: dgCMatrix (lgCMatrix
    for bool), or the class it was read as (``r_class``, ``r_package``,
    ``r_slots``, set by ``read_objects()``)."""
    cls = getattr(m, "r_class", None)
    package = getattr(m, "r_package", None) or "Matrix"
    storage = {"csc": "C", "csr": "R", "coo": "T"}
    if cls is None or (package == "Matrix" and storage.get(m.format) != cls[2:3]):
        cls, package = ("lgCMatrix" if m.dtype.kind == "b" else "dgCMatrix"), "Matrix"
        m = m.tocsc() if m.format != "csc" else m
    if m.format not in storage:
        m = m.tocsc()
    if m.shape[0] > _INT_MAX or m.shape[1] > _INT_MAX or m.nnz > _INT_MAX:
        raise ValueError(f"{_place(place)}: a sparse matrix of more than 2**31 - 1 rows, columns or entries")
    idx = lambda a: np.asarray(a).astype(np.int32, copy=False)  # noqa: E731
    slots: list = []
    if m.format == "csc":
        slots += [("i", _vec("integer", idx(m.indices))), ("p", _vec("integer", idx(m.indptr)))]
    elif m.format == "csr":
        slots += [("p", _vec("integer", idx(m.indptr))), ("j", _vec("integer", idx(m.indices)))]
    else:
        slots += [("i", _vec("integer", idx(m.row))), ("j", _vec("integer", idx(m.col)))]
    slots.append(("Dim", _vec("integer", np.asarray(m.shape, dtype=np.int32))))
    dn = getattr(m, "dimnames", None)
    parts = [None, None]
    if isinstance(dn, (list, tuple)) and len(dn) == 2:
        parts = [None if d is None else _chr(list(d)) for d in dn]
    slots.append(("Dimnames", _vec("list", parts)))
    if not cls.startswith("n") or package != "Matrix":
        data = np.asarray(m.data)
        if cls.startswith("l") or (package != "Matrix" and data.dtype.kind == "b"):
            slots.append(("x", _vec("logical", data.astype(np.int32))))
        else:
            slots.append(("x", _vec("double", data.astype(np.float64, copy=False))))
    extra = getattr(m, "r_slots", None)
    if extra is None:
        extra = {"factors": []} if cls[1:2] == "g" else {}
    for k, v in extra.items():
        slots.append((k, to_r(v, f"{place}@{k}")))
    slots.append(("class", _chr([cls], [("package", _chr([package]))])))
    return ("s4", slots)


def _s4_node(d: dict, place: str) -> tuple:
    """An S4 object of its class, package and slots; with a ``.Data`` slot
    (R's name for the data part) that vector, its slots its attributes."""
    cls, package = d.get("class"), d.get("package")
    slots = [(k, to_r(v, f"{place}@{k}")) for k, v in d.items() if k not in ("class", "package", ".Data")]
    cattrs = [] if package is None else [("package", _chr([package]))]
    slots.append(("class", _chr([cls], cattrs)))
    if ".Data" in d:
        data = to_r(d[".Data"], f"{place}@.Data")
        if not (isinstance(data, tuple) and data[0] == "vector"):
            raise TypeError(f"cannot write {_place(place)}: the data part of an S4 object is not a vector")
        names = {k for k, _ in slots}
        attrs = [a for a in data[4] if a[0] not in names] + slots
        return ("vector", data[1], data[2], data[3], attrs, True)
    return ("s4", slots)


def _frame_node(df: Any) -> tuple:
    from . import _stream_of

    return ("frame", _stream_of(df), [])


def to_r(value: Any, place: str = "") -> Any:
    """The node of the binding's value table that ``value`` becomes (the
    module's table, read from right to left). ``place`` is where the value
    is inside the object written, for errors."""
    pd = _pandas()
    if value is None:
        return None
    if isinstance(value, Node):
        return value.node
    if isinstance(value, RVector):
        return _rvector_node(value)
    if isinstance(value, RS4):
        return _s4_node({"class": value.class_name, "package": value.package, **value.slots}, place)
    if isinstance(value, S4Value):
        return _s4_node(value, place)
    if isinstance(value, bool):
        return _vec("logical", np.asarray([value], dtype=np.int32))
    if isinstance(value, (int, float, complex, np.generic)) and not isinstance(value, (str, bytes)):
        if isinstance(value, int) and not isinstance(value, np.generic) and abs(value) > _I64_MAX:
            raise OverflowError(f"{_place(place)}: the integer {value} is beyond R's integer64")
        return _ndarray_node(np.asarray([value]), None, place)
    if isinstance(value, str):
        return _chr([value])
    if isinstance(value, (bytes, bytearray, memoryview)):
        return _vec("raw", np.frombuffer(bytes(value), dtype=np.uint8))
    if isinstance(value, np.ma.MaskedArray):
        return _ndarray_node(np.ma.getdata(value), np.ma.getmaskarray(value), place)
    if isinstance(value, np.ndarray):
        return _ndarray_node(value, None, place)
    if isinstance(value, dict):
        keys = list(value)
        bad = [k for k in keys if not isinstance(k, str)]
        if bad:
            raise TypeError(f"cannot write {_place(place)} as a named list: key {bad[0]!r} is not a str")
        items = [to_r(value[k], f"{place}${k}") for k in keys]
        return _vec("list", items, None, [("names", _chr(keys))])
    if isinstance(value, (list, tuple)):
        if value and all(v is None or isinstance(v, str) for v in value) and any(isinstance(v, str) for v in value):
            return _vec("character", list(value))
        return _vec("list", [to_r(v, f"{place}[[{i + 1}]]") for i, v in enumerate(value)])
    if pd is not None:
        if isinstance(value, pd.DataFrame):
            if value.attrs.get(MatrixFrame.key):
                return _matrix_frame_node(value, place)
            return _frame_node(value)
        if isinstance(value, pd.Series):
            return _series_node(value, place)
        if isinstance(value, pd.Index):
            return _series_node(pd.Series(value, index=pd.RangeIndex(len(value))), place)
        if isinstance(value, pd.api.extensions.ExtensionArray):
            node = _pandas_array(value, place, [])
            if node is not None:
                return node
    mod = type(value).__module__
    if mod.startswith("scipy.sparse"):
        return _sparse_node(value, place)
    if mod.startswith("xarray") and hasattr(value, "dims"):
        return _xarray_node(value, place)
    if hasattr(value, "__arrow_c_stream__"):
        return ("frame", value.__arrow_c_stream__(), [])
    if isinstance(value, (np.datetime64, np.timedelta64)):
        return _ndarray_node(np.asarray([value]), None, place)
    import datetime as _dt

    if isinstance(value, _dt.datetime):
        if value.tzinfo is not None:
            utc = value.astimezone(_dt.timezone.utc).replace(tzinfo=None)
            return _times_node(np.asarray([np.datetime64(utc, "us")]), None, str(value.tzinfo), [])
        return _ndarray_node(np.asarray([np.datetime64(value, "us")]), None, place)
    if isinstance(value, _dt.date):
        return _ndarray_node(np.asarray([np.datetime64(value, "D")]), None, place)
    raise _unsupported(value, place)


def _rvector_node(v: RVector) -> tuple:
    """An ``RVector`` (``read_objects()``'s engine values) back as it was:
    its payload holds R's own ``NA``."""
    attrs: list = []
    if v.names is not None:
        attrs.append(("names", _chr(v.names)))
    if v.dim is not None:
        attrs.append(("dim", _vec("integer", np.asarray(v.dim, dtype=np.int32))))
    if v.dimnames is not None:
        dn_attrs = [] if v.dimnames_names is None else [("names", _chr(v.dimnames_names))]
        attrs.append(("dimnames", _vec("list", [None if d is None else _chr(d) for d in v.dimnames], None, dn_attrs)))
    if v.levels is not None:
        attrs.append(("levels", _chr(v.levels)))
    if v.tzone is not None:
        attrs.append(("tzone", _chr([v.tzone])))
    if v.units is not None:
        attrs.append(("units", _chr([v.units])))
    if v.classes:
        attrs.append(("class", _chr(v.classes)))
    if v.kind == "character":
        return _vec("character", list(v.data), None, attrs)
    data = np.asarray(v.data)
    return _vec(v.kind, data, None, attrs)
