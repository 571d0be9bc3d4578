"""Many R data files as one Dask DataFrame, read on Dask's workers (threads,
processes or a cluster's machines), one partition per file::

    import rdarrow.dask
    df = rdarrow.dask.read_rdata("archive/*.RData", object="survey")
    df.to_parquet("lake/")   # each worker converts its files

Each partition is read by rdarrow's engine into Arrow and handed to pandas
with Arrow-backed columns (``pd.ArrowDtype``), so the lake keeps the types
rdarrow gives (a factor stays a dictionary, an integer stays int32, NA
stays null).
"""

from __future__ import annotations

import glob
import os
from typing import List, Optional, Sequence, Union

import rdarrow

__all__ = ["read_rdata", "files_of"]


def files_of(
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
    storage = rdarrow._storage(storage_options)
    for p in paths:
        p = os.fspath(p)
        if rdarrow._fsspec_url(p):
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
        elif p.lower().startswith(("http://", "https://")):
            files.append(p)
        elif glob.has_magic(p) and "://" not in p:
            matched = sorted(glob.glob(p))
            if not matched:
                raise FileNotFoundError(f"no file matches {p!r}")
            files.extend(matched)
        elif "://" in p or os.path.isdir(p):
            # the engine's expansion: a directory's or an object store
            # prefix's R data files, a store's glob by listing
            files.extend(rdarrow._rdarrow.expand_sources(p, storage))
        else:
            files.append(p)
    if not files:
        raise ValueError("no files given")
    return files


def _partition(path: str, object: Optional[str], columns: Optional[List[str]], storage_options=None):
    import pandas as pd

    table = rdarrow.read_table(path, object=object, columns=columns, storage_options=storage_options)
    return table.to_pandas(types_mapper=pd.ArrowDtype)


def read_rdata(
    paths,
    object: "Optional[rdarrow.ObjectRef]" = None,
    columns: Optional[Sequence[str]] = None,
    storage_options: Optional[dict] = None,
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
    (see :func:`rdarrow.read_table`)."""
    import dask.dataframe as dd

    files = files_of(paths, storage_options)
    object = rdarrow._object(object)
    cols = None if columns is None else list(columns)
    meta = _partition(files[0], object, cols, storage_options).iloc[:0]
    return dd.from_map(
        _partition,
        files,
        object=object,
        columns=cols,
        storage_options=storage_options,
        meta=meta,
        label="read-rdata",
    )
