# Saving any R object: rdarrow's write_rds() against base R's saveRDS(),
# every figure from the same run on this machine, with the same
# compression and level as base R (saveRDS()'s: gzip 6, bzip2 9, xz 6).
#
#   Rscript bench/save.R                         # every object, every compression
#   Rscript bench/save.R --objects sce,strings   # some objects
#   Rscript bench/save.R --compress gzip,none    # some compressions
#   Rscript bench/save.R --scale 0.25            # smaller objects (a quick run)
#
# Objects (generated with fixed seeds):
#   sce      a SingleCellExperiment, 20,000 genes x 30,000 cells, 12 million
#            non-zero counts (dgCMatrix), as in the issue
#   seurat   a Seurat object of the same size (Debian's SeuratObject 4), with
#            counts and log-normalised data
#   frame    a 10,000,000-row data frame of mixed columns (bench/common.R)
#   strings  5,000,000 strings
#   lm       a list of 100 lm() fits
#
# For each object and compression: elapsed time, file size and peak memory
# above the object (VmHWM, reset through /proc/self/clear_refs before each
# call) of saveRDS() and of write_rds(), and their ratios. Then reading:
# readRDS() and read_rds() of saveRDS()'s gzip file and of write_rds()'s,
# and the inflation alone (rdarrow's decompressor: serial for R's file, on
# every core for rdarrow's), to say how close reading comes to the
# inflation divided by the cores, and read_rds() of the uncompressed
# stream (the floor: parsing and building R's objects alone). qs2's qs_save()/qs_read() are timed too
# when qs2 is installed (it is not a dependency; bench/README.md says how
# to build it from its sources).
#
# saveRDS() compresses xz at level 6 (xzfile()'s default), gzip at 6 and
# bzip2 at 9, and so does write_rds() unless told otherwise.
#
# Targets (bench/README.md): gzip >= 4x faster than saveRDS(); xz and
# bzip2 >= 1.8x; uncompressed no slower; sizes within 2 %; peak memory
# above the object <= 64 MB plus the compression threads' blocks;
# read_rds() of its own gzip file of the frame >= 1.7x faster than of
# saveRDS()'s.

suppressMessages(library(rdarrow))
source(file.path(dirname(sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))),
                 "common.R"))

opt_list <- function(name, default) {
  args <- commandArgs(trailingOnly = TRUE)
  i <- match(paste0("--", name), args)
  if (is.na(i)) default else strsplit(args[[i + 1L]], ",")[[1]]
}
objects_wanted <- opt_list("objects", c("sce", "seurat", "frame", "strings", "lm"))
compress_wanted <- opt_list("compress", c("gzip", "bzip2", "xz", "none"))
scale <- bench_opt("scale", 1)
cores <- parallel::detectCores()

status_kb <- function(field) {
  line <- grep(paste0("^", field, ":"), readLines("/proc/self/status"), value = TRUE)
  as.numeric(sub("kB", "", sub(".*:\\s*", "", line)))
}

# Elapsed seconds of f() and its peak resident memory above where it
# started, in MB.
measure <- function(f) {
  invisible(gc(full = TRUE))
  base <- status_kb("VmRSS")
  reset <- tryCatch({ cat("5", file = "/proc/self/clear_refs"); TRUE }, error = function(e) FALSE)
  t <- system.time(f(), gcFirst = FALSE)[["elapsed"]]
  peak <- if (reset) (status_kb("VmHWM") - base) / 1024 else NA_real_
  c(time = t, peak = peak)
}

sparse_counts <- function(genes, cells, nnz) {
  set.seed(46)
  per <- rep(nnz %/% cells, cells)
  p <- c(0L, cumsum(as.integer(per)))
  i <- unlist(lapply(seq_len(cells), function(k) sort(sample.int(genes, per[k])) - 1L))
  methods::new("dgCMatrix", i = i, p = p, x = as.double(stats::rpois(length(i), 1) + 1),
               Dim = c(as.integer(genes), as.integer(cells)),
               Dimnames = list(paste0("gene", seq_len(genes)), paste0("cell", seq_len(cells))))
}

make_object <- function(what) {
  genes <- round(20000 * sqrt(scale)); cells <- round(30000 * sqrt(scale)); nnz <- 12e6 * scale
  switch(what,
    sce = {
      suppressMessages(library(SingleCellExperiment))
      m <- sparse_counts(genes, cells, nnz)
      SingleCellExperiment(assays = list(counts = m),
                           colData = S4Vectors::DataFrame(sample = rep(c("a", "b"), length.out = cells)))
    },
    seurat = {
      suppressMessages(library(SeuratObject))
      m <- sparse_counts(genes, cells, nnz)
      s <- suppressWarnings(CreateSeuratObject(counts = m))
      norm <- m
      norm@x <- log1p(m@x / rep(Matrix::colSums(m), diff(m@p)) * 1e4)
      SetAssayData(s, slot = "data", new.data = norm)
    },
    frame = bench_frame(round(1e7 * scale)),
    strings = {
      set.seed(3)
      n <- round(5e6 * scale)
      paste0(sample(c("chr", "gene", "cell", "read"), n, TRUE), "_", sample.int(1e8, n, TRUE))
    },
    lm = {
      set.seed(4)
      lapply(seq_len(100), function(k) {
        n <- round(5000 * scale)
        d <- data.frame(y = rnorm(n), a = rnorm(n), b = runif(n), g = gl(5, 1, n))
        lm(y ~ a + b + g, data = d)
      })
    })
}

