"""R data files as an Apache Spark data source (Spark 4's Python data
sources: no JVM code)::

    import rdarrow.spark
    rdarrow.spark.register(spark)
    df = spark.read.format("rdata").option("object", "survey").load("s3://lab/archive/*.RData")
    df.write.format("rdata").mode("overwrite").save("out/")    # one .rds per partition

Reading takes what every rdarrow reader takes (a file, a glob, a
directory, a list of paths, ``s3://``/``gs://``/``az://`` URLs, a lazy-load
data base) and the options ``object`` (the object or object path),
``columns`` (comma-separated names) and the object store's options (the
names :func:`rdarrow.read_table` takes in ``storage_options``, credentials
also from the environment), and ``salvage`` (``"true"``: what is intact of
a damaged file, as :func:`rdarrow.read_table` reads it, with an
:class:`rdarrow.RDataWarning` in the Python worker that opens the file,
which Spark shows where it shows its workers' standard error: the console
in local mode, the executors' logs on a cluster). The schema is rdarrow's one type mapping in
Spark's types (the table below), from each file opened on the driver (no
payload converted), files matched by column name; a user's ``.schema()``
selects and orders the columns, and only those are converted.

Partitions are made as Spark's own file sources make them: files packed
together up to ``maxPartitionBytes`` (128 MiB; each file counted with
``openCostInBytes``: 64 KiB, where Spark's own sources count 4 MiB, since
opening an R file costs little and a Python data source's task much), a
larger uncompressed file split by row
range, the split size ``min(maxPartitionBytes, max(openCostInBytes, total
/ parallelism))`` (``parallelism``: the cores, by default). A compressed
file is not split (as Spark splits no compressed text file: each piece
would inflate the whole stream again); its task converts its columns on
all cores. Each partition's rows are handed to Spark as Arrow record
batches, small files' rows gathered into one batch.

============================  ===========================================
R                             Spark
============================  ===========================================
logical                       boolean
integer                       int
double                        double
integer64 (bit64)             bigint
character                     string
factor                        string (its levels' text)
Date                          date
POSIXct                       timestamp (instants; UTC)
difftime                      interval day to second
raw                           binary
list column                   array of the elements' type
data frame column             struct
matrix column                 array of its row's values
============================  ===========================================

Writing (``append`` or ``overwrite``) makes one ``.rds`` per partition
(``.RData`` with ``.option("format", "RData")``), each under the
directory's ``_temporary`` folder while the job runs and moved into place
when it commits (a failed job leaves nothing behind); ``object`` names the
data frame in an ``.RData``. R reads each with ``readRDS()``/``load()``.
"""

from __future__ import annotations

import math
import os
import shutil
import uuid
import warnings
from dataclasses import dataclass
from typing import Any, Dict, Iterator, List, Optional, Sequence, Tuple

from ._optional import need_all

# Spark 4's Python data sources, named with their install when missing
need_all("rdarrow.spark", ["pyspark.sql.datasource"], "spark")

from pyspark.sql.datasource import (  # noqa: E402
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    InputPartition,
    WriterCommitMessage,
)

from ._arrow import Capsule, open_table, refuse_unions, table_schema  # noqa: E402
from ._errors import RDataWarning, UsageError  # noqa: E402
from ._readers import list_objects, read_table  # noqa: E402
from ._sources import files_of, object_path_of  # noqa: E402
from ._writers import write_rdata, write_rds  # noqa: E402

__all__ = ["RDataSource", "register"]

_MAX_PARTITION_BYTES = 128 * 2**20
# what opening a file costs, counted as bytes read (Spark's
# openCostInBytes): Spark's 4 MiB models a file system's open and seek;
# opening a small R file here costs about 0.04 ms, while a partition of a
# Python data source costs Spark about 35 ms of task overhead per core
# (measured: 63 empty partitions 2.3 s, 8 of them 0.35 s, on 2 cores), so
# small files are packed as if each cost 64 KiB to open
_OPEN_COST_BYTES = 64 * 2**10
# files up to this size are read whole in memory (decoded once, converted
# on all cores), larger ones opened to be read by row range from their
# spill
_WHOLE_FILE_BYTES = 256 * 2**20
# rows of the record batches handed to Spark
_ROWS_PER_BATCH = 65536
_OWN_OPTIONS = {
    "path", "paths", "object", "columns", "format", "maxpartitionbytes", "opencostinbytes", "parallelism", "salvage",
}


