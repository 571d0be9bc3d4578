"""AnnData and MuData written as R's single-cell objects without R
(write_sce(), write_seurat(), from-h5ad): each object is what R's own
constructors make of the same data (identical()); R validates each
(validObject(complete = TRUE)), runs SeuratObject's and
SingleCellExperiment's functions on it, and dumps what it holds, which the
test compares exactly with the AnnData; read_anndata() gives the AnnData
back. SeuratObject 4.1.3 (Debian's) checks v4 objects, the real
SeuratObject 5.3.0 v5 ones."""

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import rdarrow
from conftest import need_single_cell_r, seurat5_lib

ad = pytest.importorskip("anndata", reason="anndata is not installed (tools/setup.sh installs it)")
pd = pytest.importorskip("pandas")
sp = pytest.importorskip("scipy.sparse")

@pytest.fixture(scope="module")
def r_single_cell(run_r):
    need_single_cell_r(run_r)
    return run_r


def _r(run_r, code, v5=False):
    if v5:
        lib = seurat5_lib()
        return run_r(code, R_LIBS=f"{lib}:{os.environ.get('R_LIBS', '')}")
    return run_r(code)


# ---------------------------------------------------------------------------
# the same small experiment, made by R's constructors and by rdarrow


def small_anndata():
    counts = sp.csr_matrix(np.array([[6, 0, 7, 0, 0], [0, 0, 0, 0, 22], [0, 6, 15, 0, 4], [11, 0, 0, 5, 0]], dtype=np.float64))
    X = counts.copy()
    X.data = np.log1p(X.data)
    obs = pd.DataFrame(
        {"a": np.arange(1, 5, dtype=np.int32), "f": pd.Categorical(["x", "y", "x", "y"])},
        index=[f"c{i}" for i in range(1, 5)],
    )
    var = pd.DataFrame({"highly_variable": [True, False, True, False, False]}, index=[f"g{i}" for i in range(1, 6)])
    return ad.AnnData(
        X=X, obs=obs, var=var, layers={"counts": counts},
        obsm={"X_pca": np.arange(1.0, 9.0).reshape(2, 4).T.copy()},
        varm={"PCs": np.arange(1.0, 11.0).reshape(2, 5).T.copy()},
        obsp={"RNA_snn": sp.csr_matrix(([0.5, 0.7], ([1, 2], [0, 1])), shape=(4, 4))},
        uns={"u": 1.0, "pca": {"stdev": np.array([2.0, 1.0])}},
    )


SMALL_R = r"""
suppressMessages({library(Matrix); library(SeuratObject)})
counts <- sparseMatrix(i = c(1,4,3,1,3,4,2,3), j = c(1,1,2,3,3,4,5,5), x = c(6,11,6,7,15,5,22,4), dims = c(4,5))
counts <- as(t(counts), "CsparseMatrix"); dimnames(counts) <- list(paste0("g",1:5), paste0("c",1:4))
meta <- data.frame(a = 1:4, f = factor(c("x","y","x","y")), row.names = paste0("c",1:4))
emb <- matrix(1:8 + 0, 4, 2, dimnames = list(colnames(counts), c("PC_1", "PC_2")))
load <- matrix(1:10 + 0, 5, 2, dimnames = list(rownames(counts), c("PC_1", "PC_2")))
graph <- sparseMatrix(i = c(2, 3), j = c(1, 2), x = c(0.5, 0.7), dims = c(4, 4), dimnames = list(colnames(counts), colnames(counts)))
"""

SEURAT_R = SMALL_R + r"""
s <- CreateSeuratObject(counts = counts, meta.data = meta)
s <- if (packageVersion("SeuratObject") >= "5") SetAssayData(s, layer = "data", new.data = log1p(counts)) else SetAssayData(s, slot = "data", new.data = log1p(counts))
VariableFeatures(s) <- c("g1", "g3")
s[["pca"]] <- CreateDimReducObject(embeddings = emb, loadings = load, stdev = c(2, 1), key = "PC_", assay = "RNA")
g <- as.Graph(graph); DefaultAssay(g) <- "RNA"
s[["RNA_snn"]] <- g
Idents(s) <- "f"
s@misc <- list(u = 1)
x <- readRDS("{path}")
cat(identical(x, s), "\n")
"""

