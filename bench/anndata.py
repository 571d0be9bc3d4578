"""read_anndata() against the other ways to get R's single-cell objects into
AnnData, on a SingleCellExperiment and a Seurat object of 20,000 genes x
30,000 cells at 2 % density (12 million non-zeros), saved by R with gzip.

Each reader runs in a fresh process (imports done before the clock and the
memory baseline): seconds of work, and the peak resident memory above that
baseline, against the bytes of the matrices it returns. The anchors are
rds2py + BiocPy's to_anndata() (the SingleCellExperiment), readseurat (the
Seurat object), R's own readRDS() for reference, and the inflate of the
file alone (the floor of any reader of a gzip stream, which cannot be
inflated in parallel: Python's zlib, and rdarrow's own inflate with the
values skipped, list_objects()). Also:
read_objects() of a 100,000 x 40 double matrix against read_table() of it.

The way back (``--write``, also run by default): an AnnData of the same
size made in Python (a float32 counts layer and normalised float32 X, 3 obs
columns, a 50-component PCA) written as a SingleCellExperiment and as a
Seurat object (v5 and v4) by rdarrow, against rds2py + BiocPy's
SingleCellExperiment.from_anndata() and write_rds() (the one writer of R
objects without R; it takes float64 matrices only, so its AnnData is cast
to float64 before its clock starts), each in a fresh process: seconds, the
peak resident memory above the AnnData, against the bytes of its
matrices, the file's size, and R's readRDS() of the file written.

    python bench/anndata.py [--cells 30000] [--genes 20000] [--density 0.02] [--only read|write]
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

MAKE_R = r"""
suppressMessages({library(Matrix); library(SeuratObject); library(SingleCellExperiment)})
set.seed(1)
g <- {genes}; n <- {cells}; nnz <- round(g * n * {density})
# column by column: each cell's genes, sorted, without repeats
per <- rep(nnz %/% n, n)
p <- c(0L, cumsum(per))
i <- unlist(lapply(per, function(k) sort(sample.int(g, k)) - 1L))
x <- as.double(rpois(nnz, 2) + 1)
m <- new("dgCMatrix", i = i, p = as.integer(p), x = x, Dim = c(as.integer(g), as.integer(n)),
         Dimnames = list(paste0("gene", seq_len(g)), paste0("cell", seq_len(n))))
sce <- SingleCellExperiment(list(counts = m),
  colData = DataFrame(group = factor(sample(c("a", "b", "c"), n, TRUE))))
saveRDS(sce, "{dir}/sce.rds", compress = "gzip")
so <- suppressWarnings(CreateSeuratObject(counts = m))
saveRDS(so, "{dir}/seurat.rds", compress = "gzip")
# a Seurat v5 object (readseurat reads v5 assays only): its Assay5 made
# with SeuratObject 5's class definitions (beside Debian's SeuratObject 4,
# in this one R process), one layer of counts
setClass("LogMap", contains = "matrix", package = "SeuratObject")
setClass("Assay5", package = "SeuratObject", slots = c(
  layers = "list", cells = "LogMap", features = "LogMap", default = "integer",
  assay.orig = "character", meta.data = "data.frame", misc = "list", key = "character"))
lm <- function(names) new("LogMap", matrix(TRUE, length(names), 1, dimnames = list(names, "counts")))
s5 <- so
s5@assays <- list(RNA = new("Assay5", layers = list(counts = m), cells = lm(colnames(m)),
  features = lm(rownames(m)), default = 1L, assay.orig = character(0),
  meta.data = data.frame(row.names = rownames(m)), misc = list(), key = "rna_"))
s5@version <- package_version("5.0.1")
saveRDS(s5, "{dir}/seurat5.rds", compress = "gzip")
saveRDS(matrix(rnorm(4e6), 1e5, 40), "{dir}/matrix.rds")
"""

# each run: imports, then the baseline, then the work, timed
RUN = r"""
import json, resource, sys, time, gc
kind, path = sys.argv[1], sys.argv[2]
def rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
if kind == "rdarrow":
    import rdarrow, anndata, scipy.sparse, mudata
    run = lambda: rdarrow.read_anndata(path)
elif kind == "rds2py":
    import rds2py, anndata, singlecellexperiment
    def run():
        a = rds2py.read_rds(path).to_anndata()
        return a[0] if isinstance(a, tuple) else a
elif kind == "readseurat":
    import readseurat, anndata
    run = lambda: readseurat.read_seurat(path)
elif kind == "list":
    import rdarrow
    run = lambda: rdarrow.list_objects(path)
elif kind == "inflate":
    import zlib
    def run():
        d = zlib.decompressobj(31)
        with open(path, "rb") as f:
            while True:
                b = f.read(1 << 20)
                if not b:
                    break
                d.decompress(b)
elif kind == "objects":
    import rdarrow, numpy
    run = lambda: rdarrow.read_objects(path)
elif kind == "table":
    import rdarrow, pyarrow
    run = lambda: rdarrow.read_table(path)
