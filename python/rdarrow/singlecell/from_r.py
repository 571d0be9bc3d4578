"""Single-cell experiments saved by R, as ``anndata.AnnData``.

``read_anndata()`` reads a Seurat object (SeuratObject 3/4 ``Assay`` and
``SCTAssay``, SeuratObject 5 ``Assay5`` with its layers, split layers
joined by cell), a ``SingleCellExperiment``, a ``SummarizedExperiment`` or
a ``RangedSummarizedExperiment`` from an ``.rds``/``.RData`` file, and
places each part where AnnData users keep it:

========================  ===============================================
R                         AnnData
========================  ===============================================
the matrices, genes x     ``X`` and ``layers``, cells x genes: a dgCMatrix
cells                     of genes x cells is the CSR matrix of cells x
                          genes it already is (the same three buffers), a
                          dense matrix the transposed view of R's
Seurat: ``data``,         ``X`` = ``data`` (``counts`` when there is no
``counts``,               ``data``), ``layers["counts"]``; ``scale.data``
``scale.data``            in ``layers`` when it covers every feature, else
                          ``obsm["scale.data"]`` (cells x scaled features)
Seurat ``meta.data``,     ``obs`` (factors categoricals, levels in R's
``colData``               order); Seurat's active identities
                          ``obs["ident"]``
feature metadata,         ``var``; Seurat's variable features
``rowData``, ranges       ``var["highly_variable"]``; a
                          RangedSummarizedExperiment's ranges as
                          ``seqnames``, ``start``, ``end``, ``width``,
                          ``strand``
reductions,               ``obsm["X_<name>"]`` (``X_pca``, ``X_umap``...);
``reducedDims``           Seurat's feature loadings ``varm["PCs"]`` for
                          ``pca``, ``varm["<name>_loadings"]`` otherwise
                          (zeros for features they do not cover); stdev
                          ``uns["<name>"]``
graphs, neighbors,        ``obsp`` (``rowPairs``: ``varp``), by name
``colPairs``
``misc``, ``metadata``,   ``uns``
the rest
other assays,             each its own AnnData: the result is a
``altExps``               ``mudata.MuData`` of all (a ``dict`` without
                          mudata), the main experiment named by its
                          ``mainExpName`` (else ``main``); ``assay=``
                          reads one Seurat assay alone
========================  ===============================================

Anything rdarrow cannot place goes to ``uns`` (never dropped); a class it
does not know is an error naming the class and the slot.
"""

from __future__ import annotations

import contextlib
import os
import warnings
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from .. import _rdarrow
from .._errors import CorruptError, RDataError, UnsupportedError, UsageError, note
from .._values import nullable_array
from .._readers import read_objects
from .._sources import files_of
from .names import obsm_key

__all__ = ["from_h5ad", "read_anndata", "to_h5ad"]

_SEURAT = ("Seurat",)
_EXPERIMENTS = ("SingleCellExperiment", "SummarizedExperiment", "RangedSummarizedExperiment")


class _Unknown(Exception):
    pass




def _is_s4(v: Any, *classes: str) -> bool:
    return isinstance(v, dict) and "class" in v and "package" in v and (not classes or v["class"] in classes)


def _scalar(v: Any) -> Any:
    """The one value of a length-one vector."""
    if v is None:
        return None
    if isinstance(v, list):
        return v[0] if v else None
    a = np.ma.getdata(np.asarray(v)).ravel()
    return a[0].item() if a.size else None


def _strings(v: Any) -> Optional[List[str]]:
    if v is None:
        return None
    if hasattr(v, "tolist") and not isinstance(v, list):
        v = v.tolist()
    return [str(x) if x is not None else "NA" for x in v]


def _matrix(m: Any) -> Any:
    """An R matrix as read: scipy.sparse, an ndarray, or a DataFrame (its
    dimnames), as the matrix without labels."""
    import scipy.sparse as sp

    if sp.issparse(m):
        return m
    if hasattr(m, "to_numpy"):
        dtypes = set(map(str, getattr(m, "dtypes", [])))
        if any(d in ("Float64", "Int32", "boolean") for d in dtypes):
            return m.to_numpy(dtype="float64", na_value=np.nan)
        return m.to_numpy()
    if isinstance(m, np.ma.MaskedArray):
        return np.ma.filled(m.astype("float64"), np.nan)
    if isinstance(m, np.ndarray):
        return m
    raise _Unknown(type(m).__name__)


def _dimnames(m: Any) -> List[Optional[List[str]]]:
    if hasattr(m, "dimnames"):
        dn = m.dimnames or [None, None]
        return [_strings(d) for d in dn]
    if hasattr(m, "index") and hasattr(m, "columns"):
        return [_strings(m.index), _strings(m.columns)]
    return [None, None]


def _cells_by_genes(m: Any, slot: str) -> Any:
    """A genes x cells matrix as cells x genes: a CSC matrix's transpose is
    the CSR matrix of the same buffers, a dense one's a view."""
    try:
        x = _matrix(m)
    except _Unknown as e:
        cls = m.get("class") if isinstance(m, dict) else e.args[0]
        raise _unknown(cls, slot) from None
    return x.T


def _unknown(cls: Any, slot: str) -> Exception:
    return UnsupportedError(f"{slot}: a {cls} is not a matrix rdarrow can place in an AnnData")


def _corrupt(where: str, what: str) -> Exception:
    """An object whose parts disagree: a ``CorruptError`` naming the part
    (``pbmc@assays$RNA@cells: ...``)."""
    return CorruptError(f"{where}: {what}")


