# Hostile-input sweep: every truncation point and 10,000 seeded byte flips
# of a dozen representative files (every format and compression), each run
# through rdata_objects() and read_rdata() in a child R process. Every case
# must end in a result or an rdarrow_error: no other error, no crash, no
# hang. The counts are printed.

# Minutes of checks over many objects: they run where NOT_CRAN is set
# (tools/test.sh), not in CRAN's time-limited check.
skip_on_cran()

sweep_files <- function(dir) {
  df <- data.frame(
    i = c(1L, NA, 3L), x = c(1.5, NA, -Inf), s = c("a", NA, "\u00e9"),
    f = factor(c("u", "v", NA)), d = as.Date(c("2020-01-01", NA, "2021-06-01")),
    stringsAsFactors = FALSE
  )
  lst <- list(a = 1:3, b = list(TRUE, NULL, "z"), c = c(x = 2.5))
  tm <- as.POSIXct(c(0, 1e9), origin = "1970-01-01", tz = "UTC")
  # small environments only: a closure or environment whose parent chain
  # reaches this function's frame would drag the test session into the file
  env_obj <- local({ e <- new.env(parent = globalenv()); e$self <- e; e$v <- 1:2; e })
  fun <- function(a, b = 2) a + b
  environment(fun) <- env_obj
  attr(fun, "srcref") <- NULL  # (the test runner keeps sources: the whole file)
  files <- character()
  add <- function(name, expr) {
    p <- file.path(dir, name)
    expr(p)
    files[[name]] <<- p
  }
  add("xdr3-gzip.RData", function(p) save(df, lst, file = p))
  add("xdr3-bzip2.RData", function(p) save(df, file = p, compress = "bzip2"))
  add("xdr3-xz.RData", function(p) save(df, tm, file = p, compress = "xz"))
  add("xdr3-none.RData", function(p) save(df, lst, file = p, compress = FALSE))
  add("ascii3-none.RData", function(p) save(df, file = p, ascii = TRUE, compress = FALSE))
  add("ascii2-gzip.RData", function(p) save(lst, file = p, ascii = TRUE, version = 2))
  add("xdr2-none.RData", function(p) save(df, tm, file = p, version = 2, compress = FALSE))
  add("xdr3-gzip.rds", function(p) saveRDS(lst, p))
  add("binary3-none.rds", function(p) writeBin(serialize(df, NULL, xdr = FALSE), p))
  add("ascii3-none.rds", function(p) saveRDS(df, p, ascii = TRUE, compress = FALSE))
  add("env-closure-none.RData", function(p) save(env_obj, fun, file = p, compress = FALSE))
  add("xdr3-zstd-like-none.rds", function(p) saveRDS(tm, p, compress = FALSE))
  files
}

sweep_child <- '
args <- commandArgs(TRUE)
cases <- readRDS(args[[1]]); files <- readRDS(args[[2]]); start <- as.integer(args[[3]])
progress <- args[[4]]; scratch <- args[[5]]; end <- min(as.integer(args[[6]]), nrow(cases))
suppressPackageStartupMessages(library(rdarrow))
raw_of <- lapply(files, function(f) readBin(f, "raw", file.size(f)))
stream_of <- lapply(files, function(f) rdarrow:::rdata_decompressed_impl(f))
counts <- c(result = 0L, rdarrow_error = 0L, other_error = 0L)
others <- character()
for (k in seq.int(start, end)) {
  cat(k, "\\n", file = progress)
  cs <- cases[k, ]
  bytes <- if (cs$layer == "file") raw_of[[cs$file]] else stream_of[[cs$file]]
  if (cs$kind == "truncate") {
    bytes <- bytes[seq_len(cs$pos)]
  } else {
    bytes[[cs$pos]] <- as.raw(bitwXor(as.integer(bytes[[cs$pos]]), cs$xor))
  }
  writeBin(bytes, scratch)
  for (fn in c("rdata_objects", "read_rdata")) {
    out <- tryCatch({ get(fn, asNamespace("rdarrow"))(scratch); "result" },
                    rdarrow_error = function(e) "rdarrow_error",
                    error = function(e) paste("other_error:", conditionMessage(e)))
    if (startsWith(out, "other_error")) {
      counts[["other_error"]] <- counts[["other_error"]] + 1L
      others <- c(others, sprintf("case %d (%s %s %s@%d): %s: %s", k, cs$kind, cs$layer, cs$file, cs$pos, fn, out))
    } else {
      counts[[out]] <- counts[[out]] + 1L
    }
  }
}
saveRDS(list(counts = counts, others = others), paste0(progress, ".done"))
'

