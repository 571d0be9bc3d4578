# rdarrow benchmark: what keeping R's bytes through Arrow costs. The NAs
# R's arithmetic makes (`NA_real_ * 2`) are NaNs whose bits differ from
# NA_real_'s; Arrow's null keeps no bits, so rdarrow finds them (a second
# read of each double column of a file converted row group by row group)
# and writes their positions into the metadata. Measured in one run:
#
#   the bench/ frame (common.R) with 1% NA in its doubles, saved twice
#   with saveRDS() (gzip): NAs from arithmetic ("computed") and the same
#   NAs as NA_real_ ("plain"); median of --reps K (default 3) of
#     rdata_to_parquet() and rdata_to_ipc() of each
#     anchor: readRDS() + arrow::write_parquet() of the computed file
#   Ratios: computed / plain (the cost of the bits: target <= 1.05) and
#   computed / anchor. Every output is read back and compared by
#   serialize() bytes (version 2) with readRDS() of its file.
#
# How to run (from the repository root, rdarrow and arrow installed)
#   Rscript bench/na_bits.R               # 5e6 rows, about a minute
#   Rscript bench/na_bits.R --rows 1e6

suppressPackageStartupMessages(library(rdarrow))
if (!requireNamespace("arrow", quietly = TRUE)) {
  stop("this benchmark needs the arrow R package (its writer is the anchor)")
}
source(file.path(local({
  f <- sub("^--file=", "", grep("^--file=", commandArgs(FALSE), value = TRUE))
  if (length(f)) dirname(normalizePath(f[[1]])) else "bench"
}), "common.R"))

n <- as.integer(bench_opt("rows", 5e6))
reps <- as.integer(bench_opt("reps", 3))
dir <- tempfile("rdarrow-bench-na-")
dir.create(dir)
on.exit(unlink(dir, recursive = TRUE))

df <- bench_frame(n)
set.seed(1)
at <- sample.int(n, n %/% 100)
computed <- df
computed$x[at] <- NA_real_
computed$y[at] <- NA_real_
computed$x <- computed$x * 1 # R's arithmetic on NA: other bits
computed$y <- computed$y * 1
plain <- computed
plain$x[at] <- NA_real_
plain$y[at] <- NA_real_
files <- c(computed = file.path(dir, "computed.rds"), plain = file.path(dir, "plain.rds"))
saveRDS(computed, files[["computed"]])
saveRDS(plain, files[["plain"]])
rm(df, computed, plain)
invisible(gc())

`%||%` <- function(a, b) if (is.null(a)) b else a
median_of <- function(f) median(vapply(seq_len(reps), function(i) time_once(f), 0))
# (version 2: a compact 1:n is its values, as rdarrow writes it)
same_bytes <- function(out, file) {
  identical(serialize(readRDS(out), NULL, version = 2L), serialize(readRDS(file), NULL, version = 2L))
}

res <- list()
for (kind in names(files)) {
  f <- files[[kind]]
  pq <- file.path(dir, paste0(kind, ".parquet"))
  ipc <- file.path(dir, paste0(kind, ".arrow"))
  res[[kind]] <- c(
    parquet = median_of(function() rdata_to_parquet(f, pq)),
    ipc = median_of(function() rdata_to_ipc(f, ipc))
  )
  back <- file.path(dir, "back.rds")
  parquet_to_rdata(pq, back)
  ok_pq <- same_bytes(back, f)
  ipc_to_rdata(ipc, back)
  ok_ipc <- same_bytes(back, f)
  md <- nchar(arrow::read_parquet(pq, as_data_frame = FALSE)$metadata$rdarrow %||% "")
  cat(sprintf("%-8s parquet %.3f s, ipc %.3f s; R's bytes back: parquet %s, ipc %s; notes %d bytes\n",
              kind, res[[kind]][["parquet"]], res[[kind]][["ipc"]], ok_pq, ok_ipc, md))
}
anchor <- median_of(function() arrow::write_parquet(readRDS(files[["computed"]]),
                                                   file.path(dir, "anchor.parquet")))

cat(sprintf("\n%d rows, %d NAs per double column, median of %d\n", n, length(at), reps))
cat("| ratio | ours | against | value | target |\n|---|---|---|---|---|\n")
row <- function(what, ours, against, value, target) {
  cat(sprintf("| %s | %s | %s | %.2f | %s |\n", what, ours, against, value, target))
}
row("bits kept, Parquet", "`rdata_to_parquet()`, computed NAs", "the same, NA_real_",
    res$computed[["parquet"]] / res$plain[["parquet"]], "<= 1.05")
row("bits kept, IPC", "`rdata_to_ipc()`, computed NAs", "the same, NA_real_",
    res$computed[["ipc"]] / res$plain[["ipc"]], "<= 1.05")
row("to Parquet", "`rdata_to_parquet()`, computed NAs", "`readRDS()` + `arrow::write_parquet()`",
    res$computed[["parquet"]] / anchor, "(bench/parquet.R: <= 0.4 of load() + write_parquet())")
