# Peak memory of reading into R: rdarrow's read_rdata()/read_rds() against
# base R's load()/readRDS() of the same file, each in a fresh Rscript child.
#
#   Rscript bench/memory.R                 # the sizes of the targets (minutes)
#   Rscript bench/memory.R --scale 0.1     # a tenth of every size
#
# Files (written once into a temporary folder, with save()/saveRDS()):
#   matrix, none   a numeric matrix of 1e8 doubles (800 MB), save(compress = FALSE)
#   matrix, gzip   the same matrix, saveRDS() (gzip)
#   strings        a character vector of 2e7 distinct strings, saveRDS() (gzip)
#   frame          the benchmark frame (bench/common.R), 5e6 rows, save() (gzip)
#   list           a list of 2e5 numeric vectors of 50 elements, saveRDS() (gzip)
#
# Each child loads rdarrow, runs gc(), records VmRSS, resets VmHWM through
# /proc/self/clear_refs, reads the file once and reports VmHWM - VmRSS
# before (the peak above the process's baseline) and the seconds taken.
# Target: rdarrow's peak at most base R's (ratio <= 1.0, plus 16 MB).
# Linux only (/proc).

script_dir <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE)[1]))
source(file.path(script_dir, "common.R"))
scale <- bench_opt("scale", 1)
suppressPackageStartupMessages(library(rdarrow))
if (!file.exists("/proc/self/clear_refs")) stop("bench/memory.R needs Linux (/proc)")

dir <- tempfile("rdarrow-memory-")
dir.create(dir)
on.exit(unlink(dir, recursive = TRUE), add = TRUE)
cat(sprintf("rdarrow %s, R %s, scale %g, load average %s\n", packageVersion("rdarrow"),
            getRversion(), scale, load_avg()))

n_mat <- round(1e8 * scale)
n_str <- round(2e7 * scale)
n_row <- round(5e6 * scale)
n_vec <- round(2e5 * scale)
files <- list()
local({
  m <- matrix(runif(n_mat), ncol = 100)
  files$matrix_none <<- file.path(dir, "matrix.RData")
  save(m, file = files$matrix_none, compress = FALSE)
  files$matrix_gzip <<- file.path(dir, "matrix.rds")
  saveRDS(m, files$matrix_gzip)
})
invisible(gc())
local({
  s <- paste0("item-", seq_len(n_str))
  files$strings <<- file.path(dir, "strings.rds")
  saveRDS(s, files$strings)
})
invisible(gc())
local({
  frame <- bench_frame(n_row)
  files$frame <<- file.path(dir, "frame.RData")
  save(frame, file = files$frame)
})
invisible(gc())
local({
  set.seed(1)
  l <- lapply(seq_len(n_vec), function(i) rnorm(50))
  files$list <<- file.path(dir, "list.rds")
  saveRDS(l, files$list)
})
invisible(gc())

child <- write_peak_child(file.path(dir, "child.R"), "rdarrow", c(
  "load = function() load(f, envir = new.env())",
  "readRDS = function() readRDS(f)",
  "read_rdata = function() read_rdata(f)",
  "read_rds = function() read_rds(f)"))

measure <- function(method, f) measure_child(child, method, f)

cases <- list(
  list(file = "matrix_none", label = sprintf("matrix of %g doubles, uncompressed .RData", n_mat),
       base = "load", ours = "read_rdata"),
  list(file = "matrix_gzip", label = sprintf("matrix of %g doubles, gzip .rds", n_mat),
       base = "readRDS", ours = "read_rds"),
  list(file = "strings", label = sprintf("%g distinct strings, gzip .rds", n_str),
       base = "readRDS", ours = "read_rds"),
  list(file = "frame", label = sprintf("benchmark frame, %g rows, gzip .RData", n_row),
       base = "load", ours = "read_rdata"),
  list(file = "list", label = sprintf("list of %g vectors of 50 doubles, gzip .rds", n_vec),
       base = "readRDS", ours = "read_rds")
)

cat("\n| file | size (MB) | base R | peak (MB) | s | rdarrow | peak (MB) | s | peak ratio | time ratio |\n")
cat("|---|---:|---|---:|---:|---|---:|---:|---:|---:|\n")
for (cs in cases) {
  f <- files[[cs$file]]
  b <- measure(cs$base, f)
  o <- measure(cs$ours, f)
  cat(sprintf("| %s | %s | `%s()` | %s | %.2f | `%s()` | %s | %.2f | %.2f | %.2f |\n",
              cs$label, mb(file.size(f)), cs$base, mb(b$peak), b$seconds, cs$ours, mb(o$peak),
              o$seconds, o$peak / b$peak, o$seconds / b$seconds))
}
cat(sprintf("\nTarget: peak ratio <= 1.0 (rdarrow's peak at most base R's, plus 16 MB). Load average after: %s\n",
            load_avg()))
