import os
from typing import Any, BinaryIO, Dict, List, Optional, Sequence, Union

import pyarrow

from ._rdarrow import (
    CorruptError as CorruptError,
    LimitError as LimitError,
    NotRDataError as NotRDataError,
    RDataError as RDataError,
    RDataIOError as RDataIOError,
    UnsafeError as UnsafeError,
    UnsupportedError as UnsupportedError,
    UsageError as UsageError,
)

__version__: str
PathLike = Union[str, os.PathLike[str]]
# a path, an http(s), object store or fsspec URL, bytes, or a binary file
# object (read in place, never staged)
Source = Union[str, os.PathLike[str], bytes, bytearray, memoryview, BinaryIO]
StorageOptions = Optional[Dict[str, Any]]

class RDataWarning(UserWarning): ...

ObjectRef = Union[str, Sequence[Union[str, int]]]

def list_objects(
    path: Source, recursive: bool = ..., storage_options: StorageOptions = ..., salvage: bool = ...
) -> List[Dict[str, Any]]: ...
def read_objects(
    path: Source,
    names: Optional[Sequence[str]] = ...,
    storage_options: StorageOptions = ...,
    plain: bool = ...,
    as_tensor: bool = ...,
    salvage: bool = ...,
    object: Optional[Union[str, Sequence[str]]] = ...,
) -> Dict[str, Any]: ...
def read_anndata(
    path: Any,
    object: Optional[str] = ...,
    assay: Optional[str] = ...,
    storage_options: StorageOptions = ...,
) -> Any: ...
def to_h5ad(
    path: Any,
    out: PathLike,
    object: Optional[str] = ...,
    assay: Optional[str] = ...,
    compression: Optional[str] = ...,
    storage_options: StorageOptions = ...,
) -> None: ...

class RDataReader:
    name: str
    warnings: List[str]
    row_names: Optional[List[Any]]
    index_name: Optional[str]
    def __init__(
        self,
        path: Source,
        object: Optional[ObjectRef] = ...,
        columns: Optional[Sequence[str]] = ...,
        chunk_size: Optional[int] = ...,
        time_unit: Optional[str] = ...,
        storage_options: StorageOptions = ...,
        salvage: bool = ...,
    ) -> None: ...
    def __arrow_c_stream__(self, requested_schema: Any = ...) -> Any: ...

def read_table(
    path: Source,
    object: Optional[ObjectRef] = ...,
    columns: Optional[Sequence[str]] = ...,
    time_unit: Optional[str] = ...,
    storage_options: StorageOptions = ...,
    salvage: bool = ...,
) -> pyarrow.Table: ...
def read_pandas(
    path: Source,
    object: Optional[ObjectRef] = ...,
    columns: Optional[Sequence[str]] = ...,
    storage_options: StorageOptions = ...,
    salvage: bool = ...,
) -> Any: ...
def to_parquet(
    path: Source,
    sink: PathLike,
    object: Optional[ObjectRef] = ...,
    columns: Optional[Sequence[str]] = ...,
    compression: str = ...,
    compression_level: Optional[int] = ...,
    row_group_size: Optional[int] = ...,
    memory: Optional[int] = ...,
    storage_options: StorageOptions = ...,
    salvage: bool = ...,
) -> None: ...
def to_tensor(
    path: Source,
    sink: Optional[PathLike] = ...,
    object: Optional[ObjectRef] = ...,
    storage_options: StorageOptions = ...,
    salvage: bool = ...,
) -> Any: ...
def to_ipc(
    path: Source,
    sink: PathLike,
    object: Optional[ObjectRef] = ...,
    columns: Optional[Sequence[str]] = ...,
    format: str = ...,
    compression: str = ...,
    chunk_size: Optional[int] = ...,
    memory: Optional[int] = ...,
    storage_options: StorageOptions = ...,
    salvage: bool = ...,
) -> None: ...

def write_rdata(
    data: Any,
    path: PathLike,
    name: Optional[str] = ...,
    compress: Optional[str] = ...,
    compression_level: Optional[int] = ...,
    version: int = ...,
    storage_options: StorageOptions = ...,
) -> None: ...
def write_rds(
    data: Any,
    path: PathLike,
    compress: Optional[str] = ...,
    compression_level: Optional[int] = ...,
    version: int = ...,
    storage_options: StorageOptions = ...,
) -> None: ...
def write_sce(
    data: Any,
    path: PathLike,
    compress: Optional[str] = ...,
    compression_level: Optional[int] = ...,
    version: int = ...,
    storage_options: StorageOptions = ...,
) -> None: ...
def write_seurat(
    data: Any,
    path: PathLike,
    version: int = ...,
    compress: Optional[str] = ...,
    compression_level: Optional[int] = ...,
    format_version: int = ...,
    storage_options: StorageOptions = ...,
) -> None: ...
