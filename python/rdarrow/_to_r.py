"""Python values as R objects (``write_rds()``, ``write_rdata()``, the
single-cell writers): the table of ``_values`` read from right to left."""

from __future__ import annotations

import array
import sys
from typing import Any, Optional

from ._errors import note
from ._optional import Lazy

# NumPy when a value first needs it: plain Python values need none
np = Lazy("numpy", "writing NumPy values")
from ._rdarrow import RS4, RVector
from ._pandas import stream_of
from ._values import MatrixFrame, S4Value, pandas_module

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





class _Numbers:
    """Numbers in a Python ``array.array``, handed to the engine as NumPy's
    array interface describes an array (no NumPy needed for plain values)."""

    __slots__ = ("__array_interface__", "_keep")

    def __init__(self, code: str, values: Any, typestr: str, count: Optional[int] = None) -> None:
        self._keep = array.array(code, values)
        addr, n = self._keep.buffer_info()
        order = "<" if sys.byteorder == "little" else ">"
        self.__array_interface__ = {
            "typestr": ("|" if typestr.endswith("1") else order) + typestr,
            "shape": (n if count is None else count,),
            "data": (addr, False),
            "strides": None,
            "version": 3,
        }


def _scalar_node(value: Any, place: str) -> tuple:
    """A Python bool, int, float or complex as an R vector of length one,
    by the table's rule (an int R's integer when it fits, else
    integer64), without NumPy."""
    if isinstance(value, bool):
        return vector_node("logical", _Numbers("i", [int(value)], "i4"))
    if isinstance(value, int):
        if abs(value) <= _INT_MAX:
            return vector_node("integer", _Numbers("i", [value], "i4"))
        if abs(value) > _I64_MAX:
            raise OverflowError(f"{_place(place)}: the integer {value} is beyond R's integer64")
        return vector_node("integer64", _Numbers("q", [value], "i8"), None, [("class", character_node(["integer64"]))])
    if isinstance(value, float):
        return vector_node("double", _Numbers("d", [value], "f8"))
    return vector_node("complex", _Numbers("d", [value.real, value.imag], "c16", 1))


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
        parts = [None if d is None else character_node(list(d)) for d in (rows, cols)]
        node[4].append(("dimnames", vector_node("list", parts)))
    return Node(node)


def vector_node(kind: str, data: Any, mask: Any = None, attrs: Optional[list] = None) -> tuple:
    return ("vector", kind, data, mask, attrs or [])


def character_node(items: Any, attrs: Optional[list] = None) -> tuple:
    return vector_node("character", [None if s is None else str(s) for s in items], None, attrs)


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
    return [("dim", vector_node("integer", np.asarray(shape, dtype=np.int32)))]


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
            note(f"{_place(place)}: unsigned integers above 2**63 - 1 are written as doubles (rounded above 2**53)")
        return "double", x.astype(np.float64), []
    if not _fits(x, mask, -_I64_MAX, _I64_MAX):  # -2**63 is integer64's NA
        raise OverflowError(f"{_place(place)}: -2**63 is integer64's NA in R and cannot be written as a value")
    return "integer64", x.astype(np.int64, copy=False), [("class", character_node(["integer64"]))]


def _times_node(x: np.ndarray, mask: Any, tz: Optional[str], attrs: list) -> tuple:
    """datetime64 as Date (a day unit) or POSIXct (seconds; the zone, when
    there is one, as ``tzone``)."""
    unit, _ = np.datetime_data(x.dtype)
    nat = np.isnat(x)
    mask = nat if mask is None else (mask | nat)
    if unit in ("Y", "M", "W", "D") and tz is None:
        days = x.astype("datetime64[D]").astype(np.int64).astype(np.float64)
        return vector_node("double", days, mask if mask.any() else None, attrs + [("class", character_node(["Date"]))])
    ns = x.astype("datetime64[ns]") if unit in ("Y", "M", "W", "D", "h", "m") else x
    unit = np.datetime_data(ns.dtype)[0]
    per = {"s": 1, "ms": 10**3, "us": 10**6, "ns": 10**9, "ps": 10**12, "fs": 10**15, "as": 10**18}[unit]
    secs = ns.astype(np.int64) / per
    extra = [("class", character_node(["POSIXct", "POSIXt"]))]
    if tz is not None:
        extra.append(("tzone", character_node([tz])))
    return vector_node("double", secs, mask if mask.any() else None, attrs + extra)


