import os
from typing import Any, Dict, List, Optional, Sequence, Union

import pyarrow

from ._rdarrow import (
    CorruptError as CorruptError,
    LimitError as LimitError,
    NotRDataError as NotRDataError,
    RDataError as RDataError,
    RDataIOError as RDataIOError,
    UnsupportedError as UnsupportedError,
    UsageError as UsageError,
)

__version__: str
PathLike = Union[str, os.PathLike[str]]

class RDataWarning(UserWarning): ...

def list_objects(path: PathLike) -> List[Dict[str, Any]]: ...

class RDataReader:
    name: str
    warnings: List[str]
    def __init__(
        self,
        path: PathLike,
        object: Optional[str] = ...,
        columns: Optional[Sequence[str]] = ...,
        chunk_size: Optional[int] = ...,
    ) -> None: ...
    def __arrow_c_stream__(self, requested_schema: Any = ...) -> Any: ...

def read_table(
    path: PathLike,
    object: Optional[str] = ...,
    columns: Optional[Sequence[str]] = ...,
) -> pyarrow.Table: ...

def write_rdata(
    data: Any,
    path: PathLike,
    name: Optional[str] = ...,
    compress: str = ...,
    compression_level: Optional[int] = ...,
    version: int = ...,
) -> None: ...
def write_rds(
    data: Any,
    path: PathLike,
    compress: str = ...,
    compression_level: Optional[int] = ...,
    version: int = ...,
) -> None: ...
