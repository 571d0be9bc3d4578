"""read_anndata() and to-h5ad against single-cell objects made by real R:
SeuratObject's pbmc_small (a v4 Seurat object: PCA, tSNE, an SNN graph,
factor metadata) with a second assay and a Neighbor object; a Seurat v5
object made by the real SeuratObject 5.3.0 (built into a library of its
own beside Debian's SeuratObject 4), its layers split in two and three;
a SingleCellExperiment and a RangedSummarizedExperiment. Each is saved in
format versions 2 and 3 and each compression; R dumps the reference values,
and the written .h5ad is read back by anndata. Where the Python peers
(rds2py, readseurat) read an object, rdarrow agrees with them."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import rdarrow
from conftest import need_single_cell_r, seurat5_lib

ad = pytest.importorskip("anndata", reason="anndata is not installed (tools/setup.sh installs it)")
sp = pytest.importorskip("scipy.sparse")

MAKE_R = r"""
suppressMessages({library(SeuratObject); library(Matrix); library(SingleCellExperiment)})
out <- "{out}"
data("pbmc_small")
s4 <- pbmc_small
adt <- CreateAssayObject(counts = as(matrix(rpois(3 * 80, 5), 3, 80,
  dimnames = list(c("CD3", "CD4", "CD8"), colnames(s4))), "dgCMatrix"))
s4[["ADT"]] <- adt
nn <- new("Neighbor", nn.idx = matrix(c(2:80, 1L, 3:80, 1:2), 80, 2),
          nn.dist = matrix(seq(0.1, 16, by = 0.1), 80, 2), alg.idx = NULL,
          alg.info = list(), cell.names = colnames(s4))
s4@neighbors[["RNA.nn"]] <- nn

counts <- GetAssayData(pbmc_small, "counts")
data <- GetAssayData(pbmc_small, "data")
cells <- colnames(counts); feats <- rownames(counts)
vf <- VariableFeatures(pbmc_small)

sce <- SingleCellExperiment(
  assays = list(counts = counts, logcounts = as.matrix(data)),
  colData = DataFrame(pbmc_small@meta.data),
  rowData = DataFrame(gene_len = seq_along(feats) * 10L),
  reducedDims = list(PCA = Embeddings(pbmc_small, "pca"), TSNE = Embeddings(pbmc_small, "tsne")),
  metadata = list(study = "pbmc", n = 3L))
sizeFactors(sce) <- seq(0.5, 2, length.out = ncol(sce))
altExp(sce, "ADT") <- SingleCellExperiment(list(counts = as.matrix(GetAssayData(adt, "counts"))))
colPair(sce, "knn") <- SelfHits(1:79, 2:80, nnode = 80, value = seq(0.5, 39.5, by = 0.5))
rse <- SummarizedExperiment(list(counts = counts),
  rowRanges = GRanges(rep(c("chr1", "chr2"), length.out = length(feats)),
                      IRanges(seq_along(feats) * 100L, width = 50L),
                      strand = rep(c("+", "-"), length.out = length(feats)), sym = feats),
  colData = DataFrame(group = pbmc_small$groups))

# for rds2py, whose to_anndata() fails on reduced dimensions with dimnames
saveRDS(SingleCellExperiment(list(counts = counts), colData = DataFrame(pbmc_small@meta.data[, 1:3])),
        file.path(out, "peer-sce.rds"))
