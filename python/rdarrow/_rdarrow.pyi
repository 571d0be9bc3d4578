import os
from typing import Any, BinaryIO, Dict, List, Optional, Tuple, Union

__version__: str

class RDataError(Exception): ...
class RDataIOError(RDataError): ...
class NotRDataError(RDataError): ...
class CorruptError(RDataError): ...
class UnsupportedError(RDataError): ...
class LimitError(RDataError): ...
class UsageError(RDataError): ...
class UnsafeError(RDataError): ...

# what a reader is given: a path or URL, bytes, or a binary file object
# (read through its readinto(), never staged)
_Given = Union[str, os.PathLike[str], bytes, bytearray, memoryview, BinaryIO]
# an object store's options as (name, value) pairs
_Storage = Optional[List[Tuple[str, str]]]

def object_path(parts: List[Any]) -> str: ...
def path_is_rds(path: str) -> bool: ...
def object_name_of(source: str) -> str: ...
def location_of(given: str) -> str: ...
def check_compression(compress: Optional[str] = None, level: Optional[int] = None, path: str = "") -> None: ...
def expand_sources(given: str, storage: _Storage = None) -> List[str]: ...
def list_objects(
    path: _Given, recursive: bool = False, storage: _Storage = None, salvage: bool = False
) -> Tuple[List[Dict[str, Any]], Optional[str]]: ...
def read_objects(
    path: _Given,
    names: Optional[List[str]] = None,
    storage: _Storage = None,
    plain: bool = False,
    tensors: bool = False,
    salvage: bool = False,
) -> Tuple[Dict[str, Any], List[str], Optional[str]]: ...
def to_tensor(
    path: _Given,
    sink: Optional[str] = None,
    object: Optional[str] = None,
    storage: _Storage = None,
    salvage: bool = False,
) -> Tuple[str, Optional["RTensor"], Optional[str]]: ...

def open_table(
    path: _Given,
    object: Optional[str] = None,
    columns: Optional[List[str]] = None,
    storage: _Storage = None,
    salvage: bool = False,
) -> "OpenedTable": ...

class OpenedTable:
    """A data frame opened to be read by row range and column."""

    name: str
    num_rows: int
    group_rows: int
    warnings: List[str]
    converted: List[int]
    def schema(self) -> Any: ...
    def read(self, columns: List[int], start: int, len: int) -> Any: ...

class Payload:
    """An atomic payload NumPy takes without a copy (``__array_interface__``)."""

    __array_interface__: Dict[str, Any]
    address: int
    def __len__(self) -> int: ...

class RVector:
    kind: str
    data: Any
    na: Optional[Payload]
    names: Optional[List[Optional[str]]]
    dim: Optional[List[int]]
    dimnames: Optional[List[Optional[List[Optional[str]]]]]
    dimnames_names: Optional[List[Optional[str]]]
    classes: List[str]
    levels: Optional[List[Optional[str]]]
    tzone: Optional[str]
    units: Optional[str]

class RTensor:
    """An R array laid out as a tensor: values, shape, byte strides, dimension names."""

    data: Payload
    shape: List[int]
    strides: List[int]
    names: List[Optional[str]]

class RFrame:
    stream: Any
    row_names: Optional[List[Any]]
    index_name: Optional[str]

class RS4:
    class_name: Optional[str]
    package: Optional[str]
    slots: Dict[str, Any]
    sparse: Optional[str]
def read_stream(
    path: _Given,
    object: Optional[str] = None,
    columns: Optional[List[str]] = None,
    chunk_size: Optional[int] = None,
    time_unit: Optional[str] = None,
    storage: _Storage = None,
    salvage: bool = False,
) -> Tuple[Any, str, List[str], List[List[int]], Optional[List[Any]], Optional[str]]: ...
def command_line(argv: List[str], host: List[Tuple[str, str]]) -> Tuple[int, Optional[str]]: ...
def write_rdata(
    objects: List[Tuple[str, Any]],
    path: str,
    rds: bool = False,
    compress: Optional[str] = None,
    level: Optional[int] = None,
    version: int = 3,
    threads: Optional[int] = None,
    storage: _Storage = None,
) -> None: ...
def to_parquet(
    path: _Given,
    sink: str,
    object: Optional[str] = None,
    columns: Optional[List[str]] = None,
    compression: str = "zstd",
    level: Optional[int] = None,
    row_group_size: Optional[int] = None,
    memory: Optional[int] = None,
    storage: _Storage = None,
    salvage: bool = False,
) -> Tuple[str, int, List[str]]: ...
def to_ipc(
    path: _Given,
    sink: str,
    object: Optional[str] = None,
    columns: Optional[List[str]] = None,
    format: str = "file",
    compression: str = "uncompressed",
    chunk_size: Optional[int] = None,
    memory: Optional[int] = None,
    storage: _Storage = None,
    salvage: bool = False,
) -> Tuple[str, int, List[str]]: ...
