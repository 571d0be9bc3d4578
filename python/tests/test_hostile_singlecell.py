"""Hostile single-cell files through every reach that assembles the
engine's buffers into other libraries' objects: read_anndata(),
read_objects(), to_h5ad(), the Polars scan and the Spark source.

The objects are made by real R: pbmc_small as Seurat v4 (Debian's
SeuratObject 4.1), a Seurat v5 object made by the real SeuratObject 5.3.0
(an Assay5 whose layers are split in three, LogMaps, a reduction and a
graph), and a SingleCellExperiment (assays, colData, rowData, reduced
dimensions, size factors, colPairs, an altExp). Each is saved as an .rds
and as an .RData beside its cell metadata (the frame the Polars and Spark
routes read), uncompressed and compressed.

1. Damaged files: each of them damaged in 1 to 8 bytes (flips, overwritten
   integers, a truncation) from fixed seeds, each case read in a process of
   its own (forked, so that a crash ends only that process) under a time
   limit, two at a time (read_objects() also with plain=True). Every
   case must end in a value or one of
   rdarrow's documented errors (RDataError and its subclasses): never a
   crash, a hang, or a KeyError/IndexError/ValueError.
2. Targeted corruptions: each structure the engine and read_anndata()
   check (a sparse matrix's p, i, x and Dim; a dense matrix's dim; names
   and dimnames; factor codes; Seurat v5 LogMaps; cells against meta.data
   and embeddings, features against loadings) is broken alone, in R or by
   editing the serialized bytes, and the error must name the object path
   and the slot.
"""

import json
import os
import random
import select
import signal
import struct
import sys
import time
import traceback
from pathlib import Path

import numpy as np
import pytest

import rdarrow
from conftest import need_single_cell_r, seurat5_lib

ad = pytest.importorskip("anndata", reason="anndata is not installed (tools/setup.sh installs it)")
pytest.importorskip("scipy.sparse")
pl = pytest.importorskip("polars", reason="polars is not installed (tools/setup.sh installs it)")
import rdarrow.polars  # noqa: E402


# how many damaged files per run, and how many of them Spark reads
N_DAMAGED = int(os.environ.get("RDARROW_HOSTILE_CASES", "216"))
N_SPARK = int(os.environ.get("RDARROW_HOSTILE_SPARK", "24"))
SEED = int(os.environ.get("RDARROW_HOSTILE_SEED", "45"))
CASE_SECONDS = 60

MAKE_V4 = r"""
suppressMessages({library(SeuratObject); library(Matrix)})
out <- "{out}"
data("pbmc_small")
s <- pbmc_small
nn <- new("Neighbor", nn.idx = matrix(c(2:80, 1L, 3:80, 1:2), 80, 2),
          nn.dist = matrix(seq(0.1, 16, by = 0.1), 80, 2), alg.idx = NULL,
          alg.info = list(), cell.names = colnames(s))
s@neighbors[["RNA.nn"]] <- nn
saveRDS(s, file.path(out, "v4.rds"), compress = FALSE)
saveRDS(s, file.path(out, "v4-gzip.rds"))
md <- s@meta.data
save(s, md, file = file.path(out, "v4.RData"), compress = FALSE)
"""

