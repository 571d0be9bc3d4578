"""Many R data files as one Dask DataFrame, read on Dask's workers (threads,
processes or a cluster's machines), one partition per file::

    import rdarrow.dask
    df = rdarrow.dask.read_rdata("archive/*.RData", object="survey")
    df.to_parquet("lake/")   # each worker converts its files

Each partition is read by rdarrow's engine into Arrow and handed to pandas
with Arrow-backed columns (``pd.ArrowDtype``), so the lake keeps the types
rdarrow gives (a factor stays a dictionary, an integer stays int32, NA
stays null). ``salvage=True`` reads what is intact of a damaged file, as
:func:`rdarrow.read_table` does, with an :class:`rdarrow.RDataWarning`
where the partition is read (in the worker's process: a cluster's
workers log it).
"""

from __future__ import annotations

from typing import List, Optional, Sequence

from ._optional import need_all

# the packages this module serves, named with their install when missing
need_all("rdarrow.dask", ["dask.dataframe", "pandas"], "dask")

import rdarrow  # noqa: E402

from ._sources import files_of, object_path_of  # noqa: E402

__all__ = ["read_rdata", "files_of"]


# the files a path, glob, directory, URL or list names: the package's one
# expansion (the engine's one rule), public here


def _partition(
    path: str, object: Optional[str], columns: Optional[List[str]], storage_options=None, salvage: bool = False
):
    import pandas as pd

    table = rdarrow.read_table(
        path, object=object, columns=columns, storage_options=storage_options, salvage=salvage
    )
    return table.to_pandas(types_mapper=pd.ArrowDtype)


def read_rdata(
    paths,
    object: "Optional[rdarrow.ObjectRef]" = None,
    columns: Optional[Sequence[str]] = None,
    storage_options: Optional[dict] = None,
    salvage: bool = False,
):
    """A ``dask.dataframe.DataFrame`` of one data frame from each of the R
    data files ``paths`` names (a path, a glob pattern, or a list), one
    partition per file, read where Dask runs the task. ``object`` names the
    data frame in each ``.RData`` file, or its object path (``"lst$a"``)
    (default: each file's only data frame); ``columns`` keeps these columns, in this order. The files must
    share a schema: the first file's is the frame's (Dask checks the
    others as it reads them). In an object store (``s3://...``), each
    worker reads its files from the store itself (no shared file system
    needed), with the environment's credentials and ``storage_options``
    (see :func:`rdarrow.read_table`); ``salvage``: see the module."""
    import dask.dataframe as dd

    files = files_of(paths, storage_options)
    object = object_path_of(object)
    cols = None if columns is None else list(columns)
    meta = _partition(files[0], object, cols, storage_options, salvage).iloc[:0]
    return dd.from_map(
        _partition,
        files,
        object=object,
        columns=cols,
        storage_options=storage_options,
        salvage=salvage,
        meta=meta,
        label="read-rdata",
    )