@contextlib.contextmanager
def _at(where: str) -> Any:
    """Assembling the part at ``where``: a disagreement of its parts that
    the checks here did not name still ends in a ``CorruptError`` naming
    the part, never in a stray ``KeyError``, ``IndexError`` or
    ``ValueError``."""
    try:
        yield
    except RDataError:
        raise
    except (KeyError, IndexError, ValueError, TypeError, AttributeError, OverflowError) as e:
        raise _corrupt(where, f"its parts do not agree ({type(e).__name__}: {e})") from e


def _empty(m: Any) -> bool:
    return m is None or (hasattr(m, "shape") and 0 in m.shape)


def _frame_column(col: Any) -> Any:
    import pandas as pd

    if isinstance(col, pd.Series):
        return col.array
    if isinstance(col, np.ma.MaskedArray):
        return nullable_array(col)
    if isinstance(col, list):
        return pd.array(col, dtype="string")
    return col


def _dframe(d: Any, what: str, leftover: Dict[str, Any], root: str) -> "Any":
    """An S4Vectors ``DFrame`` (``colData``, ``rowData``) as a pandas
    DataFrame: nested frames flattened (``a.b``); columns that are not
    vectors kept in ``leftover`` (by ``what``, the frame's place in the
    object ``root``)."""
    import pandas as pd

    if d is None:
        return pd.DataFrame()
    if hasattr(d, "columns") and hasattr(d, "index"):
        return d
    n = int(_scalar(d.get("nrows")) or 0)
    cols = d.get("listData") or {}
    if isinstance(cols, list):
        cols = {str(k): v for k, v in enumerate(cols)}
    out: Dict[str, Any] = {}
    for name, col in cols.items():
        if _is_s4(col, "DFrame", "DataFrame"):
            inner = _dframe(col, f"{what}${name}", leftover, root)
            for c in inner.columns:
                out[f"{name}.{c}"] = inner[c].array
            continue
        col = _frame_column(col)
        if hasattr(col, "__len__") and len(col) == n and getattr(col, "ndim", 1) == 1:
            out[name] = col
        else:
            leftover[f"{what}${name}"] = col
    rownames = _strings(d.get("rownames"))
    if rownames is not None and len(rownames) != n:
        raise _corrupt(f"{root}@{what}", f"{len(rownames)} row names for {n} rows (nrows)")
    df = pd.DataFrame(out, index=pd.RangeIndex(n) if not out else None)
    if rownames is not None:
        df.index = pd.Index(rownames)
    return df


def _hits(h: Dict[str, Any], n: int, where: str) -> Any:
    """A ``SelfHits`` (``colPairs``) as an n x n sparse matrix."""
    import scipy.sparse as sp

    if _is_s4(h, "DualSubset"):
        h = h["hits"]
    frm = np.ma.getdata(np.asarray(h["from"])).astype(np.int64) - 1
    to = np.ma.getdata(np.asarray(h["to"])).astype(np.int64) - 1
    if len(frm) != len(to):
        raise _corrupt(where, f"from has {len(frm)} hits but to has {len(to)}")
    for slot, k in (("from", frm), ("to", to)):
        bad = np.flatnonzero((k < 0) | (k >= n))
        if bad.size:
            raise _corrupt(where, f"{slot}[{bad[0] + 1}] is {k[bad[0]] + 1}, outside the {n} nodes")
    meta = h.get("elementMetadata")
    value = None
    if _is_s4(meta):
        lst = meta.get("listData") or {}
        # a matrix made pairs by colPair<- has its values as "x"
        key = "value" if isinstance(lst, dict) and "value" in lst else "x"
        if isinstance(lst, dict) and key in lst:
            value = np.ma.filled(np.ma.asarray(lst[key]).astype("float64"), np.nan)
    if value is None:
        value = np.ones(len(frm))
    if len(value) != len(frm):
        raise _corrupt(where, f"{len(value)} values for {len(frm)} hits")
    return sp.csr_matrix((value, (frm, to)), shape=(n, n))


def _uns(value: Any) -> Any:
    """A value as h5ad can hold it in ``uns``: dicts by string keys,
    arrays, frames, strings and numbers; a list of strings an array of
    strings, another list a dict by position; what has no such form its
    ``repr``."""
    import pandas as pd
    import scipy.sparse as sp

    if value is None:
        return "NULL"
    if isinstance(value, dict):
        return {str(k) if str(k) else "_": _uns(v) for k, v in value.items()}
    if isinstance(value, (str, bool, int, float, np.generic)):
        return value
    if isinstance(value, list):
        if value and all(isinstance(v, str) for v in value):
            return np.array(value, dtype=object)
        return {str(i): _uns(v) for i, v in enumerate(value)}
    if isinstance(value, np.ma.MaskedArray):
        if value.dtype.kind in "iufb":
            return np.ma.filled(value.astype("float64"), np.nan)
        return np.ma.getdata(value)
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "Mm":
            return value.astype(str).astype(object)
        return value
    if sp.issparse(value):
        return value.tocsr()
    if isinstance(value, pd.Series):
        return {"names": np.array(_strings(value.index), dtype=object), "values": _uns(np.asarray(value))}
    if isinstance(value, pd.DataFrame):
        # h5ad needs distinct column names, which R's matrices need not
        # have: made distinct as R's make.unique() does
        df = value.copy()
        df.index = df.index.astype(str)
        df.columns = _unique([str(c) for c in df.columns])
        return df
    if isinstance(value, pd.Categorical):
        return np.asarray(value.astype(object).fillna("NA"), dtype=object)
    if isinstance(value, bytes):
        return np.frombuffer(value, dtype=np.uint8)
    if hasattr(value, "to_numpy"):
        return np.asarray(value.to_numpy()).astype(str).astype(object)
    return repr(value)


