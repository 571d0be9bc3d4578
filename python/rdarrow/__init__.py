"""R data files (.RData/.rda from ``save()``, .rds from ``saveRDS()``) as
Apache Arrow, read by rdarrow's Rust engine without R.

The engine decodes the file straight into Arrow buffers and hands them to
the consumer without a copy through the Arrow C stream interface
(``__arrow_c_stream__``), which pyarrow, Polars and DuckDB take.
"""

from __future__ import annotations

import glob
import os
import warnings
import weakref
from typing import Any, BinaryIO, Dict, List, Optional, Sequence, Union

from . import _rdarrow
from ._rdarrow import (
    CorruptError,
    LimitError,
    NotRDataError,
    RDataError,
    RDataIOError,
    UnsafeError,
    UnsupportedError,
    UsageError,
)

__version__ = _rdarrow.__version__

__all__ = [
    "CorruptError",
    "LimitError",
    "NotRDataError",
    "RDataError",
    "RDataIOError",
    "RDataReader",
    "RDataWarning",
    "UnsafeError",
    "UnsupportedError",
    "UsageError",
    "list_objects",
    "read_anndata",
    "read_objects",
    "read_pandas",
    "read_table",
    "to_h5ad",
    "to_ipc",
    "to_parquet",
    "write_rdata",
    "write_rds",
    "write_sce",
    "write_seurat",
]

PathLike = Union[str, "os.PathLike[str]"]
# where R data is read from: a path, an http(s), object store or fsspec URL,
# bytes, or a binary file object (read in place, never staged)
Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, BinaryIO]


class RDataWarning(UserWarning):
    """Something the conversion changed and the user should know of (it went on)."""


def _path(path: PathLike) -> str:
    p = os.fspath(path)
    if isinstance(p, bytes):
        p = os.fsdecode(p)
    if not isinstance(p, str) or not p:
        raise TypeError("path must be a non-empty string or os.PathLike")
    return p


def _fsspec_url(path: str) -> bool:
    """Whether ``path`` is a URL for fsspec to open (not the engine, which
    reads http(s) and object store URLs itself: its one rule)."""
    if "::" in path:
        return True
    scheme, sep, _ = path.partition("://")
    return bool(sep) and scheme.isidentifier() and _rdarrow.location_of(path) == "local"


class _Opened:
    """A file fsspec opened for a reader, closed when this object goes."""

    def __init__(self, url: str, storage_options: "StorageOptions") -> None:
        try:
            import fsspec
        except ImportError:
            raise ImportError(f"reading {url!r} needs fsspec (pip install fsspec)") from None
        # the OpenFile holds the files a chained URL opens under this one
        self.opener = fsspec.open(url, "rb", **(storage_options or {}))
        self.file = self.opener.open()

    def __del__(self) -> None:
        opener = getattr(self, "opener", None)
        if opener is not None:
            opener.close()


def _seekable(file: Any) -> bool:
    seekable = getattr(file, "seekable", None)
    return bool(seekable and seekable()) and hasattr(file, "tell")


def _source(path: Any, storage_options: "StorageOptions" = None) -> "tuple[Any, Optional[_Opened]]":
    """What the engine reads, and what must be kept while it does: a path,
    an http(s) or object store URL as it is; bytes (``serialize()`` output,
    compressed or not, or a file's bytes) or a binary file object as they
    are (the engine reads the object through its ``readinto()``, seeking
    where it can, never through a temporary copy); another URL (fsspec's,
    ``memory://``, ``gcs://``, ``sftp://``, ``simplecache::s3://...``) as
    the file fsspec opens with ``storage_options``, kept open as long as
    the second value is."""
    if isinstance(path, (bytes, bytearray, memoryview)) or hasattr(path, "read"):
        return path, None
    p = _path(path)
    if _fsspec_url(p):
        opened = _Opened(p, storage_options)
        return opened.file, opened
    return p, None


StorageOptions = Optional[Dict[str, Any]]