gc.collect()
base = rss()
t = time.perf_counter()
out = run()
secs = time.perf_counter() - t
peak = rss() - base

def matrix_bytes(a):
    import scipy.sparse as sp
    if a is None:
        return 0
    if hasattr(a, "mod"):
        return sum(matrix_bytes(m) for m in a.mod.values())
    total = 0
    for m in [a.X] + list(a.layers.values()):
        if sp.issparse(m):
            total += m.data.nbytes + m.indices.nbytes + m.indptr.nbytes
        elif m is not None:
            total += getattr(m, "nbytes", 0)
    return total
mb = matrix_bytes(out) if kind in ("rdarrow", "rds2py", "readseurat") else 0
print(json.dumps({"secs": secs, "peak": peak, "matrices": mb}))
"""

R_RUN = r"""
f <- commandArgs(TRUE)[[1]]
suppressMessages({library(Matrix); library(SeuratObject); library(SingleCellExperiment)})
invisible(gc(reset = TRUE))
t <- system.time(x <- readRDS(f))[["elapsed"]]
g <- gc()
cat(t, sum(g[, 6]) * 1024^2, "\n")
"""


# the way back: an AnnData made in the child, then the writer, timed; the
# peak of the resident memory sampled while it runs, above the AnnData
WRITE_RUN = r"""
import json, sys, time, threading, gc
import numpy as np, pandas as pd, scipy.sparse as sp, anndata as ad
kind, path, genes, cells, density = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
rng = np.random.default_rng(1)
per = int(round(genes * density))
indptr = np.arange(0, (cells + 1) * per, per, dtype=np.int64)
indices = np.concatenate([np.sort(rng.choice(genes, per, replace=False)) for _ in range(cells)]).astype(np.int32)
counts = sp.csr_matrix(((rng.poisson(2, cells * per) + 1).astype(np.float32), indices, indptr.astype(np.int32)), shape=(cells, genes))
X = counts.copy()
X.data = np.log1p(X.data / np.repeat(np.asarray(counts.sum(axis=1)).ravel() / 1e4, per)).astype(np.float32)
obs = pd.DataFrame({"group": pd.Categorical(rng.choice(["a", "b", "c"], cells)), "n_genes": np.full(cells, per, dtype=np.int32),
                    "score": rng.random(cells)}, index=[f"cell{i}" for i in range(cells)])
var = pd.DataFrame({"highly_variable": rng.random(genes) < 0.1}, index=[f"gene{j}" for j in range(genes)])
a = ad.AnnData(X=X, obs=obs, var=var, layers={"counts": counts}, obsm={"X_pca": rng.standard_normal((cells, 50))})
del X, counts
if kind == "rds2py":
    import rds2py, singlecellexperiment
    a.X = a.X.astype(np.float64)  # rds2py writes float64 matrices only
    a.layers["counts"] = a.layers["counts"].astype(np.float64)
else:
    import rdarrow
mats = sum(m.data.nbytes + m.indices.nbytes + m.indptr.nbytes for m in [a.X] + list(a.layers.values()))
def current():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096
gc.collect()
base = current()
peak = [base]
done = threading.Event()
def sample():
    while not done.is_set():
        peak[0] = max(peak[0], current())
        time.sleep(0.002)
th = threading.Thread(target=sample, daemon=True)
th.start()
t = time.perf_counter()
if kind == "sce":
    rdarrow.write_sce(a, path)
elif kind == "seurat5":
    rdarrow.write_seurat(a, path, version=5)
elif kind == "seurat4":
    rdarrow.write_seurat(a, path, version=4)
elif kind == "rds2py":
    sce = singlecellexperiment.SingleCellExperiment.from_anndata(a)
    rds2py.write_rds(sce, path)