SCE_R = SMALL_R + r"""
suppressMessages(library(SingleCellExperiment))
ref <- SingleCellExperiment(assays = list(logcounts = log1p(counts), counts = counts),
  colData = DataFrame(meta), rowData = DataFrame(highly_variable = c(TRUE, FALSE, TRUE, FALSE, FALSE)),
  metadata = list(u = 1, pca = list(stdev = c(2, 1))))
reducedDim(ref, "PCA") <- unname(emb); rownames(reducedDim(ref, "PCA")) <- colnames(counts)
colPair(ref, "RNA_snn") <- unname(graph)
x <- readRDS("{path}")
cat(identical(x, ref), "\n")
"""


def test_sce_is_what_singlecellexperiment_makes(tmp_path, r_single_cell):
    a = small_anndata()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # varm has no place in an SCE: said
        rdarrow.write_sce(a, tmp_path / "x.rds")
    assert r_single_cell(SCE_R.replace("{path}", str(tmp_path / "x.rds"))).split() == ["TRUE"]


@pytest.mark.parametrize("version", [4, 5])
def test_seurat_is_what_seuratobject_makes(tmp_path, r_single_cell, version):
    a = small_anndata()
    a.obs["ident"] = a.obs["f"]
    rdarrow.write_seurat(a, tmp_path / "x.rds", version=version)
    out = _r(r_single_cell, SEURAT_R.replace("{path}", str(tmp_path / "x.rds")), v5=version == 5)
    assert out.split() == ["TRUE"]


# X without a counts layer: Seurat's data unless it holds counts

X_ONLY_R = r"""
suppressMessages({library(Matrix); library(SeuratObject)})
v5 <- packageVersion("SeuratObject") >= "5"
m <- sparseMatrix(i = c(1,4,3,1,3,4,2,3), j = c(1,1,2,3,3,4,5,5), x = {values}, dims = c(4,5))
m <- as(t(m), "CsparseMatrix"); dimnames(m) <- list(paste0("g",1:5), paste0("c",1:4))
ref <- if ({counts}) CreateSeuratObject(counts = m) else
  CreateSeuratObject(if (v5) CreateAssay5Object(data = m) else CreateAssayObject(data = m))
x <- readRDS("{path}")
cat(identical(x, ref), "\n")
if (!v5) {
  # Seurat itself normalizes what was written as R's constructors would
  suppressMessages(library(Seurat))
  if ({counts}) {
    n <- NormalizeData(x, verbose = FALSE)
    cat(identical(GetAssayData(n, slot = "data"), GetAssayData(NormalizeData(ref, verbose = FALSE), slot = "data")),
        all(GetAssayData(n, slot = "data") >= 0), "\n")
  } else {
    cat(identical(GetAssayData(x, slot = "data"), m), identical(dim(GetAssayData(x, slot = "counts")), c(0L, 0L)), "\n")
  }
}
"""


@pytest.mark.parametrize("version", [4, 5])
@pytest.mark.parametrize("counts", [False, True])
def test_x_is_seurat_data_unless_it_holds_counts(tmp_path, r_single_cell, version, counts):
    # scanpy's scaled X (negative values) is data; whole non-negative X counts
    values = [6, 11, 6, 7, 15, 5, 22, 4] if counts else [-2.03, 1.5, 0.25, 28.4, -0.5, 3.0, 1.0, -1.0]
    X = sp.csr_matrix(
        (np.array(values, dtype=np.float64), ([0, 3, 2, 0, 2, 3, 1, 2], [0, 0, 1, 2, 2, 3, 4, 4])), shape=(4, 5)
    )
    a = ad.AnnData(X=X, obs=pd.DataFrame(index=[f"c{i}" for i in range(1, 5)]), var=pd.DataFrame(index=[f"g{i}" for i in range(1, 6)]))
    rdarrow.write_seurat(a, tmp_path / "x.rds", version=version)
    code = (
        X_ONLY_R.replace("{values}", f"c({', '.join(map(repr, values))})")
        .replace("{counts}", "TRUE" if counts else "FALSE")
        .replace("{path}", str(tmp_path / "x.rds"))
    )
    out = _r(r_single_cell, code, v5=version == 5).split()
    assert out == (["TRUE"] if version == 5 else ["TRUE", "TRUE", "TRUE"]), out


