# Character vectors read lazily: read_rds() against readRDS() of string-heavy
# frames, then the first full use, and arrow R's read_parquet() of the same
# frame as the peer. Each read runs in a fresh Rscript child, which reports
# its peak memory above its baseline (VmHWM less VmRSS before) and seconds.
#
#   Rscript bench/strings.R                # the sizes of the targets (minutes)
#   Rscript bench/strings.R --scale 0.1    # a tenth of every size
#
# Files (written once into a temporary folder):
#   words+unique   5e6 rows: an integer, `s` drawn from 200,000 words, `u`
#                  unique strings in random order; saveRDS(), gzip and
#                  uncompressed; the same frame as Parquet for arrow R
#   short          a frame of 1e7 short strings (1 to 3 characters), gzip
#   numeric        5e6 rows of an integer and three doubles, gzip (the
#                  laziness must cost numeric frames nothing)
#   rownames       1e6 rows with character row names, gzip
# Then the threshold: 2,000 vectors of n strings each, read lazily and not
# (options(rdarrow.lazy_strings = FALSE)), alone and with a full use.
#
# Targets: string-heavy read_rds() <= 0.3x readRDS()'s time and <= 0.5x its
# peak; read plus first full use <= 1.0x readRDS() (plus the same use).
# Linux only (/proc). arrow R rows need the arrow package (skipped, and
# said, without it).

script_dir <- dirname(sub("^--file=", "", grep("^--file=", commandArgs(), value = TRUE)[1]))
source(file.path(script_dir, "common.R"))
scale <- bench_opt("scale", 1)
suppressPackageStartupMessages(library(rdarrow))
if (!file.exists("/proc/self/clear_refs")) stop("bench/strings.R needs Linux (/proc)")
has_arrow <- requireNamespace("arrow", quietly = TRUE)

dir <- tempfile("rdarrow-strings-")
dir.create(dir)
on.exit(unlink(dir, recursive = TRUE), add = TRUE)
cat(sprintf("rdarrow %s, R %s, scale %g, load average %s\n", packageVersion("rdarrow"),
            getRversion(), scale, load_avg()))

n_row <- round(5e6 * scale)
n_short <- round(1e7 * scale)
files <- list()
local({
  set.seed(57)
  words <- unique(vapply(seq_len(2.2e5), function(i)
    paste(sample(letters, sample(4:12, 1), TRUE), collapse = ""), ""))[seq_len(2e5)]
  frame <- data.frame(i = seq_len(n_row), s = sample(words, n_row, TRUE),
                      u = sprintf("id-%09d", sample.int(n_row)), stringsAsFactors = FALSE)
  files$gzip <<- file.path(dir, "words.rds")
  saveRDS(frame, files$gzip)
  files$none <<- file.path(dir, "words-none.rds")
  saveRDS(frame, files$none, compress = FALSE)
  files$parquet <<- file.path(dir, "words.parquet")
  rdata_to_parquet(files$gzip, files$parquet)
})
invisible(gc())
local({
  set.seed(58)
  pool <- unique(c(letters, LETTERS, as.character(0:999)))
  short <- data.frame(k = sample(pool, n_short, TRUE), stringsAsFactors = FALSE)
  files$short <<- file.path(dir, "short.rds")
  saveRDS(short, files$short)
  numeric <- data.frame(i = seq_len(n_row), x = rnorm(n_row), y = runif(n_row), z = rnorm(n_row))
  files$numeric <<- file.path(dir, "numeric.rds")
  saveRDS(numeric, files$numeric)
  named <- data.frame(v = seq_len(n_row / 5), row.names = sprintf("row-%08d", sample.int(n_row / 5)))
  files$rownames <<- file.path(dir, "rownames.rds")
  saveRDS(named, files$rownames)
})
invisible(gc())

use <- "{ t <- table(x$s); n <- nchar(x$u); x }"
child <- write_peak_child(file.path(dir, "child.R"), "rdarrow", c(
  "readRDS = function() readRDS(f)",
  "read_rds = function() read_rds(f)",
  "read_rds_eager = function() { options(rdarrow.lazy_strings = FALSE); read_rds(f) }",
  sprintf("readRDS_use = function() { x <- readRDS(f); %s }", use),
  sprintf("read_rds_use = function() { x <- read_rds(f); %s }", use),
  sprintf("read_parquet = function() { x <- as.data.frame(arrow::read_parquet(f)) }"),
  sprintf("read_parquet_use = function() { x <- as.data.frame(arrow::read_parquet(f)); %s }", use),
  "short_use = function() { x <- read_rds(f); table(x$k); x }",
  "short_use_base = function() { x <- readRDS(f); table(x$k); x }"))