MAKE_V5 = r"""
suppressMessages({library(SeuratObject); library(Matrix)})
stopifnot(packageVersion("SeuratObject") >= "5.3.0")
out <- "{out}"
set.seed(45)
counts <- as(matrix(rpois(120 * 90, 0.6), 120, 90,
  dimnames = list(paste0("gene", 1:120), paste0("cell", 1:90))), "dgCMatrix")
s <- CreateSeuratObject(counts = counts, project = "hostile")
LayerData(s, "data") <- log1p(counts)
s$batch <- factor(rep(c("a", "b", "c"), each = 30))
s$score <- seq(0.5, 45, by = 0.5)
s[["RNA"]] <- split(s[["RNA"]], f = s$batch)
emb <- matrix(rnorm(90 * 5), 90, 5, dimnames = list(Cells(s), paste0("PC_", 1:5)))
load <- matrix(rnorm(120 * 5), 120, 5, dimnames = list(rownames(counts), paste0("PC_", 1:5)))
s[["pca"]] <- CreateDimReducObject(embeddings = emb, loadings = load, key = "PC_", assay = "RNA")
g <- as.Graph(as(Matrix::rsparsematrix(90, 90, 0.05, dimnames = list(Cells(s), Cells(s))), "dgCMatrix"))
DefaultAssay(g) <- "RNA"
s[["RNA_snn"]] <- g
stopifnot(validObject(s, complete = TRUE), inherits(s[["RNA"]], "Assay5"),
          length(Layers(s[["RNA"]])) == 6)
saveRDS(s, file.path(out, "v5.rds"), compress = FALSE)
saveRDS(s, file.path(out, "v5-xz.rds"), compress = "xz")
md <- s@meta.data
save(s, md, file = file.path(out, "v5.RData"), compress = FALSE)
# what read_anndata() must give of the undamaged object, in the object's
# cell order: the split layers joined
d <- as(LayerData(JoinLayers(s[["RNA"]]), "data")[, Cells(s)], "CsparseMatrix")
c <- as(LayerData(JoinLayers(s[["RNA"]]), "counts")[, Cells(s)], "CsparseMatrix")
jsonlite::write_json(list(cells = Cells(s), features = rownames(s),
  data = list(i = d@i, p = d@p, x = sprintf("%.17g", d@x)),
  counts = list(i = c@i, p = c@p, x = sprintf("%.17g", c@x)),
  pca = sprintf("%.17g", Embeddings(s, "pca"))),
  file.path(out, "v5.json"), digits = NA)
"""

MAKE_SCE = r"""
suppressMessages({library(SingleCellExperiment); library(SeuratObject); library(Matrix)})
out <- "{out}"
data("pbmc_small")
counts <- GetAssayData(pbmc_small, "counts")
feats <- rownames(counts)
sce <- SingleCellExperiment(
  assays = list(counts = counts, logcounts = as.matrix(GetAssayData(pbmc_small, "data"))),
  colData = DataFrame(pbmc_small@meta.data),
  rowData = DataFrame(gene_len = seq_along(feats) * 10L),
  reducedDims = list(PCA = Embeddings(pbmc_small, "pca")))
sizeFactors(sce) <- seq(0.5, 2, length.out = ncol(sce))
altExp(sce, "ADT") <- SingleCellExperiment(list(counts = matrix(rpois(3 * 80, 5), 3, 80,
  dimnames = list(c("CD3", "CD4", "CD8"), colnames(sce)))))
colPair(sce, "knn") <- SelfHits(1:79, 2:80, nnode = 80, value = seq(0.5, 39.5, by = 0.5))
saveRDS(sce, file.path(out, "sce.rds"), compress = FALSE)
saveRDS(sce, file.path(out, "sce-bzip2.rds"), compress = "bzip2")
md <- as.data.frame(colData(sce))
save(sce, md, file = file.path(out, "sce.RData"), compress = FALSE)
"""


@pytest.fixture(scope="module")
def originals(tmp_path_factory, run_r):
    out = tmp_path_factory.mktemp("hostile-originals")
    need_single_cell_r(run_r)
    lib = seurat5_lib()
    run_r(MAKE_V4.replace("{out}", str(out)))
    run_r(MAKE_SCE.replace("{out}", str(out)))
    run_r(MAKE_V5.replace("{out}", str(out)), R_LIBS=lib)
    files = sorted(p for p in out.iterdir() if p.suffix != ".json")
    assert len(files) == 9, files
    return files