# ---------------------------------------------------------------------------
# a richer AnnData: R's checks, R's values, and the circle back


def rich_anndata(n_obs=60, n_var=30, seed=3):
    rng = np.random.default_rng(seed)
    counts = sp.random(n_obs, n_var, density=0.3, format="csr", random_state=seed, dtype=np.float32)
    counts.data = np.ceil(counts.data * 20).astype(np.float32)
    X = counts.copy()
    X.data = np.log1p(X.data)
    cells = [f"cell{i}" for i in range(n_obs)]
    genes = [f"gene{j}" for j in range(n_var)]
    obs = pd.DataFrame(
        {
            "n": rng.integers(0, 100, n_obs).astype(np.int32),
            "score": rng.random(n_obs),
            "group": pd.Categorical(rng.choice(["a", "b", "c"], n_obs), categories=["c", "a", "b"]),
            "label": [f"l{i % 7}" for i in range(n_obs)],
            "flag": rng.random(n_obs) > 0.5,
        },
        index=cells,
    )
    var = pd.DataFrame({"highly_variable": rng.random(n_var) > 0.6, "gene_len": rng.integers(100, 5000, n_var)}, index=genes)
    knn = sp.random(n_obs, n_obs, density=0.05, format="csr", random_state=seed + 1)
    return ad.AnnData(
        X=X, obs=obs, var=var, layers={"counts": counts},
        obsm={"X_pca": rng.standard_normal((n_obs, 5)), "X_umap": rng.standard_normal((n_obs, 2))},
        varm={"PCs": rng.standard_normal((n_var, 5))},
        obsp={"connectivities": knn, "distances": knn * 2},
        uns={"study": "rich", "pca": {"variance": np.array([5.0, 4.0, 3.0, 2.0, 1.0])}, "params": {"k": 15, "names": ["x", "y"]}},
    )


DUMP_R = r"""
exact <- function(v) sprintf("%.17g", as.numeric(v))
csc <- function(m) { m <- as(as(m, "CsparseMatrix"), "generalMatrix"); list(i = m@i, p = m@p, x = exact(m@x), dim = dim(m), rows = rownames(m), cols = colnames(m)) }
"""

SEURAT_CHECK_R = DUMP_R + r"""
suppressMessages({library(Matrix); library(SeuratObject)})
v5 <- packageVersion("SeuratObject") >= "5"
res <- list()
for (f in strsplit("{files}", ",")[[1]]) {
  x <- readRDS(f)
  stopifnot(validObject(x, complete = TRUE))
  y <- suppressWarnings(suppressMessages(UpdateSeuratObject(x)))
  stopifnot(validObject(y, complete = TRUE))
  get <- function(o, what) if (v5) LayerData(o, layer = what) else GetAssayData(o, slot = what)
  stopifnot(identical(get(y, "counts"), get(x, "counts")), identical(get(y, "data"), get(x, "data")),
            identical(Embeddings(y, "pca"), Embeddings(x, "pca")), identical(Idents(y), Idents(x)))
  sub <- x[, 1:10]; stopifnot(ncol(sub) == 10, validObject(sub))
  s2 <- subset(x, idents = levels(Idents(x))[1]); stopifnot(ncol(s2) == sum(Idents(x) == levels(Idents(x))[1]))
  if (v5) {
    stopifnot(setequal(Layers(x), c("counts", "data")))
    for (l in Layers(x)) stopifnot(ncol(LayerData(x, layer = l)) == ncol(x))
    sp <- x; sp[["RNA"]] <- split(sp[["RNA"]], f = sp$group)
    stopifnot(length(Layers(sp)) == 2 * nlevels(sp$group), validObject(sp, complete = TRUE))
    for (l in Layers(sp)) stopifnot(nrow(LayerData(sp, layer = l)) == nrow(x))
    j <- JoinLayers(sp)
    stopifnot(setequal(Layers(j), c("counts", "data")),
              identical(LayerData(j, "counts")[, colnames(x)], LayerData(x, "counts")))
  }
  res[[f]] <- list(
    counts = csc(get(x, "counts")), data = csc(get(x, "data")),
    meta = lapply(x@meta.data, function(v) if (is.factor(v)) list(levels = levels(v), codes = as.integer(v)) else if (is.numeric(v)) exact(v) else v),
    cells = colnames(x), features = rownames(x), ident = as.character(Idents(x)),
    variable = VariableFeatures(x), pca = exact(Embeddings(x, "pca")), pca_dim = dim(Embeddings(x, "pca")),
    loadings = exact(Loadings(x, "pca")), stdev = exact(Stdev(x, "pca")), umap = exact(Embeddings(x, "umap")),
    graph = csc(x[["connectivities"]]), misc = x@misc$study)
}
jsonlite::write_json(res, "{out}", digits = NA)
"""