def _difftime_node(x: np.ndarray, mask: Any, attrs: list) -> tuple:
    unit, _ = np.datetime_data(x.dtype)
    nat = np.isnat(x)
    mask = nat if mask is None else (mask | nat)
    if unit in ("D", "W"):
        vals, units = x.astype("timedelta64[D]").astype(np.int64).astype(np.float64), "days"
    else:
        vals, units = x.astype("timedelta64[ns]").astype(np.int64) / 1e9, "secs"
    return vector_node(
        "double", vals, mask if mask.any() else None,
        attrs + [("class", character_node(["difftime"])), ("units", character_node([units]))],
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
        return vector_node("logical", flat.astype(np.int32), m, attrs)
    if k in "iu":
        kind, data, extra = _integers(flat, m, place)
        return vector_node(kind, data, m, attrs + extra)
    if k == "f":
        return vector_node("double", flat.astype(np.float64, copy=False), m, attrs)
    if k == "c":
        return vector_node("complex", flat.astype(np.complex128, copy=False), m, attrs)
    if k == "M":
        return _times_node(flat, m, None, attrs)
    if k == "m":
        return _difftime_node(flat, m, attrs)
    if k == "U":
        return vector_node("character", flat.tolist(), m, attrs)
    if k == "S":
        return vector_node("character", [b.decode("utf-8") for b in flat.tolist()], m, attrs)
    if k == "O":
        items = flat.tolist()
        if m is not None:
            items = [None if na else v for v, na in zip(items, m)]
        if all(v is None or isinstance(v, str) for v in items) and any(isinstance(v, str) for v in items):
            return vector_node("character", items, None, attrs)
        return vector_node("list", [to_r(v, f"{place}[[{i + 1}]]") for i, v in enumerate(items)], None, attrs)
    raise TypeError(f"cannot write {_place(place)} as an R object: NumPy dtype {x.dtype} has no R equivalent")


def _labels_node(labels: Any) -> Any:
    """An index or coordinate as R's names (``None``: a default 0, 1, ...
    RangeIndex, which is no names)."""
    pd = pandas_module()
    if labels is None:
        return None
    if pd is not None and isinstance(labels, pd.RangeIndex) and labels.start == 0 and labels.step == 1:
        return None
    return character_node([None if (v is None or (isinstance(v, float) and np.isnan(v))) else v for v in list(labels)])


def _pandas_array(x: Any, place: str, attrs: list) -> Optional[tuple]:
    """A pandas extension array (nullable numbers, strings, Categorical,
    zoned times) as an R vector; ``None`` for a plain NumPy one."""
    pd = pandas_module()
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
        levels = character_node([str(c) for c in x.categories])
        cls = ["ordered", "factor"] if x.ordered else ["factor"]
        return vector_node(
            "integer", (codes.astype(np.int32) + 1), mask if mask.any() else None,
            attrs + [("levels", levels), ("class", character_node(cls))],
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
    pd = pandas_module()
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
        dn_attrs = [] if all(n is None for n in names) else [("names", character_node(["" if n is None else n for n in names]))]
        node[4].append(("dimnames", vector_node("list", [rows, columns], None, dn_attrs)))
    return node


def _xarray_node(da: Any, place: str) -> tuple:
    x = np.asarray(da.values)
    dims = list(da.dims)
    parts = [_labels_node(da.indexes[d]) if d in da.indexes else None for d in dims]
    node = _ndarray_node(x, np.ma.getmaskarray(x) if isinstance(x, np.ma.MaskedArray) else None, place)
    if x.ndim < 2:
        node[4].append(("dim", vector_node("integer", np.asarray(x.shape, dtype=np.int32))))
    named = [d for k, d in enumerate(dims) if str(d) != f"dim_{k}"]
    if any(p is not None for p in parts) or named:
        dn_attrs = [("names", character_node([str(d) for d in dims]))] if named else []
        node[4].append(("dimnames", vector_node("list", parts, None, dn_attrs)))
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
        slots += [("i", vector_node("integer", idx(m.indices))), ("p", vector_node("integer", idx(m.indptr)))]
    elif m.format == "csr":
        slots += [("p", vector_node("integer", idx(m.indptr))), ("j", vector_node("integer", idx(m.indices)))]
    else:
        slots += [("i", vector_node("integer", idx(m.row))), ("j", vector_node("integer", idx(m.col)))]
    slots.append(("Dim", vector_node("integer", np.asarray(m.shape, dtype=np.int32))))
    dn = getattr(m, "dimnames", None)
    parts = [None, None]
    if isinstance(dn, (list, tuple)) and len(dn) == 2:
        parts = [None if d is None else character_node(list(d)) for d in dn]
    slots.append(("Dimnames", vector_node("list", parts)))
    if not cls.startswith("n") or package != "Matrix":
        data = np.asarray(m.data)
        if cls.startswith("l") or (package != "Matrix" and data.dtype.kind == "b"):
            slots.append(("x", vector_node("logical", data.astype(np.int32))))
        else:
            slots.append(("x", vector_node("double", data.astype(np.float64, copy=False))))
    extra = getattr(m, "r_slots", None)
    if extra is None:
        extra = {"factors": []} if cls[1:2] == "g" else {}
    for k, v in extra.items():
        slots.append((k, to_r(v, f"{place}@{k}")))
    slots.append(("class", character_node([cls], [("package", character_node([package]))])))
    return ("s4", slots)


def _s4_node(d: dict, place: str) -> tuple:
    """An S4 object of its class, package and slots; with a ``.Data`` slot
    (R's name for the data part) that vector, its slots its attributes."""
    cls, package = d.get("class"), d.get("package")
    slots = [(k, to_r(v, f"{place}@{k}")) for k, v in d.items() if k not in ("class", "package", ".Data")]
    cattrs = [] if package is None else [("package", character_node([package]))]
    slots.append(("class", character_node([cls], cattrs)))
    if ".Data" in d:
        data = to_r(d[".Data"], f"{place}@.Data")
        if not (isinstance(data, tuple) and data[0] == "vector"):
            raise TypeError(f"cannot write {_place(place)}: the data part of an S4 object is not a vector")
        names = {k for k, _ in slots}
        attrs = [a for a in data[4] if a[0] not in names] + slots
        return ("vector", data[1], data[2], data[3], attrs, True)
    return ("s4", slots)


def to_r(value: Any, place: str = "") -> Any:
    """The node of the binding's value table that ``value`` becomes (the
    module's table, read from right to left). ``place`` is where the value
    is inside the object written, for errors."""
    # a NumPy or pandas value exists only once its module is imported:
    # plain Python values never import either
    numpy = sys.modules.get("numpy")
    pd = sys.modules.get("pandas")
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
    if numpy is not None and isinstance(value, numpy.generic) and not isinstance(value, (str, bytes)):
        return _ndarray_node(np.asarray([value]), None, place)
    if isinstance(value, (bool, int, float, complex)):
        return _scalar_node(value, place)
    if isinstance(value, str):
        return character_node([value])
    if isinstance(value, (bytes, bytearray, memoryview)):
        return vector_node("raw", _Numbers("B", bytes(value), "u1"))
    if numpy is not None and isinstance(value, numpy.ma.MaskedArray):
        return _ndarray_node(np.ma.getdata(value), np.ma.getmaskarray(value), place)
    if numpy is not None and isinstance(value, numpy.ndarray):
        return _ndarray_node(value, None, place)
    if isinstance(value, dict):
        keys = list(value)
        bad = [k for k in keys if not isinstance(k, str)]
        if bad:
            raise TypeError(f"cannot write {_place(place)} as a named list: key {bad[0]!r} is not a str")
        items = [to_r(value[k], f"{place}${k}") for k in keys]
        return vector_node("list", items, None, [("names", character_node(keys))])
    if isinstance(value, (list, tuple)):
        if value and all(v is None or isinstance(v, str) for v in value) and any(isinstance(v, str) for v in value):
            return vector_node("character", list(value))
        return vector_node("list", [to_r(v, f"{place}[[{i + 1}]]") for i, v in enumerate(value)])
    if pd is not None:
        if isinstance(value, pd.DataFrame):
            if value.attrs.get(MatrixFrame.key):
                return _matrix_frame_node(value, place)
            # its index as R's row names: the engine's rule
            # (rdarrow-arrow's mapping/pandas_index.rs), from pyarrow's
            # "pandas" metadata
            return ("frame", stream_of(value), [])
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
        attrs.append(("names", character_node(v.names)))
    if v.dim is not None:
        attrs.append(("dim", vector_node("integer", np.asarray(v.dim, dtype=np.int32))))
    if v.dimnames is not None:
        dn_attrs = [] if v.dimnames_names is None else [("names", character_node(v.dimnames_names))]
        attrs.append(("dimnames", vector_node("list", [None if d is None else character_node(d) for d in v.dimnames], None, dn_attrs)))
    if v.levels is not None:
        attrs.append(("levels", character_node(v.levels)))
    if v.tzone is not None:
        attrs.append(("tzone", character_node([v.tzone])))
    if v.units is not None:
        attrs.append(("units", character_node([v.units])))
    if v.classes:
        attrs.append(("class", character_node(v.classes)))
    if v.kind == "character":
        return vector_node("character", list(v.data), None, attrs)
    data = np.asarray(v.data)
    return vector_node(v.kind, data, None, attrs)
