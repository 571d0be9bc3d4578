# rdarrow benchmark: R data files to Parquet and back, against the routes an
# R user takes today (load() + arrow::write_parquet(), arrow::read_parquet()
# + save()), all measured in the same run.
#
# What it measures (the bench/ frame of bench.R, saved with save(), gzip)
#   1. Speed at --rows N (default 5e6), median of --reps K (default 3):
#        rdata_to_parquet(file, sink, compression = "zstd")
#        anchor A: load() + arrow::write_parquet(compression = "zstd")
#        anchor B: arrow::write_parquet(arrow::as_arrow_table(rdata_to_arrow()))
#        parquet_to_rdata(parquet, sink)          (gzip .RData)
#        anchor C: arrow::read_parquet() + save() (gzip .RData)
#      Targets: rdata_to_parquet <= 0.4 x A and <= 0.7 x B;
#               parquet_to_rdata <= 0.5 x C.
#   2. Peak memory (VmHWM above the VmRSS after loading rdarrow, in a fresh
#      Rscript child, VmHWM reset through /proc/self/clear_refs) of
#      rdata_to_parquet() for the same frame at each of --sizes (default
#      1e6,5e6,2e7 rows): the largest may exceed the smallest by at most
#      64 MB (plus the decompressor's window and one row group per column,
#      which are the same at every size). And the peak of parquet_to_rdata()
#      at N rows against its largest column plus one row group.
#   Every output is read back (load(), arrow::read_parquet()) and compared
#   with identical() to the frame save() wrote.
#
# How to run (from the repository root, rdarrow and arrow installed)
#   Rscript bench/parquet.R                                  # about 5 minutes
#   Rscript bench/parquet.R --rows 5e5 --sizes 2e5,1e6,4e6   # quick run

suppressPackageStartupMessages(library(rdarrow))
if (!requireNamespace("arrow", quietly = TRUE)) {
  stop("the Parquet benchmark needs the arrow R package (its anchors are arrow's writer and reader)")
}
source(file.path(local({
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(f)) dirname(normalizePath(f[[1]])) else "bench"
}), "common.R"))

# ---- options ---------------------------------------------------------------

opts <- list(rows = 5e6, reps = 3, sizes = c(1e6, 5e6, 2e7))
args <- commandArgs(trailingOnly = TRUE)
if (length(args) %% 2L != 0L) stop("usage: parquet.R [--rows N] [--reps K] [--sizes N1,N2,...]")
for (i in seq_len(length(args) %/% 2L) * 2L - 1L) {
  key <- sub("^--", "", args[[i]])
  val <- as.numeric(strsplit(args[[i + 1L]], ",")[[1]])
  if (!key %in% names(opts) || anyNA(val) || any(val < 1)) {
    stop("usage: parquet.R [--rows N] [--reps K] [--sizes N1,N2,...]")
  }
  opts[[key]] <- val
}
n <- as.integer(opts$rows)
reps <- as.integer(opts$reps)
sizes <- as.integer(sort(opts$sizes))

loaded <- function(path) { e <- new.env(); get(load(path, envir = e)[[1]], envir = e) }
verdict <- function(value, target) if (value <= target) "meets" else "misses"

dir <- tempfile("rdarrow-bench-parquet-")
dir.create(dir)
rscript <- file.path(R.home("bin"), "Rscript")

cat("# rdarrow Parquet benchmark\n\n")
cat("- ", R.version.string, "; rdarrow ", format(packageVersion("rdarrow")), "; arrow ",
    format(packageVersion("arrow")), " (", arrow::cpu_count(), " threads)\n", sep = "")
cat("- load average at start: ", load_avg(), "\n", sep = "")
cat("- rows: ", format(n, big.mark = ","), ", repetitions: ", reps, " (median reported)\n", sep = "")

# ---- 1. speed -----------------------------------------------------------------