SCE_CHECK_R = DUMP_R + r"""
suppressMessages({library(Matrix); library(SingleCellExperiment)})
res <- list()
for (f in strsplit("{files}", ",")[[1]]) {
  x <- readRDS(f)
  stopifnot(validObject(x, complete = TRUE))
  sub <- x[, 1:10]; stopifnot(ncol(sub) == 10, validObject(sub, complete = TRUE))
  cp <- colPair(x, "connectivities")
  res[[f]] <- list(
    counts = csc(counts(x)), logcounts = csc(logcounts(x)),
    col = lapply(as.list(colData(x)), function(v) if (is.factor(v)) list(levels = levels(v), codes = as.integer(v)) else if (is.numeric(v)) exact(v) else v),
    row = lapply(as.list(rowData(x)), function(v) if (is.numeric(v)) exact(v) else v),
    cells = colnames(x), features = rownames(x), pca = exact(reducedDim(x, "PCA")), pca_dim = dim(reducedDim(x, "PCA")),
    umap = exact(reducedDim(x, "UMAP")), pair = list(from = from(cp), to = to(cp), x = exact(mcols(cp)$x)),
    study = metadata(x)$study, k = metadata(x)$params$k)
}
jsonlite::write_json(res, "{out}", digits = NA)
"""

FORMATS = [(3, "gzip"), (2, "gzip"), (3, "bzip2"), (3, "xz"), (3, "none")]


def _exact(x):
    return ["%.17g" % v for v in np.asarray(x, dtype=np.float64).ravel(order="F")]


def _genes_by_cells(m):
    c = sp.csc_matrix(sp.csr_matrix(m).T)
    c.sort_indices()
    return c


def _same_matrix(got, m, rows, cols):
    want = _genes_by_cells(m)
    assert got["i"] == want.indices.tolist()
    assert got["p"] == want.indptr.tolist()
    assert got["x"] == _exact(want.data)
    assert got["dim"] == [len(rows), len(cols)]
    assert got["rows"] == rows and got["cols"] == cols


def _files(tmp_path, write, a, **kw):
    out = []
    for v, c in FORMATS:
        f = tmp_path / f"x-v{v}-{c}.rds"
        write(a, f, **kw, **({"format_version": v} if write is rdarrow.write_seurat else {"version": v}), compress=c)
        out.append(str(f))
    return out


@pytest.mark.parametrize("version", [4, 5])
def test_seurat_checked_by_seuratobject(tmp_path, r_single_cell, version):
    a = rich_anndata()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        files = _files(tmp_path, rdarrow.write_seurat, a, version=version)
    dump = tmp_path / "dump.json"
    _r(r_single_cell, SEURAT_CHECK_R.replace("{files}", ",".join(files)).replace("{out}", str(dump)), v5=version == 5)
    res = json.loads(dump.read_text())
    cells, genes = list(a.obs_names), list(a.var_names)
    for f in files:
        r = res[f]
        _same_matrix(r["counts"], a.layers["counts"], genes, cells)
        _same_matrix(r["data"], a.X, genes, cells)
        assert r["cells"] == cells and r["features"] == genes
        assert r["meta"]["n"] == _exact(a.obs["n"]) and r["meta"]["score"] == _exact(a.obs["score"])
        assert r["meta"]["group"]["levels"] == ["c", "a", "b"]
        assert r["meta"]["group"]["codes"] == (a.obs["group"].cat.codes + 1).tolist()
        assert r["meta"]["label"] == a.obs["label"].tolist() and r["meta"]["flag"] == a.obs["flag"].tolist()
        assert r["meta"]["nCount_RNA"] == _exact(np.asarray(a.layers["counts"].sum(axis=1)).ravel().astype(np.float64))
        assert r["ident"] == ["SeuratProject"] * a.n_obs
        assert r["variable"] == [g for g, h in zip(genes, a.var["highly_variable"]) if h]
        assert r["pca"] == _exact(a.obsm["X_pca"]) and r["pca_dim"] == [a.n_obs, 5]
        assert r["umap"] == _exact(a.obsm["X_umap"])
        assert r["loadings"] == _exact(a.varm["PCs"])
        assert r["stdev"] == _exact(np.sqrt(a.uns["pca"]["variance"]))
        _same_matrix(r["graph"], a.obsp["connectivities"].T, cells, cells)
        assert r["misc"] == ["rich"]


