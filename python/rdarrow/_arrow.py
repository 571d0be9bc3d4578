"""Arrow C capsules the engine makes, as objects of the Arrow PyCapsule
protocol, and what an opened table's schema holds (unions that consumers
without union types cannot take)."""

from __future__ import annotations

from typing import Any, List, Optional

from . import _rdarrow
from ._sources import ObjectRef, Opened, StorageOptions, engine_source, object_path_of, storage_pairs


class Capsule:
    """An Arrow C capsule the engine made (a stream or a schema) as an
    object of the Arrow PyCapsule protocol, for pyarrow and Polars to take."""

    def __init__(self, capsule: Any) -> None:
        self.capsule = capsule

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self.capsule

    def __arrow_c_schema__(self) -> Any:
        return self.capsule


def open_table(
    path: Any,
    object: Optional[ObjectRef],
    columns: Optional[List[str]],
    storage_options: StorageOptions,
    salvage: bool = False,
) -> "tuple[Any, Optional[Opened]]":
    """One object of a file opened to be read by row range and column (the
    engine's ``open_table``; ``salvage``: what is intact of a damaged file,
    what was lost first in the table's ``warnings``), and what must stay
    open while it is read (an fsspec file)."""
    src, keep = engine_source(path, storage_options)
    opened = _rdarrow.open_table(src, object_path_of(object), columns, storage_pairs(storage_options), salvage)
    return opened, keep


def table_schema(table: Any) -> "pyarrow.Schema":  # noqa: F821
    """An opened table's Arrow schema."""
    import pyarrow as pa

    return pa.schema(Capsule(table.schema()))


def has_union(t: Any) -> bool:
    """Whether Arrow type ``t`` holds a union at any depth."""
    import pyarrow as pa

    if pa.types.is_union(t):
        return True
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return has_union(t.value_type)
    if pa.types.is_struct(t):
        return any(has_union(t.field(i).type) for i in range(t.num_fields))
    return False


def refuse_unions(schema: Any, consumer: str, hint: str = "") -> None:
    """Raise for the columns of ``schema`` a consumer without union types
    (Polars, Spark) cannot take: lists whose elements differ in type,
    which rdarrow makes dense unions. Never a silently changed value."""
    bad = [f.name for f in schema if has_union(f.type)]
    if bad:
        names = ", ".join(f"'{b}'" for b in bad)
        raise TypeError(
            f"column{'s' if len(bad) > 1 else ''} {names} hold{'' if len(bad) > 1 else 's'} lists whose "
            f"elements differ in type, an Arrow dense union, which {consumer} has no type for; "
            f"{hint}read it with rdarrow.read_table() (pyarrow) or DuckDB"
        )