def _unique(names: List[str]) -> List[str]:
    """``names`` made distinct as R's ``make.unique()`` makes them: a
    repeated name gets ``.1``, ``.2``, ..."""
    seen = set(names)
    count: Dict[str, int] = {}
    out = []
    for n in names:
        if n in count:
            k = count[n]
            while f"{n}.{k}" in seen:
                k += 1
            count[n] = k + 1
            seen.add(f"{n}.{k}")
            out.append(f"{n}.{k}")
        else:
            count[n] = 1
            out.append(n)
    return out


def _feature_loadings(dr: Dict[str, Any], features: List[str], where: str) -> Optional[np.ndarray]:
    """A reduction's loadings by the assay's features (zeros for features
    they do not cover); loadings of features the assay does not have are
    an error."""
    fl = dr.get("feature.loadings")
    if _empty(fl):
        return None
    x = _matrix(fl)
    names = _dimnames(fl)[0]
    out = np.zeros((len(features), x.shape[1]), dtype=x.dtype if x.dtype.kind == "f" else "float64")
    if names is None:
        if x.shape[0] != len(features):
            raise _corrupt(where, f"{x.shape[0]} rows without names for the assay's {len(features)} features")
        out[:] = x
        return out
    pos = {f: i for i, f in enumerate(features)}
    rows = np.array([pos.get(n, -1) for n in names], dtype=np.int64)
    if (rows < 0).any():
        raise _corrupt(where, f"feature {names[int(np.flatnonzero(rows < 0)[0])]!r} is not among the assay's features")
    out[rows] = x
    return out


def _embeddings(dr: Dict[str, Any], cells: List[str], where: str) -> Optional[np.ndarray]:
    """A reduction's cell embeddings in the object's cell order: its rows
    must be the object's cells."""
    ce = dr.get("cell.embeddings")
    if _empty(ce):
        return None
    x = _matrix(ce)
    o = _order(_dimnames(ce)[0], cells, where, "rows")
    if o is not None:
        x = x[o]
    if x.shape[0] != len(cells):
        raise _corrupt(where, f"{x.shape[0]} rows for the object's {len(cells)} cells")
    return np.ascontiguousarray(x)


def _order(names: Optional[List[str]], cells: List[str], where: str, what: str) -> Optional[np.ndarray]:
    """Where each of ``cells`` is in ``names`` (``None``: the same order, or
    no names); names that are not the same cells are an error at
    ``where`` (``what``: what the names label)."""
    if names is None or names == cells:
        return None
    pos = {c: i for i, c in enumerate(names)}
    if len(names) != len(cells) or len(pos) != len(names):
        raise _corrupt(where, f"{len(names)} {what} ({len(pos)} distinct) for the object's {len(cells)} cells")
    missing = next((c for c in cells if c not in pos), None)
    if missing is not None:
        raise _corrupt(where, f"the object's cell {missing!r} is not among its {what}")
    return np.array([pos[c] for c in cells])


def _annotations(df: Any) -> Any:
    """``obs``/``var`` columns as AnnData holds and writes them: doubles
    float64 (R's ``NA`` NaN: h5ad has no masked floats), integers and
    logicals without ``NA`` plain NumPy (with ``NA`` pandas' nullable
    arrays, which h5ad keeps), strings and factors as they are."""
    import pandas as pd

    out = {}
    for name in df.columns:
        col = df[name]
        dt = str(col.dtype)
        if dt in ("Float64", "Float32"):
            col = col.to_numpy(dtype="float64", na_value=np.nan)
        elif dt in ("Int32", "Int64", "Int16", "Int8", "boolean") and not col.isna().any():
            col = col.to_numpy(dtype=dt.lower().replace("boolean", "bool"))
        out[str(name)] = col.array if isinstance(col, pd.Series) else col
    res = pd.DataFrame(out, index=df.index)
    res.index = res.index.astype(str)
    return res


def _anndata(X: Any, obs: Any, var: Any, **parts: Any) -> Any:
    import anndata as ad

    obs, var = _annotations(obs), _annotations(var)
    with warnings.catch_warnings():
        # anndata notes that it makes the obs/var names strings
        warnings.simplefilter("ignore", category=UserWarning)
        warnings.simplefilter("ignore", category=FutureWarning)
        return ad.AnnData(X=X, obs=obs, var=var, **{k: v for k, v in parts.items() if v})


# --- Seurat ----------------------------------------------------------------


def _layer_group(name: str) -> str:
    for base in ("scale.data", "counts", "data"):
        if name == base or name.startswith(base + "."):
            return base
    return name.split(".", 1)[0]


def _logmap(m: Any, where: str) -> "tuple[List[str], List[str], np.ndarray]":
    """A SeuratObject 5 ``LogMap`` (a logical matrix: rows the cells or
    features, columns the layers) as its row names, column names and
    values."""
    try:
        x = _matrix(m)
    except _Unknown:
        raise _corrupt(where, f"a LogMap must be a logical matrix, not a {type(m).__name__}") from None
    rows, cols = _dimnames(m)
    if x.ndim != 2 or rows is None or cols is None:
        raise _corrupt(where, "a LogMap must be a matrix with row names (cells or features) and column names (layers)")
    return rows, cols, np.asarray(x, dtype=bool)