df <- bench_frame(n)
gz <- file.path(dir, "frame.RData")
save(df, file = gz)
rm(df)
invisible(gc())
cat(sprintf("- input: %s, %s MB (gzip)\n", basename(gz), mb(file.size(gz))))

pq_ours <- file.path(dir, "ours.parquet")
pq_arrow <- file.path(dir, "arrow.parquet")
pq_bridge <- file.path(dir, "bridge.parquet")
rd_ours <- file.path(dir, "ours.RData")
rd_arrow <- file.path(dir, "arrow.RData")

methods <- list(
  rdata_to_parquet = function() rdata_to_parquet(gz, pq_ours, compression = "zstd"),
  load_write_parquet = function() {
    e <- new.env()
    load(gz, envir = e)
    arrow::write_parquet(e$df, pq_arrow, compression = "zstd")
  },
  rdata_to_arrow_write_parquet = function() {
    arrow::write_parquet(arrow::as_arrow_table(rdata_to_arrow(gz)), pq_bridge, compression = "zstd")
  },
  parquet_to_rdata = function() parquet_to_rdata(pq_ours, rd_ours, name = "df"),
  read_parquet_save = function() {
    df <- arrow::read_parquet(pq_ours)
    save(df, file = rd_arrow)
  }
)
secs <- matrix(NA_real_, reps, length(methods), dimnames = list(NULL, names(methods)))
for (r in seq_len(reps)) {
  for (m in names(methods)) secs[r, m] <- time_once(methods[[m]])
}
med <- apply(secs, 2, stats::median)

cat("\n## Speed\n\nelapsed seconds, each run:\n\n")
for (m in names(methods)) {
  cat(sprintf("- %-29s %s\n", m, paste(sprintf("%.3f", secs[, m]), collapse = " ")))
}

original <- loaded(gz)
checks <- c(
  "load() of parquet_to_rdata()'s file" = identical(loaded(rd_ours), original),
  "arrow::read_parquet() of rdata_to_parquet()'s file" =
    identical(as.data.frame(arrow::read_parquet(pq_ours)), original),
  "(arrow R's own route, for comparison) load() of read_parquet() + save()" =
    identical(loaded(rd_arrow), original)
)
cat("\nread back and compared with identical() to the frame save() wrote:\n\n")
for (k in names(checks)) cat(sprintf("- %s: %s\n", k, checks[[k]]))
cat(sprintf("\nParquet files (MB): rdarrow %s, arrow R %s; .RData (MB): rdarrow %s, save() %s\n",
            mb(file.size(pq_ours)), mb(file.size(pq_arrow)), mb(file.size(rd_ours)), mb(file.size(rd_arrow))))
rm(original)

speed <- data.frame(
  ratio = c("rdata_to_parquet / (load + write_parquet)",
            "rdata_to_parquet / (rdata_to_arrow + write_parquet)",
            "parquet_to_rdata / (read_parquet + save)"),
  value = c(med[["rdata_to_parquet"]] / med[["load_write_parquet"]],
            med[["rdata_to_parquet"]] / med[["rdata_to_arrow_write_parquet"]],
            med[["parquet_to_rdata"]] / med[["read_parquet_save"]]),
  target = c(0.4, 0.7, 0.5))
cat("\n| ratio (medians) | ours (s) | anchor (s) | value | target | verdict |\n|---|---:|---:|---:|---|---|\n")
ours <- med[c("rdata_to_parquet", "rdata_to_parquet", "parquet_to_rdata")]
anchor <- med[c("load_write_parquet", "rdata_to_arrow_write_parquet", "read_parquet_save")]
for (i in seq_len(nrow(speed))) {
  cat(sprintf("| %s | %.3f | %.3f | %.3f | <= %.1f | %s |\n", speed$ratio[i], ours[[i]], anchor[[i]],
              speed$value[i], speed$target[i], verdict(speed$value[i], speed$target[i])))
}
cat("\nload average after timing:", load_avg(), "\n")

# ---- 2. peak memory -------------------------------------------------------------