def test_the_undamaged_originals_read_as_r_made_them(originals):
    """The checks refuse nothing R made: each original reads, and the real
    SeuratObject 5 object's split layers come back joined, equal to R's
    JoinLayers()."""
    import scipy.sparse as sp

    shapes = {"v4": (80, 230), "v5": (90, 120), "sce": (80, 230)}
    for p in originals:
        obj = ("sce" if p.name.startswith("sce") else "s") if p.suffix == ".RData" else None
        a = rdarrow.read_anndata(p, object=obj)
        main = a.mod[next(iter(a.mod))] if hasattr(a, "mod") else a
        assert main.shape == shapes[p.name.split("-")[0].split(".")[0]], p.name
        rdarrow.read_objects(p)
    ref = json.loads((originals[0].parent / "v5.json").read_text())
    a = rdarrow.read_anndata(originals[0].parent / "v5.rds")
    assert list(a.obs_names) == ref["cells"] and list(a.var_names) == ref["features"]
    for layer, m in (("data", a.X), ("counts", a.layers["counts"])):
        r = ref[layer]
        want = sp.csc_matrix((np.array(r["x"], dtype=float), r["i"], r["p"]), shape=(120, 90)).T.tocsr()
        got = sp.csr_matrix(m)
        assert (got != want).nnz == 0, layer
    assert np.array_equal(a.obsm["X_pca"].ravel(order="F"), np.array(ref["pca"], dtype=float))


# --- damage --------------------------------------------------------------------


def damage(data: bytes, rng: random.Random) -> "tuple[bytes, str]":
    """``data`` damaged in 1 to 8 bytes, and how: bytes flipped, an aligned
    integer overwritten (a length, a pointer, an index), or cut short."""
    b = bytearray(data)
    how = rng.random()
    if how < 0.1:
        cut = rng.randrange(1, len(b))
        return bytes(b[:cut]), f"truncated at {cut}"
    if how < 0.55:
        n = rng.randint(1, 8)
        at = sorted(rng.randrange(len(b)) for _ in range(n))
        for k in at:
            b[k] ^= 1 << rng.randrange(8)
        return bytes(b), f"bits flipped at {at}"
    # an aligned 4-byte integer (XDR is big-endian, 4-byte aligned after
    # the header) set to a small, a negative or a large value
    at = rng.randrange(0, len(b) - 4) & ~3
    value = rng.choice([0, 1, 2, -1, rng.randrange(2, 300), rng.randrange(2**31), -(2**31)])
    b[at : at + 4] = struct.pack(">i", value)
    return bytes(b), f"int at {at} set to {value}"


def damaged_cases(originals, n, seed, out):
    rng = random.Random(seed)
    cases = []
    for k in range(n):
        src = originals[k % len(originals)]
        data, how = damage(src.read_bytes(), rng)
        p = out / f"case{k:04d}-{src.name}"
        p.write_bytes(data)
        cases.append((p, f"{src.name}: {how}"))
    return cases


# --- one case, one process ---------------------------------------------------------


def _route(route: str, path: Path, tmp: Path) -> str:
    """Run one route on one file; a short description of the value."""
    if route == "read_anndata":
        obj = None
        if path.suffix == ".RData":
            obj = "sce" if "sce" in path.name else "s"
        return type(rdarrow.read_anndata(path, object=obj)).__name__
    if route in ("read_objects", "plain"):
        v = rdarrow.read_objects(path, plain=route == "plain")
        return ",".join(sorted(v))
    if route == "to_h5ad":
        import h5py

        obj = None
        if path.suffix == ".RData":
            obj = "sce" if "sce" in path.name else "s"
        out = tmp / (path.name + ".h5ad")
        rdarrow.to_h5ad(path, out, object=obj)
        with h5py.File(out, "r") as f:  # complete: AnnData's or MuData's groups
            assert "obs" in f or "mod" in f, list(f)
        return f"{out.stat().st_size} bytes"
    if route == "polars":
        obj = "md" if path.suffix == ".RData" else None
        df = rdarrow.polars.scan_rdata(path, object=obj).collect()
        return f"{df.height}x{df.width}"
    # the harness's own checks (below): what a failing case looks like
    if route == "segfault":
        import ctypes

        ctypes.string_at(0)
    if route == "hang":
        time.sleep(3600)
    if route == "keyerror":
        raise KeyError("CATCATACGGAGCA")
    raise AssertionError(route)