def _joined(pieces: List["tuple[Any, List[str], List[str]]"], cells: List[str], features: List[str]) -> Any:
    """A layer split by sample (``counts.1``, ``counts.2``...) joined back:
    cells x features in the object's cell order."""
    import scipy.sparse as sp

    cpos = {c: i for i, c in enumerate(cells)}
    fpos = {f: i for i, f in enumerate(features)}
    if len(pieces) == 1:
        m, pc, pf = pieces[0]
        x = _cells_by_genes(m, "layers")
        if pc == cells and pf == features:
            return x
        pieces_x = [(x, pc, pf)]
    else:
        pieces_x = [(_cells_by_genes(m, "layers"), pc, pf) for m, pc, pf in pieces]
    if all(sp.issparse(x) for x, _, _ in pieces_x):
        rows, cols, vals = [], [], []
        for x, pc, pf in pieces_x:
            x = x.tocsr()
            r = np.array([cpos[c] for c in pc], dtype=np.int64)
            f = np.array([fpos[c] for c in pf], dtype=np.int64)
            rows.append(np.repeat(r, np.diff(x.indptr)))
            cols.append(f[x.indices])
            vals.append(x.data)
        dtype = np.result_type(*[v.dtype for v in vals])
        return sp.csr_matrix(
            (np.concatenate(vals).astype(dtype, copy=False), (np.concatenate(rows), np.concatenate(cols))),
            shape=(len(cells), len(features)),
        )
    out = np.zeros((len(cells), len(features)))
    for x, pc, pf in pieces_x:
        x = x.toarray() if sp.issparse(x) else x
        out[np.ix_([cpos[c] for c in pc], [fpos[f] for f in pf])] = x
    return out


def _assay5(a: Dict[str, Any], name: str, cells: List[str], leftover: Dict[str, Any], where: str) -> Any:
    import pandas as pd

    cell_rows, cell_layers, cell_map = _logmap(a.get("cells"), f"{where}@cells")
    feat_rows, feat_layers, feat_map = _logmap(a.get("features"), f"{where}@features")
    known: Optional[set] = None  # the object's cells, made once when needed
    layers = a.get("layers") or {}
    if not isinstance(layers, dict):
        raise _corrupt(f"{where}@layers", f"a named list of matrices, not a {type(layers).__name__}")
    groups: Dict[str, list] = {}
    for lname, m in layers.items():
        if lname not in cell_layers or lname not in feat_layers:
            leftover[f"assays${name}@layers${lname}"] = m
            continue
        pc = [c for c, keep in zip(cell_rows, cell_map[:, cell_layers.index(lname)]) if keep]
        pf = [f for f, keep in zip(feat_rows, feat_map[:, feat_layers.index(lname)]) if keep]
        shape = getattr(m, "shape", None)
        if shape is not None and tuple(shape) != (len(pf), len(pc)):
            raise _corrupt(
                f"{where}@layers${lname}",
                f"{shape[0]} x {shape[1]}, but the features and cells LogMaps give it {len(pf)} x {len(pc)}",
            )
        if pc != cells:  # a piece of the cells: each must be one of them
            known = set(cells) if known is None else known
            stranger = next((c for c in pc if c not in known), None)
        else:
            stranger = None
        if stranger is not None:
            raise _corrupt(f"{where}@cells", f"cell {stranger!r} of layer {lname} is not among the object's cells")
        groups.setdefault(_layer_group(lname), []).append((m, pc, pf))
    features = feat_rows
    joined = {}
    for g, p in groups.items():
        with _at(f"{where}@layers"):
            joined[g] = _joined(p, cells, features)
    xname = "data" if "data" in joined else ("counts" if "counts" in joined else next(iter(joined), None))
    X = joined.pop(xname) if xname else None
    meta = a.get("meta.data")
    var = meta if hasattr(meta, "columns") else pd.DataFrame(index=features)
    if len(var) == len(features):
        var.index = pd.Index(features)
    else:
        leftover[f"assays${name}@meta.data"] = var
        var = pd.DataFrame(index=pd.Index(features))
    if "var.features" in var.columns:
        var["highly_variable"] = ~pd.isna(var["var.features"])
    uns = {k: a.get(k) for k in ("key", "assay.orig", "misc", "default") if a.get(k) is not None}
    uns["X"] = xname
    return X, var, joined, {}, uns


def _assay_v3(a: Dict[str, Any], name: str, cells: List[str], leftover: Dict[str, Any], where: str) -> Any:
    import pandas as pd

    counts, data = a.get("counts"), a.get("data")
    main = data if not _empty(data) else counts
    if _empty(main):
        raise _unknown(a.get("class"), f"assays${name}: an assay without counts or data")
    slot = "data" if main is data else "counts"
    features, mcells = _dimnames(main)
    X = _cells_by_genes(main, f"assays${name}@{slot}")
    order = _order(mcells, cells, f"{where}@{slot}", "columns")
    if order is not None:
        X = X[order]
    if X.shape[0] != len(cells):
        raise _corrupt(f"{where}@{slot}", f"{X.shape[0]} columns for the object's {len(cells)} cells")
    layers: Dict[str, Any] = {}
    obsm: Dict[str, Any] = {}
    if not _empty(data) and not _empty(counts):
        if counts.shape != data.shape:
            raise _corrupt(f"{where}@counts", f"{counts.shape[0]} x {counts.shape[1]}, but data is {data.shape[0]} x {data.shape[1]}")
        c = _cells_by_genes(counts, f"assays${name}@counts")
        layers["counts"] = c if order is None else c[order]
    scale = a.get("scale.data")
    if not _empty(scale):
        s = _cells_by_genes(scale, f"assays${name}@scale.data")
        srows, scols = _dimnames(scale)
        so = _order(scols, cells, f"{where}@scale.data", "columns")
        s = s if so is None else s[so]
        if s.shape[0] != len(cells):
            raise _corrupt(f"{where}@scale.data", f"{s.shape[0]} columns for the object's {len(cells)} cells")
        fset = set(features or [])
        stranger = next((f for f in srows or [] if f not in fset), None)
        if stranger is not None:
            raise _corrupt(f"{where}@scale.data", f"feature {stranger!r} is not among the assay's features")
        if srows == features:
            layers["scale.data"] = np.ascontiguousarray(s)
        else:
            obsm["scale.data"] = pd.DataFrame(np.asarray(s), index=pd.Index(cells), columns=srows)
    features = features or [str(i) for i in range(X.shape[1])]
    meta = a.get("meta.features")
    var = meta if hasattr(meta, "columns") and len(meta) == len(features) else pd.DataFrame(index=features)
    var.index = pd.Index(features)
    vf = _strings(a.get("var.features")) or []
    if vf:
        var["highly_variable"] = var.index.isin(vf)
        # their order (Seurat's, by variance), as scanpy's rank column
        rank = {f: i for i, f in enumerate(vf)}
        var["highly_variable_rank"] = np.array([rank.get(f, np.nan) for f in var.index], dtype=np.float64)
    uns = {k: a.get(k) for k in ("key", "assay.orig", "misc") if a.get(k) is not None}
    for k, v in a.items():
        if k not in ("class", "package", "counts", "data", "scale.data", "meta.features", "var.features", "key", "assay.orig", "misc"):
            uns[k] = v  # SCTAssay's SCTModel.list, and any other slot
    return X, var, layers, obsm, uns


