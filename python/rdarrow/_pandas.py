"""R data frames as pandas DataFrames, and the DataFrames read from R files known
again when they are written back."""

from __future__ import annotations

import weakref
from typing import Any, Dict

from ._arrow import has_union


def null_mask(col: Any) -> Any:
    """The nulls of an Arrow array as a numpy mask."""
    import numpy as np

    if col.null_count:
        return col.is_null().to_numpy(zero_copy_only=False)
    return np.zeros(len(col), dtype=bool)


def pandas_column(column: Any) -> Any:
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
        return pd.arrays.FloatingArray(col.to_numpy(zero_copy_only=False).copy(), null_mask(col))
    if t == pa.int32():
        return pd.arrays.IntegerArray(col.fill_null(0).to_numpy(), null_mask(col))
    if t == pa.bool_():
        return pd.arrays.BooleanArray(col.fill_null(False).to_numpy(zero_copy_only=False), null_mask(col))
    if t == pa.string():
        return pd.array(col.to_numpy(zero_copy_only=False), dtype=pd.StringDtype())
    # a list column whose rows differ in type (a dense union, which pandas
    # has no block for): each row's Python value
    if has_union(t):
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


def pandas_frame(table: "pyarrow.Table", row_names: Any, index_name: Any = None) -> "pandas.DataFrame":  # noqa: F821
    """A table of an R data frame as a pandas DataFrame (see
    :func:`read_pandas`), ``row_names`` (a list, else automatic) its index,
    named ``index_name`` (the pandas index the row names were written
    from)."""
    from ._optional import need

    pd = need("pandas", "a data frame as a pandas DataFrame", "or read_objects(..., plain=True) for plain values")
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
    direct = [pandas_column(c) for c in table.columns]
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
    # R's own row names (not 1..n) as the index, with the name of the
    # pandas index they were written from
    if isinstance(row_names, list) and len(row_names) == len(df):
        df.index = pd.Index(row_names, name=index_name)
    elif index_name is not None:
        df.index.name = index_name
    # the table's schema (R's types and attributes in its "r" metadata), for
    # write_rds() to give back the data frame it was (while its index is
    # the one read)
    _read_frames[id(df)] = (weakref.ref(df), table.schema, table.num_rows, df.index, df.index.name)
    weakref.finalize(df, _read_frames.pop, id(df), None)
    return df


# The DataFrames read from R files, by id: each one's Arrow schema (R's
# types, with the "r" metadata) and row count, while the frame lives. Not
# in ``DataFrame.attrs``, which pandas and pyarrow copy into every table.
_read_frames: Dict[int, Any] = {}


def frame_table(df: Any) -> Any:
    """A DataFrame read from R (unchanged in its columns and rows) as the
    table of the data frame it was: its columns cast back to the types
    they had, and the "r" metadata; ``None`` for any other."""
    import pyarrow as pa

    held = _read_frames.get(id(df))
    if held is None or held[0]() is not df:
        return None
    _, schema, rows, index, name = held
    if (
        len(df) != rows
        or [str(c) for c in df.columns] != schema.names
        or len(set(schema.names)) != len(schema.names)
        or df.index is not index
        or df.index.name != name
    ):
        return None
    try:
        t = pa.Table.from_pandas(df, preserve_index=False)
        return t.cast(schema).replace_schema_metadata(schema.metadata)
    except (pa.ArrowException, ValueError, TypeError):
        return None


def stream_of(data: Any) -> Any:
    """An Arrow C stream capsule of ``data``: anything with
    ``__arrow_c_stream__`` (pyarrow, Polars, DuckDB, ...), or a pandas
    DataFrame (its index where pyarrow's ``"pandas"`` metadata says, which
    the engine writes as R's row names)."""
    import pyarrow as pa

    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is optional
        pd = None
    if hasattr(data, "__arrow_c_stream__") and not (pd is not None and isinstance(data, pd.DataFrame)):
        return data.__arrow_c_stream__()
    if pd is not None and isinstance(data, pd.DataFrame):
        table = frame_table(data)
        if table is not None:
            return table.__arrow_c_stream__()
        # the index in pyarrow's "pandas" metadata (a RangeIndex) or as
        # columns it names there: the engine makes it R's row names
        return pa.Table.from_pandas(data, preserve_index=None).__arrow_c_stream__()
    if hasattr(data, "__arrow_c_array__"):
        return pa.table(data).__arrow_c_stream__()
    raise TypeError(
        f"cannot write a {type(data).__name__}: expected an object with __arrow_c_stream__ "
        "(a pyarrow Table or RecordBatchReader, a Polars DataFrame, a DuckDB result, "
        "an rdarrow RDataReader) or a pandas DataFrame"
    )