def _child(route: str, path: Path, tmp: Path, w: int) -> None:
    import faulthandler
    import warnings

    faulthandler.disable()  # a crash is the parent's to report, by its signal
    warnings.simplefilter("ignore")
    try:
        what = _route(route, path, tmp)
        res = {"end": "value", "what": what}
    except rdarrow.RDataError as e:
        res = {"end": "error", "type": type(e).__name__, "message": str(e)[:400]}
    except BaseException as e:  # noqa: BLE001 - what the test must never see
        res = {"end": "escaped", "type": type(e).__name__, "message": str(e)[:400], "trace": traceback.format_exc()[-2000:]}
    os.write(w, json.dumps(res).encode())
    os.close(w)


def run_isolated(jobs, workers=2, seconds=CASE_SECONDS):
    """Run each ``(route, path, tmp)`` job in a forked process of its own,
    ``workers`` at a time, each killed after ``seconds``; the outcome of
    each: a value, an error (its class and message), an escaped exception,
    a crash (the signal) or a hang."""
    results = {}
    pending = list(enumerate(jobs))
    running = {}  # pid -> (index, read end, started, chunks)
    while pending or running:
        while pending and len(running) < workers:
            i, (route, path, tmp) = pending.pop(0)
            r, w = os.pipe()
            pid = os.fork()
            if pid == 0:  # the child: one case, then out without cleanup
                os.close(r)
                try:
                    _child(route, path, tmp, w)
                finally:
                    os._exit(0)
            os.close(w)
            running[pid] = (i, r, time.monotonic(), [])
        fds = {v[1]: pid for pid, v in running.items()}
        ready, _, _ = select.select(list(fds), [], [], 0.5)
        for fd in ready:
            data = os.read(fd, 1 << 16)
            if data:
                running[fds[fd]][3].append(data)
        for pid in list(running):
            i, r, started, chunks = running[pid]
            done, status = os.waitpid(pid, os.WNOHANG)
            if done == 0:
                if time.monotonic() - started > seconds:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                    os.close(r)
                    results[i] = {"end": "hang", "seconds": seconds}
                    del running[pid]
                continue
            while True:
                data = os.read(r, 1 << 16)
                if not data:
                    break
                chunks.append(data)
            os.close(r)
            del running[pid]
            if os.WIFSIGNALED(status):
                results[i] = {"end": "crash", "signal": signal.Signals(os.WTERMSIG(status)).name}
            elif not chunks:
                results[i] = {"end": "crash", "exit": os.WEXITSTATUS(status)}
            else:
                results[i] = json.loads(b"".join(chunks))
    return [results[i] for i in range(len(jobs))]


def test_the_harness_sees_crashes_hangs_and_stray_exceptions(tmp_path):
    p = tmp_path / "nothing.rds"
    p.write_bytes(b"not R data")
    jobs = [(r, p, tmp_path) for r in ("segfault", "hang", "keyerror", "read_objects")]
    out = run_isolated(jobs, seconds=3)
    assert out[0] == {"end": "crash", "signal": "SIGSEGV"}
    assert out[1] == {"end": "hang", "seconds": 3}
    assert out[2]["end"] == "escaped" and out[2]["type"] == "KeyError"
    assert out[3]["end"] == "error" and out[3]["type"] == "NotRDataError"


ROUTES = ["read_anndata", "read_objects", "plain", "to_h5ad", "polars"]
# the messages of the engine's structure checks and read_anndata()'s
STRUCTURE_ERROR = __import__("re").compile(
    r"(p\[\d+\] (>|is)|[ij]\[\d+\] is|x has \d+ values|Dim |dim( is|\[)|dimnames|names has|factor code|LogMap|"
    r"for the object's|not among|rows for|parts do not agree|run lengths|outside the \d+ (nodes|cells))"
)


