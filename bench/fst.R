# fst files: rdarrow against fst itself, on the frame of the fst issue.
# Each call runs in a fresh Rscript child, which reports its peak memory
# above its baseline (VmHWM less VmRSS before) and its seconds; each is
# run `--reps` times (median seconds, largest peak).
#
#   Rscript bench/fst.R                 # 5e6 rows (minutes)
#   Rscript bench/fst.R --scale 0.1     # a tenth
#
# The frame: 5e6 rows of an integer, a double with NA, `s` drawn from
# 200,000 words, `u` unique strings, a factor and a Date, written by
# fst::write_fst() with its defaults (compress = 50, every core).
#
# Rows (each against its anchor measured in the same run):
#   read_rds(.fst)                 vs fst::read_fst() (both cores): time, peak
#   rdata_to_parquet(.fst)         vs read_fst() + arrow::write_parquet()
#   write_rds(x, "x.fst")          vs fst::write_fst(x): time, peak above the
#                                  frame (read before the clock), size
# Targets: read_rds() <= 0.3x read_fst()'s time and <= 1.0x its peak;
# write_rds() <= 1.0x write_fst()'s time, the file <= 1.05x its size.
# Python's read_table() of the .fst file against fstio: bench/python.py
# (`--fst DIR`, with RDARROW_BENCH_KEEP=DIR here).
# Needs fst (RDARROW_FST_LIB or the repository's .fst-lib) and arrow R
# (R_LIBS as tools/test.sh sets it). Linux only (/proc).

script_dir <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE)[1]))
source(file.path(script_dir, "common.R"))
scale <- bench_opt("scale", 1)
reps <- bench_opt("reps", 3)
fst_lib <- Sys.getenv("RDARROW_FST_LIB", file.path(script_dir, "..", ".fst-lib"))
if (!dir.exists(file.path(fst_lib, "fst"))) stop("bench/fst.R needs fst: set RDARROW_FST_LIB (tools/test-env.sh builds .fst-lib)")
fst_lib <- normalizePath(fst_lib)
.libPaths(c(fst_lib, .libPaths()))
Sys.setenv(R_LIBS = paste(c(fst_lib, .libPaths()), collapse = ":"))
suppressPackageStartupMessages({
  library(rdarrow)
  library(arrow)
  library(fst)
})

dir <- tempfile("rdarrow-fst-")
dir.create(dir)
on.exit(unlink(dir, recursive = TRUE), add = TRUE)
cat(sprintf("rdarrow %s, fst %s, arrow %s, R %s, scale %g, fst threads %d, load average %s\n",
            packageVersion("rdarrow"), packageVersion("fst"), packageVersion("arrow"), getRversion(),
            scale, threads_fst(), load_avg()))

n <- round(5e6 * scale)
set.seed(42)
words <- unique(replicate(2.2e5, paste(sample(letters, sample(4:9, 1), TRUE), collapse = "")))[1:2e5]
d <- rnorm(n)
d[sample.int(n, n %/% 20)] <- NA
x <- data.frame(i = sample.int(1e6, n, TRUE), d = d, s = sample(words, n, TRUE),
                u = sprintf("u%09d-%s", sample.int(n), sample(words, n, TRUE)),
                f = factor(sample(c("north", "south", "east", "west", "centre"), n, TRUE)),
                day = as.Date("2000-01-01") + sample.int(9000L, n, TRUE), stringsAsFactors = FALSE)
f <- list(fst = file.path(dir, "x.fst"), rds = file.path(dir, "x.rds"))
write_fst(x, f$fst)
saveRDS(x, f$rds, compress = FALSE)
cat(sprintf("%d rows; write_fst() file %s MB\n", n, mb(file.size(f$fst))))

child <- write_peak_child(file.path(dir, "child.R"), c("rdarrow", "arrow", "fst"), c(
  "read_fst = function() fst::read_fst(f)",
  "read_rds = function() read_rds(f)",
  "fst_parquet = function() arrow::write_parquet(fst::read_fst(f), sub('[.]fst$', '.parquet', f))",
  "to_parquet = function() rdata_to_parquet(f, sub('[.]fst$', '.parquet', f))"
))
# writes: the frame read before the clock and the peak start
writer <- write_peak_child(file.path(dir, "writer.R"), c("rdarrow", "fst"), c(
  "write_fst = function() fst::write_fst(frame, sub('x[.]', 'w_fst.', f))",
  "write_rds = function() write_rds(frame, sub('x[.]', 'w_rd.', f))"
), setup = "frame <- readRDS(sub('[.]fst$', '.rds', f))")

run <- function(method, file, script = child) {
  r <- lapply(seq_len(reps), function(i) measure_child(script, method, file))
  list(seconds = median(vapply(r, `[[`, 0, "seconds")), peak = max(vapply(r, `[[`, 0, "peak")))
}

rows <- list()
add <- function(what, got, anchor, anchor_name, target) {
  rows[[length(rows) + 1L]] <<- data.frame(
    what = what, s = got$seconds, peak_mb = got$peak / 1e6, anchor = anchor_name,
    anchor_s = anchor$seconds, anchor_peak_mb = anchor$peak / 1e6,
    time_ratio = got$seconds / anchor$seconds, peak_ratio = got$peak / anchor$peak, target = target
  )
}

add("read_rds(.fst)", run("read_rds", f$fst), run("read_fst", f$fst), "read_fst()", "<= 0.3 time, <= 1.0 peak")
add("rdata_to_parquet(.fst)", run("to_parquet", f$fst), run("fst_parquet", f$fst),
    "read_fst() + write_parquet()", "-")
# writing: the frame read from an uncompressed .rds before the clock
add("write_rds(x, \"x.fst\")", run("write_rds", f$fst, writer), run("write_fst", f$fst, writer), "write_fst()",
    "<= 1.0 time")
size_ratio <- file.size(file.path(dir, "w_rd.fst")) / file.size(file.path(dir, "w_fst.fst"))

out <- do.call(rbind, rows)
cat("\n| what | s | peak MB | anchor | anchor s | anchor peak MB | time ratio | peak ratio | target |\n")
cat("|---|---:|---:|---|---:|---:|---:|---:|---|\n")
for (i in seq_len(nrow(out))) {
  r <- out[i, ]
  cat(sprintf("| %s | %.2f | %.0f | %s | %.2f | %.0f | **%.2f** | %.2f | %s |\n", r$what, r$s, r$peak_mb,
              r$anchor, r$anchor_s, r$anchor_peak_mb, r$time_ratio, r$peak_ratio, r$target))
}
cat(sprintf("\nwrite_rds()'s .fst file: %s MB, write_fst()'s %s MB: %.3fx (target <= 1.05)\n",
            mb(file.size(file.path(dir, "w_rd.fst"))), mb(file.size(file.path(dir, "w_fst.fst"))), size_ratio))
# the objects agree
stopifnot(identical(read_rds(f$fst), read_fst(f$fst)),
          identical(read_fst(file.path(dir, "w_rd.fst")), read_fst(file.path(dir, "w_fst.fst"))))
keep <- Sys.getenv("RDARROW_BENCH_KEEP")
if (nzchar(keep)) {
  dir.create(keep, showWarnings = FALSE)
  file.copy(f$fst, keep, overwrite = TRUE)
  cat("file kept in", keep, "for bench/python.py --fst\n")
}