# an SCTAssay (Seurat's class, extending SeuratObject's Assay with the
# models of sctransform), defined as Seurat defines it
setClass("SCTAssay", contains = "Assay", slots = c(SCTModel.list = "list"))
a <- new("SCTAssay", pbmc_small[["RNA"]], SCTModel.list = list(model1 = list(theta = 2.5)))
a@key <- "sct_"
attr(a, "class") <- structure("SCTAssay", package = "Seurat")
sct <- pbmc_small
sct@assays$SCT <- a
sct@active.assay <- "SCT"
saveRDS(sct, file.path(out, "sct.rds"))
objects <- list(seurat4 = s4, sce = sce, rse = rse)
for (nm in names(objects)) {
  for (v in 2:3) for (cmp in c("gzip", "bzip2", "xz")) {
    if (v == 2 && cmp != "gzip") next
    saveRDS(objects[[nm]], file.path(out, sprintf("%s-v%d-%s.rds", nm, v, cmp)), version = v, compress = cmp)
  }
}
# doubles as text of 17 digits: every bit
exact <- function(v) { s <- sprintf("%.17g", v); if (is.null(dim(v))) s else matrix(s, nrow(v)) }
ref <- function(m) { m <- as(m, "CsparseMatrix"); list(i = m@i, p = m@p, x = exact(m@x), dim = dim(m), rows = rownames(m), cols = colnames(m)) }
md <- pbmc_small@meta.data
jsonlite::write_json(list(
  counts = ref(counts), data = ref(data),
  meta = lapply(md, function(x) if (is.factor(x)) list(levels = levels(x), codes = as.integer(x)) else x),
  meta_names = names(md), ident_levels = levels(Idents(pbmc_small)), ident = as.integer(Idents(pbmc_small)),
  pca = exact(unname(Embeddings(pbmc_small, "pca"))), tsne = exact(unname(Embeddings(pbmc_small, "tsne"))),
  loadings = exact(unname(Loadings(pbmc_small, "pca"))), loading_rows = rownames(Loadings(pbmc_small, "pca")),
  stdev = exact(Stdev(pbmc_small, "pca")), snn = ref(pbmc_small@graphs$RNA_snn),
  var_features = vf, features = feats, cells = cells,
  vst_mean = exact(pbmc_small[["RNA"]]@meta.features$vst.mean),
  adt = ref(GetAssayData(adt, "counts"))
), file.path(out, "ref.json"), digits = NA, auto_unbox = FALSE)
"""


# Seurat v5 objects, made by the real SeuratObject 5 (5.3.0, in its own
# library): pbmc_small's RNA assay as an Assay5 whose counts are split in
# two layers and data in three, by other cells; and one of whole layers
# (for readseurat, which reads v5 objects only)
MAKE_V5_R = r"""
suppressMessages({library(SeuratObject); library(Matrix)})
out <- "{out}"
data("pbmc_small")
counts <- GetAssayData(pbmc_small, layer = "counts")
data <- GetAssayData(pbmc_small, layer = "data")
cells <- colnames(counts)
split2 <- list(cells[1:30], cells[31:80])
split3 <- list(cells[c(5:20, 60:80)], cells[c(1:4, 21:40)], cells[41:59])
a5 <- CreateAssay5Object(counts = list(counts.1 = counts[, split2[[1]]], counts.2 = counts[, split2[[2]]]))
for (k in 1:3) LayerData(a5, layer = c("data.a", "data.b", "data.c")[k]) <- data[, split3[[k]]]
VariableFeatures(a5) <- VariableFeatures(pbmc_small)
Key(a5) <- "rna_"
s5 <- pbmc_small
suppressWarnings(s5[["RNA"]] <- a5)
s5@version <- packageVersion("SeuratObject")
stopifnot(validObject(s5), inherits(s5[["RNA"]], "Assay5"))
p5 <- s5
suppressWarnings(p5[["RNA"]] <- CreateAssay5Object(counts = counts, data = data))
VariableFeatures(p5) <- VariableFeatures(pbmc_small)
saveRDS(p5, file.path(out, "peer-seurat5.rds"))
for (v in 2:3) for (cmp in c("gzip", "bzip2", "xz")) {
  if (v == 2 && cmp != "gzip") next
  saveRDS(s5, file.path(out, sprintf("seurat5-v%d-%s.rds", v, cmp)), version = v, compress = cmp)
}
"""


@pytest.fixture(scope="module")
def made(tmp_path_factory, run_r):
    out = tmp_path_factory.mktemp("singlecell")
    need_single_cell_r(run_r)
    run_r(MAKE_R.replace("{out}", str(out)))
    run_r(MAKE_V5_R.replace("{out}", str(out)), R_LIBS=f"{seurat5_lib()}:{os.environ.get('R_LIBS', '')}")
    return out, json.loads((out / "ref.json").read_text())


def _files(out, name):
    return sorted(out.glob(f"{name}-v*.rds"))


def _csr_of(ref):
    """R's genes x cells dgCMatrix as the cells x genes CSR matrix."""
    nr, nc = ref["dim"]
    return sp.csr_matrix((np.array(ref["x"], dtype=float), ref["i"], ref["p"]), shape=(nc, nr))