def test_damaged_single_cell_files_end_in_a_value_or_a_documented_error(originals, tmp_path):
    cases = damaged_cases(originals, N_DAMAGED, seed=SEED, out=tmp_path)
    assert len(cases) >= 200
    jobs = [(route, p, tmp_path) for p, _ in cases for route in ROUTES]
    started = time.monotonic()
    outcomes = run_isolated(jobs)
    seconds = time.monotonic() - started
    bad, tally = [], {}
    for (route, p, _), out in zip(jobs, outcomes):
        key = (route, out["end"] if out["end"] != "error" else out["type"])
        tally[key] = tally.get(key, 0) + 1
        if out["end"] not in ("value", "error"):
            how = dict(cases)[p]
            bad.append(f"{route} {p.name} ({how}): {out}")
    # which of the errors are the structure checks' (a slot named after
    # the object's path) rather than the parser's
    checks = sum(1 for o in outcomes if o["end"] == "error" and STRUCTURE_ERROR.search(o["message"]))
    print(f"\n{len(cases)} damaged files x {len(ROUTES)} routes in {seconds:.1f} s; {checks} errors from the structure checks")
    for k in sorted(tally):
        print(f"  {k[0]:13s} {k[1]:18s} {tally[k]}")
    assert not bad, f"{len(bad)} of {len(jobs)} cases did not end in a value or an rdarrow error:\n" + "\n".join(bad[:30])
    # the damage reached the structures, not only the decompressor: some
    # cases read, some fail as corrupt, in every route
    for route in ROUTES:
        assert tally.get((route, "value"), 0) > 0, route
        assert tally.get((route, "CorruptError"), 0) > 0, route


def test_damaged_single_cell_files_through_spark(originals, tmp_path, spark):
    frames = [p for p in originals if p.suffix == ".RData"]
    rng = random.Random(4545)
    seen = {"value": 0, "error": 0}
    for k in range(N_SPARK):
        src = frames[k % len(frames)]
        data, how = damage(src.read_bytes(), rng)
        p = tmp_path / f"spark{k:03d}-{src.name}"
        p.write_bytes(data)
        try:
            rows = spark.read.format("rdata").option("object", "md").load(str(p)).collect()
            seen["value"] += 1
            assert isinstance(rows, list)
        except Exception as e:  # noqa: BLE001 - Spark wraps the data source's errors
            text = str(e)
            # rdarrow's own error, carried through Spark's Python worker
            # (a crash of the worker would say so instead)
            assert any(c in text for c in ("CorruptError", "RDataError", "NotRDataError", "UnsupportedError", "UsageError", "LimitError")), f"{p.name} ({how}): {text[:2000]}"
            assert "exited unexpectedly" not in text and "Segmentation" not in text, text[:2000]
            seen["error"] += 1
    print(f"\nSpark: {N_SPARK} damaged files: {seen}")
    assert seen["error"] > 0


# --- targeted corruptions --------------------------------------------------------