def _seurat(obj: Dict[str, Any], assay: Optional[str], where: str) -> Any:
    import pandas as pd
    import scipy.sparse as sp

    assays = obj.get("assays") or {}
    if not isinstance(assays, dict) or not assays:
        raise _corrupt(f"{where}@assays", "a Seurat object needs a named list of assays")
    meta = obj.get("meta.data")
    if not hasattr(meta, "columns"):
        meta = pd.DataFrame()
    default = _scalar(obj.get("active.assay")) or next(iter(assays), None)
    if assay is not None and assay not in assays:
        raise UsageError(f"the Seurat object has no assay {assay!r} (it has: {', '.join(assays)})")
    if default not in assays:
        raise _corrupt(f"{where}@active.assay", f"{default!r} is not among the assays ({', '.join(assays)})")
    names = [assay] if assay else [default] + [a for a in assays if a != default]
    cells = _strings(meta.index) if len(meta) else None
    out: Dict[str, Any] = {}
    for aname in names:
        a = assays[aname]
        at = f"{where}@assays${aname}"
        leftover: Dict[str, Any] = {}
        if not _is_s4(a):
            raise _unknown(type(a).__name__, f"assays${aname}")
        with _at(at):
            if a["class"] == "Assay5" or "layers" in a:
                if cells is None:
                    cells = _logmap(a.get("cells"), f"{at}@cells")[0]
                X, var, layers, obsm, uns = _assay5(a, aname, cells, leftover, at)
            elif a["class"] in ("Assay", "SCTAssay") or "counts" in a:
                if cells is None:
                    cells = _dimnames(a.get("data") if not _empty(a.get("data")) else a.get("counts"))[1]
                    if cells is None:
                        raise _corrupt(at, "neither meta.data nor the assay's matrix names the cells")
                X, var, layers, obsm, uns = _assay_v3(a, aname, cells, leftover, at)
            else:
                raise _unknown(a["class"], f"assays${aname}")
        if X is not None and X.shape[0] != len(cells):
            raise _corrupt(f"{where}@meta.data", f"{len(cells)} rows for the {X.shape[0]} cells of assay {aname}")
        obs = meta.copy() if len(meta) else pd.DataFrame(index=pd.Index(cells))
        obs.index = pd.Index(cells)
        ident = obj.get("active.ident")
        if ident is not None and "ident" not in obs.columns and len(ident) == len(cells):
            obs["ident"] = ident.array if hasattr(ident, "array") else ident
        uns = {"assay": aname, **uns}
        if leftover:
            uns["rdarrow_unplaced"] = leftover
        out[aname] = dict(X=X, obs=obs, var=var, layers=layers, obsm=obsm, varm={}, obsp={}, uns=uns)
    first = out[names[0]]
    n = len(cells)
    # reductions, graphs and neighbors: to the assay they were made from
    for rname, dr in (obj.get("reductions") or {}).items():
        at = f"{where}@reductions${rname}"
        used = _scalar(dr.get("assay.used")) if _is_s4(dr) else None
        target = out.get(used, first)
        if not _is_s4(dr):
            target["uns"].setdefault("rdarrow_unplaced", {})[f"reductions${rname}"] = dr
            continue
        with _at(at):
            emb = _embeddings(dr, cells, f"{at}@cell.embeddings")
            if emb is not None:
                target["obsm"][f"X_{rname}"] = emb
            # loadings by the features of the assay they were made from,
            # when that assay is read
            if used is None or used in out:
                load = _feature_loadings(dr, list(target["var"].index), f"{at}@feature.loadings")
                if load is not None:
                    target["varm"]["PCs" if rname == "pca" else f"{rname}_loadings"] = load
            elif not _empty(dr.get("feature.loadings")):
                target["uns"].setdefault("rdarrow_unplaced", {})[f"reductions${rname}@feature.loadings"] = dr.get("feature.loadings")
            info = {k: v for k, v in dr.items() if k not in ("class", "package", "cell.embeddings", "feature.loadings")}
            stdev = dr.get("stdev")
            if stdev is not None and len(stdev):
                info["variance"] = np.asarray(stdev, dtype="float64") ** 2
        target["uns"][rname] = info
    for gname, g in {**(obj.get("graphs") or {}), **(obj.get("neighbors") or {})}.items():
        at = f"{where}@{'graphs' if gname in (obj.get('graphs') or {}) else 'neighbors'}${gname}"
        slots = getattr(g, "r_slots", None) or {}
        target = out.get(_scalar(slots.get("assay.used")), first)
        with _at(at):
            if sp.issparse(g):
                if g.shape != (n, n):
                    raise _corrupt(at, f"{g.shape[0]} x {g.shape[1]} for the object's {n} cells")
                rows, cols = _dimnames(g)
                m = g.tocsr()
                ro, co = _order(rows, cells, at, "rows"), _order(cols, cells, at, "columns")
                if ro is not None:
                    m = m[ro]
                if co is not None:
                    m = m[:, co]
                target["obsp"][gname] = m
            elif _is_s4(g, "Neighbor"):
                idx = np.ma.getdata(np.asarray(_matrix(g["nn.idx"]))).astype(np.int64) - 1
                dist = np.asarray(_matrix(g["nn.dist"]), dtype="float64")
                if idx.ndim != 2 or idx.shape != dist.shape or idx.shape[0] != n:
                    raise _corrupt(at, f"nn.idx is {' x '.join(map(str, idx.shape))} and nn.dist {' x '.join(map(str, dist.shape))} for the object's {n} cells")
                bad = np.flatnonzero((idx < 0) | (idx >= n))
                if bad.size:
                    raise _corrupt(f"{at}@nn.idx", f"value {int(idx.ravel()[bad[0]]) + 1} is outside the {n} cells")
                o = _order(_strings(g.get("cell.names")), cells, f"{at}@cell.names", "cell names")
                k = idx.shape[1]
                m = sp.csr_matrix((dist.ravel(), idx.ravel(), np.arange(0, n * k + 1, k)), shape=(n, n))
                if o is not None:
                    m = m[o][:, o]
                target["obsp"][gname] = m
            else:
                target["uns"].setdefault("rdarrow_unplaced", {})[f"graphs${gname}"] = g
    for slot in ("misc", "commands", "tools", "images", "project.name", "version"):
        v = obj.get(slot)
        if v is not None and not (isinstance(v, (dict, list)) and not v):
            first["uns"][slot] = v
    made = {}
    for k, v in out.items():
        with _at(f"{where}@assays${k}"):
            made[k] = _anndata(v.pop("X"), v.pop("obs"), v.pop("var"), **{p: (_uns(q) if p == "uns" else q) for p, q in v.items()})
    return _several(made, names[0])