def _same_sparse(a, b):
    """The same entries, the same values."""
    a, b = sp.csr_matrix(a), sp.csr_matrix(b)
    a.sort_indices()
    b.sort_indices()
    return (
        a.shape == b.shape
        and np.array_equal(a.indptr, b.indptr)
        and np.array_equal(a.indices, b.indices)
        and np.array_equal(a.data, b.data)
    )


def _check_seurat4_rna(a, ref):
    assert list(a.obs_names) == ref["cells"] and list(a.var_names) == ref["features"]
    assert _same_sparse(a.X, _csr_of(ref["data"]))
    assert _same_sparse(a.layers["counts"], _csr_of(ref["counts"]))
    # obs: meta.data, factors as categoricals with R's levels in order
    for name in ref["meta_names"]:
        want, got = ref["meta"][name], a.obs[name]
        if isinstance(want, dict):
            assert list(got.cat.categories) == want["levels"], name
            assert (got.cat.codes.to_numpy() + 1).tolist() == want["codes"], name
        else:
            assert [str(x) if isinstance(x, str) else float(x) for x in got] == [str(x) if isinstance(x, str) else float(x) for x in want], name
    assert list(a.obs["ident"].cat.categories) == ref["ident_levels"]
    assert (a.obs["ident"].cat.codes.to_numpy() + 1).tolist() == ref["ident"]
    assert a.var["highly_variable"].sum() == len(ref["var_features"])
    assert set(a.var_names[a.var["highly_variable"].to_numpy()]) == set(ref["var_features"])
    np.testing.assert_array_equal(a.var["vst.mean"].to_numpy(), np.array(ref["vst_mean"], dtype=float))
    np.testing.assert_array_equal(a.obsm["X_pca"], np.array(ref["pca"], dtype=float))
    np.testing.assert_array_equal(a.obsm["X_tsne"], np.array(ref["tsne"], dtype=float))
    pcs = a.varm["PCs"]
    rows = [ref["features"].index(f) for f in ref["loading_rows"]]
    np.testing.assert_array_equal(pcs[rows], np.array(ref["loadings"], dtype=float))
    others = np.setdiff1d(np.arange(len(ref["features"])), rows)
    assert not pcs[others].any()  # padded with zeros
    np.testing.assert_allclose(a.uns["pca"]["variance"], np.array(ref["stdev"], dtype=float) ** 2)
    assert _same_sparse(a.obsp["RNA_snn"], sp.csc_matrix(_csr_of(ref["snn"]).T))


def test_seurat_v4_every_format_and_compression(made, tmp_path):
    out, ref = made
    files = _files(out, "seurat4")
    assert len(files) == 4
    for f in files:
        m = rdarrow.read_anndata(f)
        # two assays: a MuData of both, the active one first
        assert list(m.mod) == ["RNA", "ADT"], f.name
        _check_seurat4_rna(m["RNA"], ref)
        adt = m["ADT"]
        assert _same_sparse(adt.X, _csr_of(ref["adt"])) and list(adt.obs_names) == ref["cells"]
        nn = m["RNA"].obsp["RNA.nn"]
        assert nn.shape == (80, 80) and nn[0, 1] == pytest.approx(0.1) and nn[0, 2] == pytest.approx(8.1)
    one = rdarrow.read_anndata(files[0], assay="RNA")
    assert isinstance(one, ad.AnnData)
    _check_seurat4_rna(one, ref)
    # the .h5ad anndata writes of it reads back the same
    h5 = tmp_path / "pbmc.h5ad"
    rdarrow.to_h5ad(files[0], h5, assay="RNA")
    back = ad.read_h5ad(h5)
    _check_seurat4_rna(back, ref)
    assert back.uns["project.name"] == "SeuratProject"


