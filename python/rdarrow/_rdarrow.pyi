from typing import Any, Dict, List, Optional, Tuple

__version__: str

class RDataError(Exception): ...
class RDataIOError(RDataError): ...
class NotRDataError(RDataError): ...
class CorruptError(RDataError): ...
class UnsupportedError(RDataError): ...
class LimitError(RDataError): ...
class UsageError(RDataError): ...

def list_objects(path: str) -> List[Dict[str, Any]]: ...
def read_objects(path: str, names: Optional[List[str]] = None) -> Tuple[Dict[str, Any], List[str]]: ...
def read_stream(
    path: str,
    object: Optional[str] = None,
    columns: Optional[List[str]] = None,
    chunk_size: Optional[int] = None,
    time_unit: Optional[str] = None,
) -> Tuple[Any, str, List[str], List[List[int]], Optional[List[Any]]]: ...
def write_rdata(
    objects: List[Tuple[str, Any]],
    path: str,
    rds: bool = False,
    compress: str = "gzip",
    level: Optional[int] = None,
    version: int = 3,
    threads: Optional[int] = None,
) -> None: ...
def to_parquet(
    path: str,
    sink: str,
    object: Optional[str] = None,
    columns: Optional[List[str]] = None,
    compression: str = "zstd",
    level: Optional[int] = None,
    row_group_size: Optional[int] = None,
    memory: Optional[int] = None,
) -> Tuple[str, int, List[str]]: ...
def to_ipc(
    path: str,
    sink: str,
    object: Optional[str] = None,
    columns: Optional[List[str]] = None,
    format: str = "file",
    compression: str = "uncompressed",
    chunk_size: Optional[int] = None,
    memory: Optional[int] = None,
) -> Tuple[str, int, List[str]]: ...