# --- SummarizedExperiment, SingleCellExperiment --------------------------------


def _place(name: str, value: Any, n: int, frame: Any, leftover: Dict[str, Any], where: str, root: str) -> None:
    """A per-cell (per-feature) vector into ``frame``, anything else into
    ``leftover`` (``uns``)."""
    if _is_s4(value, "DFrame", "DataFrame"):
        inner = _dframe(value, f"{where}${name}", leftover, root)
        if len(inner.columns) == 0:
            return
        if len(inner) == n:
            for c in inner.columns:
                frame[f"{name}.{c}"] = inner[c].to_numpy()
            return
    col = _frame_column(value)
    if hasattr(col, "__len__") and len(col) == n and getattr(col, "ndim", 1) == 1 and name not in frame.columns:
        frame[name] = col
    else:
        leftover[f"{where}${name}"] = value


def _row_names_and_ranges(se: Dict[str, Any], leftover: Dict[str, Any], where: str) -> "tuple[Optional[List[str]], Any]":
    """A (Ranged)SummarizedExperiment's feature names and ``rowData``
    (a GRanges' ranges as columns)."""
    import pandas as pd

    rr = se.get("rowRanges")
    if rr is None:
        names = _strings(se.get("NAMES"))
        return names, _dframe(se.get("elementMetadata"), "elementMetadata", leftover, where)
    if not _is_s4(rr):
        raise _corrupt(f"{where}@rowRanges", f"ranges, not a {type(rr).__name__}")
    meta = _dframe(rr.get("elementMetadata"), "rowRanges@elementMetadata", leftover, where)
    if rr.get("class") == "GRanges":
        at = f"{where}@rowRanges@ranges"
        ranges = rr.get("ranges") or {}
        names = _strings(ranges.get("NAMES"))
        start = np.ma.getdata(np.asarray(ranges["start"])).astype(np.int64)
        width = np.ma.getdata(np.asarray(ranges["width"])).astype(np.int64)
        if len(start) != len(width) or (names is not None and len(names) != len(start)):
            raise _corrupt(at, f"{len(start)} starts, {len(width)} widths and {len(names or [])} names")
        n = len(start)
        cols = {
            "seqnames": _rle(rr.get("seqnames"), n, f"{where}@rowRanges@seqnames"),
            "start": start,
            "end": start + width - 1,
            "width": width,
            "strand": _rle(rr.get("strand"), n, f"{where}@rowRanges@strand"),
        }
        ranges_df = pd.DataFrame({k: v for k, v in cols.items() if v is not None and len(v) == len(start)})
        meta = pd.concat([ranges_df, meta.reset_index(drop=True)], axis=1) if len(meta.columns) else ranges_df
    else:
        part = rr.get("partitioning") or {}
        names = _strings(part.get("NAMES"))
    return names, meta


def _rle(r: Any, n: int, where: str) -> Any:
    """An S4Vectors ``Rle`` of ``n`` values expanded."""
    import pandas as pd

    if not _is_s4(r, "Rle"):
        return None
    values, lengths = r.get("values"), np.ma.getdata(np.asarray(r.get("lengths"))).astype(np.int64)
    if values is None or len(values) != len(lengths) or (lengths < 0).any() or int(lengths.sum()) != n:
        raise _corrupt(where, f"{0 if values is None else len(values)} values and {len(lengths)} run lengths (adding to {int(lengths[lengths > 0].sum())}) for {n} ranges")
    if isinstance(values, pd.Categorical):
        return pd.Categorical.from_codes(np.repeat(values.codes, lengths), categories=values.categories)
    return np.repeat(np.asarray(values, dtype=object), lengths)