test_that("truncations and byte flips never crash and end in a result or an rdarrow_error", {
  skip_on_cran()
  dir <- tempfile("sweep")
  dir.create(dir)
  on.exit(unlink(dir, recursive = TRUE), add = TRUE)
  files <- sweep_files(dir)
  expect_length(files, 12L)
  expect_true(all(file.size(files) < 4096), label = "every sweep file is small")

  # every truncation point of each file (and of the decompressed stream)
  cases <- list()
  for (nm in names(files)) {
    n <- file.size(files[[nm]])
    cases[[length(cases) + 1L]] <- data.frame(kind = "truncate", layer = "file", file = nm,
                                             pos = seq.int(0L, n - 1L), xor = 0L)
    sn <- length(rdarrow:::rdata_decompressed_impl(files[[nm]]))
    if (sn != n) {
      cases[[length(cases) + 1L]] <- data.frame(kind = "truncate", layer = "stream", file = nm,
                                               pos = seq.int(0L, sn - 1L), xor = 0L)
    }
  }
  # 10,000 seeded flips, in the file bytes and in the decompressed stream
  set.seed(20261122)
  nflip <- 10000L
  fl_file <- sample(names(files), nflip, replace = TRUE)
  fl_layer <- sample(c("file", "stream"), nflip, replace = TRUE)
  fl_len <- mapply(function(f, l) {
    if (l == "file") file.size(files[[f]]) else length(rdarrow:::rdata_decompressed_impl(files[[f]]))
  }, fl_file, fl_layer)
  cases[[length(cases) + 1L]] <- data.frame(
    kind = "flip", layer = fl_layer, file = fl_file,
    pos = vapply(fl_len, function(n) sample.int(n, 1L), integer(1)),
    xor = sample.int(255L, nflip, replace = TRUE)
  )
  cases <- do.call(rbind, cases)
  n_trunc <- sum(cases$kind == "truncate")

  cases_f <- file.path(dir, "cases.rds"); saveRDS(cases, cases_f)
  files_f <- file.path(dir, "files.rds"); saveRDS(as.list(files), files_f)
  child_f <- file.path(dir, "child.R"); writeLines(sweep_child, child_f)
  progress <- file.path(dir, "progress")
  rscript <- file.path(R.home("bin"), "Rscript")

  crashes <- character()
  counts <- c(result = 0L, rdarrow_error = 0L, other_error = 0L)
  others <- character()
  start <- 1L
  # children of at most `per_child` cases each, so that the time limit of a
  # child (a hang) does not depend on how busy the machine is
  per_child <- 2000L
  while (start <= nrow(cases)) {
    unlink(c(progress, paste0(progress, ".done")))
    end <- min(start + per_child - 1L, nrow(cases))
    status <- system2("timeout", c("900", rscript, "--vanilla", child_f, cases_f, files_f, start,
                                   progress, file.path(dir, "scratch.bin"), end),
                      stdout = FALSE, stderr = FALSE)
    if (file.exists(paste0(progress, ".done"))) {
      res <- readRDS(paste0(progress, ".done"))
      counts <- counts + res$counts
      others <- c(others, res$others)
      start <- end + 1L
      next
    }
    last <- if (file.exists(progress)) as.integer(readLines(progress, warn = FALSE)[[1]]) else start
    crashes <- c(crashes, sprintf("case %d (%s %s %s@%d): child ended with status %s",
                                  last, cases$kind[last], cases$layer[last], cases$file[last],
                                  cases$pos[last], status))
    start <- last + 1L
  }
  message(sprintf(
    "sweep: %d files, %d truncation cases, %d byte flips; %d calls gave a result, %d an rdarrow_error, %d another error; %d crashes",
    length(files), n_trunc, nflip, counts[["result"]], counts[["rdarrow_error"]],
    counts[["other_error"]], length(crashes)
  ))
  expect_equal(crashes, character())
  if (length(others)) message(paste(c("non-rdarrow errors:", head(others, 20)), collapse = "\n"))
  expect_equal(others, character())
  expect_equal(sum(counts), 2L * nrow(cases) - 2L * length(crashes))
  expect_gt(counts[["rdarrow_error"]], n_trunc)
})
