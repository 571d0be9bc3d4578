# Seeds of the structure_checks fuzz target: objects whose parts must agree
# (sparse matrices, labelled matrices and arrays, factors, single-cell
# experiments), saved uncompressed.
#   Rscript make_structure_seeds.R OUTDIR
out <- commandArgs(TRUE)[1]
dir.create(out, showWarnings = FALSE, recursive = TRUE)
put <- function(x, name) saveRDS(x, file.path(out, paste0("structure_", name, ".rds")), compress = FALSE)
suppressMessages(library(Matrix))
m <- sparseMatrix(i = c(1, 3, 2, 4), j = c(1, 1, 3, 4), x = c(1.5, 2, -3, 4), dims = c(4, 5),
                  dimnames = list(letters[1:4], LETTERS[1:5]))
put(m, "dgC")
put(as(m, "RsparseMatrix"), "dgR")
put(as(m, "TsparseMatrix"), "dgT")
put(m != 0, "lgC")
put(list(a = m, b = m[, 2:3]), "list_of_sparse")
put(matrix(c(1.25, 2.5, 3.75, 5, 6.25, 7.5), 2, 3, dimnames = list(c("r1", "r2"), c("c1", "c2", "c3"))), "dense")
put(array(1:24, c(2, 3, 4), dimnames = list(NULL, c("x", "y", "z"), NULL)), "array")
put(c(a = 1.5, b = 2.5, c = NA), "named")
put(factor(c("lo", "hi", NA, "hi"), levels = c("lo", "hi", "none")), "factor")
put(data.frame(f = factor(c("a", "b", "a")), x = 1:3, row.names = c("p", "q", "r")), "frame")
if (requireNamespace("SeuratObject", quietly = TRUE)) {
  suppressMessages(library(SeuratObject))
  data("pbmc_small")
  put(pbmc_small, "seurat4")
}
if (requireNamespace("SingleCellExperiment", quietly = TRUE)) {
  suppressMessages(library(SingleCellExperiment))
  sce <- SingleCellExperiment(list(counts = m), colData = DataFrame(g = factor(c("a", "b", "a", "b", "c"))),
                              reducedDims = list(PCA = matrix(1:10 + 0.5, 5, 2)))
  colPair(sce, "knn") <- SelfHits(1:4, 2:5, nnode = 5)
  put(sce, "sce")
}