def test_sce_checked_by_singlecellexperiment(tmp_path, r_single_cell):
    a = rich_anndata()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        files = _files(tmp_path, rdarrow.write_sce, a)
    dump = tmp_path / "dump.json"
    r_single_cell(SCE_CHECK_R.replace("{files}", ",".join(files)).replace("{out}", str(dump)))
    res = json.loads(dump.read_text())
    cells, genes = list(a.obs_names), list(a.var_names)
    knn = sp.coo_matrix(a.obsp["connectivities"])
    order = np.lexsort((knn.col, knn.row))
    for f in files:
        r = res[f]
        _same_matrix(r["counts"], a.layers["counts"], genes, cells)
        _same_matrix(r["logcounts"], a.X, genes, cells)
        assert r["cells"] == cells and r["features"] == genes
        assert r["col"]["score"] == _exact(a.obs["score"]) and r["col"]["label"] == a.obs["label"].tolist()
        assert r["col"]["group"]["codes"] == (a.obs["group"].cat.codes + 1).tolist()
        assert r["row"]["highly_variable"] == a.var["highly_variable"].tolist()
        assert r["row"]["gene_len"] == _exact(a.var["gene_len"])
        assert r["pca"] == _exact(a.obsm["X_pca"]) and r["pca_dim"] == [a.n_obs, 5]
        assert r["umap"] == _exact(a.obsm["X_umap"])
        assert r["pair"]["from"] == (knn.row[order] + 1).tolist() and r["pair"]["to"] == (knn.col[order] + 1).tolist()
        assert r["pair"]["x"] == _exact(knn.data[order])
        assert r["study"] == ["rich"] and r["k"] == [15]


def _values(col):
    return [None if (isinstance(v, float) and v != v) or v is pd.NA else v for v in list(col)]


def _same_anndata(back, a):
    assert list(back.obs_names) == list(a.obs_names) and list(back.var_names) == list(a.var_names)
    for got, want in [(back.X, a.X)] + [(back.layers[k], a.layers[k]) for k in a.layers]:
        assert (abs(sp.csr_matrix(got) - sp.csr_matrix(want).astype(np.float64)) > 0).nnz == 0
    for frame, want in ((back.obs, a.obs), (back.var, a.var)):
        for c in want.columns:
            if c != "ident":
                assert _values(frame[c]) == _values(want[c]), c
    for k in a.obsm:
        assert np.array_equal(np.asarray(back.obsm[k]), np.asarray(a.obsm[k])), k
    for k in a.obsp:
        assert (abs(sp.csr_matrix(back.obsp[k]) - a.obsp[k]) > 0).nnz == 0, k


@pytest.mark.parametrize("kind", ["sce", "seurat4", "seurat5"])
def test_the_circle_through_read_anndata(tmp_path, kind):
    a = rich_anndata()
    f = tmp_path / "x.rds"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if kind == "sce":
            rdarrow.write_sce(a, f)
        else:
            rdarrow.write_seurat(a, f, version=int(kind[-1]))
        back = rdarrow.read_anndata(f)
    _same_anndata(back, a)
    if kind == "sce":
        assert back.uns["metadata"]["study"] == "rich"
    else:
        assert np.array_equal(back.varm["PCs"], a.varm["PCs"])
        assert back.uns["misc"]["study"] == "rich"
    # and once more: what read_anndata() gives is written as it was read
    f2 = tmp_path / "again.rds"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (rdarrow.write_sce if kind == "sce" else rdarrow.write_seurat)(back, f2)
        again = rdarrow.read_anndata(f2)
    _same_anndata(again, back)


