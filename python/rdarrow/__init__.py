"""R data files (.RData/.rda from ``save()``, .rds from ``saveRDS()``) as
Apache Arrow, read by rdarrow's Rust engine without R.

The engine decodes the file straight into Arrow buffers and hands them to
the consumer without a copy through the Arrow C stream interface
(``__arrow_c_stream__``), which pyarrow, Polars and DuckDB take. This module
only re-exports: sources in ``_sources``, readers in ``_readers``, pandas in
``_pandas``, writers in ``_writers``, R values as Python in ``_values``,
Python values as R in ``_to_r``,
single-cell experiments in the ``singlecell`` package.
"""

from . import _rdarrow
from ._errors import (
    CorruptError,
    LimitError,
    NotRDataError,
    RDataError,
    RDataIOError,
    RDataWarning,
    UnsafeError,
    UnsupportedError,
    UsageError,
)
from ._readers import RDataReader, list_objects, read_objects, read_pandas, read_table, to_ipc, to_parquet, to_tensor
from ._sources import ObjectRef, PathLike, Source, StorageOptions
from ._writers import write_rdata, write_rds
from .singlecell import read_anndata, to_h5ad, write_sce, write_seurat

__version__ = _rdarrow.__version__

__all__ = [
    "CorruptError",
    "LimitError",
    "NotRDataError",
    "RDataError",
    "RDataIOError",
    "RDataReader",
    "RDataWarning",
    "UnsafeError",
    "UnsupportedError",
    "UsageError",
    "list_objects",
    "read_anndata",
    "read_objects",
    "read_pandas",
    "read_table",
    "to_h5ad",
    "to_ipc",
    "to_tensor",
    "to_parquet",
    "write_rdata",
    "write_rds",
    "write_sce",
    "write_seurat",
]
