"""AnnData and MuData as R's single-cell objects, written without R.

``sce_object()`` and ``seurat_object()`` (written by ``rdarrow.write_sce()``
and ``rdarrow.write_seurat()``) are ``read_anndata()`` (the module
``rdarrow.singlecell.from_r``) read from right to left: each part of an AnnData goes
where R's packages keep it, as R's own constructors lay it out, and the
object is written by the engine's writer as any value is (the mapping of
``rdarrow._values``):

==================  ==============================  ===========================
AnnData             Seurat                          SingleCellExperiment
==================  ==============================  ===========================
X                   ``data`` (v5 ``Assay5``         an assay (named by
                    layer, v4 ``Assay`` slot), or   ``uns["X"]``, else
                    ``counts`` when X is count-     ``logcounts`` beside a
                    like (non-negative whole        ``counts`` layer, else
                    numbers) and no ``counts``      ``counts``)
                    layer is given
layers              ``counts``, ``data``,           assays
                    ``scale.data`` (dense); v5
                    any other layer
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

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .._to_r import Node, character_node, matrix, to_r, vector_node
from .._values import S4Value
from .._errors import note
from .names import REDUCED

__all__ = ["sce_object", "seurat_object"]

# SingleCellExperiment's version recorded in the objects written (its
# int_metadata), the release Debian 12 ships and the checks use.
SCE_VERSION = (1, 20, 0)
# SeuratObject's versions recorded in the objects written.
SEURAT_VERSION = {5: (5, 3, 0), 4: (4, 1, 3)}




def _s4(cls: str, package: str, **slots: Any) -> S4Value:
    return S4Value({"class": cls, "package": package, **slots})


def _version(v: Tuple[int, ...]) -> Any:
    """A ``package_version`` as R keeps it."""
    inner = vector_node("integer", np.asarray(v, dtype=np.int32))
    return Node(vector_node("list", [inner], None, [("class", vector_node("character", ["package_version", "numeric_version"]))]))


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
    if hasattr(m, "compute") and hasattr(m, "shape"):  # a Dask array
        return _genes_by_cells(m.compute(), features, cells, where)
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
    kept, lost = {}, []
    for k, v in dict(uns or {}).items():
        try:
            to_r(v, f"{what}${k}")
        except (TypeError, ValueError, OverflowError) as e:
            lost.append(f"{k} ({e})")
            continue
        kept[str(k)] = v
    if lost:
        note(f"{what}: uns entries R cannot hold were not written: " + "; ".join(lost))
    return kept




def _reduced_name(key: str) -> str:
    return REDUCED.get(key, key)


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
            note(f"{where}: obsm[{k!r}] is not a numeric matrix of the cells: not written")
            continue
        reduced[_reduced_name(str(k))] = matrix(x, cells, None)
    if adata.varm is not None and len(adata.varm):
        note(f"{where}: a SingleCellExperiment has no place for varm ({', '.join(map(str, adata.varm))}): not written")
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
    return Node(character_node(items))


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


# ---------------------------------------------------------------------------
# Seurat
# ---------------------------------------------------------------------------

# Seurat's keys of the reductions scanpy names X_pca, X_umap, X_tsne
_KEYS = {"pca": "PC_", "umap": "UMAP_", "tsne": "tSNE_"}
# uns entries read_anndata() makes of a Seurat object's own slots and of
# its assays': not the object's misc
_SEURAT_UNS = ("X", "assay", "key", "assay.orig", "default", "rdarrow_unplaced", "commands", "tools", "images", "project.name", "version", "misc")


def _key(name: str) -> str:
    """A Seurat key (letters and digits, then ``_``) for ``name``."""
    import re

    k = _KEYS.get(name.lower())
    if k:
        return k
    k = re.sub(r"[^A-Za-z0-9]", "", name)
    if not k or not k[0].isalpha():
        k = "R" + k
    return k + "_"


def _frame(df: Any, rownames: Optional[List[str]], what: str) -> Any:
    """A pandas DataFrame as an R data frame (the Arrow bridge's types) with
    these row names (``None``: R's automatic ones)."""
    import pyarrow as pa

    for c in df.columns:
        if not isinstance(c, str):
            raise TypeError(f"{what}: column name {c!r} is not a str")
    table = pa.Table.from_pandas(df, preserve_index=False)
    table = table.replace_schema_metadata(None)
    if not len(df.columns) and rownames is None:
        # no columns: data.frame()'s list with its rows in R's compact row
        # names c(NA, -n), without names
        rows = np.array([np.iinfo(np.int32).min, -len(df)], dtype=np.int32)
        return Node(vector_node("list", [], None, [("class", character_node(["data.frame"])), ("row.names", vector_node("integer", rows))]))
    attrs = [] if rownames is None else [("row.names", character_node(rownames))]
    return Node(("frame", table.__arrow_c_stream__(), attrs))


def _logmap(rows: List[str], layers: List[str], present: Optional[Dict[str, np.ndarray]] = None) -> S4Value:
    """A SeuratObject ``LogMap``: which rows (cells or features) each layer
    has."""
    m = np.ones((len(rows), len(layers)), dtype=bool, order="F")
    for j, name in enumerate(layers):
        if present and name in present:
            m[:, j] = present[name]
    return _s4("LogMap", "SeuratObject", **{".Data": matrix(m, rows, layers)})


def _empty_matrix() -> np.ndarray:
    return np.zeros((0, 0), dtype=np.float64)


def _assay_parts(a: Any, where: str) -> Dict[str, Any]:
    """The matrices of one AnnData as Seurat's: counts, data and scale.data
    (genes x cells), and the features scale.data covers."""
    layers = dict(a.layers) if a.layers is not None else {}
    out: Dict[str, Any] = {}
    if "counts" in layers:
        out["counts"] = layers.pop("counts")
        if a.X is not None:
            out["data"] = a.X
    elif a.X is not None:
        # counts only when X holds counts: scaled or normalized values
        # are Seurat's data (NormalizeData() takes logs of counts)
        out["counts" if _count_like(a.X) else "data"] = a.X
    if "data" in layers and "data" not in out:
        out["data"] = layers.pop("data")
    scale = layers.pop("scale.data", None)
    scaled = None
    if scale is None and a.obsm is not None and "scale.data" in a.obsm:
        frame = a.obsm["scale.data"]
        scaled = [str(c) for c in frame.columns] if hasattr(frame, "columns") else None
        scale = np.asarray(frame, dtype=np.float64)
    if scale is not None:
        import scipy.sparse as sp

        out["scale.data"] = np.asarray(scale.toarray() if sp.issparse(scale) else scale, dtype=np.float64)
    return {"matrices": out, "others": layers, "scaled": scaled}


def _count_like(m: Any, chunk: int = 1 << 20) -> bool:
    """Whether matrix ``m`` holds counts: finite, non-negative whole
    numbers (a sparse matrix's stored values), checked a slice at a time."""
    import scipy.sparse as sp

    v = m.data if sp.issparse(m) else np.asarray(m)
    v = v.reshape(-1)
    if v.dtype.kind in "ub":
        return True
    if v.dtype.kind not in "if":
        return False
    for start in range(0, v.size, chunk):
        part = v[start:start + chunk]
        if v.dtype.kind == "i":
            if part.min() < 0:
                return False
        elif not np.all(np.isfinite(part) & (part >= 0) & (part == np.floor(part))):
            return False
    return True


def _counts_per_cell(m: Any) -> Tuple[np.ndarray, np.ndarray]:
    """nCount and nFeature of a cells x genes matrix, as CreateSeuratObject
    computes them."""
    import scipy.sparse as sp

    if sp.issparse(m):
        c = sp.csr_matrix(m)
        return np.asarray(c.sum(axis=1), dtype=np.float64).ravel(), np.diff(c.indptr).astype(np.int32)
    x = np.asarray(m)
    return x.sum(axis=1, dtype=np.float64), (x != 0).sum(axis=1).astype(np.int32)


def _seurat_assay(a: Any, name: str, version: int, where: str, first: bool = True) -> Tuple[S4Value, Any]:
    """One AnnData as an ``Assay5`` (v5) or ``Assay`` (v4), and its counts."""
    import pandas as pd

    cells = _names(a.obs_names, f"{where}: obs")
    features = _names(a.var_names, f"{where}: var")
    parts = _assay_parts(a, where)
    mats, scaled = parts["matrices"], parts["scaled"]
    if not mats:
        raise TypeError(f"{where}: an AnnData without X or layers has no matrix for an assay")
    if parts["others"]:
        if version == 5:
            mats.update(parts["others"])
        else:
            note(f"{where}: a v4 Assay holds counts, data and scale.data only: layers {', '.join(map(str, parts['others']))} were not written")
    var = a.var.copy()
    hv = var.pop("highly_variable") if "highly_variable" in var.columns else None
    var_features = [f for f, h in zip(features, np.asarray(hv, dtype=bool)) if h] if hv is not None else []
    # in the order of their rank (scanpy's highly_variable_rank, or
    # Seurat v5's var.features.rank), else the features' order
    for col in ("highly_variable_rank", "var.features.rank"):
        if col in var.columns:
            rank = dict(zip(features, pd.to_numeric(var[col], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)))
            var_features.sort(key=lambda f: (np.isnan(rank[f]), rank[f] if not np.isnan(rank[f]) else 0.0))
            break
    key = f"{name.lower()}_" if name.isalnum() else _key(name)
    if version == 5:
        layer_names = list(mats)
        layers = {}
        feature_rows: Dict[str, np.ndarray] = {}
        for k, m in mats.items():
            if k == "scale.data":
                cover = scaled or features
                rows = [features.index(f) for f in cover] if scaled else None
                x = np.asarray(m, dtype=np.float64)
                layers[k] = matrix(np.asfortranarray(x.T), None, None, f"{where}: scale.data")
                if scaled:
                    present = np.zeros(len(features), dtype=bool)
                    present[rows] = True
                    feature_rows[k] = present
            else:
                g = _genes_by_cells(m, None, None, f"{where}: {k}")
                layers[str(k)] = g
        rank = {f: i + 1 for i, f in enumerate(var_features)}
        # the columns VariableFeatures<- adds, when there are any
        meta = pd.DataFrame({
            "var.features": pd.array([f if f in rank else None for f in features], dtype="string"),
            "var.features.rank": pd.array([rank.get(f) for f in features], dtype="Int32"),
        }) if var_features else pd.DataFrame(index=range(len(features)))
        for c in var.columns:
            meta[c] = var[c].to_numpy() if not hasattr(var[c], "array") else var[c].array
        assay = _s4(
            "Assay5", "SeuratObject",
            layers=layers,
            cells=_logmap(cells, layer_names),
            features=_logmap(features, layer_names, feature_rows),
            default=1,
            **{"assay.orig": _strs([])},
            **{"meta.data": _frame(meta, None, f"{where}: var")},
            # CreateSeuratObject() marks its assay calcN; setting a second
            # layer (SetAssayData()) clears the mark
            misc={"calcN": True} if first and len(layer_names) == 1 else {},
            key=key,
        )
    else:
        counts = mats.get("counts")
        data = mats.get("data", counts)
        scale = mats.get("scale.data")
        if scale is not None:
            scale = matrix(np.asfortranarray(np.asarray(scale).T), scaled or features, cells)
        if counts is None:
            # data alone: CreateAssayObject(data = ) keeps an empty counts
            counts_value = _empty_matrix()
        else:
            counts_value = _genes_by_cells(counts, features, cells, f"{where}: counts") if "data" in mats else None
        assay = _s4(
            "Assay", "SeuratObject",
            counts=counts_value,
            data=_genes_by_cells(data, features, cells, f"{where}: data"),
            **{"scale.data": scale if scale is not None else _empty_matrix()},
            key=key,
            **{"assay.orig": None},
            # none: the logical(0) CreateAssayObject() leaves
            **{"var.features": _strs(var_features) if var_features else np.zeros(0, dtype=bool)},
            **{"meta.features": _frame(var, features, f"{where}: var")},
            misc=[],
        )
        if assay["counts"] is None:
            assay["counts"] = assay["data"]
    return assay, mats.get("counts")


def _reductions(a: Any, assay: str, where: str) -> Dict[str, S4Value]:
    cells = list(a.obs_names)
    features = list(a.var_names)
    uns = dict(a.uns or {})
    out = {}
    for k, v in (a.obsm or {}).items():
        k = str(k)
        if k == "scale.data":
            continue
        x = _dense(v, f"{where}: obsm[{k!r}]")
        if x is None or x.shape[0] != len(cells):
            note(f"{where}: obsm[{k!r}] is not a numeric matrix of the cells: not written")
            continue
        name = k[2:] if k.startswith("X_") else k
        info = uns.get(name) if isinstance(uns.get(name), dict) else {}
        key = info.get("key") if isinstance(info.get("key"), str) else _key(name)
        cols = [f"{key}{j + 1}" for j in range(x.shape[1])]
        load = (a.varm or {}).get("PCs" if name == "pca" else f"{name}_loadings") if a.varm is not None else None
        if load is not None:
            load = np.asarray(load, dtype=np.float64)
            load = matrix(np.asfortranarray(load), features, cols) if load.shape == (len(features), x.shape[1]) else None
        stdev = info.get("stdev")
        if stdev is None and info.get("variance") is not None:
            stdev = np.sqrt(np.asarray(info["variance"], dtype=np.float64))
        empty = _empty_matrix()
        jack = _s4(
            "JackStrawData", "SeuratObject",
            **{"empirical.p.values": empty, "fake.reduction.scores": empty, "empirical.p.values.full": empty, "overall.p.values": empty},
        )
        out[name] = _s4(
            "DimReduc", "SeuratObject",
            **{"cell.embeddings": matrix(np.asfortranarray(x, dtype=np.float64), cells, cols)},
            **{"feature.loadings": load if load is not None else empty},
            **{"feature.loadings.projected": empty},
            **{"assay.used": assay},
            **{"global": bool(info.get("global", False)) if not isinstance(info.get("global"), np.ndarray) else bool(np.asarray(info["global"]).ravel()[0])},
            stdev=np.zeros(0) if stdev is None else np.asarray(stdev, dtype=np.float64).ravel(),
            jackstraw=jack,
            misc=[],
            key=key,
        )
    return out


def _graph(m: Any, cells: List[str], assay: str, where: str) -> Any:
    import scipy.sparse as sp

    n = len(cells)
    g = sp.csc_matrix(m, dtype=np.float64)
    if g.shape != (n, n):
        raise ValueError(f"{where}: {g.shape[0]} x {g.shape[1]}, not {n} x {n}")
    g.sort_indices()
    g.r_class, g.r_package = "Graph", "SeuratObject"
    g.r_slots = {"factors": [], "assay.used": assay}
    g.dimnames = [cells, cells]
    return g


def seurat_object(data: Any, version: int = 5) -> S4Value:
    """The Seurat object of an AnnData (a MuData: an assay per modality,
    ``rna`` first, as ``RNA`` when it is the only one named so)."""
    import pandas as pd

    if version not in (4, 5):
        raise ValueError("version must be 5 (SeuratObject 5's Assay5) or 4 (Assay)")
    _check_anndata(data)
    mods, main = _modalities(data)
    names = list(mods)
    first = mods[names[0]]
    cells = _names(first.obs_names, "obs")
    assay_names = {k: ("RNA" if k in ("", "rna") else k) for k in names}
    assays, reductions, graphs = {}, {}, {}
    counts0 = None
    for k in names:
        a = mods[k]
        an = assay_names[k]
        where = k or "adata"
        if list(a.obs_names) != cells:
            raise ValueError(f"modality {k!r} has other cells than {names[0]!r}: the assays of a Seurat object share its cells")
        assays[an], counts = _seurat_assay(a, an, version, where, first=k == names[0])
        if counts0 is None:
            counts0 = counts
        reductions.update(_reductions(a, an, where))
        for g, m in (a.obsp or {}).items():
            graphs[str(g)] = _graph(m, cells, an, f"{where}: obsp[{g!r}]")
        if a.varp is not None and len(a.varp):
            note(f"{where}: a Seurat object has no place for varp ({', '.join(map(str, a.varp))}): not written")
    active = assay_names[names[0]]
    obs = first.obs.copy()
    ident = obs.pop("ident") if "ident" in obs.columns else None
    meta = pd.DataFrame(index=obs.index)
    meta["orig.ident"] = obs.pop("orig.ident") if "orig.ident" in obs.columns else pd.Categorical(["SeuratProject"] * len(cells))
    if counts0 is not None:
        n_count, n_feature = _counts_per_cell(counts0)
        meta[f"nCount_{active}"] = obs.pop(f"nCount_{active}") if f"nCount_{active}" in obs.columns else n_count
        meta[f"nFeature_{active}"] = obs.pop(f"nFeature_{active}") if f"nFeature_{active}" in obs.columns else n_feature
    for c in obs.columns:
        meta[c] = obs[c]
    if ident is None:
        ident = meta["orig.ident"]
    ident = pd.Series(pd.Categorical(ident), index=pd.Index(cells, dtype=object))
    uns = dict(first.uns or {})
    misc = dict(uns["misc"]) if isinstance(uns.get("misc"), dict) else {}
    for k, v in uns.items():
        if k not in _SEURAT_UNS and k not in reductions:
            misc[k] = v
    misc = _uns(misc, "uns")
    return _s4(
        "Seurat", "SeuratObject",
        assays=assays,
        **{"meta.data": _frame(meta, cells, "obs")},
        **{"active.assay": active},
        **{"active.ident": ident},
        graphs=graphs or [],
        neighbors=[],
        reductions=reductions or [],
        images=[],
        **{"project.name": "SeuratProject"},
        misc=misc or [],
        version=_version(SEURAT_VERSION[version]),
        commands=[],
        tools=[],
    )
