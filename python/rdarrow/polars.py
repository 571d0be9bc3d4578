"""R data as Polars lazy frames, through Polars' IO plugins::

    import rdarrow.polars
    lf = rdarrow.polars.scan_rdata("survey.rds")
    lf.select("score").filter(pl.col("score") > 3).head(10).collect()

Each file is opened when the scan is made (its schema and row count
known; a compressed file inflated once into a spill, a data frame's
payloads left where they lie) and read by row range when the query runs:
only the columns the query needs (its projection and its predicate's)
are decoded and converted, batch by batch (``batch_size`` rows, else the
memory budget's row group); the predicate filters each batch; a row
limit stops the reading once it is met. Globs, directories and lists of
files scan as one frame, columns matched by name (a file without a
column gives nulls there). ``salvage=True`` reads what is intact of a
damaged file, as :func:`rdarrow.read_table` does, with an
:class:`rdarrow.RDataWarning` when the scan is made saying what was lost.
"""

from __future__ import annotations

import warnings
from typing import Any, Dict, Iterator, List, Optional

from ._optional import need_all

# the package this module serves, named with its install when missing
need_all("rdarrow.polars", ["polars"], "polars")

from ._errors import RDataWarning, UsageError  # noqa: E402
from ._arrow import Capsule, open_table, refuse_unions, table_schema  # noqa: E402
from ._sources import files_of  # noqa: E402

__all__ = ["read_rdata", "scan_rdata"]


def _opened(path: Any, object: Optional[str], storage_options: Optional[dict], salvage: bool = False) -> List[Any]:
    """Each file ``path`` names, opened (with what keeps it open); what a
    salvaging read of each lost said as it is opened."""
    if not isinstance(salvage, bool):
        raise UsageError("salvage must be True or False")
    if isinstance(path, (bytes, bytearray, memoryview)) or hasattr(path, "read"):
        sources = [path]
    else:
        sources = files_of(path, storage_options)
    out = []
    for src in sources:
        t, keep = open_table(src, object, None, storage_options, salvage)
        for w in t.warnings:
            warnings.warn(w, RDataWarning, stacklevel=3)
        out.append((t, keep))
    return out


def _schema_of(t: Any) -> Dict[str, Any]:
    import polars as pl
    import pyarrow as pa

    schema = table_schema(t)
    refuse_unions(schema, "Polars")
    # (a table of no batches: pyarrow makes no empty array of a permuted
    # arrow.fixed_shape_tensor, which schema.empty_table() would need)
    return dict(pl.from_arrow(pa.Table.from_batches([], schema)).schema)


def scan_rdata(
    path: Any,
    object: Optional[Any] = None,
    storage_options: Optional[dict] = None,
    salvage: bool = False,
) -> "pl.LazyFrame":  # noqa: F821
    """A ``polars.LazyFrame`` of one data frame of each R data file
    ``path`` names (a file, bytes, a file object, a URL, a glob, a
    directory, a list), read as the query asks (see the module). ``object``
    names the data frame of an ``.RData`` file or its object path
    (default: each file's only data frame); ``storage_options`` as
    :func:`rdarrow.read_table` takes them; ``salvage``: see the module.
    Types are rdarrow's mapping as ``pl.from_arrow(rdarrow.read_table(...))``
    gives them."""
    import polars as pl
    from polars.io.plugins import register_io_source

    opened = _opened(path, object, storage_options, salvage)
    schemas = [_schema_of(t) for t, _ in opened]
    union: Dict[str, Any] = {}
    for s in schemas:
        for name, dtype in s.items():
            union.setdefault(name, dtype)

    def source(
        with_columns: Optional[List[str]],
        predicate: Optional["pl.Expr"],
        n_rows: Optional[int],
        batch_size: Optional[int],
    ) -> Iterator["pl.DataFrame"]:
        want = list(union) if with_columns is None else list(with_columns)
        need = list(want)
        if predicate is not None:
            need += [c for c in predicate.meta.root_names() if c not in need]
        left = n_rows
        for (t, _), schema in zip(opened, schemas):
            names = list(schema)
            present = [c for c in need if c in schema]
            if not need:
                # a count: the rows of the first column carry the height
                present = names[:1]
            idx = [names.index(c) for c in present]
            step = max(1, batch_size or t.group_rows)
            start = 0
            while start < t.num_rows or (start == 0 and t.num_rows == 0):
                if left is not None and left <= 0:
                    return
                length = min(step, t.num_rows - start)
                if left is not None and predicate is None:
                    length = min(length, left)
                if present:
                    df = pl.DataFrame(Capsule(t.read(idx, start, length)))
                else:
                    df = pl.DataFrame({c: pl.Series(c, [None] * length, dtype=union[c]) for c in need})
                if not need:
                    yield df
                    start += max(length, 1)
                    continue
                df = df.with_columns(
                    [pl.lit(None, dtype=union[c]).alias(c) for c in need if c not in schema]
                    + [pl.col(c).cast(union[c]) for c in present if schema[c] != union[c]]
                ).select(need)
                if predicate is not None:
                    df = df.filter(predicate)
                df = df.select(want)
                if left is not None:
                    df = df.head(left)
                    left -= df.height
                yield df
                start += max(length, 1)

    lf = register_io_source(source, schema=union, explain_name="rdarrow")
    lf._rdarrow_opened = opened  # the files stay open while the frame lives
    return lf


def read_rdata(
    path: Any,
    object: Optional[Any] = None,
    columns: Optional[List[str]] = None,
    storage_options: Optional[dict] = None,
    salvage: bool = False,
) -> "pl.DataFrame":  # noqa: F821
    """:func:`scan_rdata` collected (``columns``: these, in this order)."""
    lf = scan_rdata(path, object=object, storage_options=storage_options, salvage=salvage)
    if columns is not None:
        lf = lf.select(list(columns))
    return lf.collect()
