"""R data files (.RData/.rda from ``save()``, .rds from ``saveRDS()``) as
Apache Arrow, read by rdarrow's Rust engine without R.

The engine decodes the file straight into Arrow buffers and hands them to
the consumer without a copy through the Arrow C stream interface
(``__arrow_c_stream__``), which pyarrow, Polars and DuckDB take.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Dict, List, Optional, Sequence, Union

from . import _rdarrow
from ._rdarrow import (
    CorruptError,
    LimitError,
    NotRDataError,
    RDataError,
    RDataIOError,
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
    "UnsupportedError",
    "UsageError",
    "list_objects",
    "read_table",
]

PathLike = Union[str, "os.PathLike[str]"]


class RDataWarning(UserWarning):
    """Something the conversion changed and the user should know of (it went on)."""


def _path(path: PathLike) -> str:
    p = os.fspath(path)
    if isinstance(p, bytes):
        p = os.fsdecode(p)
    if not isinstance(p, str) or not p:
        raise TypeError("path must be a non-empty string or os.PathLike")
    return p


def _names(columns: Optional[Sequence[str]]) -> Optional[List[str]]:
    if columns is None:
        return None
    if isinstance(columns, str):
        columns = [columns]
    names = list(columns)
    if not all(isinstance(c, str) for c in names):
        raise TypeError("columns must be a sequence of column names")
    return names


def list_objects(path: PathLike) -> List[Dict[str, Any]]:
    """The objects of an R data file, without decoding their values.

    One dict per object: ``name``, ``class`` (R's ``class()``, a list),
    ``type`` (``typeof()``), ``length``, ``rows`` and ``columns`` (for data
    frames and matrices, else ``None``) and ``bytes`` (its size in the
    decompressed stream). An ``.rds`` file's one object is named after the
    file.
    """
    return _rdarrow.list_objects(_path(path))


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
    rows. The stream can be taken once; ``__arrow_c_stream__`` reads the
    file again for a second consumer.
    """

    def __init__(
        self,
        path: PathLike,
        object: Optional[str] = None,
        columns: Optional[Sequence[str]] = None,
        chunk_size: Optional[int] = None,
    ) -> None:
        if object is not None and not isinstance(object, str):
            raise TypeError("object must be a string (the object's name) or None")
        if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
            raise ValueError("chunk_size must be a positive integer or None")
        self._args = (_path(path), object, _names(columns), chunk_size)
        self._capsule, self.name, self.warnings = _rdarrow.read_stream(*self._args)
        for w in self.warnings:
            warnings.warn(w, RDataWarning, stacklevel=2)

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        """The Arrow PyCapsule stream interface (the requested schema is
        not applied: the stream has the schema the R object converts to)."""
        capsule, self._capsule = self._capsule, None
        if capsule is None:
            capsule, _, _ = _rdarrow.read_stream(*self._args)
        return capsule

    def __repr__(self) -> str:
        return f"RDataReader({self._args[0]!r}, object={self.name!r})"


def read_table(
    path: PathLike,
    object: Optional[str] = None,
    columns: Optional[Sequence[str]] = None,
) -> "pyarrow.Table":  # noqa: F821
    """One object of an R data file as a ``pyarrow.Table`` (see
    :class:`RDataReader` for the arguments). The table's schema carries
    rdarrow's ``"r"`` metadata, as arrow R's does, so that the object goes
    back to R as itself."""
    import pyarrow as pa

    reader = RDataReader(path, object=object, columns=columns)
    return pa.RecordBatchReader.from_stream(reader).read_all()