def register(spark: Any) -> None:
    """Register the data source with a Spark session: then
    ``spark.read.format("rdata")`` and ``df.write.format("rdata")``."""
    spark.dataSource.register(RDataSource)


def _storage(options: Dict[str, str]) -> Optional[Dict[str, str]]:
    """The options that are the object store's (all but the source's own)."""
    out = {k: v for k, v in options.items() if k.lower() not in _OWN_OPTIONS}
    return out or None


def _paths(options: Dict[str, str]) -> List[str]:
    import json

    if "paths" in options and options["paths"] not in ("", "[]"):
        paths = json.loads(options["paths"])
    elif "path" in options:
        paths = [options["path"]]
    else:
        raise ValueError("rdata: no path given (load(path))")
    return list(paths)


def _files(options: Dict[str, str]) -> List[str]:
    return files_of(_paths(options), _storage(options))


def _size(path: str) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0  # an object in a store: counted by the open cost alone


def _plain_type(t: Any) -> Any:
    """An Arrow type as Spark takes it: a dictionary its values' type,
    nested types likewise, timestamps and durations in microseconds, an
    extension type (a tensor column) the type it stores."""
    import pyarrow as pa

    if isinstance(t, pa.BaseExtensionType):
        return _plain_type(t.storage_type)
    if pa.types.is_dictionary(t):
        return _plain_type(t.value_type)
    if pa.types.is_timestamp(t):
        return pa.timestamp("us", tz="UTC")
    if pa.types.is_duration(t):
        return pa.duration("us")
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return pa.list_(pa.field(t.value_field.name, _plain_type(t.value_type), True))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _plain_type(f.type), True) for f in t])
    return t


def _plain_schema(schema: Any) -> Any:
    import pyarrow as pa

    return pa.schema([pa.field(f.name, _plain_type(f.type), True) for f in schema])


def _union(schemas: Sequence[Any]) -> Any:
    """Columns matched by name across files, in order of first appearance;
    a column of two types is an error naming it."""
    import pyarrow as pa

    fields: Dict[str, Any] = {}
    for s in schemas:
        for f in s:
            seen = fields.get(f.name)
            if seen is None:
                fields[f.name] = f
            elif seen.type != f.type:
                raise TypeError(f"rdata: column '{f.name}' is {seen.type} in one file and {f.type} in another")
    return pa.schema(list(fields.values()))


def _spark_schema(arrow_schema: Any) -> Any:
    from pyspark.sql.pandas.types import from_arrow_schema

    return from_arrow_schema(arrow_schema)


def _arrow_schema_of(struct: Any) -> Any:
    from pyspark.sql.pandas.types import to_arrow_schema

    try:
        return to_arrow_schema(struct, timezone="UTC", prefers_large_types=False)
    except TypeError:  # older signatures
        return to_arrow_schema(struct)


def _salvage(options: Dict[str, str]) -> bool:
    """The option ``salvage``: ``"true"`` or ``"false"`` (the default)."""
    value = str(options.get("salvage", "false")).strip().lower()
    if value not in ("true", "false"):
        raise UsageError(f"rdata: the option salvage must be true or false, not {options.get('salvage')!r}")
    return value == "true"


def _open(path: str, options: Dict[str, str], columns: Optional[List[str]]) -> Tuple[Any, Any]:
    """The file opened (and what must stay open while it is read: an
    fsspec file); what a salvaging read lost said as a warning."""
    t, keep = open_table(path, options.get("object"), columns, _storage(options), _salvage(options))
    for w in t.warnings:
        warnings.warn(f"{path}: {w}", RDataWarning, stacklevel=2)
    return t, keep


def _read_whole(path: str, options: Dict[str, str], columns: List[str]) -> Any:
    """A file's table, read in memory: the columns asked for that it has
    (all of them when it lacks one: a file of a union by name)."""
    kw = {"object": options.get("object"), "storage_options": _storage(options), "salvage": _salvage(options)}
    try:
        return read_table(path, columns=columns, **kw)
    except UsageError:
        return read_table(path, **kw)