TARGETED_R = r"""
suppressMessages({library(SeuratObject); library(Matrix); library(SingleCellExperiment)})
out <- "{out}"
data("pbmc_small")
put <- function(x, name) saveRDS(x, file.path(out, paste0(name, ".rds")), compress = FALSE)
pbmc <- pbmc_small
# the issue's example: p[12] > p[13] (p counted from 0)
m <- pbmc@assays$RNA@counts
m@p[13] <- m@p[14] + 1L
a <- pbmc@assays$RNA; a@counts <- m; p <- pbmc; p@assays$RNA <- a; put(p, "p_decreasing")
m <- pbmc@assays$RNA@counts; m@p[1] <- 1L
a <- pbmc@assays$RNA; a@counts <- m; p <- pbmc; p@assays$RNA <- a; put(p, "p_start")
m <- pbmc@assays$RNA@counts; m@p[length(m@p)] <- m@p[length(m@p)] + 5L
a <- pbmc@assays$RNA; a@counts <- m; p <- pbmc; p@assays$RNA <- a; put(p, "p_end")
m <- pbmc@assays$RNA@data; m@i[5] <- 100000L
a <- pbmc@assays$RNA; a@data <- m; p <- pbmc; p@assays$RNA <- a; put(p, "i_outside")
put(m, "sparse_alone")
m <- pbmc@assays$RNA@data; m@x <- m@x[-1]
a <- pbmc@assays$RNA; a@data <- m; p <- pbmc; p@assays$RNA <- a; put(p, "x_short")
m <- pbmc@assays$RNA@data; m@Dim <- c(230L, 81L)
a <- pbmc@assays$RNA; a@data <- m; p <- pbmc; p@assays$RNA <- a; put(p, "dim_p")
# factor codes outside the levels: in the cells' metadata, and alone
p <- pbmc
p@meta.data$groups <- structure(c(rep(1L, 79), 7L), levels = c("g1", "g2"), class = "factor"); put(p, "factor_meta")
put(structure(c(1L, NA, 5L), levels = c("a", "b"), class = "factor"), "factor_alone")
# parallel slots: meta.data, embeddings and loadings against cells and features
p <- pbmc; p@meta.data <- p@meta.data[1:79, ]; put(p, "meta_rows")
p <- pbmc; e <- p@reductions$pca@cell.embeddings; rownames(e)[3] <- "NOT_A_CELL"
p@reductions$pca@cell.embeddings <- e; put(p, "embedding_rows")
p <- pbmc; l <- p@reductions$pca@feature.loadings; rownames(l)[2] <- "NOT_A_GENE"
p@reductions$pca@feature.loadings <- l; put(p, "loading_rows")
# a graph of other cells
p <- pbmc; g <- p@graphs$RNA_snn; g@Dimnames[[1]][4] <- "NOT_A_CELL"; p@graphs$RNA_snn <- g; put(p, "graph_cells")
# dense matrices whose dim, dimnames and names are rewritten in the bytes
# (R refuses to set them so): markers found by their values
put(list(m = matrix(c(1.25, 2.5, 3.75, 5, 6.25, 7.5), 2, 3)), "dense_dim")
put(list(m = matrix(c(1.25, 2.5, 3.75, 5, 6.25, 7.5), 2, 3, dimnames = list(c("r1", "r2"), c("c1", "c2", "c3")))), "dense_dimnames")
put(list(v = c(a = 11.5, b = 12.5, c = 13.5)), "names_short")
# an SCE whose colPairs point past the cells
sce <- SingleCellExperiment(list(counts = GetAssayData(pbmc, "counts")))
colPair(sce, "knn") <- SelfHits(1:79 + 0L, 2:80 + 0L, nnode = 80)
saveRDS(sce, file.path(out, "sce_pairs.rds"), compress = FALSE)
"""

MAKE_V5_TARGETED = r"""
suppressMessages({library(SeuratObject); library(Matrix)})
out <- "{out}"
set.seed(45)
counts <- as(matrix(rpois(40 * 30, 0.8), 40, 30,
  dimnames = list(paste0("gene", 1:40), paste0("cell", 1:30))), "dgCMatrix")
s <- CreateSeuratObject(counts = counts)
s$batch <- rep(c("a", "b"), each = 15)
s[["RNA"]] <- split(s[["RNA"]], f = s$batch)
a <- s[["RNA"]]
lm <- slot(a, "cells")
lm[1, "counts.a"] <- FALSE   # counts.a holds 15 cells, its LogMap now marks 14
slot(a, "cells", check = FALSE) <- lm
s@assays$RNA <- a
saveRDS(s, file.path(out, "v5_logmap.rds"), compress = FALSE)
"""