def _storage(storage_options: StorageOptions) -> Optional[List["tuple[str, str]"]]:
    """An object store's options (``s3://``, ``gs://``, ``az://`` paths) as
    the engine takes them: (name, value) pairs of strings, in the names the
    Rust ``object_store`` crate uses (``aws_access_key_id``,
    ``endpoint_url``, ``region``, ``allow_http``, ...) or s3fs's (``key``,
    ``secret``, ``token``, ``anon``); s3fs's ``client_kwargs`` give their
    ``endpoint_url`` and ``region_name``. Booleans are ``"true"``/``"false"``."""
    if storage_options is None:
        return None
    if not isinstance(storage_options, dict):
        raise TypeError("storage_options must be a dict of option names and values, or None")
    pairs = []
    for k, v in storage_options.items():
        if not isinstance(k, str):
            raise TypeError("storage_options' names must be strings")
        if k == "client_kwargs" and isinstance(v, dict):
            for ck, cv in v.items():
                name = {"region_name": "region"}.get(ck, ck)
                if name in ("endpoint_url", "region"):
                    pairs.append((name, str(cv)))
            continue
        if isinstance(v, bool):
            v = "true" if v else "false"
        elif v is None:
            continue
        pairs.append((k, str(v)))
    return pairs


def _names(columns: Optional[Sequence[str]]) -> Optional[List[str]]:
    if columns is None:
        return None
    if isinstance(columns, str):
        columns = [columns]
    names = list(columns)
    if not all(isinstance(c, str) for c in names):
        raise TypeError("columns must be a sequence of column names")
    return names


ObjectRef = Union[str, Sequence[Union[str, int]]]


def _object(object: Optional[ObjectRef]) -> Optional[str]:
    """An object's name or path as the engine takes it: a string (a name,
    or a path such as ``"lst$a"``, ``"lst[[2]]"``), or a path's parts
    (``("lst", "a")``, ``("lst", 2)``: names, and positions from 1)."""
    if object is None or isinstance(object, str):
        if object == "":
            raise ValueError("object must not be empty")
        return object
    if isinstance(object, (list, tuple)):
        return _rdarrow.object_path(list(object))
    raise TypeError("object must be a name or object path (str), a sequence of path parts, or None")


class _Capsule:
    """An Arrow C capsule the engine made (a stream or a schema) as an
    object of the Arrow PyCapsule protocol, for pyarrow and Polars to take."""

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self.capsule

    def __arrow_c_schema__(self) -> Any:
        return self.capsule


def _open_table(
    path: Any, object: Optional[ObjectRef], columns: Optional[List[str]], storage_options: StorageOptions
) -> "tuple[Any, Optional[_Opened]]":
    """One object of a file opened to be read by row range and column (the
    engine's ``open_table``), and what must stay open while it is read (an
    fsspec file)."""
    src, keep = _source(path, storage_options)
    return _rdarrow.open_table(src, _object(object), columns, _storage(storage_options)), keep


def _table_schema(table: Any) -> "pyarrow.Schema":  # noqa: F821
    """An opened table's Arrow schema."""
    import pyarrow as pa

    return pa.schema(_Capsule(table.schema()))


def _has_union(t: Any) -> bool:
    """Whether Arrow type ``t`` holds a union at any depth."""
    import pyarrow as pa

    if pa.types.is_union(t):
        return True
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return _has_union(t.value_type)
    if pa.types.is_struct(t):
        return any(_has_union(t.field(i).type) for i in range(t.num_fields))
    return False


def _refuse_unions(schema: Any, consumer: str, hint: str = "") -> None:
    """Raise for the columns of ``schema`` a consumer without union types
    (Polars, Spark) cannot take: lists whose elements differ in type,
    which rdarrow makes dense unions. Never a silently changed value."""
    bad = [f.name for f in schema if _has_union(f.type)]
    if bad:
        names = ", ".join(f"'{b}'" for b in bad)
        raise TypeError(
            f"column{'s' if len(bad) > 1 else ''} {names} hold{'' if len(bad) > 1 else 's'} lists whose "
            f"elements differ in type, an Arrow dense union, which {consumer} has no type for; "
            f"{hint}read it with rdarrow.read_table() (pyarrow) or DuckDB"
        )


