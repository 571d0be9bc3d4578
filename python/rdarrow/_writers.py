"""Writers of R data files from Python values: tables, and any value of the mapping
(``_values``), as ``save()`` and ``saveRDS()`` write them."""

from __future__ import annotations

import sys
from typing import Any, Optional

from . import _rdarrow
from ._pandas import stream_of
from ._sources import PathLike, StorageOptions, as_path, name_of_file, storage_pairs


def value_of(value: Any, place: str) -> Any:
    """What the engine writes of ``value``: a table's Arrow C stream, or
    the node of any other value (``_to_r.to_r``: the mapping's table)."""
    # (a pandas value exists only once pandas is imported)
    pd = sys.modules.get("pandas")
    if pd is not None and isinstance(value, pd.DataFrame) and not value.attrs.get("rdarrow.matrix"):
        return stream_of(value)
    from . import _to_r

    node = _to_r.to_r(value, place)
    if isinstance(node, tuple) and node[0] == "frame" and not node[2]:
        return node[1]  # a table: converted with the GIL released
    return node


def check_write(path: PathLike, compress: Optional[str], compression_level: Optional[int], version: int) -> str:
    if compress is not None and not isinstance(compress, str):
        raise TypeError("compress must be a string or None")
    if compression_level is not None and (
        not isinstance(compression_level, int) or isinstance(compression_level, bool)
    ):
        raise TypeError("compression_level must be an integer or None")
    # names and levels for this path: the engine's one rule (a .qs2 or
    # .qdata file takes its container, compressed with zstd)
    _rdarrow.check_compression(compress, compression_level, str(path))
    if version not in (2, 3):
        raise ValueError("version must be 2 or 3")
    return as_path(path)


def write_rdata(
    data: Any,
    path: PathLike,
    name: Optional[str] = None,
    compress: Optional[str] = None,
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
    None (R's default, gzip; zstd for ``.qs2`` and ``.qdata``), ``"gzip"``,
    ``"bzip2"``, ``"xz"`` or ``"none"``; a path ending in ``.qs`` (qs's
    format, which rdarrow reads but does not write) is an error pointing to
    ``.qs2``;
    ``compression_level`` None is R's default (``save()``'s: gzip 6,
    bzip2 and xz 9; for :func:`write_rds`, ``saveRDS()``'s: xz 6). The file
    is one gzip member, bzip2 stream or xz stream, compressed on every core,
    that every reader of R's files reads, and appears only when complete.
    """
    p = check_write(path, compress, compression_level, version)
    if isinstance(data, dict):
        if not data:
            raise ValueError("data is an empty dict: nothing to save")
        items = list(data.items())
    else:
        items = [(name_of_file(p) if name is None else name, data)]
    objects = []
    for key, value in items:
        if not isinstance(key, str) or not key:
            raise TypeError("object names must be non-empty strings")
        objects.append((key, value_of(value, key)))
    _rdarrow.write_rdata(
        objects, p, rds=False, compress=compress, level=compression_level, version=version,
        storage=storage_pairs(storage_options),
    )


def write_rds(
    data: Any,
    path: PathLike,
    compress: Optional[str] = None,
    compression_level: Optional[int] = None,
    version: int = 3,
    storage_options: StorageOptions = None,
) -> None:
    """Write one value (a table, or any value of the mapping) as an ``.rds``
    file that R's ``readRDS()`` reads (see :func:`write_rdata` for the
    values and the arguments). A path ending in ``.qs2`` gives a qs2 file
    (``qs2::qs_read()``), ``.qdata`` a qdata file (``qs2::qd_read()``),
    compressed with zstd (``compress`` None or ``"zstd"``, any other an
    error; ``compression_level`` 1 to 22, default 3)."""
    p = check_write(path, compress, compression_level, version)
    _rdarrow.write_rdata(
        [("", value_of(data, ""))], p, rds=True, compress=compress, level=compression_level, version=version,
        storage=storage_pairs(storage_options),
    )