has_qs2 <- requireNamespace("qs2", quietly = TRUE)
dir <- tempfile("rdarrow-save-bench-")
dir.create(dir)
on.exit(unlink(dir, recursive = TRUE), add = TRUE)

cat(sprintf("rdarrow %s, %s, %d cores, load average %s%s\n\n", utils::packageVersion("rdarrow"),
            R.version.string, cores, load_avg(),
            if (has_qs2) ", qs2 installed" else ", qs2 not installed (see bench/README.md)"))

rows <- list()
reads <- list()
for (what in objects_wanted) {
  x <- make_object(what)
  plain <- file.path(dir, "plain.rds")
  saveRDS(x, plain, compress = FALSE)
  serialized <- file.size(plain)
  unlink(plain)
  cat(sprintf("%s: %s MB serialized (object.size %s MB)\n", what, mb(serialized), mb(utils::object.size(x))))
  for (cmp in compress_wanted) {
    r_file <- file.path(dir, paste0(what, "-r-", cmp, ".rds"))
    our_file <- file.path(dir, paste0(what, "-rdarrow-", cmp, ".rds"))
    comp <- if (cmp == "none") FALSE else cmp
    base_r <- measure(function() saveRDS(x, r_file, compress = comp))
    ours <- measure(function() write_rds(x, our_file, compress = cmp))
    rows[[length(rows) + 1L]] <- data.frame(
      object = what, compress = cmp,
      saveRDS_s = base_r[["time"]], write_rds_s = ours[["time"]],
      speedup = base_r[["time"]] / ours[["time"]],
      saveRDS_MB = file.size(r_file) / 1e6, write_rds_MB = file.size(our_file) / 1e6,
      size_ratio = file.size(our_file) / file.size(r_file),
      saveRDS_peak_MB = base_r[["peak"]], write_rds_peak_MB = ours[["peak"]]
    )
    print(rows[[length(rows)]], row.names = FALSE, digits = 3)
    if (cmp == "gzip") {
      # reading both gzip files: R's, and rdarrow's (inflated on every core)
      # the floor: read_rds() of the uncompressed stream (parsing and
      # building R's objects, no inflation)
      plain <- file.path(dir, "plain.rds")
      # (saveRDS(): in the page cache, as the other files are)
      saveRDS(x, plain, compress = FALSE)
      floor_s <- measure(function() read_rds(plain))[["time"]]
      unlink(plain)
      inflate_r <- measure(function() rdarrow:::rdata_decompress_impl(r_file))[["time"]]
      inflate_ours <- measure(function() rdarrow:::rdata_decompress_impl(our_file))[["time"]]
      t <- c(
        readRDS_r = measure(function() readRDS(r_file))[["time"]],
        readRDS_ours = measure(function() readRDS(our_file))[["time"]],
        read_rds_r = measure(function() read_rds(r_file))[["time"]],
        read_rds_ours = measure(function() read_rds(our_file))[["time"]]
      )
      reads[[length(reads) + 1L]] <- data.frame(
        object = what, readRDS_of_saveRDS_s = t[["readRDS_r"]], readRDS_of_write_rds_s = t[["readRDS_ours"]],
        read_rds_of_saveRDS_s = t[["read_rds_r"]], read_rds_of_write_rds_s = t[["read_rds_ours"]],
        speedup = t[["read_rds_r"]] / t[["read_rds_ours"]],
        inflate_serial_s = inflate_r, inflate_parallel_s = inflate_ours,
        read_rds_uncompressed_s = floor_s,
        read_vs_inflate_per_core = t[["read_rds_ours"]] / (inflate_r / cores)
      )
      print(reads[[length(reads)]], row.names = FALSE, digits = 3)
    }
    unlink(c(r_file, our_file))
  }
  if (has_qs2) {
    qf <- file.path(dir, paste0(what, ".qs2"))
    s <- measure(function() qs2::qs_save(x, qf, nthreads = cores))
    r <- measure(function() qs2::qs_read(qf, nthreads = cores))
    rows[[length(rows) + 1L]] <- data.frame(
      object = what, compress = "qs2 (zstd)", saveRDS_s = NA, write_rds_s = s[["time"]], speedup = NA,
      saveRDS_MB = NA, write_rds_MB = file.size(qf) / 1e6, size_ratio = NA,
      saveRDS_peak_MB = NA, write_rds_peak_MB = s[["peak"]])
    cat(sprintf("  qs2: qs_save %.2f s, %s MB; qs_read %.2f s\n", s[["time"]], mb(file.size(qf)), r[["time"]]))
    unlink(qf)
  }
  rm(x)
  invisible(gc(full = TRUE))
}

cat("\n== Writing (saveRDS() against write_rds(); qs2 rows: qs_save() in the write_rds columns)\n")
print(do.call(rbind, rows), row.names = FALSE, digits = 3)
if (length(reads)) {
  cat("\n== Reading the gzip files (read_vs_inflate_per_core: read_rds() of rdarrow's file over the serial inflation divided by the cores)\n")
  print(do.call(rbind, reads), row.names = FALSE, digits = 3)
}
cat(sprintf("\nload average after: %s\n", load_avg()))
