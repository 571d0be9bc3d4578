"""Where R data is read from and written to: paths, URLs (the engine reads http(s) and
object store URLs itself; fsspec opens the others), bytes and file objects; object
store options; object paths; the files an argument names (the engine's rule)."""

from __future__ import annotations

import glob
import os
from typing import Any, BinaryIO, Dict, List, Optional, Sequence, Union

from . import _rdarrow
from ._optional import need


PathLike = Union[str, "os.PathLike[str]"]


# where R data is read from: a path, an http(s), object store or fsspec URL,
# bytes, or a binary file object (read in place, never staged)
Source = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, BinaryIO]


def as_path(path: PathLike) -> str:
    p = os.fspath(path)
    if isinstance(p, bytes):
        p = os.fsdecode(p)
    if not isinstance(p, str) or not p:
        raise TypeError("path must be a non-empty string or os.PathLike")
    return p


def is_fsspec_url(path: str) -> bool:
    """Whether ``path`` is a URL for fsspec to open (not the engine, which
    reads http(s) and object store URLs itself: its one rule)."""
    if "::" in path:
        return True
    scheme, sep, _ = path.partition("://")
    return bool(sep) and scheme.isidentifier() and _rdarrow.location_of(path) == "local"


class Opened:
    """A file fsspec opened for a reader, closed when this object goes."""

    def __init__(self, url: str, storage_options: "StorageOptions") -> None:
        fsspec = need("fsspec", f"reading {url!r}")
        # the OpenFile holds the files a chained URL opens under this one
        self.opener = fsspec.open(url, "rb", **(storage_options or {}))
        self.file = self.opener.open()

    def __del__(self) -> None:
        opener = getattr(self, "opener", None)
        if opener is not None:
            opener.close()


def seekable(file: Any) -> bool:
    seekable = getattr(file, "seekable", None)
    return bool(seekable and seekable()) and hasattr(file, "tell")


def engine_source(path: Any, storage_options: "StorageOptions" = None) -> "tuple[Any, Optional[Opened]]":
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
    p = as_path(path)
    if is_fsspec_url(p):
        opened = Opened(p, storage_options)
        return opened.file, opened
    return p, None


StorageOptions = Optional[Dict[str, Any]]


def storage_pairs(storage_options: StorageOptions) -> Optional[List["tuple[str, str]"]]:
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


def column_names(columns: Optional[Sequence[str]]) -> Optional[List[str]]:
    if columns is None:
        return None
    if isinstance(columns, str):
        columns = [columns]
    names = list(columns)
    if not all(isinstance(c, str) for c in names):
        raise TypeError("columns must be a sequence of column names")
    return names


ObjectRef = Union[str, Sequence[Union[str, int]]]


def object_path_of(object: Optional[ObjectRef]) -> Optional[str]:
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
    storage = storage_pairs(storage_options)
    for p in paths:
        p = os.fspath(p)
        if is_fsspec_url(p):
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


def name_of_file(path: str) -> str:
    """The name an object saved without one takes: the file's, without its
    extension."""
    return _rdarrow.object_name_of(path)