def _patch(path: Path, old: bytes, new: bytes) -> None:
    data = path.read_bytes()
    assert data.count(old) == 1, (path, old)
    path.write_bytes(data.replace(old, new))


def _real(x: float) -> bytes:
    return struct.pack(">d", x)


@pytest.fixture(scope="module")
def targeted(tmp_path_factory, run_r):
    out = tmp_path_factory.mktemp("hostile-targeted")
    need_single_cell_r(run_r)
    run_r(TARGETED_R.replace("{out}", str(out)))
    run_r(MAKE_V5_TARGETED.replace("{out}", str(out)), R_LIBS=seurat5_lib())
    INT, STR, LEN2 = b"\x00\x00\x00\x0d", b"\x00\x00\x00\x10", b"\x00\x00\x00\x02"
    # dim 2 x 3 -> 2 x 4 (6 values)
    _patch(out / "dense_dim.rds", INT + LEN2 + struct.pack(">ii", 2, 3), INT + LEN2 + struct.pack(">ii", 2, 4))
    # dim 2 x 3 -> 3 x 2: the same length, dimnames of 2 rows and 3 columns
    _patch(out / "dense_dimnames.rds", INT + LEN2 + struct.pack(">ii", 2, 3), INT + LEN2 + struct.pack(">ii", 3, 2))
    # the values c(11.5, 12.5, 13.5) cut to two: three names for two values
    p = out / "names_short.rds"
    _patch(p, b"\x00\x00\x00\x03" + _real(11.5) + _real(12.5) + _real(13.5), LEN2 + _real(11.5) + _real(12.5))
    return out


def _error(path: Path, fn=None, **kw):
    fn = fn or rdarrow.read_anndata
    with pytest.raises(rdarrow.CorruptError) as e:
        fn(path, **kw)
    return str(e.value)


@pytest.mark.parametrize(
    "name, message",
    [
        ("p_decreasing", "p_decreasing@assays$RNA@counts: p[12] > p[13]"),
        ("p_start", "p_start@assays$RNA@counts: p[0] is 1, not 0"),
        ("p_end", "p_start@assays$RNA@counts: p[80] is"),
        ("i_outside", "i_outside@assays$RNA@data: i[4] is 100000, outside the 230 rows"),
        ("x_short", "x_short@assays$RNA@data: x has"),
        ("dim_p", "dim_p@assays$RNA@data: p has 81 values for 81 columns (needs 82)"),
    ],
)
def test_each_sparse_slot_is_checked_and_named(targeted, name, message):
    message = message.replace("p_start@", f"{name}@")
    path = targeted / f"{name}.rds"
    for fn in (rdarrow.read_anndata, rdarrow.read_objects):
        text = _error(path, fn)
        assert message in text, (fn.__name__, text)


def test_the_issue_example_names_the_object_path(targeted, tmp_path):
    import shutil

    p = tmp_path / "pbmc.rds"
    shutil.copy(targeted / "p_decreasing.rds", p)
    text = _error(p)
    assert "pbmc@assays$RNA@counts: p[12] > p[13]" in text


def test_factor_codes_outside_their_levels(targeted):
    text = _error(targeted / "factor_alone.rds", rdarrow.read_objects)
    assert "factor_alone: factor code 5 at [3] is outside its 2 levels" in text
    text = _error(targeted / "factor_meta.rds")
    assert "factor_meta@meta.data" in text and "factor code 7 is outside its 2 levels" in text
    # plain values check the same
    text = _error(targeted / "factor_alone.rds", rdarrow.read_objects, plain=True)
    assert "factor code 5 at [3]" in text