def _compressed(path: str) -> bool:
    """Whether a file is compressed (gzip, bzip2, xz, zstd): such a file is
    not split, as Spark splits no compressed text file, since each piece
    would inflate the whole stream again; its one task converts the columns
    on all its cores. A file that cannot be looked at counts as one."""
    try:
        with open(path, "rb") as f:
            head = f.read(6)
    except OSError:
        return True
    return head[:2] == b"\x1f\x8b" or head[:3] == b"BZh" or head[:6] == b"\xfd7zXZ\x00" or head[:4] == b"\x28\xb5\x2f\xfd"


@dataclass
class _Piece:
    path: str
    start: int = 0
    stop: Optional[int] = None  # None: to the end


class _Partition(InputPartition):
    """The pieces of files one task reads."""

    def __init__(self, pieces: List[_Piece]) -> None:
        super().__init__(None)
        self.pieces = pieces


def _plan(files: List[str], options: Dict[str, str], rows_of: Any) -> List[_Partition]:
    """Spark's packing of files into partitions (``FilePartition``):
    files larger than the split size cut by row range, the pieces sorted
    by size (largest first) and packed next-fit, each counted with the
    open cost."""
    max_bytes = int(options.get("maxPartitionBytes", options.get("maxpartitionbytes", _MAX_PARTITION_BYTES)))
    open_cost = int(options.get("openCostInBytes", options.get("opencostinbytes", _OPEN_COST_BYTES)))
    cores = int(options.get("parallelism", os.cpu_count() or 1))
    sizes = [_size(f) for f in files]
    total = sum(s + open_cost for s in sizes)
    split = min(max_bytes, max(open_cost, total // max(cores, 1)))
    pieces: List[Tuple[int, _Piece]] = []
    for f, size in zip(files, sizes):
        parts = max(1, math.ceil(size / split)) if size > split and not _compressed(f) else 1
        rows = rows_of(f) if parts > 1 else None
        if rows is None or rows < parts:
            pieces.append((size, _Piece(f)))
            continue
        step = math.ceil(rows / parts)
        for start in range(0, rows, step):
            pieces.append((size // parts, _Piece(f, start, min(rows, start + step))))
    pieces.sort(key=lambda p: -p[0])
    out: List[_Partition] = []
    current: List[_Piece] = []
    used = 0
    for size, piece in pieces:
        if current and used + size > split:
            out.append(_Partition(current))
            current, used = [], 0
        current.append(piece)
        used += size + open_cost
    if current:
        out.append(_Partition(current))
    return out or [_Partition([])]


class RDataSource(DataSource):
    """``spark.read.format("rdata")`` / ``df.write.format("rdata")``."""

    @classmethod
    def name(cls) -> str:
        return "rdata"

    def _columns(self) -> Optional[List[str]]:
        c = self.options.get("columns")
        return [x.strip() for x in c.split(",") if x.strip()] if c else None

    def schema(self) -> Any:
        schemas = [table_schema(_open(f, self.options, self._columns())[0]) for f in _files(self.options)]
        for s in schemas:
            refuse_unions(s, "Spark", "leave it out (option columns), or ")
        schemas = [_plain_schema(s) for s in schemas]
        return _spark_schema(_union(schemas))

    def reader(self, schema: Any) -> DataSourceReader:
        return _Reader(dict(self.options), schema)

    def writer(self, schema: Any, overwrite: bool) -> "_Writer":
        return _Writer(dict(self.options), schema, overwrite)


class _Reader(DataSourceReader):
    def __init__(self, options: Dict[str, str], schema: Any) -> None:
        self.options = options
        self.columns = [f.name for f in schema.fields]
        self.arrow = _arrow_schema_of(schema)

    def partitions(self) -> Sequence[InputPartition]:
        object = object_path_of(self.options.get("object"))

        def rows_of(path: str) -> Optional[int]:
            listed = list_objects(path, storage_options=_storage(self.options))
            frames = [o for o in listed if o.get("rows") is not None and (object is None or o["name"] == object)]
            return frames[0]["rows"] if len(frames) >= 1 else None

        return _plan(_files(self.options), self.options, rows_of)

    def read(self, partition: InputPartition) -> Iterator[Any]:
        """The partition's rows as record batches of Spark's schema; the
        rows of small files gathered into batches of about a row group
        (one Arrow message for many files)."""
        pending: List[Any] = []
        held = 0
        for piece in partition.pieces:
            for part in self._tables(piece):
                pending.append(self._shaped(part))
                held += part.num_rows
                if held >= _ROWS_PER_BATCH:
                    yield from self._gathered(pending)
                    pending, held = [], 0
        if pending:
            yield from self._gathered(pending)

    def _tables(self, piece: _Piece) -> Iterator[Any]:
        """A piece's rows, a row group at a time, in its file's schema: a
        file read whole decoded in memory, its columns converted on all
        cores (no spill of its payloads); a larger file or a row range
        read from the opened file."""
        import pyarrow as pa

        if piece.stop is None and piece.start == 0 and _size(piece.path) <= _WHOLE_FILE_BYTES:
            got = _read_whole(piece.path, self.options, self.columns)
            for b in got.to_batches(max_chunksize=_ROWS_PER_BATCH):
                yield pa.Table.from_batches([b], schema=got.schema)
            return
        t, _keep = _open(piece.path, self.options, None)
        names = table_schema(t).names
        idx = [names.index(c) for c in self.columns if c in names]
        stop = t.num_rows if piece.stop is None else min(piece.stop, t.num_rows)
        step = max(1, t.group_rows)
        for start in range(piece.start, stop, step):
            yield pa.table(Capsule(t.read(idx, start, min(step, stop - start))))

    def _gathered(self, parts: List[Any]) -> Iterator[Any]:
        import pyarrow as pa

        return iter(pa.Table.from_batches(parts, schema=self.arrow).combine_chunks().to_batches())

    def _shaped(self, got: Any) -> Any:
        """A file's rows in Spark's schema: dictionaries decoded, types
        cast, columns the file lacks null."""
        import pyarrow as pa

        arrays = []
        for f in self.arrow:
            if f.name in got.column_names:
                col = got.column(f.name).combine_chunks()
                if pa.types.is_dictionary(col.type):
                    col = col.dictionary_decode()
                arrays.append(col.cast(f.type))
            else:
                arrays.append(pa.nulls(got.num_rows, f.type))
        return pa.RecordBatch.from_arrays(arrays, schema=self.arrow)


@dataclass
class _Written(WriterCommitMessage):
    staged: List[str]


class _Writer(DataSourceArrowWriter):
    def __init__(self, options: Dict[str, str], schema: Any, overwrite: bool) -> None:
        self.options = options
        self.overwrite = overwrite
        paths = _paths(options)
        if len(paths) != 1:
            raise ValueError("rdata: write to one directory (save(path))")
        self.root = paths[0]
        fmt = options.get("format", "rds")
        if fmt.lower() not in ("rds", "rdata"):
            raise ValueError('rdata: option format must be "rds" or "RData"')
        self.ext = ".rds" if fmt.lower() == "rds" else ".RData"
        self.job = uuid.uuid4().hex
        self.staging = os.path.join(self.root, "_temporary", self.job)

    def write(self, iterator: Iterator[Any]) -> _Written:
        import pyarrow as pa
        from pyspark import TaskContext

        batches = list(iterator)
        ctx = TaskContext.get()
        part = ctx.partitionId() if ctx is not None else 0
        if not batches:
            return _Written([])
        table = pa.Table.from_batches(batches)
        os.makedirs(self.staging, exist_ok=True)
        path = os.path.join(self.staging, f"part-{part:05d}-{self.job}{self.ext}")
        if self.ext == ".rds":
            write_rds(table, path)
        else:
            write_rdata({self.options.get("object", "df"): table}, path)
        return _Written([path])

    def commit(self, messages: List[Optional[WriterCommitMessage]]) -> None:
        os.makedirs(self.root, exist_ok=True)
        if self.overwrite:
            for name in os.listdir(self.root):
                if name.endswith((".rds", ".RData")) and name.startswith("part-"):
                    os.remove(os.path.join(self.root, name))
        for m in messages:
            for staged in getattr(m, "staged", None) or []:
                os.replace(staged, os.path.join(self.root, os.path.basename(staged)))
        self._clean()

    def abort(self, messages: List[Optional[WriterCommitMessage]]) -> None:
        self._clean()

    def _clean(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)
        tmp = os.path.join(self.root, "_temporary")
        if os.path.isdir(tmp) and not os.listdir(tmp):
            os.rmdir(tmp)
