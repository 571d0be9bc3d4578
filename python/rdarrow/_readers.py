"""Readers of R data files: listings, Python values, Arrow streams and tables, and
Parquet and IPC files written from them."""

from __future__ import annotations

import warnings
from typing import Any, Dict, List, Optional, Sequence

from . import _rdarrow

from ._errors import RDataWarning, UsageError, note
from ._pandas import pandas_frame
from ._sources import (
    ObjectRef,
    Source,
    StorageOptions,
    as_path,
    column_names,
    engine_source,
    object_path_of,
    seekable,
    storage_pairs,
)


def list_objects(
    path: Source,
    recursive: bool = False,
    storage_options: StorageOptions = None,
    salvage: bool = False,
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
    ``salvage``: see :func:`read_objects`.
    """
    src, _opened = engine_source(path, storage_options)
    listed, damage = _rdarrow.list_objects(
        src, bool(recursive), storage_pairs(storage_options), _salvage(salvage)
    )
    _warn_damage(damage, path)
    return listed


def _salvage(salvage: Any) -> bool:
    if not isinstance(salvage, bool):
        raise UsageError("salvage must be True or False")
    return salvage


def _warn_damage(damage: Optional[str], path: Any) -> None:
    """Warn (RDataWarning) of what a salvaging read of a damaged file lost."""
    if damage:
        label = f"{path}: " if isinstance(path, str) else ""
        note(label + damage, stacklevel=4)


def read_objects(
    path: Source,
    names: Optional[Sequence[str]] = None,
    storage_options: StorageOptions = None,
    plain: bool = False,
    as_tensor: bool = False,
    salvage: bool = False,
    object: Optional[Any] = None,
) -> Dict[str, Any]:
    """The objects of an R data file (all, or those named: names or object
    paths such as ``"lst$a"``) as Python values, by name. ``object`` names
    them as every other reader's ``object`` does (a name or object path, or
    a list of them); ``names`` is its older name.

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

    ``as_tensor=True`` gives each integer, logical, double, complex or raw
    array (a vector with ``dim``) as a ``pyarrow.Tensor`` over the engine's
    buffer instead, laid out as :func:`to_tensor` lays it out (R's values
    as R holds them, ``NA`` included, in R's column-major strides).

    Functions, environments and calls have no value: they are ``None``,
    with an :class:`RDataWarning` saying which kinds were left out.

    A damaged file (cut short, or failing a checksum its compression
    carries: gzip's CRC-32 and length, bzip2's CRCs, xz's checks, a zstd
    frame's checksum, the hashes of qs and qs2) raises
    :class:`CorruptError`, never gives different data. ``salvage=True``
    recovers what was read whole before the damage instead: the objects
    before the damaged one, and of a list (a data frame too) the elements
    (columns) before the damaged one, as a list without names or class
    (R stores them after the elements); a file that parses but fails its
    checksum is given as read. An :class:`RDataWarning` says what was lost
    and where (object, element, byte). Every reader takes ``salvage``.
    """
    if object is not None:
        if names is not None:
            raise UsageError("give object or names (its older name), not both")
        names = [object] if isinstance(object, str) else object
    if names is not None and not isinstance(names, str):
        names = [n if isinstance(n, str) else object_path_of(n) for n in names]
    src, _opened = engine_source(path, storage_options)
    values, dropped, damage = _rdarrow.read_objects(
        src, column_names(names), storage_pairs(storage_options), bool(plain), bool(as_tensor),
        _salvage(salvage),
    )
    _warn_damage(damage, path)
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
    own row names (``None`` for R's automatic 1, 2, ...), ``index_name``
    the name of the pandas index they were written from (else ``None``).

    ``path`` may be an object store URL (``s3://bucket/key.rds``,
    ``gs://...``, ``az://...``), read as a stream (a lazy-load data base's
    ``.rdb``/``.rdx`` by byte range), with the credentials of the
    environment (``AWS_ACCESS_KEY_ID``, ``AWS_ENDPOINT_URL``, ...) and
    ``storage_options``, a dict of the names the Rust ``object_store``
    crate uses or s3fs's (``key``, ``secret``, ``endpoint_url``,
    ``anon``, ...). ``salvage``: see :func:`read_objects` (what was lost
    is the first of ``warnings``).
    """

    def __init__(
        self,
        path: Source,
        object: Optional[ObjectRef] = None,
        columns: Optional[Sequence[str]] = None,
        chunk_size: Optional[int] = None,
        time_unit: Optional[str] = None,
        storage_options: StorageOptions = None,
        salvage: bool = False,
    ) -> None:
        object = object_path_of(object)
        if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
            raise ValueError("chunk_size must be a positive integer or None")
        if time_unit not in (None, "s", "ms", "us", "ns"):
            raise ValueError('time_unit must be None, "s", "ms", "us" or "ns"')
        src, self._opened = engine_source(path, storage_options)
        self._start = src.tell() if hasattr(src, "read") and seekable(src) else None
        self._args = (src, object, column_names(columns), chunk_size, time_unit, storage_pairs(storage_options),
                      _salvage(salvage))
        (self._capsule, self.name, self.warnings, self._addresses,
         self.row_names, self.index_name) = _rdarrow.read_stream(*self._args)
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
            capsule, _, _, self._addresses, _, _ = _rdarrow.read_stream(*self._args)
        return capsule

    def __repr__(self) -> str:
        return f"RDataReader({self._args[0]!r}, object={self.name!r})"


def read_table(
    path: Source,
    object: Optional[ObjectRef] = None,
    columns: Optional[Sequence[str]] = None,
    time_unit: Optional[str] = None,
    storage_options: StorageOptions = None,
    salvage: bool = False,
) -> "pyarrow.Table":  # noqa: F821
    """One object of an R data file as a ``pyarrow.Table`` (see
    :class:`RDataReader` for the arguments). The table's schema carries
    rdarrow's ``"r"`` metadata, as arrow R's does, so that the object goes
    back to R as itself. A named list whose elements differ in type is a
    struct of one row, an unnamed one (or a list column whose rows differ)
    a dense union, an S4 object a struct of its slots."""
    import pyarrow as pa

    reader = RDataReader(
        path, object=object, columns=columns, time_unit=time_unit, storage_options=storage_options,
        salvage=salvage,
    )
    return pa.RecordBatchReader.from_stream(reader).read_all()


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
    salvage: bool = False,
) -> None:
    """Write one object of an R data file as a Parquet file, row group by
    row group (as R's ``rdata_to_parquet()``): memory holds about one row
    group of every column, never the table (``memory``, bytes, default
    1 GiB). ``compression``: ``"zstd"``, ``"snappy"``, ``"gzip"``,
    ``"lz4"`` or ``"uncompressed"``. The file appears only when complete;
    a sink named ``.arrow``/``.feather`` is an error naming
    :func:`to_ipc`. ``salvage``: see :func:`read_objects` (what was lost
    is an :class:`RDataWarning`)."""
    if row_group_size is not None and (not isinstance(row_group_size, int) or row_group_size < 1):
        raise ValueError("row_group_size must be a positive integer or None")
    src, _opened = engine_source(path, storage_options)
    _, _, warns = _rdarrow.to_parquet(
        src, as_path(sink), object_path_of(object), column_names(columns), compression,
        compression_level, row_group_size, memory, storage_pairs(storage_options), _salvage(salvage),
    )
    for w in warns:
        warnings.warn(w, RDataWarning, stacklevel=2)


def to_tensor(
    path: Source,
    sink: Optional[PathLike] = None,
    object: Optional[ObjectRef] = None,
    storage_options: StorageOptions = None,
    salvage: bool = False,
) -> Any:
    """One R array (matrix, array, or vector as one dimension; integer,
    logical, double, complex or raw) of an R data file as an Arrow tensor,
    as R's ``rdata_to_tensor()`` writes it: the values as R holds them
    (``NA`` as R's bit pattern), with R's column-major strides, so no
    value is transposed or copied; ``names(dimnames)`` the dimensions'
    names. Logicals are int32, an integer64 int64, raw uint8; a complex
    array is float64 with a last dimension of 2 (real, imaginary:
    ``t.to_numpy().view(numpy.complex128)[..., 0]``).

    With ``sink``, writes an Arrow Tensor message there (what
    ``pyarrow.ipc.read_tensor()`` reads) and returns ``None``; without,
    returns a ``pyarrow.Tensor`` over the engine's buffer. ``object``
    names the array of an ``.RData`` file (default: its only array).
    ``salvage``: see :func:`read_objects`; an array is taken from a damaged
    file only whole (its data and ``dim`` read), with an
    :class:`RDataWarning` saying what was lost: the array the damage is in
    is an error naming it, and a damaged ``.RData`` file needs ``object``
    (the arrays after the damage are lost, so its only array is not
    known)."""
    src, _opened = engine_source(path, storage_options)
    sink_path = None if sink is None else as_path(sink)
    _, t, damage = _rdarrow.to_tensor(
        src, sink_path, object_path_of(object), storage_pairs(storage_options), _salvage(salvage)
    )
    _warn_damage(damage, path)
    if t is None:
        return None
    from . import _values

    return _values.tensor(t)


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
    salvage: bool = False,
) -> None:
    """Write one object of an R data file as an Arrow IPC file
    (``format="file"``, Feather version 2) or stream (``"stream"``), in
    record batches of ``chunk_size`` rows (as R's ``rdata_to_ipc()``);
    ``compression``: ``"uncompressed"``, ``"lz4"`` or ``"zstd"``. A sink
    named ``.parquet`` is an error naming :func:`to_parquet`.
    ``salvage``: see :func:`read_objects`."""
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError("chunk_size must be a positive integer or None")
    src, _opened = engine_source(path, storage_options)
    _, _, warns = _rdarrow.to_ipc(
        src, as_path(sink), object_path_of(object), column_names(columns), format, compression, chunk_size, memory,
        storage_pairs(storage_options), _salvage(salvage),
    )
    for w in warns:
        warnings.warn(w, RDataWarning, stacklevel=2)


def read_pandas(
    path: Source,
    object: Optional[ObjectRef] = None,
    columns: Optional[Sequence[str]] = None,
    storage_options: StorageOptions = None,
    salvage: bool = False,
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
        path, object=object, columns=columns, time_unit="ns", storage_options=storage_options,
        salvage=salvage,
    )
    table = pa.RecordBatchReader.from_stream(reader).read_all()
    return pandas_frame(table, reader.row_names, reader.index_name)
