# qs2, qdata and qs files: rdarrow against qs2 and qs themselves, and
# arrow R, on the same frame. Each read runs in a fresh Rscript child,
# which reports its peak memory above its baseline (VmHWM less VmRSS
# before) and its seconds; each is run `--reps` times (median seconds,
# largest peak).
#
#   Rscript bench/qs.R                 # 5e6 rows (minutes)
#   Rscript bench/qs.R --scale 0.1     # a tenth
#
# The frame: 5e6 rows of an integer, a double, `s` drawn from 200,000
# words and `u` unique strings, saved by qs2::qs_save() with its defaults
# (zstd level 3, shuffled), qs2::qd_save(), qs::qsave() (its default
# preset "high") and saveRDS() (gzip, for Python's read_table()).
#
# Rows (each against its anchor measured in the same run):
#   read_rds(.qs2)                      vs qs2::qs_read(nthreads = 2): time, peak
#   rdata_to_arrow() + as_arrow_table(), and rdata_to_parquet()
#                                       vs qs_read() + arrow::write_parquet()
#   write_rds(x, ".qs2")                vs qs_save(x, nthreads = 2): time, size
#   read_rds(.qdata)                    vs qd_read(nthreads = 2)
#   read_rds(.qs)                       vs qs::qread(nthreads = 2)
# Targets: read_rds() <= 1.0x qs_read()'s time and peak; Arrow and Parquet
# <= 0.5x qs_read() + write_parquet(); write_rds() <= 1.0x qs_save()'s time,
# the file <= 1.05x its size. Python's read_table() of the .qs2 file
# against the gzip .rds: bench/python.py's qs rows (`--qs DIR`).
# Needs qs and qs2 (RDARROW_QS_LIB or the repository's .qs-lib) and
# arrow R (R_LIBS as tools/test.sh sets it). Linux only (/proc).

script_dir <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE)[1]))
source(file.path(script_dir, "common.R"))
scale <- bench_opt("scale", 1)
reps <- bench_opt("reps", 3)
qs_lib <- Sys.getenv("RDARROW_QS_LIB", file.path(script_dir, "..", ".qs-lib"))
if (!dir.exists(file.path(qs_lib, "qs2"))) stop("bench/qs.R needs qs and qs2: set RDARROW_QS_LIB (tools/setup.sh builds .qs-lib)")
qs_lib <- normalizePath(qs_lib)
.libPaths(c(qs_lib, .libPaths()))
Sys.setenv(R_LIBS = paste(c(qs_lib, .libPaths()), collapse = ":"))
suppressPackageStartupMessages({
  library(rdarrow)
  library(arrow)
})

dir <- tempfile("rdarrow-qs-")
dir.create(dir)
on.exit(unlink(dir, recursive = TRUE), add = TRUE)
cat(sprintf("rdarrow %s, qs2 %s, qs %s, arrow %s, R %s, scale %g, load average %s\n",
            packageVersion("rdarrow"), packageVersion("qs2"), packageVersion("qs"),
            packageVersion("arrow"), getRversion(), scale, load_avg()))

n <- round(5e6 * scale)
set.seed(42)
words <- unique(replicate(2.2e5, paste(sample(letters, sample(4:9, 1), TRUE), collapse = "")))[1:2e5]
x <- data.frame(i = sample.int(1e6, n, TRUE), d = rnorm(n), s = sample(words, n, TRUE),
                u = sprintf("u%09d-%s", sample.int(n), sample(words, n, TRUE)), stringsAsFactors = FALSE)
f <- list(qs2 = file.path(dir, "x.qs2"), qdata = file.path(dir, "x.qdata"), qs = file.path(dir, "x.qs"),
          rds = file.path(dir, "x.rds"), pq = file.path(dir, "out.parquet"))
qs2::qs_save(x, f$qs2)
qs2::qd_save(x, f$qdata)
qs::qsave(x, f$qs)
saveRDS(x, f$rds)
cat(sprintf("%d rows; files: qs2 %s MB, qdata %s MB, qs %s MB, gzip rds %s MB\n", n,
            mb(file.size(f$qs2)), mb(file.size(f$qdata)), mb(file.size(f$qs)), mb(file.size(f$rds))))

