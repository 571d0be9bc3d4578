# Reading one slot of a large S4 object by its object path: the counts
# matrix of a Seurat object of 20,000 genes x 30,000 cells (2 % dense: 12
# million non-zeros, counts and normalised data, saveRDS() with gzip),
# against readRDS() of the whole object, each in a fresh Rscript child.
#
#   Rscript bench/slot.R                 # the full size (a minute to make)
#   Rscript bench/slot.R --scale 0.1     # a tenth of the cells
#
# rdarrow parses the object with every large payload left in the
# (spilled) stream and decodes only the slot asked for: the matrix's i, p
# and x, not the data layer's, nor the cells' metadata. Reported: the peak
# resident memory above the child's baseline (VmHWM after clear_refs,
# less VmRSS before), the seconds, and the ratios to readRDS(). Also
# rdata_to_arrow() of the path (the matrix as a table of its entries).
# Linux only (/proc).

script_dir <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE)[1]))
source(file.path(script_dir, "common.R"))
scale <- bench_opt("scale", 1)
suppressPackageStartupMessages(library(rdarrow))
if (!file.exists("/proc/self/clear_refs")) stop("bench/slot.R needs Linux (/proc)")
if (!requireNamespace("SeuratObject", quietly = TRUE)) stop("bench/slot.R needs SeuratObject")

dir <- tempfile("rdarrow-slot-")
dir.create(dir)
on.exit(unlink(dir, recursive = TRUE), add = TRUE)
genes <- 20000L
cells <- as.integer(round(30000 * scale))
cat(sprintf("rdarrow %s, R %s, SeuratObject %s, %d genes x %d cells, load average %s\n",
            packageVersion("rdarrow"), getRversion(), packageVersion("SeuratObject"), genes,
            cells, load_avg()))

f <- file.path(dir, "seurat.rds")
local({
  suppressPackageStartupMessages({ library(Matrix); library(SeuratObject) })
  set.seed(1)
  per <- rep(round(genes * 0.02), cells)
  i <- unlist(lapply(per, function(k) sort(sample.int(genes, k)) - 1L))
  m <- new("dgCMatrix", i = i, p = as.integer(c(0, cumsum(per))),
           x = as.double(rpois(length(i), 2) + 1), Dim = c(genes, cells),
           Dimnames = list(paste0("gene", seq_len(genes)), paste0("cell", seq_len(cells))))
  so <- suppressWarnings(CreateSeuratObject(counts = m))
  so <- SetAssayData(so, slot = "data", new.data = log1p(m))
  so$group <- factor(sample(c("a", "b", "c"), cells, TRUE))
  saveRDS(so, f, compress = "gzip")
})
invisible(gc())

child <- write_peak_child(
  file.path(dir, "child.R"), c("rdarrow", "Matrix", "SeuratObject"),
  setup = "path <- 'seurat@assays$RNA@counts'",
  calls = c(
    "readRDS = function() readRDS(f)",
    "slot_of_readRDS = function() readRDS(f)@assays$RNA@counts",
    "read_rdata = function() read_rdata(f, objects = path)[[1]]",
    "rdata_to_arrow = function() nanoarrow::convert_array_stream(rdata_to_arrow(f, object = path))"),
  result_size = TRUE)

measure <- function(method) {
  best <- NULL
  for (k in 1:2) {
    out <- system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", child, method, f),
                   stdout = TRUE)
    v <- as.numeric(strsplit(tail(out, 1), " ")[[1]])
    r <- list(peak = v[[1]], seconds = v[[2]], size = v[[3]])
    if (is.null(best) || r$seconds < best$seconds) best <- r
  }
  best
}

base <- measure("readRDS")
cat(sprintf("\nfile: %s MB (gzip); the counts matrix: %s MB in R\n\n", mb(file.size(f)),
            mb(measure("slot_of_readRDS")$size)))
cat("| read | peak (MB) | s | result (MB) | peak / readRDS() | time / readRDS() |\n")
cat("|---|---:|---:|---:|---:|---:|\n")
rows <- list(
  list(label = "`readRDS()` of the whole object (anchor)", r = base),
  list(label = "`readRDS(f)@assays$RNA@counts`", r = measure("slot_of_readRDS")),
  list(label = "`read_rdata(f, objects = \"seurat@assays$RNA@counts\")`", r = measure("read_rdata")),
  list(label = "`rdata_to_arrow(f, object = \"seurat@assays$RNA@counts\")` (its entries i, j, x), made a data frame by nanoarrow",
       r = measure("rdata_to_arrow"))
)
for (row in rows) {
  r <- row$r
  cat(sprintf("| %s | %s | %.2f | %s | %.2f | %.2f |\n", row$label, mb(r$peak), r$seconds,
              mb(r$size), r$peak / base$peak, r$seconds / base$seconds))
}
cat(sprintf("\nLoad average after: %s\n", load_avg()))