measure <- function(method, f) measure_child(child, method, f)

cases <- list(
  list(file = "gzip", label = "5e6 rows, words + unique strings, gzip", base = "readRDS", ours = "read_rds"),
  list(file = "none", label = "the same, uncompressed", base = "readRDS", ours = "read_rds"),
  list(file = "gzip", label = "the same, gzip, then table(x$s) and nchar(x$u)",
       base = "readRDS_use", ours = "read_rds_use"),
  list(file = "none", label = "uncompressed, then table(x$s) and nchar(x$u)",
       base = "readRDS_use", ours = "read_rds_use"),
  list(file = "gzip", label = "gzip, laziness off", base = "readRDS", ours = "read_rds_eager"),
  list(file = "short", label = "1e7 short strings, gzip", base = "readRDS", ours = "read_rds"),
  list(file = "short", label = "1e7 short strings, then table()", base = "short_use_base",
       ours = "short_use"),
  list(file = "numeric", label = "5e6 rows of numbers, gzip", base = "readRDS", ours = "read_rds"),
  list(file = "rownames", label = "1e6 character row names, gzip", base = "readRDS", ours = "read_rds")
)
if (has_arrow) {
  cases <- c(cases, list(
    list(file = "parquet", label = "the frame as Parquet: arrow R's read_parquet() (as the peer)",
         base = "read_parquet", ours = NULL, against = "gzip"),
    list(file = "parquet", label = "read_parquet(), then table(x$s) and nchar(x$u)",
         base = "read_parquet_use", ours = NULL, against = "gzip")))
} else {
  cat("arrow R is not installed: the read_parquet() rows are left out\n")
}

cat("\n| file | size (MB) | base | peak (MB) | s | rdarrow | peak (MB) | s | peak ratio | time ratio |\n")
cat("|---|---:|---|---:|---:|---|---:|---:|---:|---:|\n")
for (cs in cases) {
  f <- files[[cs$file]]
  b <- measure(cs$base, f)
  if (is.null(cs$ours)) {
    # the peer against read_rds() of the gzip file, measured again here
    o <- measure("read_rds", files[[cs$against]])
    if (grepl("_use$", cs$base)) o <- measure("read_rds_use", files[[cs$against]])
    cat(sprintf("| %s | %s | `%s()` | %s | %.2f | `read_rds()` (gzip .rds) | %s | %.2f | %.2f | %.2f |\n",
                cs$label, mb(file.size(f)), cs$base, mb(b$peak), b$seconds, mb(o$peak),
                o$seconds, o$peak / b$peak, o$seconds / b$seconds))
    next
  }
  o <- measure(cs$ours, f)
  cat(sprintf("| %s | %s | `%s()` | %s | %.2f | `%s()` | %s | %.2f | %.2f | %.2f |\n",
              cs$label, mb(file.size(f)), cs$base, mb(b$peak), b$seconds, cs$ours, mb(o$peak),
              o$seconds, o$peak / b$peak, o$seconds / b$seconds))
}

# The threshold: many vectors of n strings each (one .rds of a list), read
# with and without laziness, alone and with every element used.
cat("\n| strings per vector | vectors | eager read (s) | lazy read (s) | eager read + use (s) | lazy read + use (s) | lazy/eager read | lazy/eager read + use |\n")
cat("|---:|---:|---:|---:|---:|---:|---:|---:|\n")
for (n in c(16L, 64L, 256L, 1024L, 4096L)) {
  k <- max(1L, round(2e6 * scale / n))
  set.seed(n)
  l <- replicate(k, sprintf("w%07d", sample.int(1e7, n, TRUE)), simplify = FALSE)
  f <- file.path(dir, sprintf("vectors-%d.rds", n))
  saveRDS(l, f, compress = FALSE)
  rm(l)
  timed <- function(lazy, full) {
    options(rdarrow.lazy_strings = if (lazy) 0 else FALSE)
    on.exit(options(rdarrow.lazy_strings = NULL))
    median(vapply(1:3, function(r) time_once(function() {
      x <- read_rds(f)
      if (full) for (v in x) nchar(v)
    }), 0))
  }
  e <- timed(FALSE, FALSE); z <- timed(TRUE, FALSE)
  eu <- timed(FALSE, TRUE); zu <- timed(TRUE, TRUE)
  cat(sprintf("| %d | %d | %.3f | %.3f | %.3f | %.3f | %.2f | %.2f |\n", n, k, e, z, eu, zu,
              z / e, zu / eu))
}
cat(sprintf("\nThe laziness starts at %d strings (rdarrow's threshold). Load average after: %s\n",
            1024L, load_avg()))