child <- write_peak_child(file.path(dir, "child.R"), c("rdarrow", "arrow"), c(
  "qs_read = function() qs2::qs_read(f, nthreads = 2L)",
  "read_rds = function() read_rds(f)",
  "qs_read_parquet = function() arrow::write_parquet(qs2::qs_read(f, nthreads = 2L), sub('[.][a-z0-9]+$', '.parquet', f))",
  "to_arrow = function() arrow::as_arrow_table(rdata_to_arrow(f))",
  "to_parquet = function() rdata_to_parquet(f, sub('[.][a-z0-9]+$', '.parquet', f))",
  "qd_read = function() qs2::qd_read(f, nthreads = 2L)",
  "qread = function() qs::qread(f, nthreads = 2L)",
  "qs_save = function() qs2::qs_save(readRDS(sub('[.][a-z0-9]+$', '.rds', f)), sub('x[.]', 'w.', f), nthreads = 2L)",
  "write_rds = function() write_rds(readRDS(sub('[.][a-z0-9]+$', '.rds', f)), sub('x[.]', 'w.', f))",
  "read_only = function() readRDS(sub('[.][a-z0-9]+$', '.rds', f))"
))

run <- function(method, file) {
  r <- lapply(seq_len(reps), function(i) measure_child(child, method, file))
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

qs_read <- run("qs_read", f$qs2)
add("read_rds(.qs2)", run("read_rds", f$qs2), qs_read, "qs_read(nthreads = 2)", "<= 1.0 time and peak")
qs_pq <- run("qs_read_parquet", f$qs2)
add("rdata_to_arrow() + as_arrow_table()", run("to_arrow", f$qs2), qs_pq, "qs_read() + write_parquet()", "<= 0.5 time")
add("rdata_to_parquet()", run("to_parquet", f$qs2), qs_pq, "qs_read() + write_parquet()", "<= 0.5 time")
add("read_rds(.qdata)", run("read_rds", f$qdata), run("qd_read", f$qdata), "qd_read(nthreads = 2)", "-")
add("read_rds(.qs)", run("read_rds", f$qs), run("qread", f$qs), "qs::qread(nthreads = 2)", "-")
# writing: the frame read from the .rds first in both (the same cost),
# the time of that read taken off
base <- run("read_only", f$qs2)
w_qs <- run("qs_save", f$qs2)
w_rd <- run("write_rds", f$qs2)
w_qs$seconds <- w_qs$seconds - base$seconds
w_rd$seconds <- w_rd$seconds - base$seconds
add("write_rds(x, \"x.qs2\")", w_rd, w_qs, "qs_save(nthreads = 2)", "<= 1.0 time")
size_ratio <- file.size(file.path(dir, "w.qs2")) / file.size(f$qs2)

out <- do.call(rbind, rows)
cat("\n| what | s | peak MB | anchor | anchor s | anchor peak MB | time ratio | peak ratio | target |\n")
cat("|---|---:|---:|---|---:|---:|---:|---:|---|\n")
for (i in seq_len(nrow(out))) {
  r <- out[i, ]
  cat(sprintf("| %s | %.2f | %.0f | %s | %.2f | %.0f | **%.2f** | %.2f | %s |\n", r$what, r$s, r$peak_mb,
              r$anchor, r$anchor_s, r$anchor_peak_mb, r$time_ratio, r$peak_ratio, r$target))
}
cat(sprintf("\nwrite_rds()'s .qs2 file: %s MB, qs_save()'s %s MB: %.3fx (target <= 1.05)\n",
            mb(file.size(file.path(dir, "w.qs2"))), mb(file.size(f$qs2)), size_ratio))
# the objects agree
stopifnot(identical(read_rds(f$qs2), qs2::qs_read(f$qs2)), identical(read_rds(f$qs), qs::qread(f$qs)))
keep <- Sys.getenv("RDARROW_BENCH_KEEP")
if (nzchar(keep)) {
  dir.create(keep, showWarnings = FALSE)
  file.copy(c(f$qs2, f$rds), keep, overwrite = TRUE)
  cat("files kept in", keep, "for bench/python.py --qs\n")
}