def _experiment(se: Dict[str, Any], assay: Optional[str], name: str, where: str) -> Dict[str, Any]:
    with _at(where):
        return _experiment_parts(se, assay, name, where)


def _experiment_parts(se: Dict[str, Any], assay: Optional[str], name: str, where: str) -> Dict[str, Any]:
    import pandas as pd

    leftover: Dict[str, Any] = {}
    assays = se.get("assays") or {}
    data = (assays.get("data") or {}) if isinstance(assays, dict) else {}
    mats = data.get("listData") if isinstance(data, dict) else None
    if mats is None:
        raise _unknown(assays.get("class") if isinstance(assays, dict) else type(assays).__name__, "assays")
    if isinstance(mats, list):
        mats = {f"assay{i + 1}": m for i, m in enumerate(mats)}
    shapes = {k: tuple(m.shape) for k, m in mats.items() if hasattr(m, "shape")}
    for k, shape in shapes.items():
        first = next(iter(shapes))
        if shape != shapes[first]:
            raise _corrupt(f"{where}@assays${k}", f"{shape[0]} x {shape[1]}, but assay {first} is {shapes[first][0]} x {shapes[first][1]}")
    obs = _dframe(se.get("colData"), "colData", leftover, where)
    features, var = _row_names_and_ranges(se, leftover, where)
    if assay is not None and assay not in mats:
        raise UsageError(f"the {se['class']} has no assay {assay!r} (it has: {', '.join(mats)})")
    order = ([assay] if assay else []) + [k for k in mats if k != assay]
    X = None
    layers = {}
    for k in order:
        m = _cells_by_genes(mats[k], f"assays${k}")
        if X is None:
            X = m
        else:
            layers[k] = m
    n_obs = X.shape[0] if X is not None else len(obs)
    n_var = X.shape[1] if X is not None else len(var)
    if len(obs.columns) and len(obs) != n_obs:
        raise _corrupt(f"{where}@colData", f"{len(obs)} rows for the assays' {n_obs} columns")
    if len(var.columns) and len(var) != n_var:
        raise _corrupt(f"{where}@rowRanges" if se.get("rowRanges") is not None else f"{where}@elementMetadata", f"{len(var)} rows for the assays' {n_var} rows")
    if features is not None and len(features) != n_var:
        raise _corrupt(f"{where}@NAMES", f"{len(features)} feature names for the assays' {n_var} rows")
    if X is not None and order:
        dn = _dimnames(mats[order[0]])
        features = features or dn[0]
        if len(obs.columns) == 0 and dn[1] is not None and len(obs) != n_obs:
            obs = pd.DataFrame(index=dn[1])
        if dn[1] is not None and list(obs.index) != dn[1] and len(obs) == n_obs and isinstance(obs.index, pd.RangeIndex):
            obs.index = pd.Index(dn[1])
    var.index = pd.Index(features) if features is not None and len(features) == n_var else pd.Index([str(i) for i in range(n_var)])
    if not isinstance(obs.index, pd.RangeIndex):
        obs.index = obs.index.astype(str)
    else:
        obs.index = obs.index.astype(str)
    obsm, obsp, varp, others = {}, {}, {}, {}
    icol = se.get("int_colData")
    if _is_s4(icol):
        parts = icol.get("listData") or {}
        rd = parts.get("reducedDims")
        for k, m in ((rd or {}).get("listData") or {}).items() if _is_s4(rd) else []:
            x = np.ascontiguousarray(_matrix(m))
            if x.shape[0] != n_obs:
                raise _corrupt(f"{where}@int_colData$reducedDims${k}", f"{x.shape[0]} rows for the {n_obs} cells")
            obsm[obsm_key(k)] = x
        ae = parts.get("altExps")
        for k, wrapped in ((ae or {}).get("listData") or {}).items() if _is_s4(ae) else []:
            inner = wrapped.get("se") if _is_s4(wrapped) else None
            if _is_s4(inner):
                alt = next(iter(_experiment(inner, None, k, f"{where}@int_colData$altExps${k}")["made"].values()))
                if alt.n_obs != n_obs:
                    raise _corrupt(f"{where}@int_colData$altExps${k}", f"{alt.n_obs} cells for the main experiment's {n_obs}")
                others[k] = alt
        cp = parts.get("colPairs")
        for k, h in ((cp or {}).get("listData") or {}).items() if _is_s4(cp) else []:
            obsp[k] = _hits(h, n_obs, f"{where}@int_colData$colPairs${k}")
        # the rest of the internal column data (sizeFactor, ...): per cell
        # values to obs, anything else kept
        for k, v in parts.items():
            if k not in ("reducedDims", "altExps", "colPairs"):
                _place(k, v, n_obs, obs, leftover, "int_colData", where)
    irow = se.get("int_elementMetadata")
    if _is_s4(irow):
        rparts = irow.get("listData") or {}
        rp = rparts.get("rowPairs")
        for k, h in ((rp or {}).get("listData") or {}).items() if _is_s4(rp) else []:
            varp[k] = _hits(h, n_var, f"{where}@int_elementMetadata$rowPairs${k}")
        for k, v in rparts.items():
            if k != "rowPairs":
                _place(k, v, n_var, var, leftover, "int_elementMetadata", where)
    uns: Dict[str, Any] = {}
    if se.get("metadata"):
        uns["metadata"] = se["metadata"]
    uns["X"] = order[0] if order else None
    if leftover:
        uns["rdarrow_unplaced"] = leftover
    imeta = se.get("int_metadata")
    main = _scalar((imeta or {}).get("mainExpName")) if isinstance(imeta, dict) else None
    main = main or "main"
    made = {main: _anndata(X, obs, var, layers=layers, obsm=obsm, obsp=obsp, varp=varp, uns=_uns(uns))}
    made.update(others)
    return {"made": made, "main": main}