def test_a_dgcmatrix_becomes_csr_over_the_same_buffers(made):
    out, _ = made
    f = _files(out, "seurat4")[0]
    raw = rdarrow.read_objects(f)
    data = next(iter(raw.values()))["assays"]["RNA"]["data"]
    a = rdarrow.read_anndata(f, assay="RNA")
    # the AnnData's X is the CSC matrix's own buffers, read as CSR
    assert isinstance(a.X, sp.csr_matrix)
    for name in ("data", "indices", "indptr"):
        arr = getattr(a.X, name)
        base = arr
        while isinstance(base, np.ndarray):
            base = base.base
        assert type(base).__name__ == "Payload", name
    assert data.shape == (a.n_vars, a.n_obs)


def test_seurat_v5_assay5_split_layers_joined_by_cell(made, tmp_path):
    out, ref = made
    for f in _files(out, "seurat5"):
        a = rdarrow.read_anndata(f)
        assert isinstance(a, ad.AnnData)
        assert list(a.obs_names) == ref["cells"] and list(a.var_names) == ref["features"]
        assert _same_sparse(a.X, _csr_of(ref["data"])), f.name
        assert _same_sparse(a.layers["counts"], _csr_of(ref["counts"])), f.name
        assert set(a.var_names[a.var["highly_variable"].to_numpy()]) == set(ref["var_features"])
        np.testing.assert_array_equal(a.obsm["X_pca"], np.array(ref["pca"], dtype=float))
    # the command line writes it
    h5 = tmp_path / "v5.h5ad"
    res = subprocess.run([sys.executable, "-m", "rdarrow", "to-h5ad", str(f), "-o", str(h5)], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    back = ad.read_h5ad(h5)
    assert _same_sparse(back.X, _csr_of(ref["data"]))


def test_single_cell_experiment(made, tmp_path):
    out, ref = made
    for f in _files(out, "sce"):
        m = rdarrow.read_anndata(f)
        assert hasattr(m, "mod") and sorted(m.mod) == ["ADT", "main"]
        a = m["main"]
        assert list(a.obs_names) == ref["cells"] and list(a.var_names) == ref["features"]
        assert _same_sparse(a.X, _csr_of(ref["counts"]))
        np.testing.assert_array_equal(np.asarray(a.layers["logcounts"]), _csr_of(ref["data"]).toarray())
        assert list(a.obs["groups"]) == list(ref["meta"]["groups"])
        assert list(a.obs["RNA_snn_res.1"].cat.categories) == ref["meta"]["RNA_snn_res.1"]["levels"]
        assert a.var["gene_len"].tolist() == [10 * (i + 1) for i in range(len(ref["features"]))]
        np.testing.assert_array_equal(a.obsm["X_pca"], np.array(ref["pca"], dtype=float))
        knn = a.obsp["knn"]
        assert knn.shape == (80, 80) and knn[0, 1] == 0.5 and knn.nnz == 79
        assert a.uns["metadata"]["study"] == "pbmc"
        assert a.obs["sizeFactor"].tolist() == list(np.linspace(0.5, 2, 80)) or np.allclose(a.obs["sizeFactor"], np.linspace(0.5, 2, 80), rtol=1e-15)
        assert m["ADT"].shape == (80, 3)
    rdarrow.to_h5ad(f, tmp_path / "sce.h5mu")
    assert (tmp_path / "sce.h5mu").exists()


def test_ranged_summarized_experiment(made):
    out, ref = made
    for f in _files(out, "rse"):
        a = rdarrow.read_anndata(f)
        assert a.shape == (80, len(ref["features"]))
        assert a.var["sym"].tolist() == ref["features"]
        assert a.var["start"].tolist()[:2] == [100, 200] and a.var["end"].tolist()[0] == 149
        assert list(a.var["seqnames"][:3]) == ["chr1", "chr2", "chr1"]
        assert list(a.var["strand"][:2]) == ["+", "-"]
        assert a.obs["group"].tolist() == list(ref["meta"]["groups"])


def test_several_files_concatenate_by_cell(made):
    out, ref = made
    files = [str(p) for p in _files(out, "seurat5")[:2]]
    a = rdarrow.read_anndata(files)
    assert a.n_obs == 160 and list(a.obs["sample"].cat.categories) == ["seurat5-v2-gzip", "seurat5-v3-bzip2"]
    assert _same_sparse(a.X[:80], _csr_of(ref["data"]))
    glob = rdarrow.read_anndata(str(out / "seurat5-v3-*.rds"))
    assert glob.n_obs == 240


def test_unknown_classes_and_objects_are_clear_errors(made, tmp_path, run_r):
    out, _ = made
    f = tmp_path / "other.rds"
    run_r(f'setClass("Blob", representation(x = "numeric")); saveRDS(new("Blob", x = 1), "{f}")')
    with pytest.raises(rdarrow.UnsupportedError, match="Blob"):
        rdarrow.read_anndata(f)
    with pytest.raises(rdarrow.UsageError, match="no assay 'nope'"):
        rdarrow.read_anndata(_files(out, "seurat4")[0], assay="nope")


def test_peers_agree(made):
    out, ref = made
    try:
        from rds2py import read_rds
    except Exception as e:  # pragma: no cover - installed by tools/setup.sh
        pytest.skip(f"rds2py is not importable: {e}")
    f = out / "peer-sce.rds"
    theirs = read_rds(str(f))
    to_ad = getattr(theirs, "to_anndata", None)
    if to_ad is None:
        pytest.skip("rds2py gave no SingleCellExperiment with to_anndata()")
    t = to_ad()
    t = t[0] if isinstance(t, tuple) else t
    ours = rdarrow.read_anndata(f)
    assert t.shape == ours.shape
    assert list(t.obs["nCount_RNA"]) == list(ours.obs["nCount_RNA"])
    assert list(t.obs_names) == list(ours.obs_names)
    # rds2py's AnnData loses the gene names (its var index is 0, 1, ...);
    # rdarrow keeps R's
    assert list(t.var_names) in (list(ours.var_names), [str(i) for i in range(t.n_vars)])
    assert list(ours.var_names) == ref["features"]
    assert _same_sparse(t.layers["counts"], ours.X)


def test_readseurat_agrees_where_it_reads(made):
    out, ref = made
    try:
        import readseurat
    except Exception as e:  # pragma: no cover - installed by tools/setup.sh
        pytest.skip(f"readseurat is not importable: {e}")
    theirs = readseurat.read_seurat(str(out / "peer-seurat5.rds"))
    ours = rdarrow.read_anndata(out / "peer-seurat5.rds")
    assert theirs.shape == ours.shape
    assert list(theirs.obs_names) == list(ours.obs_names)
    # readseurat takes the features LogMap's values (TRUE) for the feature
    # names, not its row names; rdarrow gives R's
    assert set(theirs.var_names) <= {"True", "TRUE"} or list(theirs.var_names) == list(ours.var_names)
    assert list(ours.var_names) == ref["features"]
    assert _same_sparse(theirs.X, ours.X) and _same_sparse(ours.X, _csr_of(ref["data"]))
    # readseurat reads neither split layers (SeuratObject 5 after split())
    # nor a SeuratObject 4 assay (it looks for a v5 features slot); rdarrow
    # reads both (test_seurat_v5_assay5_split_layers_joined_by_cell,
    # test_seurat_v4_every_format_and_compression)
    for name in ("seurat5-v3-gzip.rds", "seurat4-v3-gzip.rds"):
        with pytest.raises(Exception):
            readseurat.read_seurat(str(out / name))


def test_an_sct_assay_is_read_as_an_assay_with_its_models(made):
    out, ref = made
    m = rdarrow.read_anndata(out / "sct.rds")
    assert list(m.mod) == ["SCT", "RNA"]
    sct = m["SCT"]
    assert _same_sparse(sct.X, _csr_of(ref["data"])) and _same_sparse(sct.layers["counts"], _csr_of(ref["counts"]))
    assert sct.uns["key"] == "sct_" and list(sct.uns["SCTModel.list"]["model1"]["theta"]) == [2.5]
