"""Single-cell experiments between R and Python, without R: a Seurat object or
a (Single Cell|Summarized)Experiment read as an AnnData (``from_r``), an
AnnData or MuData written as one (``to_r``), the names both directions share
(``names``), and the ``rdarrow to-h5ad``/``from-h5ad`` commands (``cli``)."""

from __future__ import annotations

from typing import Any, Optional

from .._rdarrow import path_is_rds
from .._sources import PathLike, StorageOptions, as_path, name_of_file
from .._optional import need_all
from .._writers import write_rdata, write_rds


def _needs(what: str, *modules: str) -> None:
    """One line naming every missing package the call needs and the
    ``pip install`` of the extra that brings them all, before any work."""
    need_all(what, modules, "anndata")


def read_anndata(
    path: Any,
    object: Optional[str] = None,
    assay: Optional[str] = None,
    storage_options: StorageOptions = None,
) -> Any:
    """A single-cell experiment saved by R (a Seurat object, a
    SingleCellExperiment, a (Ranged)SummarizedExperiment) as an
    ``anndata.AnnData`` (several assays: a ``mudata.MuData``); see
    :mod:`rdarrow.singlecell.from_r` for where each part goes."""
    _needs("read_anndata()", "numpy", "pandas", "scipy.sparse", "anndata")
    from . import from_r as _ad

    return _ad.read_anndata(path, object=object, assay=assay, storage_options=storage_options)


def write_sce(
    data: Any,
    path: PathLike,
    compress: Optional[str] = None,
    compression_level: Optional[int] = None,
    version: int = 3,
    storage_options: StorageOptions = None,
) -> None:
    """Write an ``anndata.AnnData`` (or a ``mudata.MuData``: its other
    modalities as ``altExps``) as a ``SingleCellExperiment`` that R's
    ``readRDS()`` reads, without R; see :mod:`rdarrow.singlecell.to_r` for where
    each part goes. A path ending in ``.rds`` gets ``saveRDS()``'s format,
    any other ``save()``'s, the object named after the file (as R's
    ``arrow_to_rdata()`` chooses). ``compress``, ``compression_level`` and
    ``version`` as :func:`write_rds`."""
    _needs("write_sce()", "numpy", "pandas", "scipy.sparse")
    from . import to_r as singlecell

    write_experiment(singlecell.sce_object(data), path, compress, compression_level, version, storage_options)


def write_seurat(
    data: Any,
    path: PathLike,
    version: int = 5,
    compress: Optional[str] = None,
    compression_level: Optional[int] = None,
    format_version: int = 3,
    storage_options: StorageOptions = None,
) -> None:
    """Write an ``anndata.AnnData`` (or a ``mudata.MuData``: an assay per
    modality) as a Seurat object that R's ``readRDS()`` reads, without R:
    ``version=5`` SeuratObject 5's ``Assay5`` (layers), ``version=4`` its
    ``Assay``; see :mod:`rdarrow.singlecell.to_r` for where each part goes.
    The path chooses the format as in :func:`write_sce`. ``format_version``
    is R's serialization version (2 or 3)."""
    _needs("write_seurat()", "numpy", "pandas", "scipy.sparse")
    from . import to_r as singlecell

    write_experiment(
        singlecell.seurat_object(data, version), path, compress, compression_level, format_version, storage_options
    )


def write_experiment(
    obj: Any,
    path: PathLike,
    compress: Optional[str],
    compression_level: Optional[int],
    version: int,
    storage_options: StorageOptions,
) -> None:
    """A single-cell object written as :func:`write_rds` writes to a path
    ending in ``.rds``; to any other (``.RData``, ``.rda``) as
    :func:`write_rdata` writes, under the file's name (the engine's one
    rule, as R's ``arrow_to_rdata()`` and the command line choose)."""
    kw = dict(compress=compress, compression_level=compression_level, version=version, storage_options=storage_options)
    p = as_path(path)
    if path_is_rds(p):
        write_rds(obj, p, **kw)
    else:
        write_rdata({name_of_file(p): obj}, p, **kw)  # the object is an S4Value, a dict


def to_h5ad(
    path: Any,
    out: PathLike,
    object: Optional[str] = None,
    assay: Optional[str] = None,
    compression: Optional[str] = None,
    storage_options: StorageOptions = None,
) -> None:
    """Write what :func:`read_anndata` gives as an ``.h5ad`` file with
    anndata's own writer (``python -m rdarrow to-h5ad in.rds -o out.h5ad``)."""
    _needs("to_h5ad()", "numpy", "pandas", "scipy.sparse", "anndata")
    from . import from_r as _ad

    _ad.to_h5ad(path, out, object=object, assay=assay, compression=compression, storage_options=storage_options)