def _files_of(
    paths: Union[str, "os.PathLike[str]", Sequence[Union[str, "os.PathLike[str]"]]],
    storage_options: Optional[dict] = None,
) -> List[str]:
    """The files ``paths`` names: a path, a glob pattern, a directory (its
    R data files), an object store URL (``s3://bucket/archive/*.RData``,
    ``**`` across folders; a URL ending in ``/`` for the R data files
    under it, listed from the store),
    an fsspec URL (a glob expanded by fsspec, ``storage_options`` given to
    it), or a list of these, in order (each pattern's matches sorted)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    files: List[str] = []
    storage = _storage(storage_options)
    for p in paths:
        p = os.fspath(p)
        if _fsspec_url(p):
            # another file system's (memory://, zip://...::..., sftp://):
            # its glob expanded by fsspec, each match read through it
            import fsspec.core

            fs, path = fsspec.core.url_to_fs(p, **(storage_options or {}))
            matched = sorted(fs.glob(path)) if glob.has_magic(path) else [path]
            if not matched:
                raise FileNotFoundError(f"no file matches {p!r}")
            # a chained URL's matches keep the chain (zip://x::archive.zip)
            chain = "::" + p.split("::", 1)[1] if "::" in p else ""
            files.extend(fs.unstrip_protocol(m) + chain for m in matched)
        else:
            # the engine's one rule, as R, the command line and DuckDB ask
            # it: a glob's matches (** across folders), a directory's R
            # data files, an object store prefix's or pattern's objects;
            # anything else (a file, an http(s) URL) as it is
            files.extend(_rdarrow.expand_sources(p, storage))
    if not files:
        raise ValueError("no files given")
    return files


def list_objects(
    path: Source, recursive: bool = False, storage_options: StorageOptions = None
) -> List[Dict[str, Any]]:
    """The objects of an R data file, without decoding their values.

    One dict per object: ``name``, ``class`` (R's ``class()``, a list),
    ``type`` (``typeof()``), ``length``, ``rows`` and ``columns`` (for data
    frames and matrices, else ``None``) and ``bytes`` (its size in the
    decompressed stream). An ``.rds`` file's one object is named after the
    file. With ``recursive``, each plain list is followed by what it holds
    (data frames, vectors, lists, to any depth), named by object path
    (``lst$a``, ``lst[[2]]``), which every reader takes as ``object``;
    their ``bytes`` is ``None``. ``storage_options``: see :func:`read_table`.
    """
    src, _opened = _source(path, storage_options)
    return _rdarrow.list_objects(src, bool(recursive), _storage(storage_options))


def read_objects(
    path: Source,
    names: Optional[Sequence[str]] = None,
    storage_options: StorageOptions = None,
    plain: bool = False,
) -> Dict[str, Any]:
    """The objects of an R data file (all, or those named: names or object
    paths such as ``"lst$a"``) as Python values, by name.

    By default each value is what NumPy and pandas users hold (the table
    is in ``rdarrow._values`` and the README): a numeric, integer, logical
    or complex vector a ``numpy.ndarray`` over the engine's own buffer (no
    copy), a ``numpy.ma.MaskedArray`` where R had ``NA``; a matrix or
    array an ``ndarray`` of R's shape in R's column-major order; names a
    ``pandas.Series``, a matrix's dimnames a ``pandas.DataFrame``; a
    factor a ``pandas.Categorical``; Date and POSIXct ``datetime64``
    (POSIXct with a zone a zoned pandas array); a data frame what
    :func:`read_pandas` gives; a Matrix package sparse matrix a
    ``scipy.sparse`` matrix; strings Python strings; lists lists (named
    ones dicts); an S4 object a dict of its class and slots.

    ``plain=True`` gives plain Python values instead, for users without
    NumPy: a vector a list (a named one a dict), ``NA`` ``None`` (a
    double's ``NaN`` stays ``nan``), a factor its levels' strings, a Date a
    ``datetime.date``, a POSIXct an aware ``datetime.datetime`` in UTC, a
    data frame a dict of columns.

    Functions, environments and calls have no value: they are ``None``,
    with an :class:`RDataWarning` saying which kinds were left out.
    """
    if names is not None and not isinstance(names, str):
        names = [n if isinstance(n, str) else _object(n) for n in names]
    src, _opened = _source(path, storage_options)
    values, dropped = _rdarrow.read_objects(src, _names(names), _storage(storage_options), bool(plain))
    if dropped:
        warnings.warn(
            "left out (None): objects of type " + ", ".join(dropped) + ", which have no Python value",
            RDataWarning,
            stacklevel=2,
        )
    from . import _values

    if plain:
        return _values.plain(values)
    return _values.convert(values)


def read_anndata(
    path: Any,
    object: Optional[str] = None,
    assay: Optional[str] = None,
    storage_options: StorageOptions = None,
) -> Any:
    """A single-cell experiment saved by R (a Seurat object, a
    SingleCellExperiment, a (Ranged)SummarizedExperiment) as an
    ``anndata.AnnData`` (several assays: a ``mudata.MuData``); see
    :mod:`rdarrow.anndata` for where each part goes."""
    from . import anndata as _ad

    return _ad.read_anndata(path, object=object, assay=assay, storage_options=storage_options)


def write_sce(
    data: Any,
    path: PathLike,
    compress: str = "gzip",
    compression_level: Optional[int] = None,
    version: int = 3,
    storage_options: StorageOptions = None,
) -> None:
    """Write an ``anndata.AnnData`` (or a ``mudata.MuData``: its other
    modalities as ``altExps``) as a ``SingleCellExperiment`` that R's
    ``readRDS()`` reads, without R; see :mod:`rdarrow.singlecell` for where
    each part goes. A path ending in ``.rds`` gets ``saveRDS()``'s format,
    any other ``save()``'s, the object named after the file (as R's
    ``arrow_to_rdata()`` chooses). ``compress``, ``compression_level`` and
    ``version`` as :func:`write_rds`."""
    from . import singlecell

    _write_experiment(singlecell.sce_object(data), path, compress, compression_level, version, storage_options)


def write_seurat(
    data: Any,
    path: PathLike,
    version: int = 5,
    compress: str = "gzip",
    compression_level: Optional[int] = None,
    format_version: int = 3,
    storage_options: StorageOptions = None,
) -> None:
    """Write an ``anndata.AnnData`` (or a ``mudata.MuData``: an assay per
    modality) as a Seurat object that R's ``readRDS()`` reads, without R:
    ``version=5`` SeuratObject 5's ``Assay5`` (layers), ``version=4`` its
    ``Assay``; see :mod:`rdarrow.singlecell` for where each part goes.
    The path chooses the format as in :func:`write_sce`. ``format_version``
    is R's serialization version (2 or 3)."""
    from . import singlecell

    _write_experiment(
        singlecell.seurat_object(data, version), path, compress, compression_level, format_version, storage_options
    )