def _several(made: Dict[str, Any], main: str) -> Any:
    """One AnnData, or several (other assays, alternative experiments) as
    a MuData (a dict without mudata)."""
    if len(made) == 1:
        return next(iter(made.values()))
    try:
        import mudata
    except ImportError:
        note("several assays: a dict of AnnData objects (install mudata for a MuData)")
        return made
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if hasattr(mudata, "set_options"):
            try:
                mudata.set_options(pull_on_update=False)
            except Exception:
                pass
        return mudata.MuData(made)


def _from_object(obj: Any, name: str, assay: Optional[str]) -> Any:
    if _is_s4(obj):
        cls = obj["class"]
        if cls in _SEURAT or (obj.get("package") == "SeuratObject" and "assays" in obj):
            with _at(name):
                return _seurat(obj, assay, name)
        if cls in _EXPERIMENTS or "assays" in obj and "colData" in obj:
            r = _experiment(obj, assay, name, name)
            return _several(r["made"], r["main"])
        raise UnsupportedError(
            f"{name}: a {cls} (package {obj.get('package')}) is not a single-cell experiment rdarrow reads "
            "(Seurat, SingleCellExperiment, SummarizedExperiment, RangedSummarizedExperiment)"
        )
    raise UnsupportedError(f"{name}: not a single-cell experiment (an S4 object) but a {type(obj).__name__}")


def _read_one(source: Any, object: Optional[str], assay: Optional[str], storage_options: Any) -> Any:
    # one pass over the file: without a name, every object is read (an
    # .rds holds one) and the single-cell experiment among them taken
    values = read_objects(source, [object] if object else None, storage_options=storage_options)
    if object is None:
        cells = [k for k, v in values.items() if _is_s4(v) and v["class"] in _SEURAT + _EXPERIMENTS]
        if len(values) == 1:
            object = next(iter(values))
        elif len(cells) == 1:
            object = cells[0]
        else:
            raise UsageError(
                "name the object (object=...): the file holds "
                + (f"{len(cells)} single-cell experiments" if cells else "no single-cell experiment")
                + ": " + ", ".join(values)
            )
    try:
        return _from_object(values[object], object, assay)
    except _Unknown as e:
        raise UnsupportedError(f"{object}: {e}") from None


def read_anndata(
    path: Any,
    object: Optional[str] = None,
    assay: Optional[str] = None,
    storage_options: Optional[dict] = None,
) -> Any:
    """A single-cell experiment saved by R as an ``anndata.AnnData`` (see
    the module's table for where each part goes).

    ``path``: a file (``.rds``, ``.RData``), bytes, a file object, an
    http(s) or object store URL (``s3://``, ``gs://``, ``az://``), or
    several files (a glob such as ``"s3://bucket/sample*.rds"``, a
    directory, a list), whose experiments are concatenated by cell as
    ``anndata.concat`` does (``obs["sample"]`` names each one's file).
    ``object``: the object of an ``.RData`` file (default: its only
    single-cell experiment). ``assay``: a Seurat object's assay to read
    alone (default: the active assay, with every other assay beside it
    in a ``mudata.MuData``); an experiment's assay that becomes ``X``
    (default: the first; the others are ``layers``).
    """
    if isinstance(path, (bytes, bytearray, memoryview)) or hasattr(path, "read"):
        return _read_one(path, object, assay, storage_options)
    files = files_of(path, storage_options)
    if len(files) == 1 and not (isinstance(path, (list, tuple)) and len(path) > 1):
        return _read_one(files[0], object, assay, storage_options)
    import anndata as ad

    parts = [_read_one(f, object, assay, storage_options) for f in files]
    if not all(isinstance(p, ad.AnnData) for p in parts):
        raise UsageError(
            "several files of experiments with several assays: name the assay (assay=...) "
            "to concatenate one AnnData per file"
        )
    keys = [_rdarrow.object_name_of(str(f).rstrip("/")) for f in files]
    if len(set(keys)) != len(keys):
        keys = [str(f) for f in files]
    names = [n for p in parts for n in p.obs_names]
    unique = None if len(set(names)) == len(names) else "-"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=FutureWarning)
        return ad.concat(parts, axis=0, label="sample", keys=keys, index_unique=unique)


def to_h5ad(
    path: Any,
    out: "os.PathLike[str] | str",
    object: Optional[str] = None,
    assay: Optional[str] = None,
    compression: Optional[str] = None,
    storage_options: Optional[dict] = None,
) -> None:
    """Write what :func:`read_anndata` gives as an ``.h5ad`` file (a
    MuData as ``.h5mu``) with anndata's own writer; the file appears only
    when complete."""
    result = read_anndata(path, object=object, assay=assay, storage_options=storage_options)
    out = os.fspath(out)
    tmp = f"{out}.part-{os.getpid()}"
    try:
        if isinstance(result, dict):
            raise UsageError("several assays need mudata to be written as one file (pip install mudata), or name one (assay=...)")
        try:
            result.write(tmp, compression=compression) if not hasattr(result, "mod") else result.write(tmp)
        except (ValueError, TypeError, KeyError) as e:
            # a value anndata's writer cannot store: rdarrow does not
            # support writing that object, rather than a stray exception
            raise UnsupportedError(f"{object or path}: anndata cannot write what rdarrow read: {e}") from e
        os.replace(tmp, out)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)