def test_r_made_objects_come_back(tmp_path, r_single_cell):
    """What read_anndata() gives of pbmc_small (Seurat v4) and of an SCE made
    by R goes back into objects R reads with the same values."""
    r_single_cell(
        f"""
        suppressMessages({{library(SeuratObject); library(SingleCellExperiment)}})
        data("pbmc_small")
        saveRDS(pbmc_small, "{tmp_path}/pbmc.rds")
        sce <- SingleCellExperiment(list(counts = GetAssayData(pbmc_small, "counts"), logcounts = GetAssayData(pbmc_small, "data")),
          colData = DataFrame(pbmc_small@meta.data), reducedDims = list(PCA = Embeddings(pbmc_small, "pca")))
        saveRDS(sce, "{tmp_path}/sce.rds")
        """
    )
    for name, write in (("pbmc", rdarrow.write_seurat), ("sce", rdarrow.write_sce)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            a = rdarrow.read_anndata(tmp_path / f"{name}.rds")
            write(a, tmp_path / f"{name}-back.rds", **({"version": 4} if name == "pbmc" else {}))
            back = rdarrow.read_anndata(tmp_path / f"{name}-back.rds")
        _same_anndata(back, a)
    out = r_single_cell(
        f"""
        suppressMessages({{library(SeuratObject); library(SingleCellExperiment)}})
        a <- readRDS("{tmp_path}/pbmc.rds"); b <- readRDS("{tmp_path}/pbmc-back.rds")
        stopifnot(validObject(b, complete = TRUE))
        cat(identical(GetAssayData(a, slot = "counts"), GetAssayData(b, slot = "counts")),
            identical(GetAssayData(a, slot = "data"), GetAssayData(b, slot = "data")),
            identical(Embeddings(a, "pca"), Embeddings(b, "pca")), identical(Idents(a), Idents(b)),
            identical(a@meta.data, b@meta.data[, names(a@meta.data)]), identical(VariableFeatures(a), VariableFeatures(b)))
        x <- readRDS("{tmp_path}/sce.rds"); y <- readRDS("{tmp_path}/sce-back.rds")
        stopifnot(validObject(y, complete = TRUE))
        cat("", identical(counts(x), counts(y)), identical(logcounts(x), logcounts(y)), identical(colData(x), colData(y)))
        """
    )
    assert out.split() == ["TRUE"] * 9


def test_mudata_modalities(tmp_path, r_single_cell):
    mudata = pytest.importorskip("mudata")
    rna = rich_anndata()
    adt = ad.AnnData(X=sp.csr_matrix(np.arange(rna.n_obs * 3, dtype=np.float64).reshape(rna.n_obs, 3)), obs=pd.DataFrame(index=rna.obs_names))
    adt.var_names = ["CD3", "CD4", "CD8"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        md = mudata.MuData({"rna": rna, "adt": adt})
        rdarrow.write_seurat(md, tmp_path / "s.rds", version=4)
        rdarrow.write_sce(md, tmp_path / "x.rds")
    out = r_single_cell(
        f"""
        suppressMessages({{library(SeuratObject); library(SingleCellExperiment)}})
        s <- readRDS("{tmp_path}/s.rds"); stopifnot(validObject(s, complete = TRUE))
        x <- readRDS("{tmp_path}/x.rds"); stopifnot(validObject(x, complete = TRUE))
        cat(names(s@assays), DefaultAssay(s), rownames(s[["adt"]]), sum(GetAssayData(s, assay = "adt", slot = "counts")),
            altExpNames(x), mainExpName(x), rownames(altExp(x, "adt")), sum(assay(altExp(x, "adt"))))
        """
    )
    total = str(int(np.arange(rna.n_obs * 3).sum()))
    assert out.split() == ["RNA", "adt", "RNA", "CD3", "CD4", "CD8", total, "adt", "rna", "CD3", "CD4", "CD8", total]
    back = rdarrow.read_anndata(tmp_path / "x.rds")
    assert set(back.mod) == {"rna", "adt"}


def test_uns_r_cannot_hold_is_listed(tmp_path):
    a = small_anndata()
    a.uns["odd"] = {1, 2}
    with pytest.warns(rdarrow.RDataWarning, match="odd"):
        rdarrow.write_seurat(a, tmp_path / "x.rds")


def test_errors_leave_no_file(tmp_path):
    a = small_anndata()
    with pytest.raises(TypeError, match="expected an anndata.AnnData"):
        rdarrow.write_sce({"X": 1}, tmp_path / "a.rds")
    b = small_anndata()
    b.obs_names = pd.Index([1, 2, 3, 4], dtype=object)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(TypeError, match="not a str"):
            rdarrow.write_seurat(b, tmp_path / "b.rds")
        with pytest.raises(rdarrow.RDataIOError):
            rdarrow.write_sce(a, tmp_path / "no-such-dir" / "x.rds")
    assert sorted(os.listdir(tmp_path)) == []


def test_x_neither_dense_nor_sparse(tmp_path):
    a = small_anndata()
    a.layers["bad"] = np.zeros((4, 5), dtype=object)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(TypeError, match="layers\\['bad'\\].*not numbers"):
            rdarrow.write_sce(a, tmp_path / "x.rds")
        words = ad.AnnData(X=np.array([["a", "b"], ["c", "d"]], dtype=object))
        for write in (rdarrow.write_sce, rdarrow.write_seurat):
            with pytest.raises(TypeError, match="(X|counts|data): a matrix of NumPy dtype object"):
                write(words, tmp_path / "x.rds")
    assert not (tmp_path / "x.rds").exists()


def test_from_h5ad_command(tmp_path, r_single_cell):
    a = rich_anndata()
    h5 = tmp_path / "in.h5ad"
    a.write_h5ad(h5)
    # an .RData file holds the object under the file's name
    rdarrow.write_seurat(small_anndata(), tmp_path / "pbmc.RData", version=4)
    assert r_single_cell(
        f'e <- new.env(); cat(load("{tmp_path}/pbmc.RData", e), class(e$pbmc), validObject(e$pbmc, complete = TRUE))'
    ).split() == ["pbmc", "Seurat", "TRUE"]
    for kind in ("seurat", "sce"):
        out = tmp_path / f"{kind}.rds"
        res = subprocess.run([sys.executable, "-m", "rdarrow", "from-h5ad", str(h5), "-o", str(out), "--as", kind], capture_output=True, text=True)
        assert res.returncode == 0, res.stderr
    assert r_single_cell(
        f"""
        suppressMessages({{library(SeuratObject); library(SingleCellExperiment)}})
        cat(class(readRDS("{tmp_path}/sce.rds")), validObject(readRDS("{tmp_path}/sce.rds"), complete = TRUE))
        """
    ).split() == ["SingleCellExperiment", "TRUE"]
    mudata = pytest.importorskip("mudata")
    adt = ad.AnnData(X=np.ones((a.n_obs, 2)), obs=pd.DataFrame(index=a.obs_names))
    adt.var_names = ["CD3", "CD4"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mudata.MuData({"rna": a, "adt": adt}).write(str(tmp_path / "in.h5mu"))
    res = subprocess.run([sys.executable, "-m", "rdarrow", "from-h5ad", str(tmp_path / "in.h5mu"), "-o", str(tmp_path / "mu.rds"), "--seurat-version", "4"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert r_single_cell(
        f"""
        suppressMessages(library(SeuratObject))
        s <- readRDS("{tmp_path}/mu.rds"); stopifnot(validObject(s, complete = TRUE))
        cat(names(s@assays), sum(GetAssayData(s, assay = "adt", slot = "counts")))
        """
    ).split() == ["RNA", "adt", str(2 * a.n_obs)]
    res = subprocess.run([sys.executable, "-m", "rdarrow", "from-h5ad", str(tmp_path / "missing.h5ad"), "-o", str(tmp_path / "m.rds")], capture_output=True, text=True)
    assert res.returncode == 1 and "rdarrow:" in res.stderr
    assert not (tmp_path / "m.rds").exists()