def _name_of_file(path: str) -> str:
    """The name an object saved without one takes: the file's, without its
    extension."""
    return _rdarrow.object_name_of(path)


def _write_experiment(
    obj: Any,
    path: PathLike,
    compress: str,
    compression_level: Optional[int],
    version: int,
    storage_options: StorageOptions,
) -> None:
    """A single-cell object written as :func:`write_rds` writes to a path
    ending in ``.rds``; to any other (``.RData``, ``.rda``) as
    :func:`write_rdata` writes, under the file's name (the engine's one
    rule, as R's ``arrow_to_rdata()`` and the command line choose)."""
    kw = dict(compress=compress, compression_level=compression_level, version=version, storage_options=storage_options)
    p = _path(path)
    if _rdarrow.path_is_rds(p):
        write_rds(obj, p, **kw)
    else:
        write_rdata({_name_of_file(p): obj}, p, **kw)  # the object is an S4Value, a dict


def to_h5ad(
    path: Any,
    out: PathLike,
    object: Optional[str] = None,
    assay: Optional[str] = None,
    compression: Optional[str] = None,
    storage_options: StorageOptions = None,
) -> None:
    """Write what :func:`read_anndata` gives as an ``.h5ad`` file with
    anndata's own writer (``python -m rdarrow to-h5ad in.rds -o out.h5ad``)."""
    from . import anndata as _ad

    _ad.to_h5ad(path, out, object=object, assay=assay, compression=compression, storage_options=storage_options)


