"""AnnData and MuData as R's single-cell objects, written without R.

``write_sce()`` and ``write_seurat()`` are ``read_anndata()`` (the module
``rdarrow.anndata``) read from right to left: each part of an AnnData goes
where R's packages keep it, as R's own constructors lay it out, and the
object is written by the engine's writer as any value is (the mapping of
``rdarrow._values``):

==================  ==============================  ===========================
AnnData             Seurat                          SingleCellExperiment
==================  ==============================  ===========================
X and layers        ``counts`` / ``data`` (v5       assays (X named by
                    ``Assay5`` layers, v4           ``uns["X"]``, else
                    ``Assay`` slots);               ``logcounts`` beside a
                    ``scale.data`` dense            ``counts`` layer, else
                                                    ``counts``)
obs                 ``meta.data`` (categoricals     colData
                    factors), identities from
                    ``ident`` (else the first
                    categorical)
var                 feature metadata;               rowData
                    ``highly_variable`` the
                    variable features
obsm ``X_*``        DimReduc objects (keys;         reducedDims (``X_pca``
                    loadings from ``varm``:         ``PCA``, ``X_umap``
                    ``PCs`` for pca; stdev from     ``UMAP``, ``X_tsne``
                    ``uns[name]["stdev"]``)         ``TSNE``)
obsp                Graph objects                   colPairs
varp                (a warning: Seurat has none)    rowPairs
uns                 ``misc``                        metadata
MuData              an assay per modality           the other modalities as
                                                    ``altExps``
==================  ==============================  ===========================

AnnData's cells x genes CSR matrix is R's genes x cells dgCMatrix as it
lies (the same three arrays, no copy, when its values are float64); a
dense matrix is written as its transpose, which is R's column-major
order (no copy). What R cannot hold in ``uns`` is listed in a warning,
never dropped silently.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from ._values import S4Value, matrix

__all__ = ["write_sce", "write_seurat"]

# SingleCellExperiment's version recorded in the objects written (its
# int_metadata), the release Debian 12 ships and the checks use.
SCE_VERSION = (1, 20, 0)
# SeuratObject's versions recorded in the objects written.
SEURAT_VERSION = {5: (5, 0, 0), 4: (4, 1, 3)}


def _note(text: str) -> None:
    from . import RDataWarning

    warnings.warn(text, RDataWarning, stacklevel=3)


def _s4(cls: str, package: str, **slots: Any) -> S4Value:
    return S4Value({"class": cls, "package": package, **slots})


def _version(v: Tuple[int, ...]) -> Any:
    """A ``package_version`` as R keeps it."""
    from ._values import Node, _vec

    inner = _vec("integer", np.asarray(v, dtype=np.int32))
    return Node(_vec("list", [inner], None, [("class", _vec("character", ["package_version", "numeric_version"]))]))


def _column(col: Any) -> Any:
    """A DataFrame column as an R vector without names."""
    import pandas as pd

    if isinstance(col, pd.Series):
        col = col.reset_index(drop=True)
        if col.dtype == object:
            values = col.tolist()
            if all(v is None or isinstance(v, str) for v in values):
                return values
        return col
    return col


def _dframe(nrows: int, columns: Optional[Dict[str, Any]] = None, rownames: Optional[List[str]] = None) -> S4Value:
    """An S4Vectors ``DFrame`` (``DataFrame()``)."""
    return _s4(
        "DFrame", "S4Vectors",
        rownames=rownames, nrows=int(nrows), elementType="ANY", elementMetadata=None, metadata=[],
        listData={k: _column(v) for k, v in (columns or {}).items()},
    )


def _frame_columns(df: Any, what: str) -> Dict[str, Any]:
    cols = {}
    for c in df.columns:
        if not isinstance(c, str):
            raise TypeError(f"{what}: column name {c!r} is not a str")
        cols[c] = df[c]
    return cols


def _names(index: Any, what: str) -> List[str]:
    names = list(index)
    bad = [n for n in names if not isinstance(n, str)]
    if bad:
        raise TypeError(f"{what}: name {bad[0]!r} is not a str (R's names are strings)")
    return names


def _genes_by_cells(m: Any, features: List[str], cells: List[str], where: str) -> Any:
    """A cells x genes matrix of AnnData as R's genes x cells: a CSR
    matrix is the dgCMatrix it already is (its arrays as they lie), a
    dense one its transpose (R's column-major order, a view)."""
    import scipy.sparse as sp

    if sp.issparse(m):
        if m.format != "csr":
            m = sp.csr_matrix(m)
        if not m.has_canonical_format:
            m = m.copy()
            m.sum_duplicates()
        t = sp.csc_matrix((m.data, m.indices, m.indptr), shape=(m.shape[1], m.shape[0]), copy=False)
        if t.dtype.kind not in "fb":
            t = t.astype(np.float64)
        return matrix(t, features, cells, where)
    if isinstance(m, np.ndarray) or isinstance(m, np.ma.MaskedArray):
        if m.ndim != 2:
            raise TypeError(f"{where}: a {m.ndim}-dimensional array, not a matrix")
        if m.dtype.kind not in "biuf":
            raise TypeError(f"{where}: a matrix of NumPy dtype {m.dtype}, not numbers")
        x = m.T
        if x.dtype.kind in "iu":
            x = x.astype(np.float64, order="F")
        return matrix(x, features, cells, where)
    if hasattr(m, "to_memory"):  # a backed (on-disk) AnnData's matrix
        return _genes_by_cells(m.to_memory(), features, cells, where)
    raise TypeError(f"{where}: a {type(m).__module__}.{type(m).__name__}, neither a NumPy array nor a scipy.sparse matrix")


def _self_hits(m: Any, n: int, where: str) -> S4Value:
    """An n x n sparse matrix (obsp, varp) as a ``SelfHits`` wrapped as
    SingleCellExperiment wraps its pairs (``DualSubset``), its values the
    ``x`` column, as ``colPair<-`` makes them of a sparse matrix."""
    import scipy.sparse as sp

    c = sp.coo_matrix(m)
    if c.shape != (n, n):
        raise ValueError(f"{where}: {c.shape[0]} x {c.shape[1]}, not {n} x {n}")
    order = np.lexsort((c.col, c.row))
    frm, to, val = c.row[order] + 1, c.col[order] + 1, np.asarray(c.data[order], dtype=np.float64)
    hits = _s4(
        "SelfHits", "S4Vectors",
        **{"from": frm.astype(np.int32), "to": to.astype(np.int32)},
        nLnode=int(n), nRnode=int(n),
        elementMetadata=_dframe(len(val), {"x": val}), metadata=[],
    )
    return _s4("DualSubset", "SingleCellExperiment", hits=hits)


def _uns(uns: Any, what: str) -> Dict[str, Any]:
    """``uns`` as R can hold it: each entry converted alone, those R cannot
    hold listed in a warning."""
    from ._values import to_r

    kept, lost = {}, []
    for k, v in dict(uns or {}).items():
        try:
            to_r(v, f"{what}${k}")
        except (TypeError, ValueError, OverflowError) as e:
            lost.append(f"{k} ({e})")
            continue
        kept[str(k)] = v
    if lost:
        _note(f"{what}: uns entries R cannot hold were not written: " + "; ".join(lost))
    return kept


_REDUCED = {"X_pca": "PCA", "X_umap": "UMAP", "X_tsne": "TSNE"}


def _reduced_name(key: str) -> str:
    return _REDUCED.get(key, key)


def _dense(x: Any, where: str) -> Optional[np.ndarray]:
    import pandas as pd
    import scipy.sparse as sp

    if isinstance(x, pd.DataFrame):
        if not all(k in "biuf" for k in x.dtypes.map(lambda d: np.dtype(d).kind if isinstance(d, np.dtype) else "O")):
            return None
        return x.to_numpy(dtype=np.float64)
    if sp.issparse(x):
        return x.toarray()
    x = np.asarray(x)
    return x if x.ndim == 2 and x.dtype.kind in "biuf" else None


def _experiment(adata: Any, where: str, x_name: Optional[str] = None, single_cell: bool = True) -> S4Value:
    """One AnnData as a SingleCellExperiment (or, for an alternative
    experiment, a SummarizedExperiment)."""
    import pandas as pd

    cells = _names(adata.obs_names, f"{where}: obs")
    features = _names(adata.var_names, f"{where}: var")
    n_obs, n_var = len(cells), len(features)
    uns = dict(adata.uns) if adata.uns is not None else {}
    x_name = x_name or uns.pop("X", None)
    uns.pop("rdarrow_unplaced", None)
    layers = dict(adata.layers) if adata.layers is not None else {}
    if not isinstance(x_name, str) or not x_name or x_name in layers:
        x_name = "logcounts" if "counts" in layers and "logcounts" not in layers else ("counts" if "counts" not in layers else "X")
    assays: Dict[str, Any] = {}
    if adata.X is not None:
        assays[x_name] = _genes_by_cells(adata.X, features, cells, f"{where}: X")
    for k, m in layers.items():
        assays[str(k)] = _genes_by_cells(m, features, cells, f"{where}: layers[{k!r}]")
    simple = _s4("SimpleList", "S4Vectors", listData=assays, elementType="ANY", elementMetadata=None, metadata=[])
    col_data = _dframe(n_obs, _frame_columns(adata.obs, f"{where}: obs"), cells)
    row_data = _dframe(n_var, _frame_columns(adata.var, f"{where}: var"))
    meta = uns.pop("metadata") if set(uns) == {"metadata"} and isinstance(uns.get("metadata"), dict) else uns
    metadata = _uns(meta, f"{where}: uns")
    if not single_cell:
        return _s4(
            "SummarizedExperiment", "SummarizedExperiment",
            colData=col_data, assays=_s4("SimpleAssays", "SummarizedExperiment", data=simple),
            NAMES=features, elementMetadata=row_data, metadata=metadata or [],
        )
    reduced = {}
    for k, v in (adata.obsm or {}).items():
        x = _dense(v, f"{where}: obsm[{k!r}]")
        if x is None or x.shape[0] != n_obs:
            _note(f"{where}: obsm[{k!r}] is not a numeric matrix of the cells: not written")
            continue
        reduced[_reduced_name(str(k))] = matrix(x, cells, None)
    if adata.varm is not None and len(adata.varm):
        _note(f"{where}: a SingleCellExperiment has no place for varm ({', '.join(map(str, adata.varm))}): not written")
    col_pairs = {str(k): _self_hits(v, n_obs, f"{where}: obsp[{k!r}]") for k, v in (adata.obsp or {}).items()}
    row_pairs = {str(k): _self_hits(v, n_var, f"{where}: varp[{k!r}]") for k, v in (adata.varp or {}).items()}
    int_col = {
        "reducedDims": _dframe(n_obs, reduced),
        "altExps": _dframe(n_obs, {}),
        "colPairs": _dframe(n_obs, col_pairs),
    }
    ranges = _empty_ranges(n_var, features, row_data)
    return _s4(
        "SingleCellExperiment", "SingleCellExperiment",
        int_elementMetadata=_dframe(n_var, {"rowPairs": _dframe(n_var, row_pairs)}),
        int_colData=_dframe(n_obs, int_col),
        int_metadata={"version": _version(SCE_VERSION)},
        rowRanges=ranges,
        colData=col_data,
        assays=_s4("SimpleAssays", "SummarizedExperiment", data=simple),
        NAMES=None,
        elementMetadata=_dframe(n_var),
        metadata=metadata or [],
    )


def _empty_ranges(n: int, features: List[str], row_data: S4Value) -> S4Value:
    """The ranges ``SingleCellExperiment()`` gives features without any: a
    ``CompressedGRangesList`` of empty ranges, ``rowData`` its metadata."""
    import pandas as pd

    def rle(values: Any) -> S4Value:
        return _s4("Rle", "S4Vectors", values=values, lengths=np.zeros(0, dtype=np.int32), elementMetadata=None, metadata=[])

    empty = np.zeros(0, dtype=np.int32)
    granges = _s4(
        "GRanges", "GenomicRanges",
        seqnames=rle(pd.Categorical([], categories=[])),
        ranges=_s4("IRanges", "IRanges", start=empty, width=empty, NAMES=None, elementType="ANY", elementMetadata=None, metadata=[]),
        strand=rle(pd.Categorical([], categories=["+", "-", "*"])),
        seqinfo=_s4(
            "Seqinfo", "GenomeInfoDb",
            seqnames=_strs([]), seqlengths=empty, is_circular=np.zeros(0, dtype=bool), genome=_strs([]),
        ),
        elementMetadata=_dframe(0),
        elementType="ANY",
        metadata=[],
    )
    return _s4(
        "CompressedGRangesList", "GenomicRanges",
        unlistData=granges,
        elementMetadata=row_data,
        elementType="GRanges",
        metadata=[],
        partitioning=_s4(
            "PartitioningByEnd", "IRanges",
            end=np.zeros(n, dtype=np.int32), NAMES=features, elementType="ANY", elementMetadata=None, metadata=[],
        ),
    )


def _strs(items: List[str]) -> Any:
    from ._values import Node, _chr

    return Node(_chr(items))


def _modalities(data: Any) -> Tuple[Dict[str, Any], Optional[str]]:
    """An AnnData alone, or a MuData's modalities (the main one first)."""
    mods = getattr(data, "mod", None)
    if mods is None:
        return {"": data}, None
    mods = dict(mods)
    if not mods:
        raise ValueError("the MuData has no modality")
    main = "rna" if "rna" in mods else next(iter(mods))
    return {main: mods[main], **{k: v for k, v in mods.items() if k != main}}, main


def _check_anndata(data: Any) -> None:
    if not (hasattr(data, "obs") and hasattr(data, "var") and (hasattr(data, "X") or hasattr(data, "mod"))):
        raise TypeError(f"expected an anndata.AnnData or a mudata.MuData, not a {type(data).__module__}.{type(data).__name__}")


def sce_object(data: Any) -> S4Value:
    """The SingleCellExperiment of an AnnData (a MuData: its first
    modality, ``rna`` when there is one, with the others as ``altExps``)."""
    _check_anndata(data)
    mods, main = _modalities(data)
    names = list(mods)
    sce = _experiment(mods[names[0]], names[0] or "adata")
    cells = list(mods[names[0]].obs_names)
    if main is not None:
        sce["int_metadata"] = {"version": _version(SCE_VERSION), "mainExpName": main}
        alts = {}
        for k in names[1:]:
            a = mods[k]
            if list(a.obs_names) != cells:
                raise ValueError(f"modality {k!r} has other cells than {names[0]!r}: an alternative experiment needs the same cells in the same order")
            se = _experiment(a, k, single_cell=False)
            alts[k] = _s4("SummarizedExperimentByColumn", "SingleCellExperiment", se=se)
        sce["int_colData"]["listData"]["altExps"] = _dframe(len(cells), alts)
    return sce


def _write(obj: Any, path: Any, compress: str, compression_level: Optional[int], version: int, storage_options: Any) -> None:
    from . import write_rdata, write_rds

    p = os.fspath(path) if not isinstance(path, str) else path
    if p.lower().endswith((".rdata", ".rda")):
        name = os.path.splitext(os.path.basename(p))[0]
        write_rdata({name: obj}, p, compress=compress, compression_level=compression_level, version=version, storage_options=storage_options)
    else:
        write_rds(obj, p, compress=compress, compression_level=compression_level, version=version, storage_options=storage_options)


def write_sce(
    data: Any,
    path: Any,
    compress: str = "gzip",
    compression_level: Optional[int] = None,
    version: int = 3,
    storage_options: Optional[dict] = None,
) -> None:
    """Write an AnnData (or a MuData) as a ``SingleCellExperiment`` in an
    ``.rds`` file (``.RData``/``.rda``: saved under the file's name) that
    R's ``readRDS()`` reads, without R (the module's table says where each
    part goes). Compressed on every core, as :func:`rdarrow.write_rds`."""
    _write(sce_object(data), path, compress, compression_level, version, storage_options)


def write_seurat(*args: Any, **kwargs: Any) -> None:  # defined below
    raise NotImplementedError