def test_dense_dim_dimnames_and_names(targeted):
    text = _error(targeted / "dense_dim.rds", rdarrow.read_objects)
    assert "dense_dim$m: dim is 2 x 4 but the vector has 6 values" in text
    text = _error(targeted / "dense_dimnames.rds", rdarrow.read_objects)
    assert "dense_dimnames$m: dimnames[[1]] has 2 names for 3 rows" in text
    text = _error(targeted / "names_short.rds", rdarrow.read_objects)
    assert "names_short$v: names has 3 names for 2 values" in text


@pytest.mark.parametrize(
    "name, message",
    [
        ("meta_rows", "meta_rows@assays$RNA@data: 80 columns (80 distinct) for the object's 79 cells"),
        ("embedding_rows", "embedding_rows@reductions$pca@cell.embeddings: the object's cell"),
        ("loading_rows", "loading_rows@reductions$pca@feature.loadings: feature 'NOT_A_GENE' is not among the assay's features"),
        ("graph_cells", "graph_cells@graphs$RNA_snn: the object's cell"),
    ],
)
def test_parallel_slots_agree(targeted, name, message):
    text = _error(targeted / f"{name}.rds")
    assert message in text, text


def test_a_v5_logmap_that_disagrees_with_its_layer(targeted):
    text = _error(targeted / "v5_logmap.rds")
    assert "v5_logmap@assays$RNA@layers$counts.a: 40 x 15, but the features and cells LogMaps give it 40 x 14" in text, text


def test_colpairs_past_the_cells(targeted, tmp_path):
    p = tmp_path / "sce_pairs.rds"
    data = (targeted / "sce_pairs.rds").read_bytes()
    # the SelfHits' `to` (2:80, a compact sequence or 79 integers) made to
    # point at node 81 of 80: its last integer
    INT = b"\x00\x00\x00\x0d"
    to = INT + struct.pack(">i", 79) + b"".join(struct.pack(">i", k) for k in range(2, 81))
    if to in data:
        p.write_bytes(data.replace(to, to[:-4] + struct.pack(">i", 81)))
        text = _error(p)
        assert "sce_pairs@int_colData$colPairs$knn: to[79] is 81, outside the 80 nodes" in text, text
    else:
        pytest.fail("the SelfHits' to slot was not found in the bytes R wrote")


def test_a_damaged_sparse_matrix_to_arrow_and_duckdb(targeted):
    """The sparse matrix's table of entries (the Arrow bridge's) checks the
    same slots, in Python's read_table() and in DuckDB's read_rds()."""
    p = targeted / "sparse_alone.rds"
    with pytest.raises(rdarrow.CorruptError, match=r"i\[4\] is 100000, outside the 230 rows"):
        rdarrow.read_table(p)
    from test_duckdb import connect

    con = connect()
    import duckdb

    with pytest.raises(duckdb.Error, match=r"i\[4\] is 100000, outside the 230 rows"):
        con.execute(f"SELECT * FROM read_rds('{p}')").fetchall()


def test_the_fuzz_findings_through_python(tmp_path):
    """The inputs the structure_checks fuzz campaigns keep (and the
    structures it must refuse), each through read_objects() (NumPy and
    plain), read_anndata() and the Polars scan in a process of its own:
    a value or an rdarrow error, never a crash or a stray exception."""
    found = sorted((Path(__file__).resolve().parents[2] / "src/rust/rdarrow-arrow/tests/fuzz-findings").glob("structure-*.rds"))
    assert len(found) >= 4, found
    jobs = [(route, p, tmp_path) for p in found for route in ("read_objects", "plain", "read_anndata", "polars")]
    outcomes = run_isolated(jobs)
    bad = [f"{r} {p.name}: {o}" for (r, p, _), o in zip(jobs, outcomes) if o["end"] not in ("value", "error")]
    assert not bad, "\n".join(bad)
    refused = {p.name for (r, p, _), o in zip(jobs, outcomes) if r == "read_objects" and o["end"] == "error" and o["type"] == "CorruptError"}
    assert {"structure-p-decreasing.rds", "structure-i-outside.rds", "structure-factor-code.rds"} <= refused, refused