secs = time.perf_counter() - t
done.set(); th.join()
peak[0] = max(peak[0], current())
print(json.dumps({"secs": secs, "peak": peak[0] - base, "matrices": mats}))
"""

R_READ = r"""
f <- commandArgs(TRUE)[[1]]
suppressMessages({library(Matrix); library(SeuratObject); library(SingleCellExperiment)})
t <- system.time(x <- readRDS(f))[["elapsed"]]
cat(t, "\n")
"""


def write_bench(a, d):
    rows = []
    for kind, name in (("sce", "rdarrow.write_sce()"), ("seurat5", "rdarrow.write_seurat() (v5)"),
                       ("seurat4", "rdarrow.write_seurat(version=4)"),
                       ("rds2py", "rds2py: SingleCellExperiment.from_anndata() + write_rds() (cast to float64)")):
        path = os.path.join(d, f"written-{kind}.rds")
        best = None
        for _ in range(2):
            res = subprocess.run([sys.executable, "-c", WRITE_RUN, kind, path, str(a.genes), str(a.cells), str(a.density)],
                                 capture_output=True, text=True)
            if res.returncode != 0:
                best = {"error": res.stderr.strip().splitlines()[-1][:160]}
                break
            r = json.loads(res.stdout.strip().splitlines()[-1])
            best = r if best is None or r["secs"] < best["secs"] else best
        if "error" not in best:
            env = dict(os.environ)
            r_read = subprocess.run(["Rscript", "--vanilla", "-e", R_READ, path], capture_output=True, text=True, env=env)
            best["read"] = float(r_read.stdout.split()[0]) if r_read.returncode == 0 else None
            best["size"] = os.path.getsize(path) / 2**20
        rows.append((name, best))
    ref = rows[0][1]
    print("| writer | seconds | x rdarrow.write_sce() | peak MiB above the AnnData | peak / matrices | file MiB | R readRDS() s |")
    print("|---|---|---|---|---|---|---|")
    for name, r in rows:
        if "error" in r:
            print(f"| {name} | failed: {r['error']} | | | | | |")
            continue
        read = f"{r['read']:.2f}" if r.get("read") is not None else "failed"
        print(f"| {name} | {r['secs']:.2f} | {r['secs'] / ref['secs']:.2f} | {r['peak'] / 2**20:.0f} | "
              f"{r['peak'] / r['matrices']:.2f} | {r['size']:.0f} | {read} |")


def run(kind, path, repeat=3):
    best = None
    for _ in range(repeat):
        res = subprocess.run([sys.executable, "-c", RUN, kind, path], capture_output=True, text=True)
        if res.returncode != 0:
            return {"error": res.stderr.strip().splitlines()[-1][:120]}
        r = json.loads(res.stdout.strip().splitlines()[-1])
        best = r if best is None or r["secs"] < best["secs"] else best
    return best


def run_r(path, repeat=3):
    times, peak = [], 0.0
    for _ in range(repeat):
        res = subprocess.run(["Rscript", "--vanilla", "-e", R_RUN, path], capture_output=True, text=True)
        if res.returncode != 0:
            return {"error": res.stderr.strip()[-120:]}
        t, m = res.stdout.split()
        times.append(float(t))
        peak = float(m)
    return {"secs": min(times), "peak": peak, "matrices": 0}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cells", type=int, default=30000)
    ap.add_argument("--genes", type=int, default=20000)
    ap.add_argument("--density", type=float, default=0.02)
    ap.add_argument("--dir", default=None, help="where the files are (made when missing)")
    ap.add_argument("--only", choices=["read", "write"], help="run one half only")
    a = ap.parse_args()
    d = a.dir or os.path.join(tempfile.gettempdir(), f"rdarrow-bench-anndata-{a.genes}x{a.cells}")
    os.makedirs(d, exist_ok=True)
    if a.only != "read":
        write_bench(a, d)
        if a.only == "write":
            return
        print()
    files = ("sce.rds", "seurat.rds", "seurat5.rds", "matrix.rds")
    if not all(os.path.exists(os.path.join(d, f)) for f in files):
        t = time.time()
        code = MAKE_R.replace("{genes}", str(a.genes)).replace("{cells}", str(a.cells))
        code = code.replace("{density}", str(a.density)).replace("{dir}", d)
        subprocess.run(["Rscript", "--vanilla", "-e", code], check=True)
        print(f"made the files in {time.time() - t:.0f} s", file=sys.stderr)
    rows = []
    for obj, peers in (("sce.rds", ["rds2py"]), ("seurat.rds", ["readseurat"]), ("seurat5.rds", ["readseurat"])):
        path = os.path.join(d, obj)
        ours = run("rdarrow", path)
        rows.append((obj, "rdarrow.read_anndata()", ours, ours))
        for p in peers:
            rows.append((obj, {"rds2py": "rds2py + to_anndata()", "readseurat": "readseurat.read_seurat()"}[p], run(p, path), ours))
        rows.append((obj, "R readRDS()", run_r(path), ours))
        rows.append((obj, "inflate alone (Python's zlib)", run("inflate", path), ours))
        rows.append((obj, "rdarrow.list_objects() (inflate, values skipped)", run("list", path), ours))
    m = os.path.join(d, "matrix.rds")
    table = run("table", m)
    rows.append(("matrix.rds", "rdarrow.read_table()", table, table))
    rows.append(("matrix.rds", "rdarrow.read_objects()", run("objects", m), table))
    size = {f: os.path.getsize(os.path.join(d, f)) / 2**20 for f in files}
    print(f"| file | reader | seconds | x rdarrow | peak MiB | peak / matrices |")
    print("|---|---|---|---|---|---|")
    for f, name, r, ref in rows:
        if "error" in r:
            print(f"| {f} ({size[f]:.0f} MiB) | {name} | failed: {r['error']} | | | |")
            continue
        ratio = r["secs"] / ref["secs"] if ref.get("secs") else float("nan")
        mats = ref.get("matrices") or 0
        per = f"{r['peak'] / mats:.2f}" if mats and r.get("peak") else ""
        print(f"| {f} ({size[f]:.0f} MiB) | {name} | {r['secs']:.2f} | {ratio:.2f} | {r['peak'] / 2**20:.0f} | {per} |")


if __name__ == "__main__":
    main()