class RDataReader:
    """One object of an R data file as a stream of Arrow record batches.

    The file is read when the reader is made (errors are raised here); the
    batches are the buffers the engine decoded, handed over without a copy
    to whatever takes an Arrow C stream::

        pyarrow.RecordBatchReader.from_stream(reader)
        polars.DataFrame(reader)
        duckdb.sql("select * from reader")

    ``object`` names the object of an ``.RData`` file (default: its only
    data frame, else its only object); ``columns`` keeps these columns in
    this order; ``chunk_size`` cuts the table into batches of that many
    rows; ``time_unit`` (``"s"``, ``"ms"``, ``"us"``, ``"ns"``) gives every
    POSIXct column timestamps of that unit, rounded (by default each takes
    the coarsest unit that keeps all its values' bits, and one whose values
    no unit keeps stays float64 seconds with its class in the ``"r"``
    metadata). The stream can be taken once; ``__arrow_c_stream__`` reads
    the file again for a second consumer. ``name`` is the object's name,
    ``warnings`` what the conversion changed, ``row_names`` a data frame's
    own row names (``None`` for R's automatic 1, 2, ...).

    ``path`` may be an object store URL (``s3://bucket/key.rds``,
    ``gs://...``, ``az://...``), read as a stream (a lazy-load data base's
    ``.rdb``/``.rdx`` by byte range), with the credentials of the
    environment (``AWS_ACCESS_KEY_ID``, ``AWS_ENDPOINT_URL``, ...) and
    ``storage_options``, a dict of the names the Rust ``object_store``
    crate uses or s3fs's (``key``, ``secret``, ``endpoint_url``,
    ``anon``, ...).
    """

    def __init__(
        self,
        path: Source,
        object: Optional[ObjectRef] = None,
        columns: Optional[Sequence[str]] = None,
        chunk_size: Optional[int] = None,
        time_unit: Optional[str] = None,
        storage_options: StorageOptions = None,
    ) -> None:
        object = _object(object)
        if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
            raise ValueError("chunk_size must be a positive integer or None")
        if time_unit not in (None, "s", "ms", "us", "ns"):
            raise ValueError('time_unit must be None, "s", "ms", "us" or "ns"')
        src, self._opened = _source(path, storage_options)
        self._start = src.tell() if hasattr(src, "read") and _seekable(src) else None
        self._args = (src, object, _names(columns), chunk_size, time_unit, _storage(storage_options))
        (self._capsule, self.name, self.warnings, self._addresses,
         self.row_names) = _rdarrow.read_stream(*self._args)
        for w in self.warnings:
            warnings.warn(w, RDataWarning, stacklevel=2)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The Arrow PyCapsule stream interface (the requested schema is
        not applied: the stream has the schema the R object converts to)."""
        capsule, self._capsule = self._capsule, None
        if capsule is None:
            src = self._args[0]
            if hasattr(src, "read"):
                # a file object is read again from where it stood
                if self._start is None:
                    raise UsageError(
                        "the stream of a file object that cannot seek can be taken once"
                    )
                src.seek(self._start)
            capsule, _, _, self._addresses, _ = _rdarrow.read_stream(*self._args)
        return capsule

    def __repr__(self) -> str:
        return f"RDataReader({self._args[0]!r}, object={self.name!r})"


def read_table(
    path: Source,
    object: Optional[ObjectRef] = None,
    columns: Optional[Sequence[str]] = None,
    time_unit: Optional[str] = None,
    storage_options: StorageOptions = None,
) -> "pyarrow.Table":  # noqa: F821
    """One object of an R data file as a ``pyarrow.Table`` (see
    :class:`RDataReader` for the arguments). The table's schema carries
    rdarrow's ``"r"`` metadata, as arrow R's does, so that the object goes
    back to R as itself. A named list whose elements differ in type is a
    struct of one row, an unnamed one (or a list column whose rows differ)
    a dense union, an S4 object a struct of its slots."""
    import pyarrow as pa

    reader = RDataReader(
        path, object=object, columns=columns, time_unit=time_unit, storage_options=storage_options
    )
    return pa.RecordBatchReader.from_stream(reader).read_all()


def _mask(col: Any) -> Any:
    """The nulls of an Arrow array as a numpy mask."""
    import numpy as np

    if col.null_count:
        return col.is_null().to_numpy(zero_copy_only=False)
    return np.zeros(len(col), dtype=bool)


def _pandas_column(column: Any) -> Any:
    """A column of the types R data mostly has, as the pandas array
    ``read_pandas()`` gives it, made directly (``None`` for other types):
    a double as ``Float64`` whose mask is the column's nulls (R's ``NA``),
    its ``NaN`` kept as values; an integer as ``Int32``; a logical as
    ``boolean``; a string as ``string``; a factor as a ``Categorical``."""
    import pandas as pd
    import pyarrow as pa

    col = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
    t = col.type
    if t == pa.float64():
        return pd.arrays.FloatingArray(col.to_numpy(zero_copy_only=False).copy(), _mask(col))
    if t == pa.int32():
        return pd.arrays.IntegerArray(col.fill_null(0).to_numpy(), _mask(col))
    if t == pa.bool_():
        return pd.arrays.BooleanArray(col.fill_null(False).to_numpy(zero_copy_only=False), _mask(col))
    if t == pa.string():
        return pd.array(col.to_numpy(zero_copy_only=False), dtype=pd.StringDtype())
    # a list column whose rows differ in type (a dense union, which pandas
    # has no block for): each row's Python value
    if _has_union(t):
        import numpy as np

        out = np.empty(len(col), dtype=object)
        out[:] = col.to_pylist()
        return out
    if pa.types.is_dictionary(t) and t.value_type == pa.string():
        return pd.Categorical.from_codes(
            col.indices.fill_null(-1).to_numpy(zero_copy_only=False),
            categories=col.dictionary.to_pandas(),
            ordered=t.ordered,
            validate=False,
        )
    return None


def read_pandas(
    path: Source,
    object: Optional[ObjectRef] = None,
    columns: Optional[Sequence[str]] = None,
    storage_options: StorageOptions = None,
) -> "pandas.DataFrame":  # noqa: F821
    """One data frame of an R data file as a ``pandas.DataFrame``, R's
    meaning kept as far as pandas can hold it: a factor is a
    ``Categorical`` (its levels, unused ones and their order included;
    ordered for an ordered factor), ``NA`` is ``pd.NA`` in nullable
    columns (``Int32``, ``Float64``, ``boolean``, ``string``), apart from
    a double's ``NaN``, which stays ``NaN``; a POSIXct column is
    ``datetime64[ns]`` in its time zone, a Date ``datetime64`` (pandas has
    no date type of its own); R's own row names (not 1, 2, ...) are the
    index."""
    import pyarrow as pa

    reader = RDataReader(
        path, object=object, columns=columns, time_unit="ns", storage_options=storage_options
    )
    table = pa.RecordBatchReader.from_stream(reader).read_all()
    return _pandas_frame(table, reader.row_names)


def _pandas_frame(table: "pyarrow.Table", row_names: Any) -> "pandas.DataFrame":  # noqa: F821
    """A table of an R data frame as a pandas DataFrame (see
    :func:`read_pandas`), ``row_names`` (a list, else automatic) its index."""
    import pandas as pd
    import pyarrow as pa

    mapping = {
        pa.int8(): pd.Int8Dtype(),
        pa.int16(): pd.Int16Dtype(),
        pa.int32(): pd.Int32Dtype(),
        pa.int64(): pd.Int64Dtype(),
        pa.bool_(): pd.BooleanDtype(),
        pa.string(): pd.StringDtype(),
        pa.large_string(): pd.StringDtype(),
    }
    # the usual types made directly (pandas' own conversion would make a
    # double's NaN NA, and costs more than the read on small frames); the
    # others converted by pyarrow together; the frame made once, from all
    # its columns
    names = table.column_names
    direct = [_pandas_column(c) for c in table.columns]
    if len(set(names)) != len(names) or not names:
        df = table.to_pandas(types_mapper=mapping.get, date_as_object=False)
        for i, col in enumerate(direct):
            if col is not None:
                df.isetitem(i, col)
    else:
        others = [n for n, col in zip(names, direct) if col is None]
        rest = table.select(others).to_pandas(types_mapper=mapping.get, date_as_object=False) if others else None
        columns = {n: rest[n] if col is None else col for n, col in zip(names, direct)}
        df = pd.DataFrame(columns, copy=False)
    # R's own row names (not 1..n) as the index
    if isinstance(row_names, list) and len(row_names) == len(df):
        df.index = pd.Index(row_names)
    # the table's schema (R's types and attributes in its "r" metadata), for
    # write_rds() to give back the data frame it was
    _read_frames[id(df)] = (weakref.ref(df), table.schema, table.num_rows)
    weakref.finalize(df, _read_frames.pop, id(df), None)
    return df


# The DataFrames read from R files, by id: each one's Arrow schema (R's
# types, with the "r" metadata) and row count, while the frame lives. Not
# in ``DataFrame.attrs``, which pandas and pyarrow copy into every table.
_read_frames: Dict[int, Any] = {}


def _frame_table(df: Any) -> Any:
    """A DataFrame read from R (unchanged in its columns and rows) as the
    table of the data frame it was: its columns cast back to the types
    they had, and the "r" metadata; ``None`` for any other."""
    import pyarrow as pa

    held = _read_frames.get(id(df))
    if held is None or held[0]() is not df:
        return None
    _, schema, rows = held
    if len(df) != rows or [str(c) for c in df.columns] != schema.names or len(set(schema.names)) != len(schema.names):
        return None
    try:
        t = pa.Table.from_pandas(df, preserve_index=False)
        return t.cast(schema).replace_schema_metadata(schema.metadata)
    except (pa.ArrowException, ValueError, TypeError):
        return None


def to_parquet(
    path: Source,
    sink: PathLike,
    object: Optional[ObjectRef] = None,
    columns: Optional[Sequence[str]] = None,
    compression: str = "zstd",
    compression_level: Optional[int] = None,
    row_group_size: Optional[int] = None,
    memory: Optional[int] = None,
    storage_options: StorageOptions = None,
) -> None:
    """Write one object of an R data file as a Parquet file, row group by
    row group (as R's ``rdata_to_parquet()``): memory holds about one row
    group of every column, never the table (``memory``, bytes, default
    1 GiB). ``compression``: ``"zstd"``, ``"snappy"``, ``"gzip"``,
    ``"lz4"`` or ``"uncompressed"``. The file appears only when complete;
    a sink named ``.arrow``/``.feather`` is an error naming
    :func:`to_ipc`."""
    if row_group_size is not None and (not isinstance(row_group_size, int) or row_group_size < 1):
        raise ValueError("row_group_size must be a positive integer or None")
    src, _opened = _source(path, storage_options)
    _, _, warns = _rdarrow.to_parquet(
        src, _path(sink), _object(object), _names(columns), compression,
        compression_level, row_group_size, memory, _storage(storage_options),
    )
    for w in warns:
        warnings.warn(w, RDataWarning, stacklevel=2)


def to_ipc(
    path: Source,
    sink: PathLike,
    object: Optional[ObjectRef] = None,
    columns: Optional[Sequence[str]] = None,
    format: str = "file",
    compression: str = "uncompressed",
    chunk_size: Optional[int] = 65536,
    memory: Optional[int] = None,
    storage_options: StorageOptions = None,
) -> None:
    """Write one object of an R data file as an Arrow IPC file
    (``format="file"``, Feather version 2) or stream (``"stream"``), in
    record batches of ``chunk_size`` rows (as R's ``rdata_to_ipc()``);
    ``compression``: ``"uncompressed"``, ``"lz4"`` or ``"zstd"``. A sink
    named ``.parquet`` is an error naming :func:`to_parquet`."""
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError("chunk_size must be a positive integer or None")
    src, _opened = _source(path, storage_options)
    _, _, warns = _rdarrow.to_ipc(
        src, _path(sink), _object(object), _names(columns), format, compression, chunk_size, memory,
        _storage(storage_options),
    )
    for w in warns:
        warnings.warn(w, RDataWarning, stacklevel=2)


def _stream_of(data: Any) -> Any:
    """An Arrow C stream capsule of ``data``: anything with
    ``__arrow_c_stream__`` (pyarrow, Polars, DuckDB, ...), or a pandas
    DataFrame (its index kept as a column unless it is the default
    0, 1, 2, ...)."""
    import pyarrow as pa

    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is optional
        pd = None
    if hasattr(data, "__arrow_c_stream__") and not (pd is not None and isinstance(data, pd.DataFrame)):
        return data.__arrow_c_stream__()
    if pd is not None and isinstance(data, pd.DataFrame):
        table = _frame_table(data)
        if table is not None:
            return table.__arrow_c_stream__()
        keep_index = not isinstance(data.index, pd.RangeIndex)
        return pa.Table.from_pandas(data, preserve_index=keep_index).__arrow_c_stream__()
    if hasattr(data, "__arrow_c_array__"):
        return pa.table(data).__arrow_c_stream__()
    raise TypeError(
        f"cannot write a {type(data).__name__}: expected an object with __arrow_c_stream__ "
        "(a pyarrow Table or RecordBatchReader, a Polars DataFrame, a DuckDB result, "
        "an rdarrow RDataReader) or a pandas DataFrame"
    )


def _value_of(value: Any, place: str) -> Any:
    """What the engine writes of ``value``: a table's Arrow C stream, or
    the node of any other value (``_values.to_r``: the mapping's table)."""
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is optional
        pd = None
    if pd is not None and isinstance(value, pd.DataFrame) and not value.attrs.get("rdarrow.matrix"):
        return _stream_of(value)
    from . import _values

    node = _values.to_r(value, place)
    if isinstance(node, tuple) and node[0] == "frame" and not node[2]:
        return node[1]  # a table: converted with the GIL released
    return node


def _check_write(path: PathLike, compress: str, compression_level: Optional[int], version: int) -> str:
    if not isinstance(compress, str):
        raise TypeError("compress must be a string")
    if compression_level is not None and (
        not isinstance(compression_level, int) or isinstance(compression_level, bool)
    ):
        raise TypeError("compression_level must be an integer or None")
    # names and levels: the engine's one rule
    _rdarrow.check_compression(compress, compression_level)
    if version not in (2, 3):
        raise ValueError("version must be 2 or 3")
    return _path(path)


def write_rdata(
    data: Any,
    path: PathLike,
    name: Optional[str] = None,
    compress: str = "gzip",
    compression_level: Optional[int] = None,
    version: int = 3,
    storage_options: StorageOptions = None,
) -> None:
    """Write Python values as an ``.RData`` file that R's ``load()`` reads.

    ``data`` is one value, saved under ``name`` (default: the file's name
    without extension), or a dict of values, each saved under its key, in
    order. A table (anything with ``__arrow_c_stream__``: a pyarrow Table,
    a Polars DataFrame, a DuckDB result; or a pandas DataFrame) becomes an
    R data frame with the types of rdarrow's mapping (a dictionary of
    strings a factor, timestamps POSIXct, ...); a table or DataFrame read
    from an R file by rdarrow goes back as the object it was. Any other
    value becomes the R object of ``read_objects()``'s mapping read from
    right to left (the table in ``rdarrow._values`` and the README): NumPy
    arrays vectors, matrices and arrays (NumPy's memory as it is when it
    is in R's column-major order), masked and pandas nullable arrays with
    ``NA``, a Categorical a factor, datetime64 Date or POSIXct,
    timedelta64 difftime, scipy.sparse matrices dgCMatrix, an
    ``xarray.DataArray`` an array with dimnames, a dict a named list, a
    list a list (a list of ``str``/``None`` a character vector), scalars
    vectors of length 1, and what ``read_objects()`` read as it was. A
    value of no R equivalent is a ``TypeError`` naming its place. ``compress`` is
    ``"gzip"`` (R's default), ``"bzip2"``, ``"xz"`` or ``"none"``;
    ``compression_level`` None is R's default (``save()``'s: gzip 6,
    bzip2 and xz 9; for :func:`write_rds`, ``saveRDS()``'s: xz 6). The file
    is one gzip member, bzip2 stream or xz stream, compressed on every core,
    that every reader of R's files reads, and appears only when complete.
    """
    p = _check_write(path, compress, compression_level, version)
    if isinstance(data, dict):
        if not data:
            raise ValueError("data is an empty dict: nothing to save")
        items = list(data.items())
    else:
        items = [(_name_of_file(p) if name is None else name, data)]
    objects = []
    for key, value in items:
        if not isinstance(key, str) or not key:
            raise TypeError("object names must be non-empty strings")
        objects.append((key, _value_of(value, key)))
    _rdarrow.write_rdata(
        objects, p, rds=False, compress=compress, level=compression_level, version=version,
        storage=_storage(storage_options),
    )


def write_rds(
    data: Any,
    path: PathLike,
    compress: str = "gzip",
    compression_level: Optional[int] = None,
    version: int = 3,
    storage_options: StorageOptions = None,
) -> None:
    """Write one value (a table, or any value of the mapping) as an ``.rds``
    file that R's ``readRDS()`` reads (see :func:`write_rdata` for the
    values and the arguments)."""
    p = _check_write(path, compress, compression_level, version)
    _rdarrow.write_rdata(
        [("", _value_of(data, ""))], p, rds=True, compress=compress, level=compression_level, version=version,
        storage=_storage(storage_options),
    )