# The child prints baseline VmRSS and VmHWM after `what` (bytes).
peak_script <- file.path(dir, "peak.R")
writeLines(c(
  "suppressPackageStartupMessages(library(rdarrow))",
  "status <- function(field) {",
  "  l <- grep(paste0('^', field, ':'), readLines('/proc/self/status'), value = TRUE)",
  "  as.numeric(gsub('[^0-9]', '', l)) * 1024",
  "}",
  "a <- commandArgs(trailingOnly = TRUE)",
  "invisible(gc(full = TRUE))",
  "cat('5', file = '/proc/self/clear_refs')",
  "rss0 <- status('VmRSS')",
  "if (a[[1]] == 'to_parquet') rdata_to_parquet(a[[2]], a[[3]], compression = 'zstd')",
  "if (a[[1]] == 'to_rdata') parquet_to_rdata(a[[2]], a[[3]], name = 'df')",
  "cat(sprintf('%.0f %.0f\\n', rss0, status('VmHWM')))"
), peak_script)
peak_of <- function(what, input, output) {
  out <- system2(rscript, c("--vanilla", shQuote(peak_script), what, shQuote(input), shQuote(output)),
                 stdout = TRUE)
  v <- as.numeric(strsplit(trimws(tail(out, 1)), " ")[[1]])
  c(baseline = v[[1]], extra = v[[2]] - v[[1]])
}

cat("\n## Peak memory of rdata_to_parquet() (zstd, default memory)\n\n")
cat("| rows | .RData (MB) | payload (MB) | Parquet (MB) | row groups | baseline (MB) | peak - baseline (MB) |\n")
cat("|---:|---:|---:|---:|---:|---:|---:|\n")
extra <- numeric()
for (size in sizes) {
  f <- file.path(dir, sprintf("frame-%d.RData", size))
  if (size == n) {
    file.copy(gz, f)
  } else {
    df <- bench_frame(size)
    save(df, file = f)
    rm(df)
    invisible(gc())
  }
  out <- file.path(dir, sprintf("frame-%d.parquet", size))
  p <- peak_of("to_parquet", f, out)
  groups <- arrow::ParquetFileReader$create(out)$num_row_groups
  payload <- rdarrow:::rdata_decompress_impl(f)
  extra[[as.character(size)]] <- p[["extra"]]
  cat(sprintf("| %s | %s | %s | %s | %d | %s | %s |\n", format(size, big.mark = ","),
              mb(file.size(f)), mb(payload), mb(file.size(out)), groups, mb(p[["baseline"]]),
              mb(p[["extra"]])))
  if (size != n) unlink(f)
  unlink(out)
}
growth <- extra[[length(extra)]] - extra[[1]]
cat(sprintf("\nlargest - smallest: %s MB (target <= 64 MB plus one row group per column): %s\n",
            mb(growth), verdict(growth / 1e6, 64)))

cat("\n## Peak memory of parquet_to_rdata()\n\n")
tbl <- arrow::read_parquet(pq_ours, as_data_frame = FALSE)
col_bytes <- vapply(tbl$columns, function(c) as.numeric(c$nbytes()), 0)
names(col_bytes) <- names(tbl)
meta <- arrow::ParquetFileReader$create(pq_ours)
group_bytes <- sum(col_bytes) / meta$num_row_groups
rm(tbl, meta)
p <- peak_of("to_rdata", pq_ours, rd_ours)
allowed <- max(col_bytes) + group_bytes
cat(sprintf("%s rows: peak - baseline %s MB; largest column (%s) %s MB + one row group %s MB = %s MB: %s\n",
            format(n, big.mark = ","), mb(p[["extra"]]), names(which.max(col_bytes)),
            mb(max(col_bytes)), mb(group_bytes), mb(allowed), verdict(p[["extra"]], allowed)))

cat("\nload average at the end:", load_avg(), "\n")
unlink(dir, recursive = TRUE)
