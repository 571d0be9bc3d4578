# Small calls and the cost of checking, against R's own and qs2's in the
# same run.
#
#   Rscript bench/calls.R            # 5 repetitions, the median reported
#   Rscript bench/calls.R --reps 9
#
# Small calls: 200 write_rds() of a small data frame to .rds, .qs2 and
# .qdata against saveRDS(), qs2::qs_save() and qs2::qd_save(); 1,000
# read_rds() of a small .qs2 file against qs2::qs_read(); 300 read_rds()
# of mtcars against readRDS(). qs2 comes from the library set-up builds
# (RDARROW_QS_LIB); without it those rows are left out, said so.
# Target: each at most 1.5x its anchor (mtcars 1.2x).
#
# Checking: read_rds() of a 5-million-row data frame saved gzip by
# saveRDS() (every check its compression carries made: the CRC-32 and
# length at the end of the stream) against the decompression alone
# (the engine's decompressor, which computes the same CRC as it inflates),
# and against readRDS() (which checks nothing it does not read).

script_dir <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE)[1]))
source(file.path(script_dir, "common.R"))
reps <- bench_opt("reps", 5)
suppressPackageStartupMessages(library(rdarrow))

qs_lib <- Sys.getenv("RDARROW_QS_LIB")
has_qs2 <- nzchar(qs_lib) && dir.exists(file.path(qs_lib, "qs2"))
if (has_qs2) {
  .libPaths(c(qs_lib, .libPaths()))
  qs2 <- asNamespace(loadNamespace("qs2"))
} else {
  message("qs2 is not built (RDARROW_QS_LIB): the .qs2 and .qdata rows are left out")
}

dir <- tempfile("rdarrow-calls-")
dir.create(dir)
on.exit(unlink(dir, recursive = TRUE), add = TRUE)
small <- bench_frame(50)
f <- function(ext) file.path(dir, paste0("small", ext))

# the median over `reps` of the seconds `n` calls of `call` take
median_time <- function(call, n) {
  median(vapply(seq_len(reps), function(r) {
    time_once(function() for (i in seq_len(n)) call())
  }, 0))
}

rows <- list()
row <- function(what, n, ours, anchor, anchor_name, target) {
  a <- median_time(anchor, n)
  o <- median_time(ours, n)
  rows[[length(rows) + 1L]] <<- data.frame(
    calls = what, n = n, anchor = anchor_name, anchor_s = round(a, 3),
    rdarrow_s = round(o, 3), ratio = round(o / a, 2), target = target
  )
}

row("write_rds(small, .rds)", 200, function() write_rds(small, f(".rds")),
    function() saveRDS(small, f(".rds")), "saveRDS()", 1.5)
if (has_qs2) {
  row("write_rds(small, .qs2)", 200, function() write_rds(small, f(".qs2")),
      function() qs2$qs_save(small, f(".qs2")), "qs_save()", 1.5)
  row("write_rds(small, .qdata)", 200, function() write_rds(small, f(".qdata")),
      function() qs2$qd_save(small, f(".qdata")), "qd_save()", 1.5)
  qs2$qs_save(small, f("-read.qs2"))
  row("read_rds(small .qs2)", 1000, function() read_rds(f("-read.qs2")),
      function() qs2$qs_read(f("-read.qs2")), "qs_read()", 1.5)
}
saveRDS(mtcars, f("-mtcars.rds"))
row("read_rds(mtcars)", 300, function() read_rds(f("-mtcars.rds")),
    function() readRDS(f("-mtcars.rds")), "readRDS()", 1.2)
calls <- do.call(rbind, rows)
cat("\nSmall calls (median of", reps, "repetitions; ratio = rdarrow / anchor):\n")
print(calls, row.names = FALSE)

big <- file.path(dir, "big.rds")
local({
  set.seed(1)
  n <- 5e6
  saveRDS(data.frame(id = seq_len(n), x = rnorm(n),
                     g = factor(sample(letters, n, TRUE))), big)
})
reps <- max(3, reps %/% 2)
dec <- median_time(function() rdarrow:::rdata_decompress_impl(big), 1)
rd <- median_time(function() read_rds(big), 1)
base <- median_time(function() readRDS(big), 1)
cat("\nChecking (a 5-million-row data frame, saveRDS() gzip, ", round(file.size(big) / 1e6, 1),
    " MB; median of ", reps, "):\n", sep = "")
print(data.frame(
  what = c("decompression alone (CRC computed, as every inflate does)",
           "read_rds(), the CRC-32 and length checked", "readRDS()"),
  seconds = round(c(dec, rd, base), 3),
  ratio_to_readRDS = round(c(dec, rd, base) / base, 2)
), row.names = FALSE)
