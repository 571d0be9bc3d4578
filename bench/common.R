# What bench.R and parquet.R share: the benchmark frame, n rows of an
# integer sequence, two doubles, a logical with NAs, character drawn from
# 1000 distinct words, a factor, a Date and a POSIXct in UTC, generated
# with a fixed seed (the same frame for the same n).

bench_frame <- function(n) {
  set.seed(20240601)
  make_words <- function(k) {
    words <- character()
    while (length(words) < k) {
      len <- sample(3:10, 2 * k, replace = TRUE)
      cand <- vapply(len, function(l) paste(sample(letters, l, replace = TRUE), collapse = ""),
                     character(1))
      words <- unique(c(words, cand))
    }
    words[seq_len(k)]
  }
  words <- make_words(1000)
  logi <- sample(c(TRUE, FALSE), n, replace = TRUE)
  logi[sample.int(n, n %/% 10)] <- NA
  df <- data.frame(
    id     = seq_len(n),
    x      = rnorm(n),
    y      = round(runif(n, 0, 1e4), 2),
    flag   = logi,
    word   = sample(words, n, replace = TRUE),
    group  = factor(sample(c("north", "south", "east", "west", "centre"), n, replace = TRUE)),
    day    = as.Date("2000-01-01") + sample.int(9000L, n, replace = TRUE),
    stamp  = as.POSIXct(1.5e9 + runif(n, 0, 3e8), origin = "1970-01-01", tz = "UTC"),
    stringsAsFactors = FALSE
  )
  attr(df$stamp, "tzone") <- "UTC"
  df
}


mb <- function(bytes) sprintf("%.1f", bytes / 1e6)

# Elapsed seconds of one run of f(), after a full gc().
time_once <- function(f) {
  invisible(gc(full = TRUE))
  system.time(f(), gcFirst = FALSE)[["elapsed"]]
}

# Write the child script `path` that measures one read, run as
# `Rscript path <method> <file>`: it loads `libraries`, takes the call
# named `<method>` among `calls` ("name = function() ..." lines, the file
# is `f`, `setup` lines before them), runs gc(), resets VmHWM through
# /proc/self/clear_refs, runs the call once and prints the peak above its
# baseline (VmHWM less VmRSS before) and the seconds, and with
# `result_size` the result's object.size(). Linux only (/proc).
write_peak_child <- function(path, libraries, calls, setup = character(), result_size = FALSE) {
  writeLines(c(
    sprintf("suppressPackageStartupMessages({%s})",
            paste0("library(", libraries, ")", collapse = "; ")),
    "status_kb <- function(key) {",
    "  l <- grep(paste0('^', key, ':'), readLines('/proc/self/status'), value = TRUE)",
    "  as.numeric(gsub('[^0-9]', '', l)) * 1024",
    "}",
    "args <- commandArgs(trailingOnly = TRUE)",
    "f <- args[[2]]",
    setup,
    "call <- switch(args[[1]],",
    paste0("  ", calls, c(rep(",", length(calls) - 1L), ")")),
    "invisible(gc(full = TRUE))",
    "rss0 <- status_kb('VmRSS')",
    "writeLines('5', '/proc/self/clear_refs')",
    "t <- system.time(x <- call())[['elapsed']]",
    if (result_size) {
      "cat(sprintf('%.0f %.3f %.0f\\n', status_kb('VmHWM') - rss0, t, as.numeric(object.size(x))))"
    } else {
      "cat(sprintf('%.0f %.3f\\n', status_kb('VmHWM') - rss0, t))"
    }
  ), path)
  invisible(path)
}

# Run the child script of write_peak_child() once: its peak above its
# baseline and its seconds.
measure_child <- function(child, method, f) {
  out <- system2(file.path(R.home("bin"), "Rscript"), c("--vanilla", child, method, f),
                 stdout = TRUE)
  v <- as.numeric(strsplit(tail(out, 1), " ")[[1]])
  list(peak = v[[1]], seconds = v[[2]])
}

load_avg <- function() {
  tryCatch(paste(strsplit(readLines("/proc/loadavg"), " ")[[1]][1:3], collapse = " "),
           error = function(e) "unknown")
}

# The small-file collections of bench/small.R and bench/small.py, written
# into `dir`: every data set of R's datasets package, one save() file each
# (dir/datasets), and `n_gen` small data frames of 5-60 rows and one set
# of 6 columns, gzip .RData (dir/generated). Returns the two folders.
write_small_collections <- function(dir, n_gen) {
  ds_dir <- file.path(dir, "datasets"); dir.create(ds_dir)
  for (nm in ls("package:datasets")) {
    env <- new.env()
    assign(nm, get(nm, "package:datasets"), envir = env)
    save(list = nm, envir = env, file = file.path(ds_dir, paste0(nm, ".rda")))
  }
  gen_dir <- file.path(dir, "generated"); dir.create(gen_dir)
  set.seed(7)
  for (i in seq_len(n_gen)) {
    # one set of columns for all (they also make one dataset)
    rows <- sample(5:60, 1); cols <- 6L
    df <- as.data.frame(lapply(seq_len(cols), function(j) switch(j %% 4 + 1,
      rnorm(rows), sample.int(100L, rows, TRUE), sample(letters, rows, TRUE),
      factor(sample(c("a", "b", "c"), rows, TRUE)))))
    names(df) <- paste0("v", seq_len(cols))
    save(df, file = file.path(gen_dir, sprintf("f%05d.RData", i)))
  }
  list(datasets = ds_dir, generated = gen_dir)
}

# The number given as `--name N` on the script's command line, else
# `default`.
bench_opt <- function(name, default) {
  args <- commandArgs(trailingOnly = TRUE)
  i <- match(paste0("--", name), args)
  if (is.na(i)) default else as.numeric(args[[i + 1L]])
}
