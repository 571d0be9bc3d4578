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

from typing import Any, Optional

from ._optional import Lazy, have, need_all, pip_line

# NumPy when a value first needs it: plain values (plain=True) need none
np = Lazy("numpy", "R vectors as NumPy arrays", "or read_objects(..., plain=True) for plain values")

from ._rdarrow import RFrame, RS4, RTensor, RVector
from ._arrow import Capsule
from ._errors import note
from ._pandas import pandas_frame



def pandas_module() -> Any:
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
    pd = pandas_module()
    levels = v.levels or []
    if pd is None or len(set(levels)) != len(levels):
        # without pandas, or levels R allowed twice: the levels' strings
        if pd is None:
            note("a factor is its levels' strings: pandas is not installed")
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
            pd = pandas_module()
            if pd is not None:
                try:
                    return pd.array(times).tz_localize("UTC").tz_convert(v.tzone)
                except Exception:  # an unknown zone: the instants, in UTC
                    note(f"time zone {v.tzone!r} is not known here: the times are in UTC")
        return times
    if v.kind == "character":
        return list(v.data)
    x = _numbers(v)
    if v.kind == "logical":
        x = x != 0
    if v.na is not None:
        return np.ma.MaskedArray(x, mask=_mask(v), copy=False)
    return x


def nullable_array(x: Any) -> Any:
    """A (masked) 1-D array as pandas holds it: a masked one as pandas'
    nullable array over the same data and mask."""
    pd = pandas_module()
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
        pd = pandas_module()
        if pd is None:
            note("a vector's names are left out: pandas is not installed")
            return x
        values = nullable_array(x) if not isinstance(x, list) else pd.array(x, dtype=object)
        return pd.Series(values, index=pd.Index(_labels(names), dtype=object), copy=False)
    return x


def _with_dimnames(v: RVector, x: Any) -> Any:
    dn = v.dimnames
    if x.ndim == 2:
        pd = pandas_module()
        if pd is None:
            note("a matrix's dimnames are left out: pandas is not installed")
            return x
        rows, cols = _labels(dn[0]), _labels(dn[1])
        index = None if rows is None else pd.Index(rows, dtype=object)
        if isinstance(x, np.ma.MaskedArray):
            df = pd.DataFrame({j: nullable_array(x[:, j]) for j in range(x.shape[1])}, index=index)
            df.columns = pd.RangeIndex(x.shape[1]) if cols is None else pd.Index(cols, dtype=object)
        else:
            df = pd.DataFrame(x, index=index, columns=None if cols is None else pd.Index(cols, dtype=object), copy=False)
        names = v.dimnames_names
        if names is not None and len(names) == 2:
            df.index.name, df.columns.name = (n if n else None for n in names)
        df.attrs[MatrixFrame.key] = True  # write_rds() writes it back as a matrix
        return df
    xr = have("xarray")
    if xr is None:
        note(f"an array's dimnames are left out: {x.ndim} dimensions need xarray: {pip_line('xarray')}")
        return x
    names = v.dimnames_names or [None] * x.ndim
    dims = [n if n else f"dim_{k}" for k, n in enumerate(names)]
    coords = {d: list(c) for d, c in zip(dims, dn) if c is not None}
    return xr.DataArray(x, dims=dims, coords=coords)


def frame(f: RFrame) -> Any:
    """A data frame as ``read_pandas()`` gives it."""
    import pyarrow as pa


    return pandas_frame(pa.table(Capsule(f.stream)), f.row_names, f.index_name)


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
        sp = have("scipy.sparse")
        if sp is None:
            # its slots are NumPy arrays: without NumPy either, one error
            # naming both
            if have("numpy") is None:
                need_all(f"a {cls} (a sparse matrix) as scipy.sparse", ["numpy", "scipy.sparse"], "sparse",
                         "or read_objects(..., plain=True) for plain values")
            note(f"a {cls} (a sparse matrix) is read as a dict of its slots: {pip_line('scipy.sparse')} to have it as a scipy.sparse matrix")
        else:
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


def tensor(t: RTensor) -> Any:
    """An array the engine laid out as a tensor (``as_tensor=True``,
    ``to_tensor()``) as a ``pyarrow.Tensor`` over the engine's buffer: its
    shape, byte strides and dimension names as the engine gives them."""
    import pyarrow as pa

    flat = np.asarray(t.data)
    arr = np.lib.stride_tricks.as_strided(flat, shape=tuple(t.shape), strides=tuple(t.strides), writeable=False)
    names = [n or "" for n in t.names] if t.names else None
    return pa.Tensor.from_numpy(arr, dim_names=names)


def convert(value: Any) -> Any:
    """The engine's values, each vector, data frame and S4 object made a
    NumPy/pandas/scipy value, lists and dicts kept."""
    if isinstance(value, RTensor):
        return tensor(value)
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
    if isinstance(value, RTensor):
        return tensor(value)
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


class S4Value(dict):
    """An S4 object read from an R file (``read_objects()``): a dict of its
    ``class``, ``package`` and slots, written back as that S4 object."""


class MatrixFrame:  # the mark a labelled matrix's DataFrame carries
    key = "rdarrow.matrix"
